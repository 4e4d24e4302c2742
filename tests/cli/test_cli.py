"""The command line as a user meets it: exit codes, one-line errors, reports, resumable benches."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.datasets.examples import example_task_path, example_tasks_dir
from projectgen.experiments.ledger import Ledger


def test_eval_of_the_reference_passes_and_writes_a_report(tmp_path: Path, env_cache: Path, capsys) -> None:
    task = example_task_path("kvstore")
    out = tmp_path / "report.json"
    code = main(["eval", "--task", str(task), "--repo", str(task), "--tests", "check",
                 "--out", str(out), "--cache-dir", str(env_cache)])
    assert code == 0
    report = json.loads(out.read_text())
    assert report["summary"]["status"] == "passed"
    assert report["summary"]["passed"] == report["summary"]["total"] == 5
    assert "pass rate" in capsys.readouterr().out


def test_eval_takes_a_bundled_example_name_as_run_does(tmp_path: Path, env_cache: Path, capsys) -> None:
    out = tmp_path / "report.json"
    code = main(["eval", "--task", "kvstore", "--repo", str(example_task_path("kvstore")), "--tests", "check",
                 "--out", str(out), "--cache-dir", str(env_cache)])
    assert code == 0 and json.loads(out.read_text())["summary"]["passed"] == 5
    assert main(["eval", "--task", "no-such-example", "--repo", "."]) == 2
    assert "no such task folder or bundled example" in capsys.readouterr().err


def test_eval_of_a_broken_repository_exits_1_and_names_the_failures(tmp_path: Path, env_cache: Path, capsys) -> None:
    task = example_task_path("wordfreq")
    repo = tmp_path / "repo"
    repo.mkdir()
    source = (task / "wordfreq.py").read_text()
    (repo / "wordfreq.py").write_text(source.replace("def top_n", "def _renamed_top_n"))
    code = main(["eval", "--task", str(task), "--repo", str(repo), "--tests", "check",
                 "--out", str(tmp_path / "r.json"), "--cache-dir", str(env_cache)])
    assert code == 1
    out = capsys.readouterr().out
    assert "collection error" in out and "test_wordfreq_check.py" in out  # the import of top_n fails
    assert "top_n" in out


def shaped_task(root: Path, toml_extra: str, tests: dict[str, str]) -> Path:
    """A task.toml task with a unit suite of the given files."""
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "PRD.md").write_text("# PRD\n")
    (root / "task.toml").write_text(toml_extra + '[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "unit_tests"\n')
    for name, text in tests.items():
        (root / "unit_tests").mkdir(exist_ok=True)
        (root / "unit_tests" / name).write_text(text)
    return root


def test_eval_says_why_the_tests_did_not_start(tmp_path: Path, env_cache: Path, capsys) -> None:
    task = shaped_task(tmp_path / "conf", "", {"conftest.py": "import helper_nobody_wrote\n",
                                               "test_a.py": "def test_a():\n    pass\n"})
    out = tmp_path / "r.json"
    code = main(["eval", "--task", str(task), "--repo", str(tmp_path), "--out", str(out),
                 "--cache-dir", str(env_cache)])
    assert code == 1
    printed = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert ("conf - unit tests did not run: unit_tests/conftest.py does not import (pytest exit status 4): "
            "ModuleNotFoundError: No module named 'helper_nobody_wrote'") in printed
    assert "pass rate" not in printed
    assert json.loads(out.read_text())["exit_status"] == 4


def test_eval_prints_markup_in_test_names_and_messages_as_it_is(tmp_path: Path, env_cache: Path, capsys) -> None:
    """Test names, messages and exception names are the code under test's: rich markup in them is printed,
    not read (a stray closing tag made rich raise MarkupError and `projectgen eval` crash)."""
    task = shaped_task(tmp_path / "markup", "", {"test_markup.py": (
        "import pytest\n"
        "Boom = type('[bold red]Boom[/]', (Exception,), {})\n"
        "@pytest.mark.parametrize('value', ['[/]'])\n"
        "def test_tag(value):\n"
        "    raise Boom('[/] and [bold red]' + value)\n")})
    code = main(["eval", "--task", str(task), "--repo", str(tmp_path), "--out", str(tmp_path / "r.json"),
                 "--cache-dir", str(env_cache)])
    assert code == 1
    printed = capsys.readouterr().out
    assert "test_tag[[/]]" in printed and "test_markup.py:5: [bold red]Boom[/]" in printed


def test_eval_takes_the_task_timeout_unless_timeout_is_given(tmp_path: Path, env_cache: Path) -> None:
    task = shaped_task(tmp_path / "slow", "timeout = 1\n", {"test_slow.py": "import time\n\n"
                                                             "def test_slow():\n    time.sleep(4)\n"})
    args = ["eval", "--task", str(task), "--repo", str(tmp_path), "--cache-dir", str(env_cache)]
    assert main([*args, "--out", str(tmp_path / "task.json")]) == 1
    assert json.loads((tmp_path / "task.json").read_text())["timed_out"] is True
    assert main([*args, "--out", str(tmp_path / "given.json"), "--timeout", "60"]) == 0


def test_eval_runs_a_named_suite_and_its_report_keeps_the_name(tmp_path: Path, env_cache: Path, capsys) -> None:
    """tests/task_shapes/suites names five suites; its reference passes security and fails one performance test."""
    task = Path(__file__).resolve().parents[1] / "task_shapes" / "suites"
    out = tmp_path / "perf.json"
    code = main(["eval", "--task", str(task), "--repo", str(task), "--suite", "performance", "--out", str(out),
                 "--cache-dir", str(env_cache)])
    report = json.loads(out.read_text())
    assert code == 1 and report["suite"] == "performance"
    assert {t["nodeid"]: t["outcome"] for t in report["tests"]} == {
        "tests/performance/test_speed.py::test_many_adds_are_fast": "passed",
        "tests/performance/test_speed.py::test_total_is_cached": "failed"}
    assert "shape-suites - performance tests" in " ".join(capsys.readouterr().out.split())  # the table title
    assert main(["eval", "--task", str(task), "--repo", str(task), "--tests", "security", "--out",
                 str(tmp_path / "sec.json"), "--cache-dir", str(env_cache)]) == 0
    assert json.loads((tmp_path / "sec.json").read_text())["suite"] == "security"
    assert main(["eval", "--task", str(task), "--repo", str(task), "--suite", "speed"]) == 2
    assert "has no speed tests (it has: check, unit, performance, robustness, security)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "--task", "/no/such/task", "--repo", "."], "/no/such/task: task folder not found"),
        (["eval", "--task", "{kvstore}", "--repo", "/no/such/repo"], "/no/such/repo: repository folder not found"),
        (["eval", "--task", "{wordfreq}", "--repo", ".", "--tests", "acceptance"], "has no acceptance tests"),
        (["bench-reference", "/no/such/dataset"], "/no/such/dataset: dataset folder not found"),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(argv: list[str], message: str, capsys) -> None:
    argv = [a.format(kvstore=example_task_path("kvstore"), wordfreq=example_task_path("wordfreq")) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("projectgen: error:") and message in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_bad_option_values_exit_2_without_traceback() -> None:
    done = subprocess.run([sys.executable, "-m", "projectgen.cli", "eval", "--task", "x", "--repo", "y",
                           "--timeout", "-3"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "must be greater than 0" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow  # a ledger's resume stays in the default suite through the experiment tests
def test_bench_reference_resumes_from_its_ledger(tmp_path: Path, env_cache: Path, capsys) -> None:
    dataset = tmp_path / "tasks"
    for name in ("kvstore", "wordfreq"):
        shutil.copytree(example_tasks_dir() / name, dataset / name, ignore=shutil.ignore_patterns("__pycache__"))
    (dataset / "broken").mkdir()
    (dataset / "broken" / "task.toml").write_text("id = [unclosed\n")
    out = tmp_path / "bench"
    args = ["bench-reference", str(dataset), "--out", str(out), "--cache-dir", str(env_cache), "--workers", "2"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "kvstore" in first and "wordfreq" in first and "broken" in first
    ledger = Ledger(out / "ledger.jsonl")
    rows = {key: entry["row"] for key, entry in ledger.done().items()}
    assert rows["kvstore:unit"]["status"] == "passed" and rows["kvstore:unit"]["passed"] == rows["kvstore:unit"]["total"]
    assert rows["wordfreq:unit"]["status"] == "passed"
    assert (out / "reports" / "kvstore.unit.json").exists()

    # a second run evaluates nothing again: everything is in the ledger
    lines_before = len(ledger.entries())
    assert main(args) == 0
    second = capsys.readouterr().out
    assert "2 task(s) already finished in the ledger" in second
    assert len(ledger.entries()) == lines_before

    # --tasks keeps only the tasks named; an unknown one is one line, exit 2
    assert main([*args, "--tasks", "wordfreq", "--fresh"]) == 0
    only = capsys.readouterr().out
    assert "wordfreq" in only and "kvstore" not in only and "broken" not in only
    assert main([*args, "--tasks", "wordfreq,nope"]) == 2
    assert "unknown task(s) nope" in capsys.readouterr().err


def test_ledger_ignores_a_line_torn_by_a_kill(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.append("a", row={"x": 1})
    with open(ledger.path, "a") as handle:
        handle.write('{"key": "b", "row": {"x"')  # the process died mid-write
    assert list(ledger.done()) == ["a"]
    ledger.append("b", row={"x": 2})
    assert ledger.done()["b"]["row"] == {"x": 2}


def test_help_lists_the_commands() -> None:
    done = subprocess.run([sys.executable, "-m", "projectgen.cli", "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    for command in ("eval", "bench-reference", "demo", "reflect"):
        assert command in done.stdout


def test_pipeline_and_attempt_options_left_out_keep_the_settings_defaults() -> None:
    from projectgen.cli import build_parser
    from projectgen.cli.options import attempt_settings_from_args, settings_from_args
    from projectgen.config import AttemptSettings, Settings

    args = build_parser().parse_args(["run", "kvstore", "--model", "x"])
    assert settings_from_args(args) == Settings()
    assert attempt_settings_from_args(args) == AttemptSettings()
    args = build_parser().parse_args(["run", "kvstore", "--model", "x", "--threshold", "7", "--iterations", "1,2,3",
                                      "--gamma", "0", "--attempts", "2", "--selection", "unit", "--no-best",
                                      "--threshold-rule", "at_least", "--feedback-suite", "unit"])
    settings, attempts = settings_from_args(args), attempt_settings_from_args(args)
    assert (settings.threshold, settings.architecture_iterations, settings.skeleton_iterations,
            settings.code_iterations, settings.gamma, settings.threshold_rule) == (7, 1, 2, 3, 0, "at_least")
    assert settings.feedback_suite == "unit"
    assert (attempts.attempts, attempts.selection, attempts.historical_best) == (2, "unit", False)


def test_help_prints_the_defaults_the_settings_hold(capsys, monkeypatch) -> None:
    """The numbers in --help are read from Settings/AttemptSettings, not written again in the CLI."""
    from projectgen.config import AttemptSettings, Settings

    monkeypatch.setattr(Settings.model_fields["gamma"], "default", 5)
    monkeypatch.setattr(AttemptSettings.model_fields["attempts"], "default", 6)
    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "stage-memory entries per prompt (default 5)" in text
    assert "attempts at the task (default 6)" in text
    assert "judge score a stage needs (default 8)" in text
    assert "code stages (default 3,3,5)" in text


def test_help_names_every_embedding_and_the_default(capsys) -> None:
    """--embedding's help spells the names out (importing projectgen.memory would slow the CLI down): they must
    be the registry's."""
    from projectgen.memory.embedding_models import DEFAULT_EMBEDDING, EMBEDDINGS

    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    helped = text[text.index("--embedding NAME"):]
    assert f"{DEFAULT_EMBEDDING} (default" in helped
    assert all(f"{name} (" in helped for name in EMBEDDINGS)


@pytest.mark.parametrize("text, ok", [("0", True), ("0.00", True), ("1e-3", True), ("-0.1", False), ("nan", False),
                                      ("warm", False)])
def test_temperature_takes_any_finite_number_from_0(text: str, ok: bool, capsys) -> None:
    from projectgen.cli import build_parser

    if ok:
        assert build_parser().parse_args(["run", "kvstore", "--temperature", text]).temperature == float(text)
    else:
        with pytest.raises(SystemExit) as exited:
            build_parser().parse_args(["run", "kvstore", "--temperature", text])
        assert exited.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_examples_names_the_bundled_dataset(tmp_path: Path, env_cache: Path, monkeypatch, capsys) -> None:
    """`--dataset examples` (and bench-reference's DATASET) is the bundled task folder, even where a folder
    named examples exists (the repository's own holds scripts, not tasks); ./examples is that folder."""
    import json

    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "custom_graph.py").write_text("# a script, not a task\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "bench"
    assert main(["bench-reference", "examples", "--out", str(out), "--cache-dir", str(env_cache)]) == 0
    keys = {json.loads(line)["key"] for line in (out / "ledger.jsonl").read_text().splitlines()}
    assert {"kvstore:unit", "wordfreq:unit"} <= keys
    capsys.readouterr()
    assert main(["bench-reference", "./examples", "--out", str(tmp_path / "b2"), "--cache-dir", str(env_cache)]) == 2
    assert "no tasks found" in capsys.readouterr().err
