"""The library examples of the README and docs/library.md run as written (offline), and the README's first
screen says how to get set up and get the benchmarks."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PATTERN = r"<!-- readme-test -->\n```python\n(.*?)```"
README_BLOCKS = re.findall(PATTERN, README.read_text(encoding="utf-8"), re.S)
BLOCKS = README_BLOCKS + re.findall(PATTERN, (ROOT / "docs" / "library.md").read_text(encoding="utf-8"), re.S)


def test_the_readme_and_the_library_page_have_runnable_examples() -> None:
    assert len(README_BLOCKS) >= 2 and len(BLOCKS) >= 8


def test_the_readme_is_short_and_its_first_screen_says_how_to_set_up_and_get_the_data() -> None:
    text = README.read_text(encoding="utf-8")
    first_screen = "\n".join(text.splitlines()[:40])
    assert "make venv" in first_screen and "source .venv/bin/activate" in first_screen
    assert "projectgen datasets fetch devbench" in first_screen and "--from DIR" in first_screen
    assert len(text.splitlines()) <= 200
    # every docs/ page the README sends a reader to exists
    for page in re.findall(r"`(docs/[\w.-]+\.md)`", text):
        assert (ROOT / page).is_file(), page


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """Each block as a script of its own (`__main__`, a fresh namespace, run from an empty folder), in this
    process: a new interpreter per block would import projectgen and LangGraph again each time."""
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<example>", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.strip()
