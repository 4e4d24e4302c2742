"""The one execution path of a run, shared by the single pass (`pipeline`) and LiveCoder (`livecoder`).

Both go through the same steps, so they cannot drift apart: open the output folder (refusing
to mix runs, `--force` clearing only a run's files), reach models through one `ModelGateway`
(usage recorder, budget, call cache), stream a compiled graph keeping the state it reached,
turn a model that fails for good into a recorded failure instead of lost work, run the hidden
unit tests on the final repository, and write the outputs (every JSON file atomically).
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from projectgen.agents import ModelGateway
from projectgen.config import Settings
from projectgen.datasets.task import Task
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.llm import MODEL_FAILURES, Budget, CallCache, PromptStore, UsageRecorder, model_failure_reason
from projectgen.repository import write_repository
from projectgen.runs import layout
from projectgen.runs.locking import folder_lock

INTERRUPT = "__interrupt__"  # LangGraph's key for the interrupts a paused graph streams

# ------------------------------------------------------------------ the output folder


def prepare_out_dir(out_dir: Path, *, force: bool) -> None:
    """Refuse to mix a new run into an earlier one's files unless told to, and a folder that cannot be
    written; both before anything is written or removed (a folder made here is removed again on failure)."""
    out_dir = Path(out_dir)
    made: Path | None = None  # the topmost folder this call creates
    try:
        if out_dir.exists() and not out_dir.is_dir():
            raise ProjectGenError(f"{out_dir} exists and is not a folder; choose another --out")
        if out_dir.exists() and any(p.name != layout.LOCK for p in out_dir.iterdir()) and not force:
            raise ProjectGenError(f"{out_dir} is not empty; choose another --out or pass --force to replace it")
        if not out_dir.exists():
            made = out_dir
            while not made.parent.exists() and made.parent != made:
                made = made.parent
            out_dir.mkdir(parents=True)
        handle, probe = tempfile.mkstemp(prefix=".projectgen-write-check-", dir=out_dir)
        os.close(handle)
        os.unlink(probe)
        if force:
            _remove_run_outputs(out_dir)
    except OSError as exc:
        if made is not None and made.is_dir():
            shutil.rmtree(made, ignore_errors=True)
        raise ProjectGenError(f"{out_dir}: cannot write there ({exc.strerror or exc}); choose another --out") \
            from None


def _remove_run_outputs(out_dir: Path) -> None:
    """What `--force` clears: the files a run writes (`layout.RUN_OUTPUTS`), and nothing else."""
    for name in layout.RUN_OUTPUTS:
        target = out_dir / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()


@contextmanager
def new_run_folder(out_dir: Path, *, force: bool) -> Iterator[None]:
    """`out_dir` prepared for a new run (`prepare_out_dir`) and held by this process until the block ends.

    With `--force` on an existing folder the lock is taken first, so the files of a run still going
    there are never deleted; otherwise after, so a folder made here is removed again on failure.
    """
    with ExitStack() as locked:
        early = force and out_dir.is_dir()
        if early:
            locked.enter_context(folder_lock(out_dir))
        prepare_out_dir(out_dir, force=force)
        if not early:
            locked.enter_context(folder_lock(out_dir))
        yield


# ------------------------------------------------------------------ models and graphs


def open_gateway(settings: Settings, *, recorder: UsageRecorder, budget: Budget | None,
                 cache: CallCache | None = None, prompts: PromptStore | None = None,
                 metadata: Mapping[str, Any] | None = None) -> ModelGateway:
    """The one door to the models for a run: calls recorded, charged to `budget`, answered from `cache`,
    their prompts kept in `prompts`."""
    return ModelGateway(recorder=recorder, budget=budget, cache=cache, prompts=prompts,
                        metadata=dict(metadata or {}), **settings.gateway_options())


@dataclass(frozen=True)
class GraphRun:
    """How streaming a graph ended: the last state it reached and, if a model failed for good, why."""

    state: dict[str, Any]
    failure: BaseException | None = None
    interrupts: tuple[Any, ...] = ()  # LangGraph `Interrupt`s the graph paused at (a review waiting for a person)

    @property
    def reason(self) -> str | None:
        """The failure's one line for run.json and summaries (None when the graph ran to its end)."""
        return model_failure_reason(self.failure) if self.failure is not None else None


async def stream_graph(graph: Any, start: Any, *, context: Any, config: Mapping[str, Any],
                       on_update: Callable[[tuple[str, ...], Any], None] | None = None) -> GraphRun:
    """Stream `graph` from `start` (None: on from its checkpoint; a LangGraph ``Command(resume=...)``: on from
    an interrupt) to its end or an interrupt, keeping the state after each step.

    `on_update(namespace, update)` sees every node's update, inner graphs' included (the trace). A
    model that keeps failing (`MODEL_FAILURES`) ends the stream with the state reached before it,
    so the calls already paid for are not lost; any other error propagates. A graph that pauses
    (`interrupt()`: a review) ends the stream with its interrupts in `GraphRun.interrupts`.
    """
    state = dict(start) if isinstance(start, Mapping) else {}
    interrupts: tuple[Any, ...] = ()
    modes = ["values", "updates"] if on_update is not None else ["values"]
    try:
        async for part in graph.astream(start, config, context=context, stream_mode=modes,
                                        subgraphs=on_update is not None):
            namespace, mode, chunk = part if len(part) == 3 else ((), *part)
            if mode == "updates" and on_update is not None:
                on_update(namespace, chunk)
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
    if "unit" not in task.suites or not repository:
        return None
    if progress:
        progress(f"running the hidden unit tests{what}")
    return await asyncio.to_thread(runner.evaluate, task, dict(repository), "unit")


# ------------------------------------------------------------------ outputs


def write_json(path: Path, data: Any) -> None:
    """`data` as indented JSON, replacing `path` in one step (a kill leaves the old file or the new one)."""
    write_atomic(path, json.dumps(data, indent=1, default=str) + "\n")


def write_output_repository(out_dir: Path, repository: Mapping[str, str]) -> None:
    """The run's output repository, replacing what an earlier (failed or resumed) invocation left there."""
    target = out_dir / layout.REPOSITORY
    if target.is_dir():
        shutil.rmtree(target)
    write_repository(repository, target)
    target.mkdir(parents=True, exist_ok=True)
