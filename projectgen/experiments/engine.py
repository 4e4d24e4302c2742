"""One batch engine for experiments and the reference bench: plan -> ledger -> executor -> rows.

A batch is a plan of units, each with a key that stays the same across invocations. The
ledger (`projectgen.experiments.ledger.Ledger`, one JSONL line per finished unit) says which
units an earlier invocation finished: `Batch.restore` turns their lines back into rows and
they are not run again. The others go to an `Executor`, which runs them on its workers and
yields each outcome as it finishes; the engine, in the process that drives the batch, records
each one in the ledger at once and exactly once (a unit whose work raised too: its row is made
from the one-line reason) and then reports it. Interrupted, a batch loses only the units not
recorded yet (those running, or finished a moment before); the next invocation runs them again.

Units, the rows their work returns and the `UnitOutcome`s that carry them are plain picklable
data, so an executor may run the work in other processes or on other machines (`Executor.remote`):
such an executor gets `Batch.for_workers()` (the batch without what belongs to this process, a
console or a progress bar), may run a `Relocatable` unit in a folder of its own machine and bring
that folder back, and the engine hands each row that comes back to `Batch.received`, which names
the driver's paths in it again. A unit whose workers died more often than the executor retries is
recorded as failed, with the reason the executor gives (`Executor.run`'s `lost`).

`Shard` picks a deterministic share of a plan's units (``--shard i/N``): N machines without a
cluster each run one share into a folder of their own, and `projectgen experiment merge` joins them.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from projectgen.errors import ProjectGenError, error_line
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.worker_imports import import_for_workers
from projectgen.repository.syntax import spurious_system_error


class Unit(Protocol):
    """One unit of batch work: plain picklable data with a stable key (its ledger key)."""

    @property
    def key(self) -> str: ...


class Relocatable(Protocol):
    """A unit whose work writes one folder or file of the driver's, its `workspace`, and nothing else there.

    An executor whose worker does not see the driver's files runs `relocated(path)` instead: the same
    unit writing to `path` on the worker's machine; it then brings that folder back to `workspace`.
    A unit whose workspace is one file (not a folder) says so with ``workspace_is_file = True``.
    """

    @property
    def key(self) -> str: ...

    @property
    def workspace(self) -> Path: ...

    def relocated(self, workspace: Path, sync: Callable[[], None] | None = None) -> Relocatable:
        """This unit working in `workspace`; `sync()`, when given, is called at the moments the work
        must not get ahead of the copy on the driver (after each model call is recorded, before each
        checkpoint), so a worker that dies loses nothing its retry would need."""


ProgressFn = Callable[[str, str], None]
"""(a unit's key, or "sandbox"; a progress line): what a batch reports as its units go."""

U = TypeVar("U", bound=Unit)  # a unit
S = TypeVar("S")  # a worker's state, made once per worker by `setup` (e.g. a sandbox runner)
R = TypeVar("R")  # a unit's row


class Executor(Protocol):
    """Runs a batch of units on at most `workers` workers; yields each result as it finishes.

    `remote`: whether the workers are other processes (then `work`, `setup` and the units are
    pickled, and the engine sends `Batch.for_workers()`).

    `run` calls `setup()` once on each worker before its first unit (the state stays on that
    worker: it is neither shared nor sent back) and `work(unit, state)` once per unit, and
    yields what `work` returns in the order units finish; work starts when iteration starts.
    When `work` or `setup` raises, iterating raises that exception (the engine's work returns
    a unit's own failure as an outcome, so that means a bug). When the consumer stops iterating
    (an exception, Ctrl-C), units not started are dropped, and the executor must not keep the
    process from exiting while units are still running. `lost(unit, reason)`, when given, is what
    to yield for a unit the executor gave up on without `work` returning (its worker died more
    often than it retries); without it, iterating raises.
    """

    @property
    def workers(self) -> int: ...

    @property
    def remote(self) -> bool: ...

    def run(self, work: Callable[[U, S], R], units: Sequence[U], setup: Callable[[], S],
            lost: Callable[[U, str], R] | None = None) -> Iterator[R]: ...


class Batch(ABC, Generic[U, S, R]):
    """One kind of batch work: how a unit runs, and how its row is kept in the ledger."""

    @abstractmethod
    def setup(self) -> S:
        """A worker's state, made once on each worker before its first unit."""

    @abstractmethod
    def run(self, unit: U, state: S) -> R:
        """Do one unit's work on a worker and return its row; raising makes it a failed unit."""

    @abstractmethod
    def failed(self, unit: U, reason: str) -> R:
        """The row of a unit whose work raised, from the one-line reason (``Class: first line``)."""

    @abstractmethod
    def record(self, row: R) -> dict[str, Any]:
        """The fields of a row's ledger line (besides ``key``)."""

    @abstractmethod
    def restore(self, entry: dict[str, Any]) -> R | None:
        """The row of a unit's latest ledger line when it counts as done, else None (run it again)."""

    def for_workers(self) -> Batch[U, S, R]:
        """This batch as sent to workers in other processes: without callbacks into this one (a console,
        a progress bar). Default: the batch itself, which must then pickle."""
        return self

    def received(self, unit: U, row: R) -> R:
        """A row as the driver keeps it. A relocated unit's row names paths on the worker's machine: a
        batch whose rows hold paths names `unit`'s (the driver's) instead. Default: the row as it came."""
        return row


@dataclass(frozen=True)
class UnitOutcome(Generic[R]):
    """What a worker sends back for one unit: its row, or the one-line reason its work raised."""

    key: str
    row: R | None = None
    error: str | None = None


# CPython 3.11 before 3.11.9 can raise "SystemError: AST constructor recursion depth mismatch" for
# valid code parsed in two threads at once (`repository.syntax.spurious_system_error`). projectgen's
# own parses retry it; one raised from a library's parse says nothing about the unit either, so the
# unit is run again (it resumes from its own files: no finished model call is repeated) instead of
# becoming an error row.
SPURIOUS_RETRIES = 2


@dataclass(frozen=True)
class GuardedWork(Generic[U, S, R]):
    """A batch's work that returns a failure as an outcome: one failing unit must not end the batch."""

    batch: Batch[U, S, R]

    def __call__(self, unit: U, state: S) -> UnitOutcome[R]:
        for attempt in range(SPURIOUS_RETRIES + 1):
            try:
                return UnitOutcome(unit.key, row=self.batch.run(unit, state))
            except SystemError as exc:  # CPython 3.11 < 3.11.9: threads parsing at once (see above)
                if not spurious_system_error(exc) or attempt == SPURIOUS_RETRIES:
                    return UnitOutcome(unit.key, error=error_line(exc))
            except Exception as exc:  # noqa: BLE001 - recorded as the unit's error row
                return UnitOutcome(unit.key, error=error_line(exc))
        raise AssertionError("unreachable")

    @staticmethod
    def lost(unit: U, reason: str) -> UnitOutcome[R]:
        """The outcome of a unit the executor gave up on (its workers kept dying): a failed unit."""
        return UnitOutcome(unit.key, error=reason)


@dataclass(frozen=True)
class Shard:
    """Share `index` (1-based) of `count` of a plan: every `count`-th key in sorted order, from the `index`-th.

    The same plan gives every machine the same shares whatever order it listed its units in, and
    neighbouring keys (the tasks of one model and method) go to different shares, so shares are even.
    """

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``i/N`` with 1 <= i <= N."""
        index, sep, count = text.strip().partition("/")
        try:
            shard = cls(int(index), int(count))
        except ValueError:
            shard = None
        if not sep or shard is None or not 1 <= shard.index <= shard.count:
            raise ProjectGenError(f"--shard takes i/N with 1 <= i <= N (e.g. 1/4), got {text!r}")
        return shard

    def keeps(self, keys: Sequence[str]) -> set[str]:
        """The keys of this share."""
        return {key for number, key in enumerate(sorted(set(keys))) if number % self.count == self.index - 1}

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def run_batch(batch: Batch[U, S, R], units: Sequence[U], ledger: Ledger, executor: Executor, *,
              on_start: Callable[[int, int], None] | None = None,
              on_row: Callable[[R], None] | None = None) -> dict[str, R]:
    """Run the units the ledger does not hold as done; return every unit's row by key, in plan order.

    `on_start(to run, already done)` is called once the plan is known; `on_row(row)` after each
    unit that ran has been recorded.
    """
    done = ledger.done()
    rows: dict[str, R] = {}
    pending: dict[str, U] = {}
    for unit in units:
        if unit.key in rows or unit.key in pending:
            raise ValueError(f"two units share the key {unit.key!r}")
        entry = done.get(unit.key)
        restored = batch.restore(entry) if entry is not None else None
        if restored is not None:
            rows[unit.key] = restored
        else:
            pending[unit.key] = unit
    if on_start:
        on_start(len(pending), len(rows))
    if pending and not executor.remote and executor.workers > 1:
        import_for_workers()  # a first import from several threads at once can see a half-made module
    sent = batch.for_workers() if executor.remote else batch
    guarded = GuardedWork(sent)
    for outcome in executor.run(guarded, list(pending.values()), sent.setup, guarded.lost):
        unit = pending[outcome.key]
        row = batch.received(unit, outcome.row) if outcome.error is None else batch.failed(unit, outcome.error)
        ledger.append(unit.key, **batch.record(row))
        rows[unit.key] = row
        if on_row:
            on_row(row)
    return {unit.key: rows[unit.key] for unit in units}
