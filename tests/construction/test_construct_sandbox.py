"""The construct commands as a user runs them, with the bundled replays (scripted, not models) and the real sandbox."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.cli.main import main
from projectgen.construction.check_tests import empty_stub
from projectgen.construction.execution import execute
from projectgen.datasets.loaders import load_task
from projectgen.runs.run_log import read_run_log


def test_check_tests_for_the_bundled_task_pass_on_the_reference_and_fail_on_a_stub(tmp_path: Path, env_cache: Path,
                                                                                   runner, capsys) -> None:
    out = tmp_path / "tempconv"
    assert main(["construct", "check-tests", "tempconv", "--model", "scripted:examples", "--out", str(out),
                 "--cache-dir", str(env_cache)]) == 0
    assert "check tests written: check_tests/test_tempconv_check.py" in capsys.readouterr().out
    task = load_task(out)
    assert task.suites["check"].paths == ("check_tests",)
    suite = {path: (out / path).read_text() for path in task.suite_files("check")}
    on_reference = execute(runner, task, task.reference_repository(), suite)
    on_stub = execute(runner, task, empty_stub(task), suite)
    assert on_reference.all_passed and on_reference.total == 4
    assert on_stub.anomaly is None and on_stub.passed == 0 and on_stub.total == 4
    summary = json.loads((out / ".construct" / "check-tests" / "summary.json").read_text())
    assert summary["kept"] and summary["cost"]["calls"] == 1
    log = read_run_log(out / ".construct" / "check-tests")
    assert (log.kind, log.score("kept").value, log.usage.calls) == ("check-tests", 1.0, 1)
    # The task has check tests now: asked again, the command refuses in one line.
    assert main(["construct", "check-tests", str(out), "--model", "scripted:examples"]) == 2
    assert "already has check tests" in capsys.readouterr().err


def test_check_tests_refuse_to_write_into_the_installed_examples(capsys) -> None:
    assert main(["construct", "check-tests", "tempconv", "--model", "scripted:examples"]) == 2
    err = capsys.readouterr().err
    assert "bundled example" in err and "--out" in err and "Traceback" not in err


def test_a_draft_that_checks_nothing_is_refused(tmp_path: Path, env_cache: Path, capsys) -> None:
    script = tmp_path / "weak.json"
    script.write_text(json.dumps({"responses": [{"role": "check_test_writer", "content": {"files": {
        "check_tests/test_weak.py": "import tempconv\n\n\ndef test_imports():\n    assert tempconv\n"}}}]}))
    assert main(["construct", "check-tests", "tempconv", "--model", f"scripted:{script}", "--tries", "1",
                 "--out", str(tmp_path / "out"), "--cache-dir", str(env_cache)]) == 2
    captured = capsys.readouterr()
    assert captured.out.count("every test passes on an empty implementation") == 1
    assert "no check-test draft of tempconv passed" in captured.err
    assert not (tmp_path / "out" / "check_tests").exists()


@pytest.mark.slow
def test_construct_exercises_from_the_bundled_seeds_then_reflect_scores_the_reference_100(
        tmp_path: Path, env_cache: Path, capsys) -> None:
    """The issue's command as written, two seeds at once (about a minute: 24 pairs and 5 judge runs in the
    sandbox); the same decisions on a fake runner, and workers changing nothing, are test_construct_pipeline.py's."""
    out = tmp_path / "B"
    assert main(["construct", "exercises", "--seeds", "examples", "--model", "scripted:examples", "--out", str(out),
                 "--cache-dir", str(env_cache), "--workers", "2"]) == 0
    report = json.loads((out / "construction.json").read_text())
    assert report["summary"] == {"kept": ["intervals", "inventory", "run_length"],
                                 "dropped": ["doc_search", "greeting"], "human-review": ["checksum"], "error": []}
    removed = json.loads((out / "decontamination.json").read_text())["removed"]
    assert [(r["seed"], r["reference"]) for r in removed] == [("doc_search", "word_index")]
    assert report["difficulty_counts"] == {"success": 1, "failure-then-success": 3, "failure-failure": 0,
                                           "timeout": 0}
    capsys.readouterr()
    assert main(["reflect", "--dataset", str(out), "--model", "reference", "--out", str(tmp_path / "R"),
                 "--cache-dir", str(env_cache)]) == 0
    results = json.loads((tmp_path / "R" / "results.json").read_text())
    (entry,) = results["summary"]
    assert entry["tasks"] == 3 and entry["pass_at_1"] == 100.0
    # Run again: every seed is finished, nothing is asked or run, the report is the same.
    calls = {path: path.read_text() for path in sorted(out.glob(".construct/**/usage.jsonl"))}
    written = (out / "construction.json").read_text()
    assert main(["construct", "exercises", "--seeds", "examples", "--model", "scripted:examples", "--out", str(out),
                 "--cache-dir", str(env_cache)]) == 0
    assert {path: path.read_text() for path in sorted(out.glob(".construct/**/usage.jsonl"))} == calls
    assert (out / "construction.json").read_text() == written
    assert "6 seed(s) already finished in the ledger" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "said"), [
    (["exercises", "--seeds", "/no/such/seeds", "--model", "scripted:examples"], "seed folder not found"),
    (["exercises", "--seeds", "examples", "--model", "scripted:examples", "--reference", "/no/such/set"],
     "exercise folder not found"),
    (["exercises", "--seeds", "examples", "--model", "scripted:examples", "--reasoning", ","], "an empty model list"),
    (["check-tests", "kvstore", "--model", "scripted:examples"], "already has check tests"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, argv: list[str], said: str, capsys) -> None:
    assert main(["construct", *argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_an_out_of_the_sequential_version_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    """Its ledger (OUT/.construct/ledger.jsonl) is not the batch engine's; nothing is built or overwritten."""
    out = tmp_path / "B"
    (out / ".construct").mkdir(parents=True)
    (out / ".construct" / "ledger.jsonl").write_text('{"key": "greeting", "status": "dropped"}\n')
    assert main(["construct", "exercises", "--seeds", "examples", "--model", "scripted:examples", "--out", str(out),
                 "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "earlier `projectgen construct exercises`" in err and len(err.strip().splitlines()) == 1
    assert not (out / "batch-kind.txt").exists() and not (out / "ledger.jsonl").exists()
