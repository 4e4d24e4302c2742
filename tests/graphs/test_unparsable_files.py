"""A generated Python file that does not parse is never accepted: every stage that takes generated files
(skeleton, code fill and repair, Direct, Self-Reflection) keeps the previous version (or leaves the file
out), records the refusal, and gives the file, line and syntax error back to its generator within the
stage's cap. The generators here are the real agents on scripted models."""
from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest

from projectgen.llm import ModelRoles
from projectgen.runs import RunRequest
from projectgen.agents import Coder, DirectGenerator, IncompleteFileError, ModelGateway, Reply, SkeletonWriter, Verdict
from projectgen.agents.skeleton import code_from_reply
from projectgen.config import AttemptSettings, Settings
from projectgen.evaluation.report import Outcome, TestReport, TestResult
from projectgen.graphs import (RunContext, build_direct_graph, build_project_graph, build_self_reflection_graph,
                               code_stage, initial_state, skeleton_stage)
from projectgen.graphs.state import ssat_data
from projectgen.llm import ScriptedChatModel
from projectgen.repository.edits import make_whole_file_reply
from projectgen.repository.syntax import cut_off_error
from projectgen.ssat import render_stub, ssat_from_repository
from test_support import NoSandbox, recording_generator

PROSE = ("Sure! I have implemented the module as requested. The function returns one, and the\n"
         "rest of the package can import it.\n")
SOURCE = {
    "pkg/__init__.py": "",
    "pkg/base.py": '"""Base."""\n\n\ndef base_value() -> int:\n    """One."""\n    return 1\n',
    "pkg/top.py": '"""Top."""\nfrom pkg.base import base_value\n\n\ndef top_value() -> int:\n'
                  '    return base_value() + 1\n',
}
TREE = ssat_from_repository(SOURCE, "demo", description="tree")
STUBS = {f.path: render_stub(f) for f in TREE.files()}
BASE = "pkg/base.py"


class FailingChecks:
    """The check tests, always one of two failing, without a sandbox."""

    def evaluate(self, task, candidate, suite="unit") -> TestReport:
        return TestReport(task_id=task.id, suite=suite, tests=[
            TestResult(nodeid="t::ok", outcome=Outcome.PASSED),
            TestResult(nodeid="t::bad", outcome=Outcome.FAILED, message="assert 2 == 1")])


def run(graph: Any, task: Any, state: Mapping[str, Any], runner: Any = None,
        gateway: ModelGateway | None = None) -> dict[str, Any]:
    ctx = RunContext(task=task, runner=runner or NoSandbox(), gateway=gateway or ModelGateway())  # type: ignore[arg-type]
    return dict(asyncio.run(graph.ainvoke(dict(state), context=ctx, config={"recursion_limit": 200})))


def fenced(code: str) -> str:
    return f"```python\n{code}```\n"


def code_state(task: Any) -> dict[str, Any]:
    return {**initial_state(task), "ssat": ssat_data(TREE), "skeleton": dict(STUBS)}


class RecordingCoder(Coder):
    """The real coder (prompt, scripted model, reply parsing), keeping what each request was given."""

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.repairs: list[dict[str, Any]] = []

    async def repair(self, gateway, path, content, **kwargs):
        self.repairs.append({"path": path, "content": content, **kwargs})
        return await super().repair(gateway, path, content, **kwargs)


class RepositoryJudge:
    """Accepts when the Python files equal SOURCE (or from `accept_at` on), else names the files that differ;
    keeps every repository it saw."""

    def __init__(self, stage: str = "code", accept_at: int | None = None) -> None:
        self.stage, self.accept_at = stage, accept_at
        self.seen: list[dict[str, str]] = []

    async def review(self, gateway, *args, iteration, **kwargs) -> Verdict:
        files = dict(args[-1])
        self.seen.append(files)
        differ = {p: "implement it" for p, text in SOURCE.items() if files.get(p) != text}
        accepted = not differ or (self.accept_at is not None and iteration >= self.accept_at)
        return Verdict(judge="repo", stage=self.stage, iteration=iteration, score=9 if accepted else 3,
                       accepted=accepted, feedback="judged", files={} if accepted else differ)


def coder_model(base_replies: Mapping[int, str]) -> Any:
    responses = [{"role": "coder", "target": "pkg/top.py", "content": fenced(SOURCE["pkg/top.py"])}]
    responses += [{"role": "coder", "target": BASE, "iteration": i, "content": reply}
                  for i, reply in base_replies.items()]
    return ScriptedChatModel.from_responses(responses)


def assert_never_accepted(repositories: list[Mapping[str, str]], state: Mapping[str, Any]) -> None:
    for files in [*repositories, state.get("repository") or {}, state.get("skeleton") or {}]:
        assert not any("I have implemented" in text for text in files.values())


# --------------------------------------------------------------------------- code stage

def test_a_prose_fill_keeps_the_skeleton_and_the_repair_gets_the_syntax_error(task):
    coder = RecordingCoder(coder_model({1: PROSE, 2: make_whole_file_reply([BASE], SOURCE)}))
    judge = RepositoryJudge()
    state = run(code_stage(coder, [judge]), task, code_state(task))

    assert judge.seen[0][BASE] == STUBS[BASE]  # the prose was refused: the skeleton stayed
    assert_never_accepted(judge.seen, state)
    (refused,) = state["rejected"]
    assert (refused["id"], refused["path"]) == (f"code:1:{BASE}", BASE)
    assert refused["error"].startswith("line 1: invalid syntax")
    first = state["verdicts"][0]
    assert not first["accepted"] and f"{BASE}, line 1: invalid syntax" in first["feedback"]
    (repair,) = coder.repairs
    assert repair["path"] == BASE and repair["iteration"] == 2 and repair["content"] == STUBS[BASE]
    assert f"Your version of {BASE} was not accepted" in repair["suggestion"]
    assert f"{BASE}, line 1: invalid syntax" in repair["suggestion"]
    assert state["repository"] == SOURCE and state["verdicts"][-1]["accepted"]


def test_a_refused_file_is_repaired_even_when_the_judge_accepted_the_round(task):
    coder = RecordingCoder(coder_model({1: PROSE, 2: make_whole_file_reply([BASE], SOURCE)}))
    judge = RepositoryJudge(accept_at=1)
    state = run(code_stage(coder, [judge]), task, code_state(task))
    assert [v["accepted"] for v in state["verdicts"]] == [False, True]
    assert [r["path"] for r in coder.repairs] == [BASE]  # only the refused file
    assert state["repository"] == SOURCE


def test_a_coder_that_keeps_answering_prose_ends_at_the_cap(task):
    coder = RecordingCoder(coder_model({1: PROSE, 2: f"{BASE}\n```python\n{PROSE}```\n"}))
    judge = RepositoryJudge()
    state = run(code_stage(coder, [judge], Settings(code_iterations=3)), task, code_state(task))
    assert state["iterations"]["code"] == 3 and len(judge.seen) == 3
    assert [r["id"] for r in state["rejected"]] == [f"code:{i}:{BASE}" for i in (1, 2, 3)]
    assert state["repository"][BASE] == STUBS[BASE]
    assert_never_accepted(judge.seen, state)
    assert [(e["iteration"], e["well_formed"], e["rejected"]) for e in state["edits"]] == [(2, True, True),
                                                                                           (3, True, True)]
    assert not state["verdicts"][-1]["accepted"]


def test_without_a_judge_the_refused_file_keeps_its_skeleton(task):
    coder = RecordingCoder(coder_model({1: PROSE}))
    state = run(code_stage(coder, []), task, code_state(task))
    assert state["repository"][BASE] == STUBS[BASE] and coder.repairs == []
    assert [r["id"] for r in state["rejected"]] == [f"code:1:{BASE}"]


# --------------------------------------------------------------------------- skeleton stage

def skeleton_model(base_replies: Mapping[int, str]) -> Any:
    responses = [{"role": "skeleton", "target": "pkg/top.py", "content": fenced(STUBS["pkg/top.py"])}]
    responses += [{"role": "skeleton", "target": BASE, "iteration": i, "content": reply}
                  for i, reply in base_replies.items()]
    return ScriptedChatModel.from_responses(responses)


class RecordingWriter(SkeletonWriter):
    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.calls: list[dict[str, Any]] = []

    async def write(self, gateway, ssat, path, **kwargs):
        self.calls.append({"path": path, **kwargs})
        return await super().write(gateway, ssat, path, **kwargs)


def test_a_prose_skeleton_is_left_out_and_rewritten_with_its_syntax_error(task):
    writer = RecordingWriter(skeleton_model({1: PROSE, 2: fenced(STUBS[BASE])}))
    judge = RepositoryJudge("skeleton", accept_at=1)
    state = run(skeleton_stage(writer, [judge]), task, {**initial_state(task), "ssat": ssat_data(TREE)})
    assert BASE not in judge.seen[0] and "pkg/top.py" in judge.seen[0]
    assert [v["accepted"] for v in state["verdicts"]] == [False, True]
    second = [c for c in writer.calls if c["iteration"] == 2]
    assert [c["path"] for c in second] == [BASE]
    assert f"Your version of {BASE} was not accepted" in second[0]["feedback"]
    assert "line 1: invalid syntax" in second[0]["feedback"]
    assert state["skeleton"][BASE] == STUBS[BASE]
    assert_never_accepted(judge.seen, state)


def test_without_a_judge_a_refused_skeleton_is_filled_from_the_tree_stub(task):
    writer = RecordingWriter(skeleton_model({1: PROSE}))
    coder = RecordingCoder(coder_model({1: fenced(SOURCE[BASE])}))
    graph = build_project_graph(stages=[("skeleton", skeleton_stage(writer, [])), ("code", code_stage(coder, []))])
    state = run(graph, task, {**initial_state(task), "ssat": ssat_data(TREE)})
    assert [r["id"] for r in state["rejected"]] == [f"skeleton:1:{BASE}"]
    assert state["skeleton"][BASE] == STUBS[BASE]  # the code stage started the file from the tree's stub
    assert state["repository"] == SOURCE


# --------------------------------------------------------------------------- cut at the output cap

# A reply that stops at the output cap inside the file: what came compiles (here it is cut in a trailing
# comment), but it is not the file. The door's reply cap cuts it and says finish_reason "length", as a
# server does at max_tokens; every other reply of these tests is shorter than the cap.
CAP = 150
LONG_BASE = fenced(SOURCE[BASE] + "\n# " + "padding " * 40 + "\n")


def test_a_fill_cut_at_the_output_cap_keeps_the_skeleton_and_the_repair_is_told_why(task):
    assert len(fenced(SOURCE["pkg/top.py"])) < CAP < len(LONG_BASE)
    assert compile(LONG_BASE[len("```python\n"):CAP], BASE, "exec")  # the part that came parses
    coder = RecordingCoder(coder_model({1: LONG_BASE, 2: make_whole_file_reply([BASE], SOURCE)}))
    judge = RepositoryJudge()
    state = run(code_stage(coder, [judge]), task, code_state(task), gateway=ModelGateway(max_reply_chars=CAP))
    assert judge.seen[0][BASE] == STUBS[BASE]  # refused: the skeleton stayed
    (refused,) = state["rejected"]
    assert refused["path"] == BASE and refused["error"].startswith("cut off at the output limit")
    assert f"{BASE}, cut off at the output limit" in state["verdicts"][0]["feedback"]
    (repair,) = coder.repairs
    assert "was cut off at the output limit before the file ended" in repair["suggestion"]
    assert state["repository"] == SOURCE and state["verdicts"][-1]["accepted"]


def test_a_skeleton_cut_at_the_output_cap_is_left_out_and_rewritten(task):
    writer = RecordingWriter(skeleton_model({1: LONG_BASE, 2: fenced(STUBS[BASE])}))
    judge = RepositoryJudge("skeleton", accept_at=1)
    state = run(skeleton_stage(writer, [judge]), task, {**initial_state(task), "ssat": ssat_data(TREE)},
                gateway=ModelGateway(max_reply_chars=CAP))
    assert BASE not in judge.seen[0] and [r["error"] for r in state["rejected"]] == [cut_off_error()]
    second = [c for c in writer.calls if c["iteration"] == 2]
    assert [c["path"] for c in second] == [BASE] and "cut off at the output limit" in second[0]["feedback"]
    assert state["skeleton"][BASE] == STUBS[BASE]


def test_a_reply_is_read_as_cut_only_when_the_model_says_so_and_the_file_is_open() -> None:
    whole, open_block = fenced("x = 1\n"), "```python\nx = 1\n"
    assert code_from_reply(Reply(whole, "length"), BASE) == "x = 1\n"  # cut after the file ended
    assert code_from_reply(Reply(open_block, "stop"), BASE) == "x = 1\n"  # a fence forgotten, not cut
    assert code_from_reply(open_block, BASE) == "x = 1\n"
    for cut in (Reply(open_block, "length"), Reply("x = 1\n", "length"), Reply(open_block, "max_tokens")):
        with pytest.raises(IncompleteFileError):
            code_from_reply(cut, BASE)


# --------------------------------------------------------------------------- baselines

def direct_reply(files: Mapping[str, str]) -> str:
    return make_whole_file_reply(sorted(files), files)


def test_direct_leaves_a_prose_file_out_and_says_why(task):
    model = ScriptedChatModel.from_responses([{"role": "direct", "content": direct_reply({**SOURCE, BASE: PROSE})}])
    state = run(build_direct_graph(DirectGenerator(model)), task, initial_state(task))
    assert BASE not in state["repository"] and state["repository"]["pkg/top.py"] == SOURCE["pkg/top.py"]
    assert [r["id"] for r in state["rejected"]] == [f"code:1:{BASE}"]
    assert f"{BASE}, line 1: invalid syntax" in state["generation_errors"]["code"]


def test_self_reflection_keeps_the_previous_file_and_gives_the_error_back(task):
    fixed = {**SOURCE, BASE: SOURCE[BASE] + "# reflected\n"}
    model = ScriptedChatModel.from_responses([
        {"role": "direct", "iteration": 1, "content": direct_reply(SOURCE)},
        {"role": "direct", "iteration": 2, "content": direct_reply({BASE: PROSE})},
        {"role": "direct", "iteration": 3, "content": direct_reply({BASE: fixed[BASE]})},
    ])
    generator = recording_generator(model)
    state = run(build_self_reflection_graph(generator, rounds=2), task, initial_state(task), FailingChecks())
    second, third = generator.shown
    assert second["repository"] == SOURCE and "not accepted" not in second["error_log"]
    assert third["repository"] == SOURCE  # round 2's prose was refused: the previous file stayed
    assert f"Your version of {BASE} was not accepted" in third["error_log"]
    assert f"{BASE}, line 1: invalid syntax" in third["error_log"] and "assert 2 == 1" in third["error_log"]
    assert [r["id"] for r in state["rejected"]] == [f"code:2:{BASE}"]
    assert state["repository"] == fixed and state["iterations"]["code"] == 3
    assert_never_accepted([s["repository"] for s in generator.shown], state)


# --------------------------------------------------------------------------- a whole run

def test_a_run_whose_first_code_reply_is_prose_ends_with_the_valid_file(task, tmp_path):
    """Through the CLI's path (`Run.open`): the prose is refused, the trace and summary say so, the
    repair request names the file, line and error, and the run ends with the valid file."""
    from projectgen.inspection import load_run
    from projectgen.oracles.reference_replay import reference_script
    from projectgen.runs import Run, RunParts

    path = "kvstore/store.py"
    reference = task.reference_repository()
    script = reference_script(task).model_dump(mode="json", exclude_none=True)
    for entry in script["responses"]:
        if entry["role"] == "coder" and entry.get("target") == path:
            entry.update(iteration=1, content=PROSE)
    script["responses"] += [
        {"role": "coder", "target": path, "iteration": 2, "content": make_whole_file_reply([path], reference)},
        {"role": "code_judge", "iteration": 1, "content": {"summary": "", "files": [{"path": path}]}}]
    out = tmp_path / "run"
    outcome = Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=1, measure_unit_tests=False)), out, RunParts(models=ModelRoles(ScriptedChatModel.from_responses(script)))).run()

    assert (out / "repository" / path).read_text() == reference[path]
    assert outcome.summary["final"]["score"] == 1.0
    (attempt,) = outcome.summary["attempts"]
    assert attempt["rejected_files"] == 1 and attempt["stages"]["code"]["iterations"] == 2
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    changes = [c for e in events for key in ("skeleton", "repository") for c in (e.get("data") or {}).get(key, [])]
    assert any(c["path"] == path and c.get("diff") for c in changes)  # the repair's diff: skeleton -> reference
    assert not any("I have implemented" in c.get("diff", "") for c in changes)  # the prose was never a version
    (refused,) = [r for e in events for r in (e.get("data") or {}).get("rejected", [])]
    assert refused["path"] == path and refused["error"].startswith("line 1: invalid syntax")
    fill = next(row for row in load_run(out).rows if row.node == "fill_file" and path in row.detail)
    assert f"not accepted, not valid Python: {path} (line 1: invalid syntax)" in fill.detail
    from projectgen.llm.prompt_store import read_prompts

    repair = next(c for c in load_run(out).calls if c.role == "coder" and c.target == path and c.iteration == 2)
    asked = "\n".join(m["content"] for m in read_prompts(out / "prompts.jsonl")[repair.prompt_id])
    assert f"Your version of {path} was not accepted" in asked and f"{path}, line 1: invalid syntax" in asked
