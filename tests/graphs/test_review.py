"""A person's review of a stage's output (`projectgen.graphs.review`): the stage graphs pause with
LangGraph's interrupt() and go on with ``Command(resume=decision)``, driven here from Python with fake
agents that count their calls, a checkpointer in memory and no sandbox."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from projectgen.agents import ModelGateway, Verdict
from projectgen.config import Settings
from projectgen.errors import ProjectGenError
from projectgen.graphs import (ReviewDecision, RunContext, architecture_stage, build_project_graph, initial_state,
                               skeleton_stage)
from projectgen.graphs.review import check_review_stages, parse_decision
from projectgen.graphs.state import ssat_data
from projectgen.ssat import SSAT, render_stub, ssat_from_repository

SOURCE = {"pkg/__init__.py": "", "pkg/core.py": '"""Core."""\n\n\ndef value() -> int:\n    """One."""\n    return 1\n'}
TREE = ssat_from_repository(SOURCE, "demo", description="tree v0")


class Architect:
    """Designs `TREE` described as "tree vN"; a revision adds a function, so iterations differ."""

    def __init__(self, *, unusable: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.unusable = unusable

    async def design(self, gateway, documents, *, iteration, previous=None, feedback="", memory="", guidance=""):
        self.calls.append({"iteration": iteration, "feedback": feedback})
        if self.unusable:
            from projectgen.llm.parsing import StructuredOutputError

            raise StructuredOutputError("no JSON in the reply", kind="no_json")
        source = dict(SOURCE)
        for n in range(2, iteration + 1):
            source["pkg/core.py"] += f"\n\ndef revision_{n}() -> int:\n    return {n}\n"
        return ssat_from_repository(source, "demo", description=f"tree v{iteration}")


class SkeletonWriter:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def write(self, gateway, ssat, path, *, iteration, previous=None, feedback="", memory="", guidance=""):
        self.calls.append({"path": path, "iteration": iteration, "feedback": feedback, "tree": ssat.description})
        return render_stub(ssat.file(path)) + f"# skeleton v{iteration}\n"


class Judge:
    """Accepts from iteration `accept_at` on (never when None)."""

    def __init__(self, stage: str, accept_at: int | None = 1) -> None:
        self.stage, self.accept_at = stage, accept_at
        self.calls: list[int] = []

    async def review(self, *args, iteration, **kwargs):
        self.calls.append(iteration)
        accepted = self.accept_at is not None and iteration >= self.accept_at
        return Verdict(judge=f"{self.stage}_judge", stage=self.stage, iteration=iteration, score=9 if accepted else 3,
                       accepted=accepted, feedback="" if accepted else f"judge feedback {iteration}")


class Run:
    """One graph on one thread of an in-memory checkpointer: `start`, then `resume(decision)`."""

    def __init__(self, graph: Any, task: Any) -> None:
        self.graph, self.task = graph, task
        self.config = {"configurable": {"thread_id": "review"}, "recursion_limit": 100}
        self.context = RunContext(task=task, runner=None, gateway=ModelGateway())

    def start(self) -> dict[str, Any]:
        return dict(asyncio.run(self.graph.ainvoke(initial_state(self.task), self.config, context=self.context)))

    def resume(self, decision: Any) -> dict[str, Any]:
        return dict(asyncio.run(self.graph.ainvoke(Command(resume=decision), self.config, context=self.context)))


def request_of(out: dict[str, Any]) -> dict[str, Any]:
    (pending,) = out["__interrupt__"]
    return pending.value


def two_stages(*, architect=None, writer=None, arch_judge=None, skel_judge=None, settings=None,
               review=("architecture",)) -> tuple[Any, dict[str, Any]]:
    agents = {"architect": architect or Architect(), "writer": writer or SkeletonWriter(),
              "arch_judge": arch_judge if arch_judge is not None else Judge("architecture", 2),
              "skel_judge": skel_judge if skel_judge is not None else Judge("skeleton", 1)}
    settings = settings or Settings()
    stages = [("architecture", architecture_stage(agents["architect"], agents["arch_judge"] or None, settings,
                                                  review="architecture" in review)),
              ("skeleton", skeleton_stage(agents["writer"], agents["skel_judge"] or None, settings,
                                          review="skeleton" in review))]
    return build_project_graph(stages=stages, checkpointer=InMemorySaver()), agents


def test_the_graph_pauses_after_the_judge_accepts_and_approve_runs_nothing_before_again(task) -> None:
    graph, agents = two_stages()
    run = Run(graph, task)
    out = run.start()
    request = request_of(out)
    assert (request["stage"], request["iteration"], request["actions"]) == ("architecture", 2,
                                                                           ["approve", "edit", "reject"])
    assert request["judge"] == {"judge": "architecture_judge", "score": 9.0, "accepted": True, "feedback": ""}
    assert request["tree"]["description"] == "tree v2" and "+ function pkg/core.py: revision_2" in request["diff"]
    assert agents["writer"].calls == []  # paused before the next stage
    out = run.resume({"action": "approve"})
    assert "__interrupt__" not in out and set(out["skeleton"]) == {"pkg/__init__.py", "pkg/core.py"}
    # the stage's generator and judge ran once per iteration: nothing before the interrupt ran again
    assert [c["iteration"] for c in agents["architect"].calls] == [1, 2] and agents["arch_judge"].calls == [1, 2]
    assert out["reviews"] == [{"id": "architecture:2", "stage": "architecture", "iteration": 2, "action": "approve",
                               "feedback": ""}]
    assert out["ssat"]["description"] == "tree v2"


def test_a_rejection_is_feedback_for_the_generator_and_an_iteration_even_past_the_cap(task) -> None:
    graph, agents = two_stages(arch_judge=Judge("architecture", 1),
                               settings=Settings(architecture_iterations=1))
    run = Run(graph, task)
    assert request_of(run.start())["iteration"] == 1
    request = request_of(run.resume(ReviewDecision(action="reject", feedback="add a revision function")
                                    .model_dump()))
    assert request["iteration"] == 2 and "+ function pkg/core.py: revision_2" in request["diff"]
    assert agents["architect"].calls[-1] == {"iteration": 2, "feedback": "add a revision function"}
    out = run.resume("approve")
    assert [c["iteration"] for c in agents["architect"].calls] == [1, 2] and agents["arch_judge"].calls == [1, 2]
    assert [(v["judge"], v["iteration"], v["accepted"]) for v in out["verdicts"] if v["stage"] == "architecture"] == [
        ("architecture_judge", 1, True), ("human", 1, False), ("architecture_judge", 2, True)]
    assert [r["action"] for r in out["reviews"]] == ["reject", "approve"]
    assert out["iterations"]["architecture"] == 2 and agents["writer"].calls[0]["tree"] == "tree v2"


def test_a_decision_that_cannot_be_used_is_asked_again_with_the_reason(task) -> None:
    graph, agents = two_stages()
    run = Run(graph, task)
    run.start()
    for bad, reason in (({"action": "maybe"}, "not a review decision: action"),
                        ({"action": "reject"}, "a rejection needs feedback"),
                        ({"action": "edit", "tree": {"project_name": "demo"}}, "the edited tree is not valid"),
                        ({"action": "edit", "files": {"pkg/core.py": "x = 1\n"}}, "takes an edited tree"),
                        (42, "not int")):
        request = request_of(run.resume(bad))
        assert reason in request["error"] and request["iteration"] == 2
    assert agents["writer"].calls == [] and len(agents["architect"].calls) == 2
    out = run.resume({"action": "approve"})
    assert "__interrupt__" not in out and out["reviews"][-1]["action"] == "approve"


def test_an_edited_tree_is_validated_and_is_what_the_skeleton_stage_receives(task) -> None:
    graph, agents = two_stages()
    run = Run(graph, task)
    tree = dict(request_of(run.start())["tree"])
    tree["description"] = "edited by a person"
    out = run.resume({"action": "edit", "tree": tree, "feedback": "clearer description"})
    assert out["ssat"]["description"] == "edited by a person"
    assert {c["tree"] for c in agents["writer"].calls} == {"edited by a person"}
    assert out["reviews"][-1] == {"id": "architecture:2", "stage": "architecture", "iteration": 2, "action": "edit",
                                  "feedback": "clearer description", "edited": ["(tree)"]}


def test_a_reviewed_skeleton_shows_its_files_and_diff_and_takes_edited_files(task) -> None:
    graph, agents = two_stages(review=("skeleton",))
    run = Run(graph, task)
    request = request_of(run.start())  # the architecture is not reviewed: the first pause is the skeleton's
    assert (request["stage"], request["iteration"], request["diff"]) == ("skeleton", 1, "")
    assert request["skeleton"]["pkg/core.py"].endswith("# skeleton v1\n")
    request = request_of(run.resume({"action": "reject", "feedback": "more docstrings"}))
    assert request["iteration"] == 2
    assert "-# skeleton v1\n+# skeleton v2" in request["diff"] and "b/pkg/core.py" in request["diff"]
    assert {c["feedback"] for c in agents["writer"].calls if c["iteration"] == 2} == {"more docstrings"}
    for files, reason in (({"pkg/other.py": "x = 1\n"}, "pkg/other.py is not a Python file of the tree"),
                          ({"pkg/core.py": "def broken(:\n"}, "pkg/core.py is not valid Python: line 1"),
                          ({}, "the edit names no skeleton file")):
        assert reason in request_of(run.resume({"action": "edit", "files": files}))["error"]
    out = run.resume({"action": "edit", "files": {"pkg/core.py": "def value() -> int:\n    pass\n"}})
    assert out["skeleton"]["pkg/core.py"] == "def value() -> int:\n    pass\n"
    assert out["skeleton"]["pkg/__init__.py"].endswith("# skeleton v2\n")  # the files not edited stay
    assert [r["action"] for r in out["reviews"]] == ["reject", "edit"]


def test_a_stage_without_a_judge_is_reviewed_after_its_one_iteration(task) -> None:
    graph, agents = two_stages(arch_judge=False, skel_judge=False, review=("architecture", "skeleton"))
    run = Run(graph, task)
    request = request_of(run.start())
    assert (request["stage"], request["iteration"], request["judge"]) == ("architecture", 1, None)
    request = request_of(run.resume({"action": "reject", "feedback": "again"}))
    assert (request["stage"], request["iteration"]) == ("architecture", 2)  # the human asked: past the cap of 1
    assert request_of(run.resume("approve"))["stage"] == "skeleton"
    assert "__interrupt__" not in run.resume("approve")


def test_a_stage_that_stopped_the_run_is_not_reviewed(task) -> None:
    graph, _ = two_stages(architect=Architect(unusable=True))
    out = Run(graph, task).start()
    assert "__interrupt__" not in out and out["stopped"].startswith("architecture: no usable tree")


def test_review_names_and_decisions_are_checked() -> None:
    assert check_review_stages("architecture, skeleton,architecture") == ("architecture", "skeleton")
    with pytest.raises(ProjectGenError, match="cannot review 'code'"):
        check_review_stages(["code"])
    with pytest.raises(ProjectGenError, match="build your stages with review=True"):
        build_project_graph(stages=[("architecture", architecture_stage(Architect(), None))], review=["skeleton"])
    with pytest.raises(ValueError, match="only an edit gives a tree or files"):
        ReviewDecision(action="approve", tree={})
    request = {"stage": "architecture", "tree": ssat_data(TREE)}
    assert parse_decision("approve", request) == ReviewDecision(action="approve")
    edited = parse_decision({"action": "edit", "tree": ssat_data(TREE)}, request)
    assert SSAT.model_validate(edited.tree) == TREE

