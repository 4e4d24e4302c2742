"""SR-Eval's Algorithm 1, semantic-aware discriminative test generation, turn by turn.

For turn k the Coder writes the turn's code and tests; the draft is kept only when
1. correctness: the tests pass on the code, run together in the sandbox (at repository level the code must define
   the target function: a built task's turns answer it);
2. distinctiveness (k > 1): the tests fail on turn k-1's code (at repository level: this turn's file with turn
   k-1's target function, as refine's validation runs them);
3. semantic alignment: the Evaluator answers RETAIN (TEST_REFINE sends feedback back to the Coder;
   REQUIREMENT_REFINE pauses the seed for a person: `projectgen.protocols.multiturn_construction.graph`).
A failed stage's reason is the Coder's feedback for its next draft, at most `cap` drafts a turn (the paper's M = 10;
a turn over the cap also goes to a person). The ablations of SR-Eval's Table 7 switch stages off (`ABLATIONS`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from projectgen.agents.base import ModelGateway
from projectgen.construction.execution import Execution, execute
from projectgen.errors import ProjectGenError
from projectgen.llm.parsing import StructuredOutputError
from projectgen.protocols.multiturn_construction.agents import ConstructionAgents, TurnDraft, turn_test_file
from projectgen.protocols.multiturn_construction.requirements import Record
from projectgen.protocols.multiturn_construction.seeds import TaskSeed, defines_function, with_function_of

if TYPE_CHECKING:
    from projectgen.evaluation import SandboxRunner

TURN_CAP = 10  # SR-Eval's M
FULL = "full"
NO_EVALUATOR = "no-evaluator"
NO_DC_EVALUATOR = "no-dc-evaluator"
ABLATIONS: dict[str, str] = {
    FULL: "Algorithm 1 as published: correctness, distinctiveness and the semantic-alignment Evaluator",
    NO_EVALUATOR: "w/o Evaluator: stage 3 off (a draft passing stages 1 and 2 is kept)",
    NO_DC_EVALUATOR: "w/o DC & Evaluator: stages 2 and 3 off (a draft whose tests pass on its code is kept)",
}


def check_ablation(name: str) -> str:
    """`name` when it is one of `ABLATIONS`; otherwise one line naming them."""
    if name not in ABLATIONS:
        raise ProjectGenError(f"unknown ablation {name!r} (choose from {', '.join(ABLATIONS)})")
    return name


@dataclass
class TurnRecord:
    """A turn kept: its requirement, code and tests, and the drafts it took."""

    turn: int
    requirement: str
    code: str
    tests: str
    test_file: str
    drafts: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class TurnProgress:
    """One turn's drafts and how they ended: the turn kept, or why a person must look (`review`), with the last
    draft (what the person is shown) and the feedback it got."""

    drafts: list[dict[str, Any]]
    kept: TurnRecord | None = None
    review: str | None = None
    last: TurnDraft | None = None
    feedback: str = ""


CHECKED = "checked"  # a draft that passed stages 1 and 2 (what a person may approve as it is)
FAILED_CHECKS = ("unparsed", "no_function", "test_failed", "not_discriminative")  # the decisions of drafts that did not


def failing_summary(run: Execution, limit: int = 8) -> str:
    """What did not pass, one line each, for the Coder."""
    lines = [f"- {nodeid}: {outcome}" for nodeid, outcome in run.outcomes.items() if outcome != "passed"]
    if run.anomaly:
        lines.insert(0, f"- the run: {run.anomaly}")
    return "\n".join(lines[:limit]) or "no test ran"


def tells_apart(run: Execution) -> bool:
    """Whether tests run on the previous turn's code failed there (stage 2): a failing test, a collection error or
    a timeout does; a harness failure says nothing."""
    return not run.all_passed and not (run.anomaly or "").startswith("harness")


async def build_turn(seed: TaskSeed, requirements: Sequence[str], turn: int, previous_code: str,
                     agents: ConstructionAgents, gateway: ModelGateway, runner: SandboxRunner, record: Record, *,
                     ablation: str = FULL, cap: int = TURN_CAP, drafts: Sequence[dict[str, Any]] = (),
                     feedback: str = "") -> TurnProgress:
    """Turn `turn`'s drafts until one is kept, the Evaluator asks for REQUIREMENT_REFINE, or `cap` drafts were made.
    `drafts` are the turn's drafts made before (a person rejected the last, with `feedback`): the loop goes on
    from the next, its number counting them."""
    progress = TurnProgress(drafts=[dict(step) for step in drafts], feedback=feedback)
    for iteration in range(len(progress.drafts) + 1, cap + 1):
        decision, progress.feedback, draft = await _one_draft(seed, requirements, turn, iteration, previous_code,
                                                              progress.feedback, agents, gateway, runner, ablation,
                                                              progress.drafts)
        record("turn_draft", seed=seed.id, turn=turn, **progress.drafts[-1])
        progress.last = draft
        if decision == "kept" and draft is not None:
            progress.kept = TurnRecord(turn=turn, requirement=requirements[turn - 1], code=draft.code,
                                       tests=draft.tests, test_file=turn_test_file(seed, turn), drafts=progress.drafts)
            return progress
        if decision == "requirement_refine":
            progress.review = (f"turn {turn}: the Evaluator asks for the requirement to be rewritten: "
                               f"{progress.feedback}")
            return progress
    progress.review = f"turn {turn}: no draft kept in {cap} iterations; last: {progress.feedback}"
    return progress


async def _one_draft(seed: TaskSeed, requirements: Sequence[str], turn: int, iteration: int, previous_code: str,
                     feedback: str, agents: ConstructionAgents, gateway: ModelGateway, runner: SandboxRunner,
                     ablation: str, drafts: list[dict[str, Any]]) -> tuple[str, str, TurnDraft | None]:
    """One draft through the three stages: (decision, feedback for the next draft, the draft when it parsed); the
    draft's record appended to `drafts`."""
    step: dict[str, Any] = {"iteration": iteration}
    drafts.append(step)
    try:
        draft = await agents.coder.write(gateway, seed, requirements, turn=turn, previous_code=previous_code,
                                         feedback=feedback, iteration=iteration)
    except StructuredOutputError as error:
        return (*_decide(step, "unparsed", f"Your reply did not parse: {error}"), None)
    decision, feedback = check_draft(seed, turn, previous_code, draft, runner, ablation, step)
    if decision != CHECKED:
        return decision, feedback, draft
    if ablation != FULL:
        return (*_decide(step, "kept", ""), draft)
    try:
        alignment = await agents.alignment_evaluator.judge(gateway, seed, requirements[turn - 1], draft,
                                                           turn=turn, iteration=iteration)
    except StructuredOutputError as error:
        return (*_decide(step, "evaluator_unparsed", f"The Evaluator's reply did not parse ({error}); "
                         "send the draft again."), draft)
    step["alignment"] = alignment.decision
    if alignment.decision == "TEST_REFINE":
        return (*_decide(step, "test_refine", f"Stage 3 (semantic alignment): {alignment.feedback}"), draft)
    if alignment.decision == "REQUIREMENT_REFINE":
        return (*_decide(step, "requirement_refine", alignment.feedback), draft)
    return (*_decide(step, "kept", ""), draft)


def check_draft(seed: TaskSeed, turn: int, previous_code: str, draft: TurnDraft, runner: SandboxRunner, ablation: str,
                step: dict[str, Any]) -> tuple[str, str]:
    """Stages 1 and 2 on `draft` in the sandbox (stage 2 unless the ablation drops it): (`CHECKED`, "") or the
    failing stage's decision and feedback; each stage's result goes into `step`, a draft's record."""
    test_file = turn_test_file(seed, turn)
    if seed.level == "repository" and defines_function(draft.code, seed.function) is False:
        return _decide(step, "no_function", f"Your `{seed.target}` defines no top-level function "
                       f"`{seed.function}`: every turn's module defines it (the turn's answer is that function).")
    own = execute(runner, seed.task(), seed.candidate(draft.code), {test_file: draft.tests})
    step["stage1"] = _summary(own)
    if not own.all_passed:
        return _decide(step, "test_failed", "Stage 1 (correctness): your tests do not all pass on your code:\n"
                       + failing_summary(own))
    if turn > 1 and ablation != NO_DC_EVALUATOR:
        previous = (with_function_of(draft.code, previous_code, seed.function) if seed.level == "repository"
                    else previous_code)
        before = execute(runner, seed.task(), seed.candidate(previous), {test_file: draft.tests})
        step["stage2"] = _summary(before)
        if not tells_apart(before):
            return _decide(step, "not_discriminative", "Stage 2 (distinctiveness): every test also passes on the "
                           "module as it was before this turn; add tests of what this turn changes.")
    return CHECKED, ""


def _decide(step: dict[str, Any], decision: str, feedback: str) -> tuple[str, str]:
    step["decision"] = decision
    if feedback:
        step["feedback"] = feedback
    return decision, feedback


def _summary(run: Execution) -> dict[str, Any]:
    return {"passed": run.passed, "total": run.total, "anomaly": run.anomaly}
