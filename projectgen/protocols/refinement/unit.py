"""One multi-turn task played by one model under one strategy and context, in its own run folder.

`run_refinement_task` drives the refinement graph (`projectgen.protocols.refinement.graph`) like every run: run.json
(`refinement_request`: the task, the model, the strategy and context, a token budget), checkpoints,
events.jsonl, usage.jsonl, calls.jsonl (a rerun repeats no finished call) and prompts.jsonl; then each
turn's record in ``turns.json`` and the file it produced under ``turns/K/<target>``, for a person to read.
The batch of `projectgen refine` (`projectgen.protocols.refinement.batch`) runs one per unit.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from projectgen.datasets.multiturn import MultiTurnTask
from projectgen.datasets.task import Task
from projectgen.durable_files import write_atomic
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.protocols.definition import Solver
from projectgen.protocols.refinement.graph import (RefinementContext, build_refinement_graph, initial_refinement_state,
                                                   recursion_limit)
from projectgen.protocols.refinement.refiner import Refiner
from projectgen.protocols.refinement.settings import RefinementUnitSettings
from projectgen.runs.folder import RunFolder
from projectgen.runs.layout import RefineLayout
from projectgen.runs.manifest import RunManifest
from projectgen.runs.request import RunRequest
from projectgen.runs.unit import UnitEnd, UnitRun, drive_unit

REFINE_METHOD = "refine"  # run.json's method of a refine task run


def refinement_request(task: MultiTurnTask, *, spec: str, strategy: str, context: str,
                       max_tokens: int | None = None) -> RunRequest:
    """run.json of one task run."""
    return RunRequest(task_path=str(task.root), task_id=task.id, method=REFINE_METHOD, models={"default": spec},
                      max_tokens=max_tokens,
                      protocol=RefinementUnitSettings(strategy=strategy, context=context).model_dump(mode="json"))


def refinement_solver(task: MultiTurnTask, settings: RefinementUnitSettings, model: Any, runner: SandboxRunner | None,
                      evaluate: Callable[[Task, Mapping[str, str]], TestReport] | None = None,
                      expected: Mapping[int, int] | None = None,
                      progress: Callable[[str], None] | None = None) -> Solver:
    """The protocol's solver on one task: the refinement graph (the refiner on `model`, the unit's strategy and
    context), turn 1 to start from, and its context (how a turn's tests run, what each turn's reference passes)."""
    return Solver(graph=build_refinement_graph(Refiner(model), settings.strategy, settings.context),
                  start=initial_refinement_state(task, settings.strategy, settings.context),
                  context=lambda gateway: RefinementContext(task=task, runner=runner, evaluate=evaluate,
                                                            gateway=gateway, expected=dict(expected or {}),
                                                            progress=progress),
                  config={"recursion_limit": recursion_limit(task)})


async def arun_refinement_task(task: MultiTurnTask, run_dir: Path, request: RunRequest, *, model: Any,
                               evaluate: Callable[[Task, Mapping[str, str]], TestReport],
                               expected: Mapping[int, int], scope: str,
                               progress: Callable[[str], None] | None = None,
                               sync: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """Play `task` in `run_dir` as `request` says (or go on where an earlier invocation stopped); the turns'
    records in order. `evaluate` runs a turn's tests, `expected` is turn -> the tests its reference passes,
    `scope` keys the call cache; `sync()` as `RunParts.sync`."""
    settings = RefinementUnitSettings.model_validate(request.protocol)
    strategy, setting = settings.strategy, settings.context
    solver = refinement_solver(task, settings, model, None, evaluate=evaluate, expected=expected, progress=progress)

    def outputs(folder: RunFolder, manifest: RunManifest, state: dict[str, Any]) -> UnitEnd[list[dict[str, Any]]]:
        records = sorted(state.get("turns") or [], key=lambda r: r["turn"])
        write_turns(folder, task, records)
        return UnitEnd(records, trace={"turns": len(records)}, record={"turns": records})

    return await drive_unit(RunFolder(Path(run_dir)), UnitRun(
        request=request, kind="refine", graph=solver.graph, start=solver.start, outputs=outputs,
        context=solver.context, run_id=scope, scope=scope, sync=sync, config=solver.config,
        marker={"task_id": task.id, "method": REFINE_METHOD, "strategy": strategy, "context": setting}))


def run_refinement_task(task: MultiTurnTask, run_dir: Path, request: RunRequest, *, model: Any,
                        evaluate: Callable[[Task, Mapping[str, str]], TestReport], expected: Mapping[int, int],
                        scope: str, progress: Callable[[str], None] | None = None,
                        sync: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """`arun_refinement_task` for synchronous callers (each batch worker thread runs its own event loop)."""
    return asyncio.run(arun_refinement_task(task, run_dir, request, model=model, evaluate=evaluate,
                                            expected=expected, scope=scope, progress=progress, sync=sync))


def write_turns(folder: RunFolder, task: MultiTurnTask, records: Sequence[Mapping[str, Any]]) -> None:
    """Each turn's file under ``turns/K/<target>`` (with a target function, the file its answer makes) and every
    record in ``turns.json``, for a person to read."""
    paths = RefineLayout(folder.root)
    for record in records:
        write_atomic(paths.turn_file(record["turn"], task.target), task.target_file(record.get("code") or "",
                                                                                    record["turn"]))
    folder.write_json(paths.turns, list(records))
