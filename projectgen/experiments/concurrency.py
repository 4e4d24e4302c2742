"""How much of an experiment runs at once: pairs, model calls and sandbox runs, each on its own knob.

With a real model a pair spends nearly all its time waiting for replies (LiveCoder's attempts make
dozens of sequential calls per task), so tying a waiting pair to a core leaves the model idle, and
tying sandbox runs to the pairs' knob overloads the cores. Here the three are apart: `pairs` run at
once on threads of this process (each its own event loop, mostly asleep), their calls reach each
model or endpoint at most `calls` at a time (`projectgen.llm.call_slots`), and their test suites run
at most `sandboxes` at a time (the cores). The defaults need no tuning: pairs = calls = 16, sandboxes
= the cores. A Ray cluster's executor keeps its own sandbox slots (`RayExecutor`); the caps here are
those of one process.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

from projectgen.errors import ProjectGenError
from projectgen.llm.call_slots import DEFAULT_CALLS, CallSlots


def cores() -> int:
    """The cores this process may use (its CPU affinity where the system says, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Concurrency:
    """Model calls in flight per model or endpoint (`calls`), sandbox runs at once (`sandboxes`), and pairs
    in flight (`pairs`, default `calls`: a pair waits on one call at a time, or a few in a fan-out)."""

    calls: int = DEFAULT_CALLS
    sandboxes: int = field(default_factory=cores)
    pairs: int | None = None

    def __post_init__(self) -> None:
        for name in ("calls", "sandboxes", "pairs"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ProjectGenError(f"{name} in flight must be at least 1, got {value}")

    @property
    def workers(self) -> int:
        """Pairs in flight: the local executor's threads."""
        return self.pairs or self.calls

    def limits(self) -> tuple[CallSlots, threading.BoundedSemaphore]:
        """The live caps of one batch, shared by its threads: the call slots and the sandbox slots."""
        return CallSlots(self.calls), threading.BoundedSemaphore(self.sandboxes)
