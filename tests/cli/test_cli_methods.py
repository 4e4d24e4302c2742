"""`projectgen run --method M` and `--model reference` (the reference replay: an oracle, not a model)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.llm.naming import REFERENCE_LABEL

ONE_PASS_METHODS = ("projectgen", "projectgen-no-iter", "direct", "self-reflection")


def test_run_with_a_method_and_the_reference_replay_is_labelled_as_an_oracle(tmp_path: Path, env_cache: Path,
                                                                             capsys) -> None:
    out = tmp_path / "run"
    code = main(["run", "kvstore", "--method", "direct", "--model", "reference", "--out", str(out),
                 "--cache-dir", str(env_cache)])
    assert code == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert REFERENCE_LABEL in printed and "direct attempts" in printed
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["method"] == "direct" and manifest["models"] == {"default": "reference"}
    assert manifest["model_label"] == REFERENCE_LABEL
    summary = json.loads((out / "summary.json").read_text())
    assert summary["model_descriptions"] == {"direct": REFERENCE_LABEL}
    assert summary["unit_tests"]["passed"] == summary["unit_tests"]["total"] == 29
    usage = [json.loads(line) for line in (out / "usage.jsonl").read_text().splitlines()]
    assert [(u["role"], u["model"]) for u in usage] == [("direct", f"scripted:{REFERENCE_LABEL}")]
    assert main(["report", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert f"**models**: {REFERENCE_LABEL}" in report and "**method**: direct: Direct" in report


def test_resume_rebuilds_the_reference_replay_and_keeps_the_method(tmp_path: Path, env_cache: Path,
                                                                  capsys) -> None:
    out = tmp_path / "run"
    assert main(["run", "kvstore", "--method", "projectgen-no-iter", "--model", "reference", "--out", str(out),
                 "--no-unit-tests", "--cache-dir", str(env_cache)]) == 0
    # A resume may not change the method: run.json fixes it like the other options.
    capsys.readouterr()
    assert main(["run", "--resume", str(out), "--method", "livecoder"]) == 2
    assert "leave out --method" in capsys.readouterr().err
    # Take the run back to before its end (as if killed after its attempt), then resume it.
    manifest = json.loads((out / "run.json").read_text())
    (out / "summary.json").unlink()
    (out / "run.json").write_text(json.dumps({**manifest, "status": "running"}))
    assert main(["run", "--resume", str(out), "--cache-dir", str(env_cache)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["method"] == "projectgen-no-iter" and summary["attempts_run"] == 1
    assert set(summary["model_descriptions"]) == {"architect", "skeleton", "coder"}


def test_an_unknown_method_is_a_usage_error(capsys) -> None:
    assert main(["run", "kvstore", "--model", "reference", "--method", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--method" in err and "self-reflection" in err and len(err.strip().splitlines()) == 1


def test_the_reference_replay_needs_reference_code(tmp_path: Path, capsys) -> None:
    task = tmp_path / "task"
    (task / "docs").mkdir(parents=True)
    (task / "docs" / "PRD.md").write_text("# A task\nwith no reference code at all.\n")
    (task / "unit_tests").mkdir()
    (task / "unit_tests" / "test_x.py").write_text("def test_x():\n    assert True\n")
    (task / "task.toml").write_text('id = "bare"\n[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "unit_tests"\n')
    code = main(["run", str(task), "--model", "reference", "--out", str(tmp_path / "out"),
                 "--selection", "unit"])
    err = capsys.readouterr().err
    assert code == 2 and "no reference Python files" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.datasets
@pytest.mark.parametrize("name, tests", [pytest.param("lice", 25, marks=pytest.mark.slow), ("readtime", 8)])
def test_devbench_with_the_reference_replay_gets_full_marks_under_every_one_pass_method(
        name: str, tests: int, shared_datasets: Path, tmp_path: Path, env_cache: Path) -> None:
    started = time.monotonic()
    for method in ONE_PASS_METHODS:
        out = tmp_path / method
        code = main(["run", str(shared_datasets / "DevBench" / name), "--method", method, "--model", "reference",
                     "--attempts", "1", "--out", str(out), "--cache-dir", str(env_cache)])
        summary = json.loads((out / "summary.json").read_text())
        assert code == 0, (method, summary["attempts"])
        assert summary["method"] == method
        assert summary["unit_tests"]["passed"] == summary["unit_tests"]["total"] == tests, method
    print(f"{name}: {len(ONE_PASS_METHODS)} methods in {time.monotonic() - started:.0f} s")
