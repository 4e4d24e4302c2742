"""Executors for the batch engine (`projectgen.experiments.engine.Executor`): this process's threads.

`LocalExecutor` runs units on daemon threads and hands each result back in a
`concurrent.futures.Future`. Not a `ThreadPoolExecutor`: its threads are joined when the
interpreter exits, so Ctrl-C would wait for every running unit (a LiveCoder run, a sandboxed
test suite) to end. Here Ctrl-C ends the command at once: what a unit had finished is in its
own files (a LiveCoder run's checkpoint), the units that were running are not in the ledger,
and the next invocation runs (or resumes) them.
"""
from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, as_completed
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from projectgen.errors import ProjectGenError
from projectgen.evaluation.runner import SandboxRunner

U = TypeVar("U")
S = TypeVar("S")
R = TypeVar("R")


@dataclass(frozen=True)
class LocalExecutor:
    """Runs units on `workers` daemon threads of this process, with one `setup` state per thread.

    Work that calls `asyncio.run` (a LiveCoder run) gets its own event loop on its thread.
    """

    workers: int = 1
    thread_name: str = "projectgen-worker"
    remote = False  # threads of this process: work and units are not pickled

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ProjectGenError(f"workers must be at least 1, got {self.workers}")

    def run(self, work: Callable[[U, S], R], units: Sequence[U], setup: Callable[[], S],
            lost: Callable[[U, str], R] | None = None) -> Iterator[R]:
        """Yield `work(unit, state)` for every unit as each finishes (see `Executor`); no unit is lost
        here (a thread does not die without its process), so `lost` is not called."""
        todo: queue.SimpleQueue[tuple[U, Future[R]]] = queue.SimpleQueue()
        futures: list[Future[R]] = []
        for unit in units:
            future: Future[R] = Future()
            todo.put((unit, future))
            futures.append(future)
        worker = QueueWorker(work, setup, todo)
        for number in range(min(self.workers, len(futures))):
            threading.Thread(target=worker.serve, name=f"{self.thread_name}-{number}", daemon=True).start()
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for future in futures:
                future.cancel()  # only those not started: their worker skips them


@dataclass(frozen=True)
class QueueWorker(Generic[U, S, R]):
    """One worker thread's loop: make its state, then take units from the queue until it is empty."""

    work: Callable[[U, S], R]
    setup: Callable[[], S]
    todo: queue.SimpleQueue[tuple[U, Future[R]]]

    def serve(self) -> None:
        try:
            state = self.setup()
        except BaseException as exc:  # reported through the next unit's future: the batch ends
            self.fail_next(exc)
            return
        while (item := self.take()) is not None:
            unit, future = item
            try:
                future.set_result(self.work(unit, state))
            except BaseException as exc:  # a bug (the engine's work returns failures): the batch ends
                future.set_exception(exc)
                return

    def take(self) -> tuple[U, Future[R]] | None:
        """The next unit that was not cancelled, marked running; None when there is none left."""
        while True:
            try:
                unit, future = self.todo.get_nowait()
            except queue.Empty:
                return None
            if future.set_running_or_notify_cancel():
                return unit, future

    def fail_next(self, exc: BaseException) -> None:
        item = self.take()
        if item is not None:
            item[1].set_exception(exc)


def print_progress(key: str, message: str) -> None:
    """A progress line of a unit on a worker process, on its stderr (Ray shows a worker's on the driver's
    terminal): what a batch sent to other processes reports instead of the driver's console."""
    print(f"{key}: {message}", file=sys.stderr, flush=True)


def worker_runner(settings: Any = None, progress: Callable[[str, str], None] | None = None,
                  slots: threading.Semaphore | None = None) -> Any:
    """A batch worker's sandbox runner made from `settings` (`RunnerSettings`, picklable), its log lines
    relayed to `progress("sandbox", message)`, its runs taking one of `slots` (shared by the batch's
    workers in this process): what a batch's `setup` makes on each worker."""
    return SandboxRunner(settings, log=(lambda message: progress("sandbox", message)) if progress else None,
                         slots=slots)
