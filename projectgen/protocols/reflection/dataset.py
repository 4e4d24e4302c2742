"""Reflection's dataset: the Exercism-layout exercises below a folder. The loader is shared machinery
(`projectgen.datasets.exercism`: construction and refinement read exercises too); this is the protocol's view."""
from __future__ import annotations

from pathlib import Path

from projectgen.datasets.exercism import Exercise, load_exercises


def load_dataset(dataset: Path) -> list[Exercise]:
    """The exercises that load (those that do not, and other languages, are the batch's to report)."""
    return load_exercises(dataset).exercises
