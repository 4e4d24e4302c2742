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


def test_many_words() -> None:
    text = "alpha beta gamma " * 20000
    assert wordcount.count_words(text)["beta"] == 20000
