"""The LangGraph stage subgraphs and the project graph.

Most tests drive the graphs with fake agents (plain objects with the real agents' async
method signatures) and no sandbox, so they are fast and say exactly what each stage does
with its generator and judge. The last tests run the real agents on the bundled kvstore
task with a replay of its reference code, in the sandbox.
"""
from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from projectgen.agents import Agents, Architect, CheckStatus, Coder, ModelGateway, Verdict
from projectgen.agents.coder import interface_of
from projectgen.config import Settings
from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs import (
    RunContext, append_unique, architecture_stage, build_project_graph, code_stage, initial_state, merge_dict,
    skeleton_stage,
)
from projectgen.graphs.state import ssat_data
from projectgen.llm import ScriptedChatModel, UsageRecorder
from projectgen.oracles.reference_replay import Breakage, reference_script
from projectgen.repository.edits import EditOutcome, FileEdit, make_search_replace_reply
from projectgen.runs import run_project
from projectgen.ssat import SSAT, render_stub, ssat_from_repository
from projectgen.runs.run_log import read_run_log
from test_support import NoSandbox

# --------------------------------------------------------------------------- a small project

# base <- mid <- top is a chain of three layers; ping <-> pong import each other.
SOURCE = {
    "pkg/__init__.py": "",
    "pkg/base.py": '"""Base."""\n\n\ndef base_value() -> int:\n    """One."""\n    return 1\n',
    "pkg/mid.py": '"""Mid."""\nfrom pkg.base import base_value\n\n\ndef mid_value() -> int:\n'
                  '    return base_value() + 1\n',
    "pkg/top.py": '"""Top."""\nfrom pkg.mid import mid_value\n\n\ndef top_value() -> int:\n'
                  '    return mid_value() + 1\n',
    "pkg/ping.py": '"""Ping."""\nfrom pkg import pong\n\n\ndef ping(n: int) -> int:\n'
                   '    return pong.pong(n - 1) if n else 0\n',
    "pkg/pong.py": '"""Pong."""\nfrom pkg import ping\n\n\ndef pong(n: int) -> int:\n'
                   '    return ping.ping(n - 1) if n else 1\n',
}
TREE = ssat_from_repository(SOURCE, "demo", description="tree v0")
PATHS = sorted(SOURCE)
STUBS = {f.path: render_stub(f) for f in TREE.files()}
LAYERS = [["pkg/__init__.py", "pkg/base.py", "pkg/ping.py", "pkg/pong.py"], ["pkg/mid.py"], ["pkg/top.py"]]


def run(graph: Any, task: Any, state: Mapping[str, Any] | None = None, *, concurrency: int = 4,
        gateway: ModelGateway | None = None) -> dict[str, Any]:
    ctx = RunContext(task=task, runner=NoSandbox(), gateway=gateway or ModelGateway())  # type: ignore[arg-type]
    result = asyncio.run(graph.ainvoke(dict(state or initial_state(task)), context=ctx,
                                       config={"max_concurrency": concurrency, "recursion_limit": 200}))
    return dict(result)


def code_start(task: Any, skeleton: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The state a code stage starts from: a tree and (by default) its stubs as the skeleton."""
    state = dict(initial_state(task))
    state["ssat"] = ssat_data(TREE)
    state["skeleton"] = dict(STUBS if skeleton is None else skeleton)
    return state


# --------------------------------------------------------------------------- fake agents

class FakeArchitect:
    def __init__(self, tree: SSAT = TREE) -> None:
        self.tree = tree
        self.calls: list[dict[str, Any]] = []

    async def design(self, gateway, documents, *, iteration, previous=None, feedback="", memory="", guidance=""):
        self.calls.append({"iteration": iteration, "previous": previous, "feedback": feedback, "memory": memory})
        return self.tree.model_copy(update={"description": f"tree v{iteration}"})


class FakeSkeletonWriter:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def write(self, gateway, ssat, path, *, iteration, previous=None, feedback="", memory="", guidance=""):
        self.calls.append({"path": path, "iteration": iteration, "previous": previous, "feedback": feedback,
                           "memory": memory})
        return render_stub(ssat.file(path)) + f"# skeleton v{iteration}\n"


def filled(path: str, skeleton: str) -> str:
    """What the fake coder writes: bodies filled, plus a function the skeleton does not have."""
    stem = Path(path).stem.strip("_")
    return skeleton.replace("    pass\n", "    return 0\n") + f"\n\ndef filled_{stem}():\n    return True\n"


class FakeCoder:
    def __init__(self, *, seed: int | None = None, max_delay: float = 0.0) -> None:
        self.fills: list[dict[str, Any]] = []
        self.repairs: list[dict[str, Any]] = []
        self.events: list[tuple[str, str]] = []
        self.active = self.max_active = 0
        self.rng = random.Random(seed)
        self.max_delay = max_delay

    async def _pause(self) -> None:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        await asyncio.sleep(self.rng.uniform(0, self.max_delay) if self.max_delay else 0)
        self.active -= 1

    async def fill(self, gateway, ssat, path, skeleton, *, dependencies, iteration=1, guidance=""):
        self.events.append(("start", path))
        await self._pause()
        self.events.append(("end", path))
        self.fills.append({"path": path, "skeleton": skeleton, "dependencies": dict(dependencies),
                           "iteration": iteration, "has_tree": ssat is not None})
        return filled(path, skeleton)

    async def repair(self, gateway, path, content, *, suggestion, error_log, memory="", iteration,
                     edit_format="whole", guidance=""):
        await self._pause()
        self.repairs.append({"path": path, "content": content, "suggestion": suggestion, "memory": memory,
                             "iteration": iteration, "error_log": error_log})
        new = content + f"# repaired in round {iteration}\n"
        return EditOutcome(format=edit_format, repo={path: new}, applied=[FileEdit(path=path, content=new)],
                           well_formed=True)


class FakeJudge:
    """Accepts from iteration `accept_at` on (never when None), or when `accept(iteration, args)` says so.

    Feedback, named files and check status per iteration come from the dicts given."""

    def __init__(self, stage: str, *, accept_at: int | None = None, name: str | None = None,
                 accept: Callable[[int, tuple], bool] | None = None, feedback: Mapping[int, str] | None = None,
                 files: Mapping[int, Mapping[str, str]] | None = None,
                 checks: Mapping[int, CheckStatus] | None = None, stop_at: int | None = None) -> None:
        self.stage, self.accept_at, self.name = stage, accept_at, name or f"fake_{stage}_judge"
        self.accept = accept
        self.feedback, self.files, self.checks = dict(feedback or {}), dict(files or {}), dict(checks or {})
        self.stop_at = stop_at
        self.calls: list[int] = []
        self.seen: list[tuple] = []

    async def review(self, *args, iteration, **kwargs):
        self.calls.append(iteration)
        self.seen.append(tuple(dict(a) if isinstance(a, Mapping) else a for a in args))
        if self.accept is not None:
            accepted = self.accept(iteration, args)
        else:
            accepted = self.accept_at is not None and iteration >= self.accept_at
        return Verdict(judge=self.name, stage=self.stage, iteration=iteration, score=9 if accepted else 3,
                       accepted=accepted, feedback=self.feedback.get(iteration, f"{self.stage} feedback {iteration}"),
                       files=dict(self.files.get(iteration, {})), check=self.checks.get(iteration),
                       stop=iteration == self.stop_at)


def fake_agents(*, accept_at: int | None = None, **overrides: Any) -> Agents:
    agents = Agents(architect=FakeArchitect(), architecture_judge=FakeJudge("architecture", accept_at=accept_at),
                    skeleton=FakeSkeletonWriter(), skeleton_judge=FakeJudge("skeleton", accept_at=accept_at),
                    coder=FakeCoder(), code_judge=FakeJudge("code", accept_at=accept_at))
    return agents.replace(**overrides)


def check(passed: int, total: int = 5) -> CheckStatus:
    return CheckStatus(passed=passed, total=total, status="passed" if passed == total else "failed")


# --------------------------------------------------------------------------- reducers

def test_merge_dict_merges_and_none_deletes():
    old = {"a": "1", "b": "2"}
    assert merge_dict(old, {"b": "3", "c": "4"}) == {"a": "1", "b": "3", "c": "4"}
    assert merge_dict(old, {"a": None, "zzz": None}) == {"b": "2"}  # deleting a missing key is fine
    assert old == {"a": "1", "b": "2"}  # inputs are not changed
    assert merge_dict(None, {"x": 1}) == {"x": 1}
    assert merge_dict({"x": 1}, None) == {"x": 1}
    merged = merge_dict(old, {"b": "3"})
    assert merge_dict(merged, merged) == merged  # handing a whole dict back changes nothing


def test_append_unique_replaces_same_id_in_place_and_keeps_order():
    old = [{"id": "a", "v": 1}, {"id": "b", "v": 1}, {"id": "c", "v": 1}]
    merged = append_unique(old, [{"id": "d", "v": 1}, {"id": "b", "v": 2}])
    assert merged == [{"id": "a", "v": 1}, {"id": "b", "v": 2}, {"id": "c", "v": 1}, {"id": "d", "v": 1}]
    assert old[1] == {"id": "b", "v": 1}  # not changed
    # A subgraph hands back its whole list (old records plus new ones): nothing is added twice.
    assert append_unique(merged, merged) == merged
    assert append_unique(old, [*old, {"id": "e"}]) == [*old, {"id": "e"}]
    assert append_unique(None, None) == []


def test_stage_subgraphs_do_not_duplicate_records_in_the_parent_graph(task):
    agents = fake_agents(accept_at=2, code_judge=FakeJudge("code", accept_at=2, files={1: {"pkg/mid.py": "fix"}}))
    state = run(build_project_graph(agents=agents), task)
    assert [v["id"] for v in state["verdicts"]] == [
        "architecture:1", "architecture:2", "skeleton:1", "skeleton:2", "code:1", "code:2"]
    memory_ids = [m["id"] for m in state["memory"]]
    assert len(memory_ids) == len(set(memory_ids))
    assert sorted(memory_ids) == sorted(["architecture:1:", "code:1:pkg/mid.py",
                                         *(f"skeleton:1:{p}" for p in PATHS)])
    assert [e["id"] for e in state["edits"]] == ["2:pkg/mid.py"]
    assert state["iterations"] == {"architecture": 2, "skeleton": 2, "code": 2}
    assert not state.get("pending")


# --------------------------------------------------------------------------- loop caps

@pytest.mark.parametrize("settings", [Settings(), Settings(architecture_iterations=2, skeleton_iterations=1,
                                                            code_iterations=4)],
                         ids=["default-caps", "custom-caps"])
def test_a_judge_that_never_accepts_ends_each_stage_at_its_cap(task, settings):
    agents = fake_agents(accept_at=None)
    state = run(build_project_graph(agents=agents, settings=settings), task)
    caps = {stage: settings.cap(stage) for stage in ("architecture", "skeleton", "code")}
    if settings == Settings():
        assert caps == {"architecture": 3, "skeleton": 3, "code": 5}
    assert state["iterations"] == caps
    assert state.get("stopped") is None
    for stage, cap in caps.items():
        assert [v["iteration"] for v in state["verdicts"] if v["stage"] == stage] == list(range(1, cap + 1))
        assert not any(v["accepted"] for v in state["verdicts"] if v["stage"] == stage)
    # exactly cap generator rounds and cap judge calls per stage
    assert [c["iteration"] for c in agents.architect.calls] == list(range(1, caps["architecture"] + 1))
    assert agents.architecture_judge.calls == list(range(1, caps["architecture"] + 1))
    writes = [(c["iteration"], c["path"]) for c in agents.skeleton.calls]
    assert sorted(writes) == [(i, p) for i in range(1, caps["skeleton"] + 1) for p in PATHS]  # none named: all
    assert agents.skeleton_judge.calls == list(range(1, caps["skeleton"] + 1))
    assert sorted(c["path"] for c in agents.coder.fills) == PATHS  # filled once
    assert sorted((c["iteration"], c["path"]) for c in agents.coder.repairs) == [
        (i, p) for i in range(2, caps["code"] + 1) for p in PATHS]  # none named: every .py file
    assert agents.code_judge.calls == list(range(1, caps["code"] + 1))


def test_acceptance_at_iteration_two_stops_there(task):
    agents = fake_agents(accept_at=2)
    state = run(build_project_graph(agents=agents, settings=Settings(code_iterations=7)), task)
    assert state["iterations"] == {"architecture": 2, "skeleton": 2, "code": 2}
    assert len(agents.architect.calls) == 2 and agents.architecture_judge.calls == [1, 2]
    assert {c["iteration"] for c in agents.skeleton.calls} == {1, 2} and agents.skeleton_judge.calls == [1, 2]
    assert {c["iteration"] for c in agents.coder.repairs} == {2} and agents.code_judge.calls == [1, 2]
    assert [v["accepted"] for v in state["verdicts"]] == [False, True] * 3


def test_a_judge_saying_stop_ends_the_stage(task):
    judge = FakeJudge("code", stop_at=1)
    state = run(code_stage(FakeCoder(), [judge], Settings()), task, code_start(task))
    assert state["iterations"]["code"] == 1 and judge.calls == [1]


# --------------------------------------------------------------------------- architecture stage

class RecordingArchitect(Architect):
    """The real architect (prompt, model call, parsing), recording what each call was given."""

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.calls: list[dict[str, Any]] = []

    async def design(self, gateway, documents, **kwargs):
        self.calls.append(kwargs)
        return await super().design(gateway, documents, **kwargs)


@pytest.mark.parametrize("bad_reply, error", [
    ("Here is my design, in prose.", "No JSON found"),
    ({"project_name": "x", "files": []}, "an SSAT needs at least one file"),
], ids=["not-json", "invalid-tree"])
def test_an_unusable_architect_reply_becomes_feedback_for_the_next_iteration(task, bad_reply, error):
    model = ScriptedChatModel.from_responses([
        {"role": "architect", "iteration": 1, "content": bad_reply},
        {"role": "architect", "iteration": 2, "content": ssat_data(TREE)},
    ])
    architect, judge = RecordingArchitect(model), FakeJudge("architecture", accept_at=1)
    graph = build_project_graph(stages=[("architecture", architecture_stage(architect, [judge]))])
    state = run(graph, task)
    first, second = state["verdicts"]
    assert first["judge"] == "parser" and not first["accepted"] and first["score"] == 0
    assert error in first["feedback"]
    assert judge.calls == [2]  # the judge never saw an unusable tree
    assert architect.calls[1]["iteration"] == 2 and architect.calls[1]["feedback"] == first["feedback"]
    assert architect.calls[1]["previous"] is None
    assert second["accepted"] and state["ssat"] == ssat_data(TREE)
    assert not state.get("generation_errors") and state.get("stopped") is None


def test_no_usable_tree_after_the_cap_stops_the_graph(task):
    model = ScriptedChatModel.from_responses([{"role": "architect", "content": "no tree, sorry"}])
    agents = fake_agents(accept_at=1, architect=RecordingArchitect(model))
    state = run(build_project_graph(agents=agents, settings=Settings(architecture_iterations=2)), task)
    assert state["stopped"].startswith("architecture: no usable tree after 2 iteration(s)")
    assert "No JSON found" in state["stopped"]
    assert len(agents.architect.calls) == 2 and agents.architecture_judge.calls == []
    assert agents.skeleton.calls == [] and agents.coder.fills == [] and agents.code_judge.calls == []
    assert set(state["iterations"]) == {"architecture"} and not state.get("repository")


def test_architect_receives_memory_of_earlier_revisions(task):
    feedback = {1: "the zebra storage layer is missing", 2: "rename the walrus codec",
                3: "the penguin cli flags are unclear", 4: "the zebra storage layer is still missing"}
    architect = FakeArchitect()
    judge = FakeJudge("architecture", accept_at=None, feedback=feedback)
    stage = architecture_stage(architect, [judge], Settings(architecture_iterations=5, gamma=2))
    state = run(build_project_graph(stages=[("architecture", stage)]), task)
    memory = [c["memory"] for c in architect.calls]
    assert memory[0] == "" and memory[1] == ""  # nothing revised yet
    assert "### Iteration 1" in memory[2] and feedback[1] in memory[2]
    assert "tree v1" in memory[2] and "tree v2" in memory[2]  # the change made (diff of the trees)
    assert [c["feedback"] for c in architect.calls[1:]] == [feedback[i] for i in range(1, 5)]
    # iteration 5 has three earlier revisions; gamma=2 shows the one about the same problem and the latest
    assert "2 of 3 shown" in memory[4]
    assert "### Iteration 1" in memory[4] and "### Iteration 3" in memory[4]
    assert "### Iteration 2" not in memory[4] and feedback[2] not in memory[4]
    assert [m["id"] for m in state["memory"]] == ["architecture:1:", "architecture:2:", "architecture:3:",
                                                  "architecture:4:"]


# --------------------------------------------------------------------------- skeleton stage

def test_skeleton_revision_rewrites_only_the_files_the_judge_named(task):
    writer = FakeSkeletonWriter()
    judge = FakeJudge("skeleton", accept_at=2, feedback={1: "general note"},
                      files={1: {"pkg/mid.py": "mid_value needs a scale parameter"}})
    state = dict(initial_state(task))
    state["ssat"] = ssat_data(TREE)
    state = run(skeleton_stage(writer, [judge]), task, state)
    assert sorted(c["path"] for c in writer.calls if c["iteration"] == 1) == PATHS
    second = [c for c in writer.calls if c["iteration"] == 2]
    assert [c["path"] for c in second] == ["pkg/mid.py"]
    assert "mid_value needs a scale parameter" in second[0]["feedback"] and "general note" in second[0]["feedback"]
    assert second[0]["previous"] == STUBS["pkg/mid.py"] + "# skeleton v1\n"
    expected = {p: STUBS[p] + "# skeleton v1\n" for p in PATHS}
    expected["pkg/mid.py"] = STUBS["pkg/mid.py"] + "# skeleton v2\n"
    assert state["skeleton"] == expected
    assert judge.seen[1][2] == expected  # the judge reviews the whole skeleton again
    assert [m["id"] for m in state["memory"]] == ["skeleton:1:pkg/mid.py"]
    assert "mid_value needs a scale parameter" in state["memory"][0]["feedback"]


STARTER_STUB = "def base_value() -> int:\n    \"\"\"STARTER-MARKER\"\"\"\n"


def with_starter(task: Any) -> Any:
    """The task with a starter file for pkg/base.py (and one the tree does not have)."""
    starter = {"pkg/base.py": STARTER_STUB, "pkg/extra.txt": "not in the tree\n"}
    return task.model_copy(update={"docs": task.docs.model_copy(update={"starter": starter})})


class StarterSkeletonWriter(FakeSkeletonWriter):
    async def write(self, gateway, ssat, path, *, iteration, previous=None, feedback="", memory="", guidance="",
                    starter=None):
        self.calls.append({"path": path, "starter": starter})
        return starter if starter is not None else render_stub(ssat.file(path))


def test_the_skeleton_stage_gives_a_writer_the_starter_file_of_its_path(task):
    task = with_starter(task)
    writer = StarterSkeletonWriter()
    state = dict(initial_state(task))
    state["ssat"] = ssat_data(TREE)
    state = run(skeleton_stage(writer, [FakeJudge("skeleton", accept_at=1)]), task, state)
    assert {c["path"]: c["starter"] for c in writer.calls} == {p: STARTER_STUB if p == "pkg/base.py" else None
                                                               for p in PATHS}
    assert state["skeleton"]["pkg/base.py"] == STARTER_STUB
    # a writer that takes no `starter` keyword still serves a task without starter files
    plain = FakeSkeletonWriter()
    state = dict(initial_state(load_task(example_task_path("kvstore"))))
    state["ssat"] = ssat_data(TREE)
    run(skeleton_stage(plain, [FakeJudge("skeleton", accept_at=1)]), task, state)
    assert sorted(c["path"] for c in plain.calls) == PATHS


def test_a_graph_without_a_skeleton_stage_starts_a_starter_file_from_it(task):
    coder = FakeCoder()
    stages = [("architecture", architecture_stage(FakeArchitect(), [FakeJudge("architecture", accept_at=1)])),
              ("code", code_stage(coder, [FakeJudge("code", accept_at=1)]))]
    state = run(build_project_graph(stages=stages), with_starter(task))
    assert {c["path"]: c["skeleton"] for c in coder.fills} == {**STUBS, "pkg/base.py": STARTER_STUB}
    assert "pkg/extra.txt" not in state["repository"]  # shown to the generators, not added to the output


# --------------------------------------------------------------------------- code stage

def test_files_are_filled_in_dependency_order_with_filled_interfaces(task):
    agents = fake_agents(accept_at=1)
    state = run(build_project_graph(agents=agents), task)
    assert state["layers"] == LAYERS
    fills = {c["path"]: c for c in agents.coder.fills}
    assert sorted(fills) == PATHS and len(agents.coder.fills) == len(PATHS)
    repo = state["repository"]
    # the coder starts from the skeleton stage's files
    assert all(fills[p]["skeleton"] == state["skeleton"][p] and "# skeleton v1" in fills[p]["skeleton"]
               for p in PATHS)
    assert fills["pkg/base.py"]["dependencies"] == {}
    mid_deps = fills["pkg/mid.py"]["dependencies"]
    assert mid_deps == {"pkg/base.py": interface_of("pkg/base.py", repo["pkg/base.py"])}
    assert "def filled_base" in mid_deps["pkg/base.py"] and "return 0" not in mid_deps["pkg/base.py"]
    top_deps = fills["pkg/top.py"]["dependencies"]
    assert set(top_deps) == {"pkg/mid.py"} and "def filled_mid" in top_deps["pkg/mid.py"]
    # a layer starts only when the previous one has finished
    position = {(kind, path): i for i, (kind, path) in enumerate(agents.coder.events)}
    for earlier, later in zip(LAYERS, LAYERS[1:]):
        assert max(position["end", p] for p in earlier) < min(position["start", p] for p in later)
    assert repo == {p: filled(p, state["skeleton"][p]) for p in PATHS}


def test_import_cycle_members_share_a_layer_and_see_each_others_skeleton(task):
    coder = FakeCoder()
    state = run(code_stage(coder, [FakeJudge("code", accept_at=1)]), task, code_start(task))
    layer = next(layer for layer in state["layers"] if "pkg/ping.py" in layer)
    assert "pkg/pong.py" in layer
    fills = {c["path"]: c for c in coder.fills}
    assert fills["pkg/ping.py"]["dependencies"] == {"pkg/pong.py": STUBS["pkg/pong.py"]}
    assert fills["pkg/pong.py"]["dependencies"] == {"pkg/ping.py": STUBS["pkg/ping.py"]}
    assert [c["path"] for c in coder.fills].count("pkg/ping.py") == 1


def test_a_node_is_a_function_that_runs_on_its_own(task):
    """Nodes are module-level functions of (state, runtime, *bound arguments), testable without a graph."""
    from langgraph.runtime import Runtime

    from projectgen.graphs.code import fill_jobs, plan_code

    said: list[str] = []
    ctx = RunContext(task=task, runner=NoSandbox(), progress=said.append)  # type: ignore[arg-type]
    state = code_start(task)
    update = asyncio.run(plan_code(state, Runtime(context=ctx), cap=5))
    assert update == {"iterations": {"code": 1}, "skeleton": STUBS, "layers": LAYERS, "layer": 0}
    assert said == ["code 1/5: filling 6 files in 3 dependency layers"]
    jobs = fill_jobs({**state, **update})
    assert [job.node for job in jobs] == ["fill_file"] * len(LAYERS[0])
    assert [job.arg["path"] for job in jobs] == LAYERS[0]


def _calls(coder: FakeCoder) -> list[tuple]:
    fills = sorted((c["path"], c["skeleton"], tuple(sorted(c["dependencies"].items()))) for c in coder.fills)
    repairs = sorted((c["path"], c["iteration"], c["content"], c["suggestion"], c["memory"]) for c in coder.repairs)
    return [fills, repairs]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parallel_fan_out_gives_the_same_result_as_sequential(task, seed):
    results = {}
    for concurrency in (4, 1):
        coder = FakeCoder(seed=seed + concurrency, max_delay=0.01)
        judge = FakeJudge("code", accept_at=3, files={1: {"pkg/base.py": "b", "pkg/top.py": "t"},
                                                      2: {"pkg/ping.py": "p", "pkg/top.py": "t2"}})
        state = run(code_stage(coder, [judge]), task, code_start(task), concurrency=concurrency)
        results[concurrency] = (state["repository"], state["edits"], state["memory"], state["layers"],
                                _calls(coder), judge.seen)
        if concurrency == 4:
            assert coder.max_active > 1  # the fan-out really ran in parallel
        else:
            assert coder.max_active == 1
    assert results[4] == results[1]


def test_repairs_touch_only_the_files_the_judge_named(task):
    class OverreachingCoder(FakeCoder):
        async def repair(self, gateway, path, content, **kwargs):
            outcome = await super().repair(gateway, path, content, **kwargs)
            outcome.repo["pkg/base.py"] = "# clobbered\n"  # an outcome touching another file is not trusted
            return outcome

    coder = OverreachingCoder()
    judge = FakeJudge("code", accept_at=2, files={1: {"pkg/mid.py": "mid_value is off by one"}})
    state = run(code_stage(coder, [judge]), task, code_start(task))
    assert [(c["path"], c["iteration"]) for c in coder.repairs] == [("pkg/mid.py", 2)]
    assert coder.repairs[0]["suggestion"] == "mid_value is off by one"
    before, after = judge.seen[0][2], judge.seen[1][2]
    assert {p for p in PATHS if before[p] != after[p]} == {"pkg/mid.py"}
    assert after["pkg/base.py"] == before["pkg/base.py"] and state["repository"] == after
    assert after["pkg/mid.py"].endswith("# repaired in round 2\n")


def test_code_repair_memory_leaves_out_revisions_that_lowered_the_pass_count(task):
    coder = FakeCoder()
    target = "pkg/base.py"
    judge = FakeJudge("code", accept_at=None, checks={1: check(3), 2: check(1), 3: check(2), 4: check(2)},
                      files={1: {target: "fix alpha"}, 2: {target: "fix beta"}, 3: {target: "fix gamma"}})
    state = run(code_stage(coder, [judge], Settings(code_iterations=4)), task, code_start(task))
    memory = {m["id"]: m for m in state["memory"]}
    assert (memory[f"code:1:{target}"]["passed_before"], memory[f"code:1:{target}"]["passed_after"]) == (3, 1)
    assert (memory[f"code:2:{target}"]["passed_before"], memory[f"code:2:{target}"]["passed_after"]) == (1, 2)
    last = [c for c in coder.repairs if c["iteration"] == 4][0]["memory"]
    assert "### Iteration 2 (pkg/base.py) - check tests passed: 1 -> 2" in last and "fix beta" in last
    assert "### Iteration 1 " not in last and "fix alpha" not in last  # the regression (3 -> 1) is left out
    third = [c for c in coder.repairs if c["iteration"] == 3][0]["memory"]
    assert "fix alpha" not in third


class ReplayFillCoder(Coder):
    """The real coder's repair (prompt, scripted model, edit parsing); fill returns given files."""

    def __init__(self, model: Any, files: Mapping[str, str]) -> None:
        super().__init__(model)
        self.files = dict(files)
        self.repairs: list[dict[str, Any]] = []

    async def fill(self, gateway, ssat, path, skeleton, *, dependencies, iteration=1, guidance=""):
        return self.files[path]

    async def repair(self, gateway, path, content, **kwargs):
        self.repairs.append({"path": path, **kwargs})
        return await super().repair(gateway, path, content, **kwargs)


def test_a_search_replace_edit_that_does_not_apply_is_recorded_and_fed_back(task):
    path = "pkg/base.py"
    broken = {**SOURCE, path: SOURCE[path].replace("return 1", "return 2")}
    stale = "pkg/base.py\n```python\n<<<<<<< SEARCH\n    return 42\n=======\n    return 1\n>>>>>>> REPLACE\n```\n"
    model = ScriptedChatModel.from_responses([
        {"role": "coder", "target": path, "iteration": 2, "content": stale},
        {"role": "coder", "target": path, "iteration": 3,
         "content": make_search_replace_reply({path: broken[path]}, {path: SOURCE[path]})},
    ])
    coder = ReplayFillCoder(model, broken)
    judge = FakeJudge("code", accept=lambda it, args: "return 1" in args[2][path],
                      files={1: {path: "base_value must return 1"}, 2: {path: "base_value must return 1"}})
    state = run(code_stage(coder, [judge], Settings(edit_format="search_replace")), task, code_start(task))
    assert state["iterations"]["code"] == 3 and judge.calls == [1, 2, 3]
    edits = {e["id"]: e for e in state["edits"]}
    assert set(edits) == {f"2:{path}", f"3:{path}"}
    failed = edits[f"2:{path}"]
    assert failed["format"] == "search_replace" and failed["well_formed"] is False
    assert failed["applied"] == 0 and failed["failed"] == 1 and failed["feedback"]
    assert edits[f"3:{path}"]["well_formed"] is True and edits[f"3:{path}"]["feedback"] == ""
    assert all(r["edit_format"] == "search_replace" for r in coder.repairs)
    second, third = coder.repairs
    assert "did not apply" not in second["suggestion"]
    assert "Your previous edit of this file did not apply" in third["suggestion"]
    assert failed["feedback"] in third["suggestion"]
    assert state["repository"][path] == SOURCE[path]


def test_a_graph_without_a_skeleton_stage_fills_from_the_tree_stubs(task):
    coder = FakeCoder()
    stages = [("architecture", architecture_stage(FakeArchitect(), [FakeJudge("architecture", accept_at=1)])),
              ("code", code_stage(coder, [FakeJudge("code", accept_at=1)]))]
    state = run(build_project_graph(stages=stages), task)
    assert set(state["iterations"]) == {"architecture", "code"}
    assert {c["path"]: c["skeleton"] for c in coder.fills} == STUBS
    assert all(c["has_tree"] for c in coder.fills)
    assert state["skeleton"] == STUBS and state["repository"] == {p: filled(p, STUBS[p]) for p in PATHS}


def test_an_extra_code_judge_must_also_accept(task):
    first = FakeJudge("code", accept_at=1, name="code_judge")
    extra = FakeJudge("code", accept_at=2, name="lint", files={1: {"pkg/top.py": "style"}})
    coder = FakeCoder()
    state = run(code_stage(coder, [first, extra]), task, code_start(task))
    assert state["iterations"]["code"] == 2 and first.calls == [1, 2] and extra.calls == [1, 2]
    assert [(c["path"], c["suggestion"]) for c in coder.repairs] == [("pkg/top.py", "style")]
    assert [(v["judge"], v["accepted"]) for v in state["verdicts"]] == [("code_judge+lint", False),
                                                                      ("code_judge+lint", True)]

    # through Agents.extra_code_judges: an extra judge that never accepts runs the stage to its cap
    never = FakeJudge("code", accept_at=None, name="never")
    agents = fake_agents(accept_at=1).replace(extra_code_judges=(never,))
    state = run(build_project_graph(agents=agents, settings=Settings(code_iterations=3)), task)
    assert state["iterations"]["code"] == 3 and never.calls == [1, 2, 3]
    assert agents.code_judge.calls == [1, 2, 3]
    assert not state["verdicts"][-1]["accepted"]


def test_every_stage_combines_its_judges_all_must_accept(task):
    # architecture: the second judge holds the stage one iteration longer; its feedback reaches the architect
    keen = FakeJudge("architecture", accept_at=1, name="keen")
    strict = FakeJudge("architecture", accept_at=2, name="strict", feedback={1: "name the storage layer"})
    architect = FakeArchitect()
    state = run(build_project_graph(stages=[("architecture", architecture_stage(architect, [keen, strict]))]), task)
    assert keen.calls == [1, 2] and strict.calls == [1, 2]
    assert [(v["judge"], v["accepted"]) for v in state["verdicts"]] == [("keen+strict", False), ("keen+strict", True)]
    assert "[strict] name the storage layer" in architect.calls[1]["feedback"]

    # skeleton: the same rule
    first = FakeJudge("skeleton", accept_at=1, name="first")
    second = FakeJudge("skeleton", accept_at=2, name="second")
    start = {**initial_state(task), "ssat": ssat_data(TREE)}
    state = run(skeleton_stage(FakeSkeletonWriter(), [first, second]), task, start)
    assert state["iterations"]["skeleton"] == 2 and first.calls == [1, 2] and second.calls == [1, 2]
    assert state["verdicts"][-1]["judge"] == "first+second" and state["verdicts"][-1]["accepted"]


@pytest.mark.parametrize("build", [
    lambda judge: architecture_stage(FakeArchitect(), judge),
    lambda judge: skeleton_stage(FakeSkeletonWriter(), judge),
    lambda judge: code_stage(FakeCoder(), judge),
], ids=["architecture", "skeleton", "code"])
def test_a_stage_takes_a_list_of_judges_not_one_judge(build):
    with pytest.raises(TypeError, match=r"takes a list of judges \(e.g. \[judge\]\)"):
        build(FakeJudge("any"))
    build(None)  # None and [] both mean "no judge"
    build([])


def test_graph_builders_reject_what_cannot_run():
    with pytest.raises(ProjectGenError):
        build_project_graph()
    with pytest.raises(ProjectGenError):
        build_project_graph(stages=[])
    stage = code_stage(FakeCoder(), [FakeJudge("code")])
    with pytest.raises(ProjectGenError, match="unique"):
        build_project_graph(stages=[("code", stage), ("code", stage)])
    # An empty judge list is ProjectGen w/o iter's code stage (one fill, nothing run): tests/graphs/test_baselines.py


# --------------------------------------------------------------------------- real agents, sandbox

def test_reference_replay_repairs_the_broken_function_and_writes_the_run(task, tmp_path):
    breakage = Breakage("kvstore/store.py", "_expired")
    script = reference_script(task, breakage=breakage)
    model = ScriptedChatModel(script=script, label=script.label)
    out = tmp_path / "out"
    outcome = run_project(task, models=model, runner=SandboxRunner(), out_dir=out)
    state = outcome.state
    reference = task.reference_repository()

    assert state.get("stopped") is None
    assert state["iterations"] == {"architecture": 1, "skeleton": 1, "code": 2}
    code = [v for v in state["verdicts"] if v["stage"] == "code"]
    assert not code[0]["accepted"] and code[0]["check"]["passed"] < code[0]["check"]["total"]
    assert set(code[0]["files"]) == {"kvstore/store.py"}
    assert code[1]["accepted"] and (code[1]["check"]["passed"], code[1]["check"]["total"]) == (5, 5)
    assert state["repository"]["kvstore/store.py"] == reference["kvstore/store.py"]
    assert state["repository"] == {p: t for p, t in reference.items() if p.endswith(".py")}
    assert [(e["path"], e["well_formed"]) for e in state["edits"]] == [("kvstore/store.py", True)]
    assert [m["id"] for m in state["memory"]] == ["code:1:kvstore/store.py"]

    written = {p.relative_to(out / "repository").as_posix(): p.read_text(encoding="utf-8")
               for p in (out / "repository").rglob("*") if p.is_file()}
    assert written == state["repository"]
    log = read_run_log(out)
    assert (log.kind, log.status, log.score("unit").passed) == ("single-pass", "finished", outcome.unit_report.passed)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["stages"]["code"]["iterations"] == 2 and summary["stages"]["code"]["accepted"]
    assert [c["passed"] for c in summary["stages"]["code"]["checks"]][-1] == 5
    assert summary["stages"]["architecture"]["accepted"] and summary["stages"]["skeleton"]["accepted"]
    assert summary["tokens"]["calls"] == len(model.calls)
    assert summary["tokens"]["input_tokens"] > 0 and summary["tokens"]["output_tokens"] > 0
    assert summary["edits"] == {"requests": 1, "well_formed": 1}
    assert "reference replay" in summary["models"]["coder"]
    unit = json.loads((out / "unit_report.json").read_text(encoding="utf-8"))["summary"]
    assert (unit["passed"], unit["total"]) == (29, 29)
    usage = (out / "usage.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(usage) == len(model.calls)
    assert (out / "state.json").is_file() and (out / "ssat.json").is_file()

    with pytest.raises(ProjectGenError, match="not empty"):
        run_project(task, models=model, runner=SandboxRunner(), out_dir=out)


def test_a_reference_replay_of_a_starter_task_writes_the_reference_and_passes_its_tests(tmp_path):
    """Exercism's layout (tests/task_shapes/starter): the reference lives under `solution/`, a stub beside
    the test file; the replay answers from the reference's repository paths and the run scores 3/3."""
    task = load_task(Path(__file__).resolve().parents[1] / "task_shapes" / "starter")
    script = reference_script(task)
    assert {e.get("target") for e in script.model_dump()["responses"] if e["role"] == "coder"} == {"two_fer/two_fer.py"}
    outcome = run_project(task, models=ScriptedChatModel(script=script, label=script.label), runner=SandboxRunner(),
                          out_dir=tmp_path / "out")
    assert outcome.state["repository"] == task.reference_repository()
    unit = json.loads((tmp_path / "out" / "unit_report.json").read_text(encoding="utf-8"))["summary"]
    assert (unit["passed"], unit["total"]) == (3, 3)


def test_a_model_failing_for_good_in_the_code_stage_still_leaves_the_run_on_disk(task, tmp_path):
    """run_project raises the model's error, but the tree and skeleton it had paid for are written first."""
    from projectgen.llm.faults import FaultPlan, FaultyChatModel
    from projectgen.llm import ModelCallError

    script = reference_script(task)
    model = FaultyChatModel(wrapped=ScriptedChatModel(script=script, label=script.label),
                            plan=FaultPlan.parse("auth_error=1,stages=code"))
    out = tmp_path / "out"
    with pytest.raises(ModelCallError):
        run_project(task, models=model, runner=SandboxRunner(), out_dir=out)

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["status"] == "failed" and "AuthenticationError" in summary["reason"]
    assert summary["stages"]["architecture"]["accepted"] and summary["stages"]["skeleton"]["accepted"]
    assert "code" not in summary["stages"]
    state = json.loads((out / "state.json").read_text(encoding="utf-8"))
    assert (out / "ssat.json").is_file() and state["ssat"]
    assert set(state["skeleton"]) == set(task.reference_repository())  # the accepted skeleton, every file
    assert not state.get("repository") and not any((out / "repository").rglob("*.py"))  # nothing filled yet
    assert not (out / "unit_report.json").exists()
    assert summary["tokens"]["calls"] == len((out / "usage.jsonl").read_text(encoding="utf-8").splitlines())


def test_reference_replay_with_search_replace_repairs(task):
    breakage = Breakage("kvstore/store.py", "_expired")
    script = reference_script(task, breakage=breakage, edit_format="search_replace")
    model = ScriptedChatModel(script=script, label=script.label)
    settings = Settings(edit_format="search_replace")
    graph = build_project_graph(model, settings=settings)
    recorder = UsageRecorder()
    ctx = RunContext(task=task, runner=SandboxRunner(), gateway=ModelGateway(recorder=recorder))
    state = asyncio.run(graph.ainvoke(initial_state(task), context=ctx, config={"max_concurrency": 4}))
    assert state["iterations"]["code"] == 2
    assert state["verdicts"][-1]["check"]["passed"] == 5 and state["verdicts"][-1]["accepted"]
    assert state["repository"]["kvstore/store.py"] == task.reference_repository()["kvstore/store.py"]
    assert [(e["format"], e["well_formed"]) for e in state["edits"]] == [("search_replace", True)]
    assert len(recorder.records) == len(model.calls)


class ScoringJudge:
    """An architecture judge that gives a fixed score and accepts by its own `>=` comparison."""

    def __init__(self, score: float) -> None:
        self.score = score

    async def review(self, gateway, documents, ssat, /, *, iteration: int, threshold: float) -> Verdict:
        return Verdict(judge="fixed", stage="architecture", iteration=iteration, score=self.score,
                       accepted=self.score >= threshold, feedback="fixed")


@pytest.mark.parametrize("rule, score, accepted", [
    ("exceeds", 8.0, False), ("exceeds", 8.5, True), ("at_least", 8.0, True), ("at_least", 7.9, False),
])
def test_the_threshold_rule_decides_a_score_at_the_threshold(task, rule, score, accepted):
    """The paper's architecture judge accepts a score above 8 ("exceeds", the default); a stage applies the
    rule to any judge's verdict, so a user's judge comparing with >= is held to it too."""
    from langgraph.runtime import Runtime

    from projectgen.graphs.architecture import judge_architecture

    settings = Settings(threshold_rule=rule)
    assert Settings().threshold_rule == "exceeds"
    ssat = ssat_data(ssat_from_repository(task.reference_repository(), "kvstore"))
    state = {"task_id": task.id, "documents": task.docs.model_dump(), "ssat": ssat, "iterations": {"architecture": 1}}
    ctx = RunContext(task=task, runner=NoSandbox(), progress=lambda message: None)  # type: ignore[arg-type]
    update = asyncio.run(judge_architecture(state, Runtime(context=ctx), judges=[ScoringJudge(score)],
                                            settings=settings))
    assert update["verdicts"][0]["accepted"] is accepted and settings.accepts(score) is accepted


def test_a_tasks_paper_settings_apply_where_the_run_leaves_them_unset():
    from projectgen.config import Settings as S

    profile = {"code_iterations": 10}
    assert S.with_profile(profile).code_iterations == 10
    assert S.with_profile(profile, S(code_iterations=3)).code_iterations == 3  # what the user sets wins
    assert S.with_profile(profile, S(gamma=1)).model_dump() == {**S().model_dump(), "code_iterations": 10, "gamma": 1}
    assert S.with_profile({}, None) == S()


def test_run_project_applies_the_tasks_profile(task, tmp_path):
    model = ScriptedChatModel.from_responses(reference_script(task))
    profiled = task.model_copy(update={"settings_profile": {"code_iterations": 2}})
    outcome = run_project(profiled, models=model, out_dir=tmp_path / "a", evaluate_unit=False)
    assert outcome.summary.settings["code_iterations"] == 2
    model = ScriptedChatModel.from_responses(reference_script(task))
    outcome = run_project(profiled, models=model, settings=Settings(code_iterations=4), out_dir=tmp_path / "b",
                          evaluate_unit=False)
    assert outcome.summary.settings["code_iterations"] == 4
