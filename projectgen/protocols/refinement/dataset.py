"""Refinement's dataset: multi-turn tasks (SR-Eval's layout). The loader is shared machinery
(`projectgen.datasets.multiturn`: construction writes such tasks too); this is the protocol's view."""
from __future__ import annotations

from pathlib import Path

from projectgen.datasets.multiturn import MultiTurnTask, load_multiturn_dataset


def load_dataset(dataset: Path) -> list[MultiTurnTask]:
    """The tasks that load (those that do not are the batch's to report)."""
    return load_multiturn_dataset(dataset)[0]
