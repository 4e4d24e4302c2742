"""A LiveCoder `Run` with the caller's own project graph (a stage list or a compiled graph): attempts, checkpoints,
trace and resume as with the built-in one; run.json records the graph, and a resume without it is refused."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import START, StateGraph

from projectgen.llm import ModelRoles
from projectgen.runs import Run, RunParts
from projectgen.runs import RunRequest
from projectgen.agents import Agents, Verdict
from projectgen.config import AttemptSettings, Settings
from projectgen.errors import ProjectGenError
from projectgen.graphs import ProjectState, architecture_stage, code_stage
from projectgen.oracles.reference_replay import reference_model
from projectgen.runs import read_manifest, Run, RunParts
from projectgen.runs.trace import read_trace


class RecordingJudge:
    """An extra code judge without a model: accepts, and records every review it is asked for."""

    name = "recorder"

    def __init__(self) -> None:
        self.reviews: list[tuple[int, int]] = []  # (iteration, files reviewed)

    async def review(self, gateway: Any, task: Any, repository: Any, *, runner: Any, iteration: int) -> Verdict:
        self.reviews.append((iteration, len(repository)))
        return Verdict(judge=self.name, stage="code", iteration=iteration, score=10, accepted=True,
                       feedback="recorded", files={})


class PowerCut(Exception):
    """The process dying in the middle of a run (raised by a node, so the test needs no second process)."""


def audit_node(calls: list[int], *, die_first: bool):
    """A node of the custom graph after the code stage; the first call dies when `die_first`."""

    async def audit(state: ProjectState) -> dict[str, Any]:
        calls.append(len(state.get("repository") or {}))
        if die_first and len(calls) == 1:
            raise PowerCut("the machine went down during the audit")
        return {"iterations": {"audit": 1}}

    return audit


def custom_stages(model: Any, judge: RecordingJudge, audit_calls: list[int], *, die_first: bool) -> list:
    """examples/custom_graph.py's shape: no skeleton stage, an extra code judge; plus a node of its own."""
    settings = Settings(code_iterations=1)
    agents = Agents.from_models(model)
    return [("architecture", architecture_stage(agents.architect, [agents.architecture_judge], settings)),
            ("code", code_stage(agents.coder, [agents.code_judge, judge], settings)),
            ("audit", audit_node(audit_calls, die_first=die_first))]


def test_a_custom_stage_list_gets_attempts_checkpoints_trace_and_resumes_after_dying(task, runner, tmp_path: Path) -> None:
    out = tmp_path / "run"
    model, judge, audit_calls = reference_model(task), RecordingJudge(), []
    stages = custom_stages(model, judge, audit_calls, die_first=True)
    request = RunRequest.for_task(task, settings=Settings(code_iterations=1),
                                  attempt_settings=AttemptSettings(attempts=1, measure_unit_tests=False))
    with pytest.raises(PowerCut):
        Run.open(request, out, RunParts(models=ModelRoles(model), runner=runner, stages=stages)).run()
    assert read_manifest(out).custom_graph == ["architecture", "code", "audit"]
    assert (out / "checkpoints.sqlite").is_file()
    with sqlite3.connect(out / "checkpoints.sqlite") as db:
        assert db.execute("select count(*) from checkpoints").fetchone()[0] > 0
    assert len(judge.reviews) == 1 and judge.reviews[0][1] > 0  # the extra judge reviewed the filled repository
    calls_before = [(c["role"], c.get("target")) for c in model.calls]
    assert {"architect", "coder"} <= {role for role, _ in calls_before} and "skeleton_writer" not in dict(calls_before)

    outcome = Run.resume(out, RunParts(models=ModelRoles(model), runner=runner, stages=stages)).run()
    # The checkpoint holds the finished stages: only the node that died runs again.
    assert len(judge.reviews) == 1 and [(c["role"], c.get("target")) for c in model.calls] == calls_before
    assert len(audit_calls) == 2 and audit_calls[1] == audit_calls[0] > 0
    assert outcome.summary["final"] == {"source": "best", "attempt": 1, "score": 1.0}
    assert read_manifest(out).status == "finished"
    record = json.loads((out / "attempts" / "1" / "attempt.json").read_text())
    assert record["score"] == 1.0 and record["stages"]["code"]["accepted"]
    assert (out / "attempts" / "1" / "repository" / "kvstore" / "store.py").is_file()
    assert (out / "repository" / "kvstore" / "store.py").is_file()
    events = read_trace(out / "events.jsonl", strict=True)
    nodes = [(e.get("path"), e.get("node")) for e in events if e["event"] == "node"]
    assert (["run_attempt"], "audit") in nodes and (["run_attempt", "code"], "judge_code") in nodes
    assert ["run_start", "run_resumed"] == [e["event"] for e in events if e["event"].startswith("run_") and
                                             e["event"] != "run_end"]
    verdicts = [e for e in events if e.get("node") == "judge_code"]
    assert "recorder" in json.dumps(verdicts)


def reference_graph(task, calls: list[str]):
    """A user-built compiled graph over ProjectState: one node that writes the reference repository."""

    async def write_reference(state: ProjectState) -> dict[str, Any]:
        calls.append(state["task_id"])
        return {"repository": dict(task.reference_repository())}

    graph = StateGraph(ProjectState)
    graph.add_node("write_reference", write_reference)
    graph.add_edge(START, "write_reference")
    return graph.compile(name="mine")


def test_a_compiled_graph_runs_in_the_attempts_and_a_resume_needs_the_same_graph(task, runner, tmp_path: Path) -> None:
    out, calls = tmp_path / "run", []
    outcome = Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=2, measure_unit_tests=False)), out, RunParts(project_graph=reference_graph(task, calls), runner=runner)).run()
    # Attempt 1 scores full marks; attempt 2 reuses it (the historical best), so the graph ran once.
    assert calls == ["kvstore"] and outcome.summary["final"]["score"] == 1.0
    assert [r["reused"] for r in outcome.summary["attempts"]] == [False, True]
    assert read_manifest(out).custom_graph == ["write_reference"]
    assert (out / "checkpoints.sqlite").is_file() and (out / "attempts" / "1" / "attempt.json").is_file()
    assert any(e.get("node") == "write_reference" for e in read_trace(out / "events.jsonl", strict=True))

    with pytest.raises(ProjectGenError, match="its own project graph .*write_reference"):
        Run.resume(out, RunParts(models=ModelRoles(reference_model(task)))).run()  # what `projectgen run --resume` does
    other = build_other_graph()
    with pytest.raises(ProjectGenError, match="had the nodes write_reference, not other"):
        Run.resume(out, RunParts(project_graph=other)).run()
    again = Run.resume(out, RunParts(project_graph=reference_graph(task, calls), runner=runner)).run()
    assert calls == ["kvstore"] and again.summary["final"]["score"] == 1.0


def build_other_graph():
    graph = StateGraph(ProjectState)
    graph.add_node("other", lambda state: {})
    graph.add_edge(START, "other")
    return graph  # uncompiled: Run.open compiles a StateGraph itself


def test_custom_graph_mistakes_are_one_line_errors_and_write_nothing(task, tmp_path: Path) -> None:
    graph = build_other_graph()
    plain = RunRequest.for_task(task)
    cases = [
        (plain, dict(project_graph=graph, stages=[("other", lambda state: {})]), "not both"),
        (RunRequest.for_task(task, method="direct"), dict(project_graph=graph), "method direct runs its own inner graph"),
        (RunRequest.for_task(task, attempt_settings=AttemptSettings(warm_start=True)), dict(project_graph=graph),
         "warm start"),
        (plain, dict(project_graph=object()), "compiled LangGraph graph"),
        (plain, dict(), "needs models, agents or a project graph"),
    ]
    for number, (request, graphs, message) in enumerate(cases):
        out = tmp_path / str(number)
        with pytest.raises(ProjectGenError, match=message):
            Run.open(request, out, RunParts(**graphs)).run()
        assert not out.exists()
