"""Declared defects of exercises' references, read against a reflect batch's rows.

A published exercise whose reference fails its own tests (LiveRepoReflection's C++ `cloud_optimize` does not
compile with GCC 12; Java `node_placement`'s tests expect a placement the instructions' objective rejects) is
no harness fault: the reference replay cannot reach 100 there. Such an exercise is declared in
`known_defects.toml` (`projectgen.datasets.known_defects`, keyed by `exercise_defect_key`) with the tests it
fails, so the rows and the per-language figures can say so while the raw figures stay. A declaration the
reference replay no longer bears out (its declared tests all pass) is stale: reported, and not applied, so an
upstream fix cannot leave a wrong excuse behind; a declaration of an intermittent defect (a race in the published
code) is never stale, since a run that passes it shows no fix. Pure functions over rows.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from projectgen.datasets.exercism import Exercise
from projectgen.datasets.known_defects import (KNOWN_DEFECTS_FILE, KnownDefect, exercise_defect_key,
                                               read_declarations)


@dataclass(frozen=True)
class DefectReading:
    """What the declarations say about one batch."""

    notes: dict[str, str]
    """row key -> the declaration's line, on the rows where one of its tests did not pass"""
    stale: dict[str, str]
    """task id -> why its declaration no longer holds (the reference replay passes its tests)"""
    declared: frozenset[str]
    """task ids whose declaration holds in this batch: left out of the figures 'without declared defects'"""


def exercise_declarations(exercises: Iterable[Exercise], path: Path = KNOWN_DEFECTS_FILE) -> dict[str, KnownDefect]:
    """exercise id -> its declared reference defect, for the exercises that have one."""
    table = read_declarations(path)
    return {exercise.id: table[key] for exercise in exercises
            if (key := exercise_defect_key(exercise.language, exercise.folder)) in table}


def unpassed_tests(result: Mapping[str, Any] | None) -> list[str] | None:
    """The tests a unit's last try did not pass, by id; None when its result does not say (written before tries
    recorded them, or no result)."""
    if not result:
        return None
    tries = result.get("tries") or []
    last = tries[-1] if isinstance(tries, list) and tries else {}
    failed = last.get("failed_tests") if isinstance(last, dict) else None
    if failed is None:
        return [] if result.get("status") == "passed" else None
    return [str(test) for test in failed]


class RowView(Protocol):
    """The part of a reflect row (`reflection_results.ReflectRow`) the declarations are read against."""

    key: str
    task_id: str
    model: str
    result: Mapping[str, Any] | None


def read_defects(rows: Sequence[RowView], declarations: Mapping[str, KnownDefect],
                 reference_models: AbstractSet[str]) -> DefectReading:
    """Each row's declaration line, the stale declarations (a row of a model in `reference_models`, the
    reference replay, whose declared tests all passed) and the exercises whose declaration holds."""
    stale: dict[str, str] = {}
    for row in rows:
        declared = declarations.get(row.task_id)
        unpassed = unpassed_tests(row.result)
        if declared is None or declared.intermittent or row.model not in reference_models or unpassed is None:
            continue  # an intermittent defect's tests pass on some runs: that is no sign of a fix
        if declared.line(unpassed) is None:
            stale[row.task_id] = (f"stale declaration: the reference now passes {', '.join(declared.tests)}, which "
                                  f"known_defects.toml declares it fails ({declared.defect}); correct or remove the "
                                  "entry")
    notes: dict[str, str] = {}
    for row in rows:
        declared = declarations.get(row.task_id)
        if declared is None or row.task_id in stale or row.result is None:
            continue
        unpassed = unpassed_tests(row.result)
        line = (declared.line(unpassed) if unpassed is not None
                else f"dataset defect: {declared.defect} (declared; this result does not name the tests it failed)")
        if line:
            notes[row.key] = line
    return DefectReading(notes=notes, stale=stale, declared=frozenset(set(declarations) - set(stale)))
