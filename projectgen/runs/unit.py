"""A batch unit's run: one protocol's graph in its own resumable run folder, through the one driver.

Every protocol unit (a `reflect` exercise, a `refine` task run, a new protocol's) takes the same steps:
the folder opened for its request (`RunFolder.open_unit`: resumed, or started over when it holds another
request), the model gateway from the folder (usage, call cache, prompts, budgets), the graph driven
(checkpoints, trace, Ctrl-C, a failing model), the protocol's outputs written, the run log (its record and
summary.json, `write_run_log`), run.json's end status.
`drive_unit` takes them; a protocol says only what differs (`UnitRun`), so adding one needs no module here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from projectgen.runs.driver import Drive, drive
from projectgen.runs.folder import RunFolder
from projectgen.runs.manifest import RunManifest
from projectgen.runs.request import RunRequest
from projectgen.runs.run_log import RunKind, write_run_log

if TYPE_CHECKING:
    from projectgen.agents.base import ModelGateway

Result = TypeVar("Result")


@dataclass(frozen=True)
class UnitEnd(Generic[Result]):
    """What a unit's outputs step gives back: its result, the trace's run_end fields, and what the run log keeps
    (the protocol's record, and summary.json's text for a protocol that writes one)."""

    result: Result
    trace: Mapping[str, Any]
    record: Mapping[str, Any]
    summary: str | None = None


@dataclass(frozen=True)
class UnitRun(Generic[Result]):
    """What one protocol unit is: its request (run.json), its graph and input, the context the graph runs
    with (built around the run's gateway), and what it writes when the graph ends."""

    request: RunRequest
    kind: RunKind  # the run log's kind
    graph: Any
    start: Any
    context: Callable[[ModelGateway], Any]
    outputs: Callable[[RunFolder, RunManifest, dict[str, Any]], UnitEnd[Result]]
    """Writes the unit's own outputs from the final state; returns its result, trace fields and log record."""
    run_id: str
    scope: str  # keys the call cache
    marker: Mapping[str, Any] = field(default_factory=dict)  # the trace's run_start fields
    config: Mapping[str, Any] = field(default_factory=dict)  # e.g. a recursion limit
    thread: Callable[[RunFolder, RunManifest], str] | None = None  # the checkpoint thread (default: run id)
    sync: Callable[[], None] | None = None  # `RunParts.sync`


async def drive_unit(folder: RunFolder, unit: UnitRun[Result]) -> Result:
    """Run (or resume) `unit` in `folder` to its end: its outputs and run log written, run.json saying
    "finished"."""
    with folder.open_unit(unit.request, run_id=unit.run_id) as (lifecycle, resume):
        manifest = lifecycle.manifest
        gateway = folder.gateway(manifest.settings, scope=unit.scope, budget=folder.budget(manifest), sync=unit.sync)
        how = Drive(start=unit.start, context=unit.context(gateway), resume=resume, sync=unit.sync,
                    config=unit.config, marker=unit.marker,
                    thread_id=unit.thread(folder, manifest) if unit.thread is not None else None)
        trace = folder.trace()
        driven = await drive(unit.graph, how, lifecycle, trace, folder.checkpoints)
        end = unit.outputs(folder, manifest, driven.state)
        write_run_log(folder, unit.kind, end.record, manifest=manifest, summary=end.summary)
        lifecycle.record("finished", None)
        trace.write("run_end", status="finished", **end.trace)
        return end.result
