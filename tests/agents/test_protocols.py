"""agents/protocols.py: a user's own agents that only satisfy the protocols run in a stage, and the
default agents satisfy theirs."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from projectgen.agents import (
    Architect,
    ArchitectureGenerator,
    ArchitectureJudge,
    ArchitectureReviewer,
    CodeGenerator,
    CodeJudge,
    CodeReviewer,
    Coder,
    KnowledgeExtractor,
    LessonExtractor,
    ModelGateway,
    SkeletonGenerator,
    SkeletonJudge,
    SkeletonReviewer,
    SkeletonWriter,
    Verdict,
)
from projectgen.config import EditFormat, Settings
from projectgen.datasets.task import Task
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs import RunContext, code_stage, initial_state
from projectgen.graphs.state import ssat_data
from projectgen.repository.edits import EditOutcome
from projectgen.ssat import SSAT
from agent_fakes import run, scripted, stubs, tree


class StubFiller:
    """A user's coder with no base class: it has only the two methods `CodeGenerator` names."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def fill(self, gateway: ModelGateway, ssat: SSAT | None, path: str, skeleton: str, /, *,
                   dependencies: Mapping[str, str], iteration: int, guidance: str) -> str:
        self.calls.append(("fill", path))
        return skeleton.replace("pass\n", "return 0\n")

    async def repair(self, gateway: ModelGateway, path: str, content: str, /, *, suggestion: str, error_log: str,
                     memory: str, iteration: int, edit_format: EditFormat, guidance: str) -> EditOutcome:
        self.calls.append(("repair", path))
        return EditOutcome(format=edit_format, repo={path: content + f"# {suggestion}\n"}, well_formed=True)


class SecondRoundJudge:
    """A user's code judge: names calc/core.py in round 1, accepts round 2; runs nothing."""

    async def review(self, gateway: ModelGateway, task: Task, repository: Mapping[str, str], /, *,
                     runner: SandboxRunner, iteration: int) -> Verdict:
        accepted = iteration > 1
        return Verdict(judge="second_round", stage="code", iteration=iteration, score=10 if accepted else 5,
                       accepted=accepted, files={} if accepted else {"calc/core.py": "checked"})


def test_a_user_agent_that_only_satisfies_the_protocols_runs_in_a_stage(task: Task) -> None:
    coder: CodeGenerator = StubFiller()  # what a type checker checks; isinstance checks the methods exist
    judge: CodeReviewer = SecondRoundJudge()
    assert isinstance(coder, CodeGenerator) and isinstance(judge, CodeReviewer)
    ssat = tree()
    state = {**initial_state(task), "ssat": ssat_data(ssat), "skeleton": stubs(ssat)}
    graph = code_stage(coder, [judge], Settings(code_iterations=3))
    result = run(graph.ainvoke(state, context=RunContext(task=task, runner=SandboxRunner())))
    core = result["repository"]["calc/core.py"]
    assert "return 0" in core and "pass\n" not in core and core.endswith("# checked\n")
    assert [c for c in coder.calls if c[0] == "repair"] == [("repair", "calc/core.py")]
    assert {p for kind, p in coder.calls if kind == "fill"} >= set(stubs(ssat))
    assert result["verdicts"][-1]["accepted"] and result["iterations"]["code"] == 2


def test_the_default_agents_satisfy_their_protocols_and_a_coder_without_repair_does_not() -> None:
    model = scripted()
    pairs = [(Architect(model), ArchitectureGenerator), (ArchitectureJudge(model), ArchitectureReviewer),
             (SkeletonWriter(model), SkeletonGenerator), (SkeletonJudge(model), SkeletonReviewer),
             (Coder(model), CodeGenerator), (CodeJudge(model), CodeReviewer),
             (KnowledgeExtractor(model), LessonExtractor)]
    assert [type(agent).__name__ for agent, protocol in pairs if not isinstance(agent, protocol)] == []

    class FillOnly:
        async def fill(self, *args: Any, **kwargs: Any) -> str:
            return ""

    assert not isinstance(FillOnly(), CodeGenerator)
    assert not isinstance(Coder(model), CodeReviewer)
