"""Requirement generation by SR-Eval's three agents: the Decomposer drafts a core requirement and 1-4 evolving
ones, the Evaluator retains them or sends them back with feedback (at most `cap` drafts, the paper's 6; over
the cap the seed goes to a person), the Analyzer's DAG rooted at the core requirement orders the turns."""
from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from projectgen.agents.base import ModelGateway
from projectgen.llm.parsing import StructuredOutputError
from projectgen.protocols.multiturn_construction.agents import ConstructionAgents, Decomposition, Dependencies
from projectgen.protocols.multiturn_construction.seeds import TaskSeed

DECOMPOSITION_CAP = 6  # SR-Eval: at most six Decomposer <-> Evaluator iterations
MIN_EVOLVING, MAX_EVOLVING = 1, 4  # 2 to 5 turns

Record = Callable[..., None]  # writes one trace event: record(event, **fields)


class CycleError(ValueError):
    """The Analyzer's pairs do not form a DAG rooted at the core requirement; the text says why."""


def turn_order(count: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    """The requirements' indices in an order respecting every (prerequisite, dependent) pair, the core (0) first
    and otherwise the Decomposer's order; an index without a prerequisite builds on the core."""
    needs: dict[int, set[int]] = {index: set() for index in range(count)}
    for before, after in edges:
        if not (0 <= before < count and 0 <= after < count) or before == after:
            raise CycleError(f"pair [{before}, {after}] names no two requirements of 0..{count - 1}")
        if after == 0:
            raise CycleError(f"pair [{before}, 0]: the core requirement (0) needs no other")
        needs[after].add(before)
    for index in range(1, count):
        needs[index] = needs[index] or {0}
    ready = [0]
    order: list[int] = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for other in range(count):
            if index in needs[other]:
                needs[other].discard(index)
                if not needs[other] and other not in order:
                    heapq.heappush(ready, other)
    if len(order) != count:
        raise CycleError(f"the pairs form a cycle through requirement(s) "
                         f"{', '.join(str(i) for i in range(count) if i not in order)}")
    return order


@dataclass
class RequirementsOutcome:
    """The turns' requirements in order, or why a person must look (`review`), and every draft's decisions."""

    requirements: list[str] = field(default_factory=list)
    review: str | None = None
    iterations: list[dict[str, Any]] = field(default_factory=list)
    order: list[int] = field(default_factory=list)


async def generate_requirements(seed: TaskSeed, agents: ConstructionAgents, gateway: ModelGateway, record: Record, *,
                                cap: int = DECOMPOSITION_CAP, iterations: Sequence[dict[str, Any]] = (),
                                feedback: str = "") -> RequirementsOutcome:
    """Decomposer -> Evaluator until every requirement is retained (at most `cap` drafts), then the Analyzer.

    `iterations` are the drafts made before (a person rejected the last one, with `feedback`): the loop goes on
    from the next draft, its number counting them."""
    outcome = RequirementsOutcome(iterations=[dict(step) for step in iterations])
    for iteration in range(len(outcome.iterations) + 1, cap + 1):
        step: dict[str, Any] = {"iteration": iteration}
        outcome.iterations.append(step)
        try:
            decomposition = await agents.decomposer.decompose(gateway, seed, feedback=feedback, iteration=iteration)
        except StructuredOutputError as error:
            feedback = step["feedback"] = f"Your reply did not parse: {error}"
            record("decomposition", seed=seed.id, iteration=iteration, decision="refine", feedback=feedback)
            continue
        step["requirements"] = requirements = decomposition.requirements()
        if not MIN_EVOLVING <= len(decomposition.evolving) <= MAX_EVOLVING:
            feedback = step["feedback"] = (f"Give {MIN_EVOLVING} to {MAX_EVOLVING} evolving requirements "
                                           f"(you gave {len(decomposition.evolving)}).")
            record("decomposition", seed=seed.id, iteration=iteration, decision="refine", feedback=feedback)
            continue
        try:
            review = await agents.requirement_evaluator.review(gateway, seed, decomposition, iteration=iteration)
            refused = review.refused(len(requirements))
            step["scores"] = [score.model_dump() for score in review.requirements]
        except StructuredOutputError as error:
            refused = [f"the Evaluator's reply did not parse ({error}); draft again"]
        step["decision"] = "refine" if refused else "retain"
        record("requirement_review", seed=seed.id, iteration=iteration, decision=step["decision"],
               requirements=len(requirements), refused=refused)
        if refused:
            feedback = step["feedback"] = "\n".join(refused)
            continue
        outcome.order, outcome.requirements = await order_requirements(seed, agents, gateway, record, requirements,
                                                                       step)
        return outcome
    outcome.review = f"no decomposition retained in {cap} iterations; last feedback: {feedback}"
    return outcome


def usable_decomposition(step: dict[str, Any]) -> list[str] | None:
    """The requirements of a draft (a record of `RequirementsOutcome.iterations`) when it has 2-5 of them, else
    None (it did not parse, or had too few or too many): what a person may approve as it is."""
    requirements = step.get("requirements")
    return list(requirements) if requirements and MIN_EVOLVING + 1 <= len(requirements) <= MAX_EVOLVING + 1 else None


async def order_requirements(seed: TaskSeed, agents: ConstructionAgents, gateway: ModelGateway, record: Record,
                             requirements: Sequence[str], step: dict[str, Any]) -> tuple[list[int], list[str]]:
    """The Analyzer's DAG over retained `requirements`: (the order, the requirements in it); `step` (the draft's
    record) gets the pairs and, when the Analyzer's answer was not a DAG, why the Decomposer's order was kept."""
    decomposition = Decomposition(core=requirements[0], evolving=list(requirements[1:]))
    try:
        dependencies = await agents.analyzer.analyze(gateway, seed, decomposition)
        order = turn_order(len(requirements), dependencies.edges)
    except (StructuredOutputError, CycleError) as error:
        dependencies, order = Dependencies(), list(range(len(requirements)))
        step["analysis_note"] = f"the Analyzer's answer was not used ({error}); the Decomposer's order kept"
    step["edges"] = [list(edge) for edge in dependencies.edges]
    record("analysis", seed=seed.id, edges=step["edges"], order=order, note=step.get("analysis_note", ""))
    return order, [requirements[index] for index in order]
