"""One seed through SR-Eval's construction, in its own run folder: the seed filters, requirement generation,
Algorithm 1 per turn (the seed's graph, `graph`), and the task folder written.

The run folder (`projectgen.runs.RunFolder`: run.json, checkpoints.sqlite, usage.jsonl, calls.jsonl,
prompts.jsonl, events.jsonl) makes a seed resumable: a seed run again after a kill goes on from its last
checkpoint and replays the model calls its interrupted node had finished from calls.jsonl. A seed that needs a
person pauses (run.json ``awaiting-review``, review.json the request, as `run --review` does) and goes on with
their decision (`construct_seed(..., decision=...)`). Every decision is an event of events.jsonl and a line of
the task's trajectory (``construction.json``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from projectgen.errors import ProjectGenError
from projectgen.protocols.multiturn_construction.agents import ConstructionAgents
from projectgen.protocols.multiturn_construction.output import write_task
from projectgen.protocols.multiturn_construction.seeds import TaskSeed
from projectgen.protocols.multiturn_construction.settings import ConstructionSettings
from projectgen.protocols.multiturn_construction.turns import TurnRecord
from projectgen.runs.folder import RunFolder
from projectgen.runs.pending_review import (AWAITING_REVIEW, awaiting_reason, not_awaiting, pending_review_record,
                                            read_pending_review)
from projectgen.runs.request import RunRequest

if TYPE_CHECKING:
    from projectgen.evaluation import SandboxRunner
    from projectgen.graphs.review import ReviewDecision

CONSTRUCT_METHOD = "construct-multiturn"  # run.json's method of a seed's run
Status = Literal["task", "filtered", "review", "error"]  # error: the construction itself failed (run it again)


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


def seed_request(seed: TaskSeed, *, spec: str, settings: ConstructionSettings, max_tokens: int | None) -> RunRequest:
    """run.json of one seed's construction."""
    return RunRequest(task_path=str(seed.root), task_id=seed.id, method=CONSTRUCT_METHOD, models={"default": spec},
                      max_tokens=max_tokens, protocol=settings.protocol())


async def construct_seed(seed: TaskSeed, run_dir: Path, task_dir: Path, request: RunRequest, *,
                         agents: ConstructionAgents, runner: SandboxRunner, settings: ConstructionSettings,
                         decision: ReviewDecision | None = None) -> SeedOutcome:
    """`seed` built into the task folder `task_dir` (or filtered out, or paused for a person), recorded in
    `run_dir`; with `decision`, the seed paused there goes on with a person's decision."""
    from langgraph.types import Command

    from projectgen.config import Settings
    from projectgen.protocols.multiturn_construction.graph import SeedContext, build_seed_graph
    from projectgen.runs.driver import Drive, drive

    folder = RunFolder(run_dir)
    with folder.open_unit(request, run_id=f"construct-{seed.id}") as (lifecycle, resumed):
        manifest = lifecycle.manifest
        gateway = folder.gateway(Settings(), scope=seed.id, budget=folder.budget(manifest))
        trace = folder.trace()
        context = SeedContext(seed=seed, agents=agents, gateway=gateway, runner=runner, settings=settings,
                              record=trace.write)
        how = Drive(start={}, context=context, resume=resumed, marker={"seed": seed.id, "method": CONSTRUCT_METHOD,
                                                                       **settings.protocol()},
                    on_update=lambda trace, namespace, chunk: None)  # the nodes write their own events
        if decision is not None:
            pending = read_pending_review(folder)
            if pending is None:
                raise ProjectGenError(not_awaiting(run_dir))
            lifecycle.running()
            how = replace(how, decision=Command(resume={pending["interrupt_id"]: decision.model_dump(
                mode="json", exclude_none=True)}), marker={"seed": seed.id, "review": decision.action,
                                                           "stage": pending.get("stage")})
        driven = await drive(build_seed_graph(), how, lifecycle, trace, folder.checkpoints)
        state = driven.state

        def finish(status: Status, reason: str = "", **fields: Any) -> SeedOutcome:
            from projectgen.llm import UsageTotals
            from projectgen.llm.pricing import PriceTable

            records = folder.usage_records()
            totals, cost = UsageTotals.of(records), PriceTable.default().total(records)
            drafts = sum(len(turn["drafts"]) for turn in state.get("turns") or []) + len(state.get("drafts") or [])
            outcome = SeedOutcome(seed=seed.id, status=status, reason=reason, input_tokens=totals.input_tokens,
                                  output_tokens=totals.output_tokens, calls=totals.calls, cost_usd=cost.value,
                                  cost=cost.label(), turns=len(state.get("turns") or []), drafts=drafts, **fields)
            if status == "review":
                return outcome
            folder.clear_review()
            lifecycle.record("finished", reason or None)
            trace.write("run_end", status="finished", outcome=outcome.model_dump())
            return outcome

        if driven.interrupts:
            asked = dict(driven.interrupts[0].value)
            record = pending_review_record(attempt=None, interrupt_id=driven.interrupts[0].id, request=asked)
            folder.write_review(record)
            lifecycle.record(AWAITING_REVIEW, awaiting_reason(run_dir, record))
            trace.write("review_requested", seed=seed.id, stage=asked.get("stage"), turn=asked.get("turn"),
                        iteration=asked.get("iteration"), reason=asked.get("reason"), error=asked.get("error"))
            return finish("review", asked.get("reason") or "")
        if state.get("filtered"):
            return finish("filtered", state["filtered"])
        task = write_task(seed, [TurnRecord(**turn) for turn in state["turns"]], task_dir,
                          trajectory(seed, request, settings, state))
        trace.write("task_written", seed=seed.id, folder=str(task.root), turns=len(task.turns))
        return finish("task", task_folder=str(task.root))


def trajectory(seed: TaskSeed, request: RunRequest, settings: ConstructionSettings, state: Mapping[str, Any]
               ) -> dict[str, Any]:
    """construction.json: the filters (and each one's verdict), the converted instruction (repository level), every decomposition draft and
    the order, every turn's drafts, and every decision a person made."""
    return {"seed": seed.id, "model": request.models["default"], "settings": settings.protocol(),
            "filters": state.get("filtered") or "kept", "filter_verdicts": state.get("filter_verdicts") or [],
            "instruction": state.get("instruction") or None,
            "requirements": {"iterations": state.get("decompositions") or [], "order": state.get("order") or []},
            "turns": [{"turn": turn["turn"], "requirement": turn["requirement"], "drafts": turn["drafts"]}
                      for turn in state.get("turns") or []],
            "reviews": state.get("reviews") or []}
