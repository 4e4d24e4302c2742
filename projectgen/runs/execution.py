"""The steps of a run below the driver: stream a compiled graph keeping the state it reached (a model that
fails for good ends the stream instead of losing the work), and run the hidden unit tests on the final
repository."""
from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from projectgen.datasets.task import Task
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.llm import MODEL_FAILURES, model_failure_reason

if TYPE_CHECKING:
    from langgraph.types import Interrupt

INTERRUPT = "__interrupt__"  # LangGraph's key for the interrupts a paused graph streams
NAMESPACE_SEPARATOR = "|"  # between the parts of LangGraph's ``checkpoint_ns`` (a graph run inside a node)

# ------------------------------------------------------------------ graphs


@dataclass(frozen=True)
class GraphRun:
    """How streaming a graph ended: the last state it reached and, if a model failed for good, why."""

    state: dict[str, Any]
    failure: BaseException | None = None
    interrupts: tuple[Interrupt, ...] = ()  # where the graph paused (a review waiting for a person)

    @property
    def reason(self) -> str | None:
        """The failure's one line for run.json and summaries (None when the graph ran to its end)."""
        return model_failure_reason(self.failure) if self.failure is not None else None


async def stream_graph(graph: Any, start: Any, *, context: Any, config: Mapping[str, Any],
                       on_update: Callable[[tuple[str, ...], Any], Awaitable[None] | None] | None = None
                       ) -> GraphRun:
    """Stream `graph` from `start` (None: on from its checkpoint; a LangGraph ``Command(resume=...)``: on from
    an interrupt) to its end or an interrupt, keeping the state after each step.

    `on_update(namespace, update)` sees every node's update, inner graphs' included (the trace); it may be a
    coroutine function (a trace written off the event loop, as a server's loop requires). A
    model that keeps failing (`MODEL_FAILURES`) ends the stream with the state reached before it,
    so the calls already paid for are not lost; any other error propagates. A graph that pauses
    (`interrupt()`: a review) ends the stream with its interrupts in `GraphRun.interrupts`.
    """
    state = dict(start) if isinstance(start, Mapping) else {}
    interrupts: tuple[Interrupt, ...] = ()
    # Inside a caller's node (Studio's), the stream names every namespace from the caller's root: drop its part.
    caller = tuple(part for part in str((config.get("configurable") or {}).get("checkpoint_ns") or "").split(
        NAMESPACE_SEPARATOR) if part)
    modes = ["values", "updates"] if on_update is not None else ["values"]
    try:
        async for part in graph.astream(start, config, context=context, stream_mode=modes,
                                        subgraphs=on_update is not None):
            namespace, mode, chunk = part if len(part) == 3 else ((), *part)
            if caller and namespace[:len(caller)] == caller:
                namespace = namespace[len(caller):]
            if mode == "updates" and on_update is not None:
                traced = on_update(namespace, chunk)
                if inspect.isawaitable(traced):
                    await traced
            elif mode == "values" and not namespace:
                chunk = dict(chunk)
                interrupts = tuple(chunk.pop(INTERRUPT, ()) or ())
                state = chunk
    except MODEL_FAILURES as exc:
        return GraphRun(state=state, failure=exc)
    return GraphRun(state=state, interrupts=interrupts)


async def run_hidden_unit_tests(runner: SandboxRunner, task: Task, repository: Mapping[str, str], *,
                                progress: Callable[[str], None] | None, what: str = "") -> TestReport | None:
    """The task's hidden unit tests on `repository` (None when the task has none or nothing was generated)."""
    if not task.has_scored_suite() or not repository:
        return None
    if progress:
        progress(f"running the hidden unit tests{what}")
    return await asyncio.to_thread(runner.evaluate, task, dict(repository), task.scored_suite)
