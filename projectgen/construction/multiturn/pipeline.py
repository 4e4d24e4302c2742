"""One seed through SR-Eval's construction, in its own run folder: the seed filters, requirement generation,
Algorithm 1 per turn, and the task folder written.

The run folder (`projectgen.runs.RunFolder`: run.json, usage.jsonl, calls.jsonl, prompts.jsonl, events.jsonl)
makes a seed resumable: a seed run again after a kill replays its finished model calls from calls.jsonl and
only re-runs the sandbox checks. Every decision is an event of events.jsonl and a line of the task's
trajectory (``construction.json``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from projectgen.agents.base import ModelGateway
from projectgen.construction.execution import execute
from projectgen.construction.multiturn.agents import ConstructionAgents
from projectgen.construction.multiturn.output import write_task
from projectgen.construction.multiturn.requirements import DECOMPOSITION_CAP, Record, generate_requirements
from projectgen.construction.multiturn.seeds import Seed, dependencies, function_lines
from projectgen.datasets.multiturn import TESTS_DIR
from projectgen.construction.multiturn.turns import (ABLATIONS, FULL, TURN_CAP, build_turns, check_ablation,
                                                    failing_summary)
from projectgen.errors import ProjectGenError
from projectgen.runs.folder import RunFolder
from projectgen.runs.request import RunRequest

if TYPE_CHECKING:
    from projectgen.evaluation import SandboxRunner

CONSTRUCT_METHOD = "construct-multiturn"  # run.json's method of a seed's run
MIN_FUNCTION_LINES = 10  # SR-Eval keeps seeds whose target function has at least 10 lines
Status = Literal["task", "filtered", "review", "error"]  # error: the construction itself failed (run it again)


@dataclass(frozen=True)
class ConstructionSettings:
    """What the construction does besides its model: the ablation, the caps, the optional filter."""

    ablation: str = FULL
    decomposition_cap: int = DECOMPOSITION_CAP
    turn_cap: int = TURN_CAP
    contamination: bool = False
    min_function_lines: int = MIN_FUNCTION_LINES

    def __post_init__(self) -> None:
        check_ablation(self.ablation)
        if min(self.decomposition_cap, self.turn_cap) < 1:
            raise ProjectGenError("the decomposition and turn caps must be at least 1")

    def protocol(self) -> dict[str, Any]:
        """run.json's and the ledger's record of them: a seed built under other settings is built again."""
        return {"ablation": self.ablation, "ablation_means": ABLATIONS[self.ablation],
                "decomposition_cap": self.decomposition_cap, "turn_cap": self.turn_cap,
                "contamination": self.contamination, "min_function_lines": self.min_function_lines}


class SeedOutcome(BaseModel):
    """What became of one seed: a task, dropped by a filter, waiting for a person, or an error (why), and its cost."""

    seed: str
    status: Status
    reason: str = ""
    turns: int = 0
    drafts: int = Field(default=0, description="Coder drafts over every turn")
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = Field(default=0, description="model calls, those of earlier invocations included")
    cost_usd: float | None = Field(default=None, description="at list prices; 0 for a replay, None when some model "
                                   "has no price")
    cost: str = Field(default="-", description="the cost as reports print it ($0.0123, n/a, ...)")
    task_folder: str | None = None


def seed_request(seed: Seed, *, spec: str, settings: ConstructionSettings, max_tokens: int | None) -> RunRequest:
    """run.json of one seed's construction."""
    return RunRequest(task_path=str(seed.root), task_id=seed.id, method=CONSTRUCT_METHOD, models={"default": spec},
                      max_tokens=max_tokens, protocol=settings.protocol())


async def construct_seed(seed: Seed, run_dir: Path, task_dir: Path, request: RunRequest, *,
                         agents: ConstructionAgents, runner: SandboxRunner,
                         settings: ConstructionSettings) -> SeedOutcome:
    """`seed` built into the task folder `task_dir` (or filtered out, or left for review), recorded in `run_dir`."""
    from projectgen.config import Settings

    folder = RunFolder(run_dir)
    with folder.open_unit(request, run_id=f"construct-{seed.id}") as (manifest, resumed):
        gateway = folder.gateway(Settings(), scope=seed.id, budget=folder.budget(manifest))
        trace = folder.trace()
        trace.write("run_start", seed=seed.id, method=CONSTRUCT_METHOD, resumed=resumed, **settings.protocol())
        trajectory: dict[str, Any] = {"seed": seed.id, "model": request.models["default"],
                                      "settings": settings.protocol()}

        def finish(status: Status, reason: str = "", **fields: Any) -> SeedOutcome:
            from projectgen.llm import UsageTotals
            from projectgen.llm.pricing import PriceTable

            records = folder.usage_records()
            totals, cost = UsageTotals.of(records), PriceTable.default().total(records)
            outcome = SeedOutcome(seed=seed.id, status=status, reason=reason, input_tokens=totals.input_tokens,
                                  output_tokens=totals.output_tokens, calls=totals.calls, cost_usd=cost.value,
                                  cost=cost.label(), **fields)
            folder.record_status(manifest, "finished", reason or None)
            trace.write("run_end", status="finished", outcome=outcome.model_dump())
            return outcome

        dropped = await filter_seed(seed, agents, gateway, runner, settings, trace.write)
        trajectory["filters"] = dropped or "kept"
        if dropped:
            return finish("filtered", dropped)
        requirements = await generate_requirements(seed, agents, gateway, trace.write, cap=settings.decomposition_cap)
        trajectory["requirements"] = {"iterations": requirements.iterations, "order": requirements.order}
        if requirements.review:
            trace.write("human_review", seed=seed.id, reason=requirements.review)
            return finish("review", requirements.review)
        turns = await build_turns(seed, requirements.requirements, agents, gateway, runner, trace.write,
                                  ablation=settings.ablation, cap=settings.turn_cap)
        trajectory["turns"] = [{"turn": t.turn, "requirement": t.requirement, "drafts": t.drafts} for t in turns.turns]
        drafts = sum(len(t.drafts) for t in turns.turns) + len(turns.rejected)
        if turns.review:
            trajectory["rejected_drafts"] = turns.rejected
            trace.write("human_review", seed=seed.id, reason=turns.review, trajectory=trajectory)
            return finish("review", turns.review, turns=len(turns.turns), drafts=drafts)
        task = write_task(seed, turns.turns, task_dir, trajectory)
        trace.write("task_written", seed=seed.id, folder=str(task.root), turns=len(task.turns))
        return finish("task", turns=len(task.turns), drafts=drafts, task_folder=str(task.root))


async def filter_seed(seed: Seed, agents: ConstructionAgents, gateway: ModelGateway, runner: SandboxRunner,
                      settings: ConstructionSettings, record: Record) -> str:
    """Why SR-Eval's seed filters drop `seed` ("" when it is kept): its target function must have at least
    `min_function_lines` lines and, at repository level, no intra- or cross-file dependency; its reference must pass
    its tests; and (when asked) a model shown only the function's signature and docstring must not pass them (else
    the seed is taken as leaked into the model's training data)."""
    reference = seed.reference()
    lines = function_lines(reference, seed.function)
    if lines < settings.min_function_lines:
        reason = (f"{seed.target}: {seed.function} has {lines} line(s), fewer than {settings.min_function_lines}"
                  if lines else f"{seed.target} defines no function {seed.function!r}")
        record("seed_filter", seed=seed.id, filter="length", kept=False, reason=reason)
        return reason
    if seed.level == "repository" and (found := dependencies(seed)):
        record("seed_filter", seed=seed.id, filter="dependencies", kept=False, found=found)
        return "depends on the code around it: " + "; ".join(found)
    tests = {f"{TESTS_DIR}/{path}": text for path, text in seed.tests().items()}
    run = execute(runner, seed.task(), seed.candidate(reference), tests)
    record("seed_filter", seed=seed.id, filter="reference", kept=run.all_passed, passed=run.passed, total=run.total,
           anomaly=run.anomaly)
    if not run.all_passed:
        return f"the reference does not pass its tests ({run.passed}/{run.total}): {failing_summary(run)}"
    if settings.contamination:
        probe = await agents.contamination.complete(gateway, seed)
        leaked = execute(runner, seed.task(), seed.candidate(probe), tests)
        record("seed_filter", seed=seed.id, filter="contamination", kept=not leaked.all_passed, passed=leaked.passed,
               total=leaked.total)
        if leaked.all_passed:
            return "leaked: code written from the signature and docstring alone passes the reference tests"
    return ""
