"""The reference replay (`--model reference`) must hand back the reference files whole."""
from __future__ import annotations

from pathlib import Path

from projectgen.config import Settings
from projectgen.datasets.loaders import load_task
from projectgen.oracles.reference_replay import reference_model
from projectgen.runs import run_project

# No final newline (as DevBench Hybrid_Images' src/hybrid.py), and a Markdown fence inside a string.
LAST_LINE_FILE = 'HELP = """\n```\nusage: tool\n```\n"""\n\n\ndef double(x):\n    return 2 * x'


def _task(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "PRD.md").write_text("A function `double(x)` in tool/core.py.\n")
    (root / "tool").mkdir()
    (root / "tool" / "__init__.py").write_text("")
    (root / "tool" / "core.py").write_text(LAST_LINE_FILE)
    for suite in ("check_tests", "unit_tests"):
        (root / suite).mkdir()
        (root / suite / "test_core.py").write_text(
            "from tool.core import HELP, double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
            "def test_help():\n    assert '```' in HELP\n")
    (root / "task.toml").write_text('reference = ["tool"]\n[docs]\nprd = "docs/PRD.md"\n'
                                    '[tests]\ncheck = "check_tests"\nunit = "unit_tests"\n')
    return root


def test_a_reference_file_without_a_final_newline_is_replayed_whole(tmp_path: Path, runner) -> None:
    task = load_task(_task(tmp_path / "task"))
    outcome = run_project(task, models=reference_model(task), settings=Settings(), out_dir=tmp_path / "run",
                          runner=runner)
    assert outcome.repository["tool/core.py"].rstrip("\n") == LAST_LINE_FILE
    assert outcome.unit_report is not None and outcome.unit_report.passed == outcome.unit_report.total == 2
