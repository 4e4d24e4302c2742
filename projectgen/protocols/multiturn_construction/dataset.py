"""Multi-turn construction's dataset: the seed folders below a folder (`seeds.load_seeds`: a complete requirement,
its reference and tests each)."""
from __future__ import annotations

from pathlib import Path

from projectgen.protocols.multiturn_construction.seeds import TaskSeed, load_seeds


def load_dataset(dataset: Path) -> list[TaskSeed]:
    """Every seed of the folder, sorted by id; one line when it holds none."""
    return load_seeds(dataset)
