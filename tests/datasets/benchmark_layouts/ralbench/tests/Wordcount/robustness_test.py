import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(os.environ.get("RACB_REPO_ROOT", "").strip() or Path(__file__).resolve().parents[2] / "generation" / "Wordcount")
if not (REPO_ROOT / "wordcount" / "__init__.py").exists():
    pytest.skip(f"no wordcount package under {REPO_ROOT}", allow_module_level=True)
sys.path.insert(0, str(REPO_ROOT))

import wordcount  # noqa: E402


def test_rejects_bytes() -> None:
    with pytest.raises(TypeError):
        wordcount.count_words(b"a b")


def test_punctuation_only() -> None:
    assert wordcount.top_words("?!,.", 3) == []
