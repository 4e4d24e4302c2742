"""One multi-turn task played by one model under one strategy and context, in its own run folder.

`run_refinement_task` drives the refinement graph (`projectgen.graphs.refinement`) like every run: run.json
(`refinement_request`: the task, the model, the strategy and context, a token budget), checkpoints,
events.jsonl, usage.jsonl, calls.jsonl (a rerun repeats no finished call) and prompts.jsonl; then each
turn's record in ``turns.json`` and the file it produced under ``turns/K/<target>``, for a person to read.
The batch of `projectgen refine` (`projectgen.experiments.refinement`) runs one per unit.
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
from projectgen.runs.folder import RunFolder
from projectgen.runs.layout import RefineLayout
from projectgen.runs.manifest import RunManifest
from projectgen.runs.request import RunRequest
from projectgen.runs.unit import Unit, UnitEnd, drive_unit

REFINE_METHOD = "refine"  # run.json's method of a refine task run


def refinement_request(task: MultiTurnTask, *, spec: str, strategy: str, context: str,
                       max_tokens: int | None = None) -> RunRequest:
    """run.json of one task run."""
    return RunRequest(task_path=str(task.root), task_id=task.id, method=REFINE_METHOD, models={"default": spec},
                      max_tokens=max_tokens, protocol={"strategy": strategy, "context": context})


async def arun_refinement_task(task: MultiTurnTask, run_dir: Path, request: RunRequest, *, model: Any,
                               evaluate: Callable[[Task, Mapping[str, str]], TestReport],
                               expected: Mapping[int, int], scope: str,
                               progress: Callable[[str], None] | None = None,
                               sync: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """Play `task` in `run_dir` as `request` says (or go on where an earlier invocation stopped); the turns'
    records in order. `evaluate` runs a turn's tests, `expected` is turn -> the tests its reference passes,
    `scope` keys the call cache; `sync()` as `RunParts.sync`."""
    from projectgen.agents.refiner import Refiner
    from projectgen.graphs.refinement import (RefinementContext, build_refinement_graph, initial_refinement_state,
                                              recursion_limit)

    strategy, setting = request.protocol["strategy"], request.protocol["context"]

    def outputs(folder: RunFolder, manifest: RunManifest, state: dict[str, Any]) -> UnitEnd[list[dict[str, Any]]]:
        records = sorted(state.get("turns") or [], key=lambda r: r["turn"])
        write_turns(folder, task, records)
        return UnitEnd(records, trace={"turns": len(records)}, record={"turns": records})

    return await drive_unit(RunFolder(Path(run_dir)), Unit(
        request=request, kind="refine", graph=build_refinement_graph(Refiner(model), strategy, setting),
        start=initial_refinement_state(task, strategy, setting), outputs=outputs,
        context=lambda gateway: RefinementContext(task=task, evaluate=evaluate, gateway=gateway,
                                                  expected=dict(expected), progress=progress),
        run_id=scope, scope=scope, sync=sync, config={"recursion_limit": recursion_limit(task)},
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
