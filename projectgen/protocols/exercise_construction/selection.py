"""The across-seed steps of exercise construction, run after every seed's unit on their records.

Units finish in whatever order the workers take them; these steps see all of them at once and go through the
seeds in id order, so the outcome is the same for one worker or many and for a run resumed any number of times:

1. difficulty (`difficulty.select_by_difficulty`) on each judged seed's judge outcomes: too easy, or a timeout,
   and it is dropped;
2. near-duplicates among the new exercises: the same rule as the reference set's (`decontamination`, character
   5-gram MinHash + LSH, exact Jaccard above the threshold), each exercise against those kept from seeds earlier
   in id order; a near-copy of one is dropped (our addition: the paper's rule is against a reference set, and a
   benchmark should not hold one task twice either; recorded as ``within_set`` in the report's settings);
3. packaging: an exercise name taken by an earlier seed's exercise, or by a folder in OUT not made from a seed of this
   run, drops the later one; the kept exercises are copied from their seeds' run folders to ``OUT/<project>``,
   and a folder a seed of this run made earlier but no longer keeps (another setting built it anew) is removed.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from projectgen.datasets.exercism import load_exercise
from projectgen.protocols.exercise_construction.decontamination import ReferenceIndex
from projectgen.protocols.exercise_construction.difficulty import select_by_difficulty
from projectgen.protocols.exercise_construction.seed_run import DROPPED, JUDGED, KEPT


def select_exercises(out: Path, rows: Mapping[str, Mapping[str, Any]], staged: Mapping[str, Path],
                     threshold: float) -> dict[str, dict[str, Any]]:
    """Every seed's final record by seed id (in id order) from its unit's record `rows[seed]`; `staged[seed]` is
    the staged exercise of a judged seed. Writes the kept exercises to ``out`` (see the module docstring)."""
    records: dict[str, dict[str, Any]] = {}
    index: ReferenceIndex | None = None
    taken: dict[str, str] = {}  # exercise name -> the seed it was kept from
    for seed in sorted(rows):
        record = dict(rows[seed])
        records[seed] = record
        if record.get("status") != JUDGED:
            continue
        decision = select_by_difficulty(record.get("judge_outcomes") or {})
        record["difficulty"] = decision.to_dict()
        if not decision.keep:
            _end(record, DROPPED, "difficulty", decision.reason)
            continue
        project, instructions = record["project"], load_exercise(staged[seed]).instructions
        index = index or ReferenceIndex({}, threshold)
        match = index.match(seed, instructions)
        if match is not None:
            found = {**match.to_dict(), "within_set": True}
            record["decontamination"] = found
            _end(record, DROPPED, "decontamination", f"a near-duplicate of an exercise kept earlier: {found['why']}")
            continue
        if project in taken:
            _end(record, DROPPED, "packaging", f"exercise {project} was already made from seed {taken[project]}")
            continue
        owner = _owner(out / project)
        if (out / project).exists() and owner not in rows:
            _end(record, DROPPED, "packaging", f"{out / project} exists and was not made from a seed of this run")
            continue
        index.add(f"{project} (seed {seed})", instructions)
        taken[project] = seed
        record["exercise"] = project
        _end(record, KEPT, "packaging")
    _place(out, records, staged)
    return records


def _end(record: dict[str, Any], status: str, stage: str, reason: str | None = None) -> None:
    record.update(status=status, stage=stage, reason=reason)


def _place(out: Path, records: Mapping[str, Mapping[str, Any]], staged: Mapping[str, Path]) -> None:
    """OUT/<project> for each kept seed (copied afresh: the staged copy is the truth), and no folder of a seed of
    this run that it does not keep."""
    kept = {record["exercise"]: seed for seed, record in records.items() if record.get("status") == KEPT}
    for folder in sorted(path for path in out.iterdir() if path.is_dir() and not path.name.startswith(".")):
        owner = _owner(folder)
        if owner in records and kept.get(folder.name) != owner:
            shutil.rmtree(folder)
    for project, seed in sorted(kept.items()):
        target = out / project
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(staged[seed], target)


def _owner(exercise: Path) -> str | None:
    """The seed an exercise folder in the output was made from (None: not ours, or not there)."""
    try:
        config = json.loads((exercise / ".meta" / "config.json").read_text(encoding="utf-8"))
        return str(config["construction"]["seed_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
