"""The one driver: a compiled graph run with a run folder's checkpoints, for every command that runs one.

`drive` is given the graph, its input, the run's `Lifecycle` (run.json), its trace writer and where its
checkpoints are, not the folder; it puts the checkpointer on the graph, tells a new run from a resumed
one by the checkpoint, streams the graph with every node traced to events.jsonl, and records how the run
ended through the lifecycle: interrupted (Ctrl-C or SIGTERM, then re-raised) or failed (a model that kept
failing; its error re-raised after the caller's `on_failure` saved what it can). A finished graph comes
back as its state (and the interrupts it paused at, a review waiting for a person); writing the outputs
and the finished status is the caller's, which knows what its run produces.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from projectgen.errors import ProjectGenError
from projectgen.runs.checkpoints import open_checkpointer
from projectgen.runs.execution import stream_graph
from projectgen.runs.lifecycle import INTERRUPTED_REASON, Lifecycle
from projectgen.runs.trace import TraceWriter, read_trace

if TYPE_CHECKING:
    from langgraph.types import Command, Interrupt

FailureHook = Callable[[str, dict[str, Any]], Awaitable[Mapping[str, Any]]]
"""Called with a failed run's reason and the state it reached, before run.json says so: saves what it can
(the best so far), returns fields for the trace's ``run_end``."""


@dataclass(frozen=True)
class Drive:
    """How to drive one graph: its input, its context, what the trace says, how a failure is saved; made once
    (a review's decision goes in with `dataclasses.replace`)."""

    start: Any  # the graph's input for a run from the beginning
    context: Any
    resume: bool = False  # continue from the checkpoint (when there is one)
    decision: Command | None = None  # ``Command(resume=...)``: continues a graph paused at an interrupt
    marker: Mapping[str, Any] = field(default_factory=dict)  # fields of the trace's run_start / run_resumed
    config: Mapping[str, Any] = field(default_factory=dict)  # besides the thread (recursion limit, concurrency)
    thread_id: str | None = None  # default: run.json's run id
    sync: Callable[[], None] | None = None  # called before each checkpoint is written
    on_update: Callable[[TraceWriter, tuple[str, ...], Any], None] | None = None  # default: traced as it is
    on_failure: FailureHook | None = None
    attempt_key: str | None = None  # the state key of the attempt a resumed trace goes on in
    started_mark: Path | None = None  # what a started run has written (LiveCoder's attempts/): a resume that
    # finds it but no checkpoint is refused rather than run from the beginning over it


@dataclass(frozen=True)
class Driven:
    """How a drive ended: the graph's state, the interrupts it paused at, whether it had ended before."""

    state: dict[str, Any]
    interrupts: tuple[Interrupt, ...] = ()
    finished_before: bool = False  # a resume of a graph that had already run to its end


async def drive(graph: Any, how: Drive, lifecycle: Lifecycle, trace: TraceWriter, checkpoints: Path) -> Driven:
    """Run (or continue) `graph` as `how` says, checkpointed in the SQLite file `checkpoints` (or the PostgreSQL
    database run.json names); see the module docstring."""
    manifest = lifecycle.manifest
    config = {**how.config, "configurable": {"thread_id": how.thread_id or manifest.run_id}}
    async with open_checkpointer(checkpoints, manifest.checkpoint_url, before_write=how.sync) as saver:
        graph = graph.copy(update={"checkpointer": saver})
        snapshot = await graph.aget_state(config)
        start: Any
        if how.decision is not None:
            trace.write("run_resumed", run_id=manifest.run_id, **how.marker)
            trace.resume_at(await _committed_attempt(saver, config, how.attempt_key))
            start = how.decision
        else:
            from_start = not how.resume or not snapshot.values
            if how.resume and from_start and how.started_mark is not None and how.started_mark.exists():
                raise ProjectGenError(f"{how.started_mark.parent}: no checkpoint to resume from")
            # Finished: nothing to run next and no task pending (a run killed right after its input was
            # checkpointed has no next node yet, but the pending start task).
            if how.resume and not from_start and not snapshot.next and not snapshot.tasks:
                trace.write("run_resumed", run_id=manifest.run_id, note="already finished")
                return Driven(state=dict(snapshot.values), finished_before=True)
            trace.write("run_resumed" if how.resume else "run_start", run_id=manifest.run_id, **how.marker,
                        **({"note": "no checkpoint yet: from the beginning"} if how.resume and from_start else {}))
            trace.resume_at(None if from_start else await _committed_attempt(saver, config, how.attempt_key))
            start = how.start if from_start else None

        def on_update(namespace: tuple[str, ...], chunk: Any) -> None:
            if how.on_update is not None:
                how.on_update(trace, namespace, chunk)
            else:
                trace.update(namespace, chunk)

        try:
            streamed = await stream_graph(graph, start, context=how.context, config=config, on_update=on_update)
        except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, or SIGTERM through the CLI
            lifecycle.interrupted()
            trace.write("run_end", stopped=INTERRUPTED_REASON, status="interrupted")
            raise
        if streamed.failure is not None:
            reason = streamed.reason
            saved = dict(await how.on_failure(reason, streamed.state)) if how.on_failure is not None else {}
            lifecycle.failed(reason)
            trace.write("run_end", **saved, stopped=reason, status="failed")
            raise streamed.failure
        snapshot = await graph.aget_state(config)
        return Driven(state=dict(snapshot.values), interrupts=tuple(snapshot.interrupts))


async def _committed_attempt(saver: Any, config: Mapping[str, Any], key: str | None) -> Any:
    """The attempt in the last committed checkpoint, where a resumed trace goes on. Not the state snapshot's:
    it folds in the pending writes of nodes that finished before a kill, which LangGraph replays on resume, and
    the replay of a node that moves the attempt on ("learn") belongs to the attempt it ran in."""
    if not key:
        return None
    saved = await saver.aget_tuple(config)
    return (saved.checkpoint.get("channel_values") or {}).get(key) if saved is not None else None


async def drive_within(graph: Any, start: Any, *, context: Any, config: Mapping[str, Any], trace: TraceWriter,
                       marker: Mapping[str, Any]) -> dict[str, Any]:
    """Run `graph` inside a caller's node (LangGraph Studio's, whose server owns the thread): under the
    caller's config, so its checkpoints nest in the caller's thread and a review's interrupt reaches the
    caller as its own; the server owns resume, cancellation and the run's status, so no run.json is kept.
    Streamed like `drive`'s graphs, every node traced; the trace is written off the event loop (the
    server fails a run whose node blocks its loop). A model that kept failing fails the caller's run after
    ``run_end`` says why; a pause for review writes ``review_requested``, and the run that resumes it
    ``run_resumed``, skipping the updates LangGraph replays."""
    from langgraph.errors import GraphInterrupt

    resumed = await asyncio.to_thread(_paused_for_review, trace)
    if resumed:
        await asyncio.to_thread(trace.resume_at, None)
    await asyncio.to_thread(trace.write, "run_resumed" if resumed else "run_start", **marker)

    async def on_update(namespace: tuple[str, ...], chunk: Any) -> None:
        await asyncio.to_thread(trace.update, namespace, chunk)

    try:
        streamed = await stream_graph(graph, start, context=context, config=config, on_update=on_update)
    except GraphInterrupt as paused:
        requests = [getattr(pending, "value", None) for pending in (paused.args[0] if paused.args else ())]
        request = next((value for value in requests if isinstance(value, Mapping)), {})
        await asyncio.to_thread(trace.write, "review_requested", stage=request.get("stage"),
                                iteration=request.get("iteration"), judge=request.get("judge"))
        raise
    if streamed.failure is not None:
        await asyncio.to_thread(trace.write, "run_end", stopped=streamed.reason, status="failed")
        raise streamed.failure
    await asyncio.to_thread(trace.write, "run_end", stopped=streamed.state.get("stopped"), status="finished")
    return streamed.state


def _paused_for_review(trace: TraceWriter) -> bool:
    """Whether the trace's last run paused for a review (so this one resumes it) rather than ended."""
    marks = [event["event"] for event in read_trace(trace.path) if event.get("event") in
             ("run_start", "run_resumed", "review_requested", "run_end")]
    return bool(marks) and marks[-1] == "review_requested"
