import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(os.environ.get("RACB_REPO_ROOT", "").strip() or Path(__file__).resolve().parents[2] / "generation" / "Wordcount")
if not (REPO_ROOT / "wordcount" / "__init__.py").exists():
    pytest.skip(f"no wordcount package under {REPO_ROOT}", allow_module_level=True)
sys.path.insert(0, str(REPO_ROOT))

import wordcount  # noqa: E402


def test_counts_lower_cased_words() -> None:
    assert wordcount.count_words("A b a") == {"a": 2, "b": 1}


def test_top_words_orders_by_count_then_word() -> None:
    assert wordcount.top_words("b a c a b a", 2) == [("a", 3), ("b", 2)]


def test_empty_text() -> None:
    assert wordcount.count_words("") == {}
