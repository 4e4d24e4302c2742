"""`projectgen refine` as a user runs it: the table, the files, resume, exit codes, one-line errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED, EXIT_USAGE

from test_support import write_multiturn_task


def run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_refine_on_a_bundled_task_prints_the_table_and_resumes(tmp_path: Path, capsys):
    out = tmp_path / "out"
    # Python only: the Java task's JVM runs are the bundled batch's (tests/experiments/test_refinement.py)
    argv = ["refine", "--dataset", "examples", "--model", "reference", "--tasks", "roman", "--strategy",
            "fh,ce", "--out", out]
    code, text, err = run(capsys, *argv)
    assert code == EXIT_OK, err
    assert "reference/fh-basic/roman: PPP" in text and "reference/ce-golden/roman: PPP" in text
    for setting in ("FH basic", "FH golden", "CE basic", "CE golden"):
        assert f"\n{setting} " in text and "1.000  1.000  1.000   1.000 1.000" in text
    assert "reference: reference replay (oracle, not a model)" in text
    assert "validation: 1 task(s)" in text
    data = json.loads((out / "results.json").read_text())
    assert {(row["task_id"], row["language"]) for row in data["rows"]} == {("roman", "python")}
    summary = data["summary"]
    assert [(s["strategy"], s["context"], s["avg_acc"], s["completion_rate"]) for s in summary] == [
        ("fh", "basic", 1.0, 1.0), ("fh", "golden", 1.0, 1.0), ("ce", "basic", 1.0, 1.0), ("ce", "golden", 1.0, 1.0)]
    assert (out / "results.md").is_file() and "<svg" in (out / "results.html").read_text()
    code, text, _ = run(capsys, *argv)
    assert code == EXIT_OK and "4 task run(s) already finished in the ledger" in text


def test_a_task_run_that_fails_is_exit_code_1_and_named(tmp_path: Path, capsys):
    data = tmp_path / "data"
    write_multiturn_task(data / "t", [("r1", "A = 1\n", {"test_1.py": "from mod import A\n\ndef test():\n    assert A == 1\n"}),
                                      ("r2", "A = 2\n", {"test_2.py": "from mod import A\n\ndef test():\n    assert A == 2\n"})])
    script = tmp_path / "replay.json"
    script.write_text(json.dumps({"responses": [{"role": "refiner", "target": "t", "iteration": 2,
                                                 "content": "```python\nA = 2\n```"}]}))
    code, text, _ = run(capsys, "refine", "--dataset", data, "--model", f"scripted:{script}", "--strategy", "ci",
                        "--out", tmp_path / "out")
    assert code == EXIT_TESTS_FAILED
    flowing = " ".join(text.split())  # the console wraps long lines where the tmp path's length puts them
    assert "scripted-replay/ci-basic/t: error" in flowing and "no response for role='refiner'" in flowing
    assert "1 task run(s) ended in an error" in text


@pytest.mark.parametrize("extra, fragment", [
    (["--strategy", "fh,xx"], "unknown strategy xx"),
    (["--context", "warm"], "unknown context warm"),
    (["--strategy", "ci", "--context", "golden"], "nothing to run: ci with the golden context"),
    (["--tasks", "nope"], "unknown task(s) nope"),
    (["--model", "scripted:/no/such/file.json"], "no such script file or folder"),
    (["--dataset", "no-such-folder"], "no-such-folder: dataset folder not found"),
])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path: Path, capsys, monkeypatch, extra, fragment):
    monkeypatch.chdir(tmp_path)
    argv = ["refine", "--dataset", "examples", "--model", "reference", "--out", tmp_path / "out"]
    for option in ("--dataset", "--model"):
        if option in extra:
            at = argv.index(option)
            del argv[at:at + 2]
    code, _, err = run(capsys, *argv, *extra)
    lines = err.strip().splitlines()
    assert code == EXIT_USAGE and len(lines) == 1 and fragment in lines[0] and "Traceback" not in err, err
    assert not (tmp_path / "out" / "ledger.jsonl").exists() and not (tmp_path / "runs").exists()


def test_an_out_path_that_is_a_file_is_refused(tmp_path: Path, capsys):
    (tmp_path / "file").write_text("x")
    code, _, err = run(capsys, "refine", "--dataset", "examples", "--model", "reference", "--out", tmp_path / "file")
    assert code == EXIT_USAGE and "is not a folder" in err


def test_check_only_validates_the_tasks_without_a_model(tmp_path: Path, capsys):
    data = tmp_path / "data"
    write_multiturn_task(data / "good", [("r1", "A = 1\n", {"test_1.py": "from mod import A\n\ndef test():\n    assert A == 1\n"}),
                                         ("r2", "A = 2\n", {"test_2.py": "from mod import A\n\ndef test():\n    assert A == 2\n"})])
    write_multiturn_task(data / "weak", [("r1", "A = 1\n", {"test_1.py": "from mod import A\n\ndef test():\n    assert A == 1\n"}),
                                         ("r2", "A = 1\nB = 2\n",
                                          {"test_2.py": "from mod import A\n\ndef test():\n    assert A == 1\n"})])
    code, text, _ = run(capsys, "refine", "--dataset", data, "--check-only", "--out", tmp_path / "out")
    assert code == EXIT_OK  # tests that do not discriminate are named, but the references pass
    assert "weak: the tests of turn(s) 2 also pass on the previous turn's reference" in text
    assert "2 of 2 task(s) valid" in text
    (data / "good" / "turns" / "2" / "reference.py").write_text("A = 3\n")
    code, text, _ = run(capsys, "refine", "--dataset", data, "--check-only", "--fresh", "--out", tmp_path / "out")
    assert code == EXIT_TESTS_FAILED and "good: turn 2's reference does not pass its own tests" in text
    code, _, err = run(capsys, "refine", "--dataset", data, "--out", tmp_path / "out")
    assert code == EXIT_USAGE and "give a model" in err
