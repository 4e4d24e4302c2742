import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(os.environ.get("RACB_REPO_ROOT", "").strip() or Path(__file__).resolve().parents[2] / "generation" / "Wordcount")
if not (REPO_ROOT / "wordcount" / "__init__.py").exists():
    pytest.skip(f"no wordcount package under {REPO_ROOT}", allow_module_level=True)
sys.path.insert(0, str(REPO_ROOT))

import wordcount  # noqa: E402


def test_repeated_top_words() -> None:
    for _ in range(200):
        assert wordcount.top_words("x y x", 1) == [("x", 2)]
