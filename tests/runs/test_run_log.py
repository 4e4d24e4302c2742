"""The run log: one shape for how any run ended, written where the run ends and read by `read_run_log`, which also
reads folders written before the log existed (each old summary.json kind) and says in one line why it cannot read
a folder."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from projectgen.config import fidelity_settings
from projectgen.construction.check_tests import summary as check_tests_summary
from projectgen.errors import ProjectGenError
from projectgen.experiments.figures import pair_from_run
from projectgen.experiments.models import ExperimentModel
from projectgen.llm import ModelRoles
from projectgen.oracles.reference_replay import reference_model
from projectgen.runs import RunManifest, RunRequest, Run, RunParts
from projectgen.protocols.evolve.unit import EVOLVE_METHOD
from projectgen.runs.output_scorers import (ATTEMPT_MAINTAINABILITY, EXPECTED_UNIT, NON_FUNCTIONAL, REFERENCE_SCORERS,
                                            SKETCHBLEU, SKETCHBLEU_VERSION)
from projectgen.runs.pipeline import SINGLE_PASS
from projectgen.protocols.refinement.unit import REFINE_METHOD
from projectgen.protocols.reflection.unit import REFLECT_METHOD, ReflectionResult
from projectgen.runs.run_log import (KEPT, PROTOCOL_KINDS, RUN_LOG_VERSION, SELECTION, TESTS, UNIT, WELL_FORMAT,
                                     read_run_log)
from projectgen.runs.summary import AttemptRecord, FinalChoice, LiveCoderSummary, RunSummary

UNIT_TESTS = {"passed": 7, "failed": 3, "error": 0, "skipped": 0, "xfail": 0, "xpass": 0, "collection_errors": 0,
              "total": 10, "pass_rate": 0.7, "status": "failed"}


def _old_folder(root: Path, *, method: str | None, summary: object | None = None, status: str = "finished",
                usage_calls: int = 2) -> Path:
    """A run folder as projectgen wrote it before log.json: run.json (when `method`), summary.json, usage.jsonl."""
    root.mkdir(parents=True)
    if method is not None:
        manifest = RunManifest(task_path="/tasks/kvstore", task_id="kvstore", method=method, run_id="r1", status=status)
        (root / "run.json").write_text(manifest.model_dump_json(indent=1))
    if summary is not None:
        text = summary if isinstance(summary, str) else json.dumps(summary, indent=1)
        (root / "summary.json").write_text(text)
    lines = [json.dumps({"timestamp": f"2026-01-01T00:00:0{i}+00:00", "model": "m", "role": "coder", "stage": "code",
                         "input_tokens": 10, "output_tokens": 5}) for i in range(usage_calls)]
    (root / "usage.jsonl").write_text("".join(line + "\n" for line in lines))
    return root


@pytest.fixture(scope="module")
def finished(task, runner, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """A LiveCoder run (the reference replay, method direct) whose output was scored where it ended. Read only."""
    out = tmp_path_factory.mktemp("run-log") / "run"
    outcome = Run.open(RunRequest.for_task(task, models={"default": "reference"}, method="direct"), out, RunParts(models=ModelRoles(reference_model(task)), runner=runner, scorers=REFERENCE_SCORERS)).run()
    return out, outcome


def test_a_new_run_writes_its_log_and_an_older_folder_of_the_same_run_reads_the_same(finished, tmp_path) -> None:
    out, outcome = finished
    written = json.loads((out / "log.json").read_text())
    assert written["log_version"] == RUN_LOG_VERSION and written["kind"] == "livecoder"
    log = read_run_log(out)
    assert (log.task_id, log.method, log.status) == ("kvstore", "direct", "finished")
    assert log.request is not None and log.request.method == "direct"
    unit = log.score(UNIT)
    assert unit is not None and (unit.passed, unit.total) == (outcome.unit_report.passed, outcome.unit_report.total)
    assert log.score(SELECTION).value == outcome.summary["final"]["score"]
    assert log.usage.calls == len((out / "usage.jsonl").read_text().splitlines()) > 0
    assert log.isolation == outcome.unit_report.isolation
    assert log.timings.ended_at is not None and log.timings.duration_s == outcome.summary["duration_s"]
    assert log.record == json.loads((out / "summary.json").read_text())
    # The same folder without log.json (as written before the log existed) maps onto the same log, less what
    # only the run could know: when it ended, and its output's scores against the reference.
    older = tmp_path / "older"
    shutil.copytree(out, older)
    (older / "log.json").unlink()
    mapped = read_run_log(older)
    assert mapped.timings.ended_at is None
    scored_at_the_end = {EXPECTED_UNIT, SKETCHBLEU, NON_FUNCTIONAL, ATTEMPT_MAINTAINABILITY}
    assert mapped.model_dump(exclude={"timings", "samples"}) == log.model_dump(exclude={"timings", "samples"})
    assert {name: score for name, score in log.samples[0].scores.items() if name not in scored_at_the_end} == \
        mapped.samples[0].scores


def test_an_experiment_row_reads_the_scores_the_run_recorded_instead_of_scoring_again(finished, task, runner,
                                                                                      monkeypatch) -> None:
    out, _ = finished
    log = read_run_log(out)
    assert log.score(EXPECTED_UNIT).detail["counts"] == "expected" and log.score(EXPECTED_UNIT).total == 29
    sketch = log.score(SKETCHBLEU)
    if sketch is None:
        pytest.importorskip("codebleu", reason="the 'sketchbleu' extra is not installed")
    assert sketch is not None
    assert log.score(NON_FUNCTIONAL) is None  # kvstore is not a RAL-Bench task
    maintainability = log.score(ATTEMPT_MAINTAINABILITY).detail["attempts"]["1"]
    assert maintainability["maintainability"] > 0

    def rescored(*args, **kwargs):
        raise AssertionError("scored again")

    monkeypatch.setattr("projectgen.runs.output_scorers.sketch_bleu", rescored)
    monkeypatch.setattr("projectgen.evaluation.sketchbleu.sketch_bleu", rescored)
    monkeypatch.setattr("projectgen.evaluation.expectations.expected_counts", rescored)
    monkeypatch.setattr("projectgen.experiments.figures.expected_counts", rescored)
    monkeypatch.setattr("projectgen.evaluation.metrics.repository_stats", rescored)
    monkeypatch.setattr("projectgen.runs.output_scorers.repository_stats", rescored)
    row = pair_from_run(out, model=ExperimentModel("reference", "reference"), task=task, runner=runner,
                        method="direct")
    assert (row.final_unit_passed, row.final_unit_total, row.unit_denominator) == (29, 29, "expected")
    assert (row.sketchbleu, row.sketchbleu_codes, row.sketchbleu_codes_files) == (
        sketch.value, sketch.detail["codes"], sketch.detail["codes_files"])
    assert [(a.maintainability, a.maintainability_vs) for a in row.attempts] == [
        (maintainability["maintainability"], maintainability["maintainability_vs"])]
    assert row.status == "finished" and row.duration_s == log.timings.duration_s
    # the settings docs/fidelity.md names, as the run recorded them (the default profile: projectgen's choices)
    assert row.fidelity_settings == fidelity_settings(log.record["settings"], log.record["attempt_settings"])
    assert (row.fidelity_settings["stage_memory"], row.fidelity_settings["architecture_criteria"],
            row.fidelity_settings["knowledge_after_last"]) == ("raw", "projectgen", False)


def test_a_sketchbleu_score_of_an_older_computation_is_scored_again(finished, task, runner, tmp_path) -> None:
    """A run log scored before SketchBLEU last changed (no version, or another) holds figures today's code would not
    give: an experiment row scores the output again rather than report them beside today's."""
    pytest.importorskip("codebleu", reason="the 'sketchbleu' extra is not installed")
    out = tmp_path / "run"
    shutil.copytree(finished[0], out)
    today = read_run_log(out).score(SKETCHBLEU)
    log_path = out / "log.json"
    log = json.loads(log_path.read_text())
    [detail] = [sample["scores"][SKETCHBLEU]["detail"] for sample in log["samples"] if SKETCHBLEU in sample["scores"]]
    assert detail.pop("version") == SKETCHBLEU_VERSION
    detail["codes"] = 12.5
    log_path.write_text(json.dumps(log))
    assert read_run_log(out).score(SKETCHBLEU).detail["codes"] == 12.5
    row = pair_from_run(out, model=ExperimentModel("reference", "reference"), task=task, runner=runner,
                        method="direct")
    assert row.sketchbleu_codes == today.detail["codes"] != 12.5


def test_an_old_livecoder_folder(tmp_path: Path) -> None:
    summary = LiveCoderSummary(task_id="kvstore", run_id="r1", method="livecoder", selection="unit", oracle=True,
                               attempts=[AttemptRecord(attempt=1, score=0.5)], budget_limited=True,
                               status="budget-limited", reason="token budget", stopped="token budget",
                               final=FinalChoice(source="best", attempt=1, score=0.5), unit_tests=UNIT_TESTS,
                               duration_s=3.5)
    log = read_run_log(_old_folder(tmp_path / "run", method="livecoder", summary=json.loads(summary.to_json()),
                                   status="budget-limited"))
    assert (log.kind, log.status, log.reason) == ("livecoder", "budget-limited", "token budget")
    assert (log.score(UNIT).passed, log.score(UNIT).total, log.score(UNIT).value) == (7, 10, 0.7)
    assert log.score(SELECTION).value == 0.5 and log.score(SELECTION).detail["suite"] == "unit"
    assert log.timings.duration_s == 3.5 and log.usage.calls == 2 and log.usage.input_tokens == 20


def test_an_old_livecoder_folder_without_run_json_is_told_by_its_attempts(tmp_path: Path) -> None:
    summary = LiveCoderSummary(task_id="kvstore", run_id="r1", attempts=[AttemptRecord(attempt=1)])
    log = read_run_log(_old_folder(tmp_path / "run", method=None, summary=json.loads(summary.to_json())))
    assert (log.kind, log.run_id, log.status, log.request) == ("livecoder", "r1", "finished", None)


@pytest.mark.parametrize("method,kind", [(SINGLE_PASS, "single-pass"), (EVOLVE_METHOD, "evolve"),
                                         (None, "single-pass")])
def test_an_old_single_pass_or_evolve_folder(tmp_path: Path, method: str | None, kind: str) -> None:
    summary = RunSummary(task_id="kvstore", unit_tests=UNIT_TESTS, duration_s=1.25,
                         status="failed" if kind == "single-pass" else "finished")
    log = read_run_log(_old_folder(tmp_path / "run", method=method, summary=json.loads(summary.model_dump_json()),
                                   status="running"))
    assert log.kind == kind
    assert log.status == ("failed" if kind == "single-pass" else "finished")  # evolve's summary keeps no status
    assert (log.score(UNIT).passed, log.score(UNIT).total) == (7, 10)
    assert log.score(SELECTION) is None and log.timings.duration_s == 1.25


@pytest.mark.parametrize("method", [REFLECT_METHOD, None])
def test_an_old_reflect_folder(tmp_path: Path, method: str | None) -> None:
    result = ReflectionResult(task_id="bowling", language="python", model="m", model_label="m", edit_format="diff",
                              tries_allowed=2, status="passed", passed_at=2, well_formed=False,
                              tries=[{"try": 1, "well_formed": False}, {"try": 2, "well_formed": True}])
    log = read_run_log(_old_folder(tmp_path / "run", method=method, summary=result.model_dump(mode="json")))
    assert log.kind == "reflect"
    sample = log.task_id if method is None else "kvstore"  # without run.json the task is the result's
    assert log.score(TESTS, sample).value == 1.0 and log.score(TESTS, sample).detail["passed_at"] == 2
    assert log.score(WELL_FORMAT, sample).value == 0.0
    assert log.record["tries"][1]["well_formed"] is True


def test_an_old_refine_folder_reads_its_turns(tmp_path: Path) -> None:
    root = _old_folder(tmp_path / "run", method=REFINE_METHOD)
    (root / "turns.json").write_text(json.dumps([
        {"turn": 1, "passed": True, "tests_passed": 3, "tests_total": 3, "status": "passed"},
        {"turn": 2, "passed": False, "tests_passed": 1, "tests_total": 4, "status": "failed"}]))
    log = read_run_log(root)
    assert log.kind == "refine" and log.status == "finished"
    assert [(s.id, s.scores[TESTS].value, s.scores[TESTS].passed, s.scores[TESTS].total) for s in log.samples] == [
        ("kvstore/turn-1", 1.0, 3, 3), ("kvstore/turn-2", 0.0, 1, 4)]


def test_an_old_check_tests_folder(tmp_path: Path, task) -> None:
    text = check_tests_summary(task, None, [], [])
    log = read_run_log(_old_folder(tmp_path / "run", method=None, summary=text))
    assert (log.kind, log.task_id, log.score(KEPT).value) == ("check-tests", task.id, 0.0)


def test_a_run_that_has_not_ended_reads_with_its_status_and_no_record(tmp_path: Path) -> None:
    log = read_run_log(_old_folder(tmp_path / "run", method="livecoder", status="interrupted"))
    assert (log.kind, log.status, log.ended, log.samples) == ("livecoder", "interrupted", False, [])


@pytest.mark.parametrize("files,says", [
    ({}, "not a run folder"),
    ({"summary.json": "{not json"}, "summary.json: not valid JSON"),
    ({"summary.json": "[1, 2]"}, "summary.json: not a readable run record"),
    ({"summary.json": json.dumps({"score": 1})}, "summary.json: not a run summary this projectgen knows"),
    ({"summary.json": json.dumps({"edit_format": "diff", "tries": []})}, "summary.json: not a readable reflect record"),
    ({"log.json": json.dumps({"log_version": RUN_LOG_VERSION + 1})}, "written by a later projectgen"),
    ({"run.json": RunManifest(task_path="t", task_id="t", method=REFINE_METHOD, run_id="r").model_dump_json(),
      "turns.json": json.dumps([{"passed": True}])}, "turns.json: not a readable refine record"),
    ({"log.json": json.dumps({"log_version": 1, "kind": "reflect", "task_id": "t", "status": "finished",
                              "samples": [{"id": "t", "scores": {"tests": {"value": "high"}}}]})},
     "log.json: not a readable run log \\(samples.0.scores.tests.value"),
])
def test_a_folder_it_cannot_read_is_one_line(tmp_path: Path, files: dict[str, str], says: str) -> None:
    root = tmp_path / "run"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    with pytest.raises(ProjectGenError, match=says) as raised:
        read_run_log(root)
    assert "\n" not in str(raised.value)


def test_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ProjectGenError, match="not a run folder"):
        read_run_log(tmp_path / "absent")


def test_the_protocol_kinds_are_the_protocols_method_names() -> None:
    assert dict(PROTOCOL_KINDS) == {SINGLE_PASS: "single-pass", EVOLVE_METHOD: "evolve", REFLECT_METHOD: "reflect",
                                    REFINE_METHOD: "refine"}


def test_only_the_run_log_writes_summary_json_and_log_json() -> None:
    """One writer: every summary.json and log.json goes through `write_run_log`, so no run ends without its log."""
    import ast

    import projectgen

    package = Path(projectgen.__file__).parent
    writers = {"write_atomic", "write_json", "write_text", "write_bytes", "write_atomic_bytes", "write_synced"}
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            targets = [*node.args[:1], *([node.func.value] if isinstance(node.func, ast.Attribute) else [])]
            if name in writers and any(isinstance(t, ast.Attribute) and t.attr in ("summary", "run_log")
                                       for t in targets):
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert found and all(place.startswith("runs/run_log.py:") for place in found), found
