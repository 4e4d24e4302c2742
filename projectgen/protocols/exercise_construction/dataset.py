"""Exercise construction's dataset: a folder of seed code files (`package.load_seeds`), one seed per file."""
from __future__ import annotations

from pathlib import Path

from projectgen.protocols.exercise_construction.agents import ExerciseSeed
from projectgen.protocols.exercise_construction.package import load_seeds


def load_dataset(dataset: Path) -> list[ExerciseSeed]:
    """Every seed of the folder, in path order; one line when it holds none."""
    return load_seeds(str(dataset))
