"""The reference replay (`--model reference`) must hand back the reference files whole."""
from __future__ import annotations

from pathlib import Path

from projectgen.config import Settings
from projectgen.datasets.loaders import load_task
from projectgen.oracles.reference_replay import reference_model
from projectgen.runs import run_project

# No final newline (as DevBench Hybrid_Images' src/hybrid.py), and a Markdown fence inside a string.
LAST_LINE_FILE = 'HELP = """\n```\nusage: tool\n```\n"""\n\n\ndef double(x):\n    return 2 * x'


def _write_task(root: Path, prd: str, tool: dict[str, str | bytes], tests: str) -> Path:
    """A task folder: docs/PRD.md, the reference package tool/ with `tool`'s files, and `tests` as both suites."""
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "PRD.md").write_text(prd)
    (root / "tool").mkdir()
    for name, content in {"__init__.py": "", **tool}.items():
        path = root / "tool" / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    for suite in ("check_tests", "unit_tests"):
        (root / suite).mkdir()
        (root / suite / "test_core.py").write_text(tests)
    (root / "task.toml").write_text('reference = ["tool"]\n[docs]\nprd = "docs/PRD.md"\n'
                                    '[tests]\ncheck = "check_tests"\nunit = "unit_tests"\n')
    return root


def _task(root: Path) -> Path:
    return _write_task(root, "A function `double(x)` in tool/core.py.\n", {"core.py": LAST_LINE_FILE},
                       "from tool.core import HELP, double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
                       "def test_help():\n    assert '```' in HELP\n")


def test_a_reference_file_without_a_final_newline_is_replayed_whole(tmp_path: Path, runner) -> None:
    task = load_task(_task(tmp_path / "task"))
    outcome = run_project(task, models=reference_model(task), settings=Settings(), out_dir=tmp_path / "run",
                          runner=runner)
    assert outcome.repository["tool/core.py"].rstrip("\n") == LAST_LINE_FILE
    assert outcome.unit_report is not None and outcome.unit_report.passed == outcome.unit_report.total == 2


def _data_task(root: Path, *, table_rows: int = 3) -> Path:
    """A task whose code reads a data file and a template beside it (and ships a binary file no reply can hold)."""
    core = ("from pathlib import Path\n\nHERE = Path(__file__).parent\n\n\ndef lookup(name):\n"
            "    rows = dict(line.split(',') for line in (HERE / 'table.csv').read_text().split())\n"
            "    return rows[name]\n\n\ndef greet(who):\n    return (HERE / 'hello.tmpl').read_text().format(who=who)\n")
    return _write_task(root, "`lookup(name)` reads tool/table.csv; `greet` fills tool/hello.tmpl.\n",
                       {"core.py": core, "table.csv": "".join(f"k{i},v{i}\n" for i in range(table_rows)),
                        "hello.tmpl": "Hello, {who}!\n", "blob.bin": b"\x00\xff\xfe"},
                       "from tool.core import greet, lookup\n\n\ndef test_lookup():\n    assert lookup('k1') == 'v1'\n\n\n"
                       "def test_greet():\n    assert greet('you') == 'Hello, you!\\n'\n")


def test_the_replay_writes_the_data_files_its_tree_names(tmp_path: Path, runner) -> None:
    from projectgen.oracles.reference_replay import reference_ssat, reference_text_files

    task = load_task(_data_task(tmp_path / "task"))
    files = reference_text_files(task)
    assert sorted(files) == ["tool/__init__.py", "tool/core.py", "tool/hello.tmpl", "tool/table.csv"]  # no .bin
    assert {"tool/table.csv", "tool/hello.tmpl"} <= {node.path for node in reference_ssat(task, files).files()}
    outcome = run_project(task, models=reference_model(task), settings=Settings(), out_dir=tmp_path / "run",
                          runner=runner)
    assert outcome.repository["tool/table.csv"] == files["tool/table.csv"]
    assert outcome.repository["tool/hello.tmpl"] == "Hello, {who}!\n"
    assert outcome.unit_report is not None and outcome.unit_report.passed == outcome.unit_report.total == 2


def test_a_reference_replay_runs_with_a_reply_cap_that_fits_its_longest_reply(tmp_path: Path) -> None:
    from projectgen.runs.request import RunRequest

    task = load_task(_data_task(tmp_path / "task", table_rows=30_000))  # a 330k-character data file
    oracle = RunRequest.for_task(task, method="projectgen", models={"default": "reference"})
    assert oracle.settings.max_reply_chars > len((task.root / "tool" / "table.csv").read_text()) > 200_000
    model = RunRequest.for_task(task, method="projectgen", models={"default": "scripted:x.json"})
    assert model.settings.max_reply_chars == 200_000  # a real model keeps the guard against runaway replies
