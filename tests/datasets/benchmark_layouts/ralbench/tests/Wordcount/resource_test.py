import os
import sys
from pathlib import Path


# as most of RAL-Bench's performance and resource tests: the candidate only where its runner generates it
ROOT = Path(__file__).resolve().parents[2]
TARGET = os.environ.get("WORDCOUNT_TARGET", "reference").lower()
REPO_ROOT = ROOT / "repositories" / "wordcount" if TARGET == "reference" else ROOT / "generation" / "Wordcount"
if not REPO_ROOT.exists():
    raise RuntimeError(f"Target repository does not exist: {REPO_ROOT}")
sys.path.insert(0, str(REPO_ROOT))

import wordcount  # noqa: E402


def test_repeated_top_words() -> None:
    for _ in range(200):
        assert wordcount.top_words("x y x", 1) == [("x", 2)]
