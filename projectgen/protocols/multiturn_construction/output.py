"""A constructed task written as the multi-turn task folder `projectgen refine` reads
(`projectgen.datasets.multiturn`), with the construction's trajectory beside it in ``construction.json`` and, at
repository level, the repository around the target in ``repository/`` and the target function in ``function``: a
repository-level task's turns answer that function, as SR-Eval's repository level does after DevEval."""
from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from projectgen.datasets.multiturn import (CONSTRUCTION_RECORD, MULTITURN_TOML, REFERENCE_FILE, REQUIREMENT_FILE,
                                           TESTS_DIR, TURNS_DIR, MultiTurnTask, load_multiturn_task)
from projectgen.protocols.multiturn_construction.seeds import TaskSeed
from projectgen.protocols.multiturn_construction.turns import TurnRecord

TRAJECTORY_FILE = CONSTRUCTION_RECORD  # refine's loader knows a built task by it
REPOSITORY_DIR = "repository"  # repository level: the snapshot around the target, copied from the seed


def write_task(seed: TaskSeed, turns: Sequence[TurnRecord], folder: Path, trajectory: Mapping[str, Any]) -> MultiTurnTask:
    """`folder` replaced, in one step, by the task built from `seed`; the task as `refine` loads it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        description = seed.description or f"Built from the seed {seed.id}"
        (scratch / MULTITURN_TOML).write_text(
            f"# Built by `projectgen construct multiturn` from the seed {seed.id!r}; {TRAJECTORY_FILE} says how.\n"
            f"id = {json.dumps(seed.id)}\nlevel = {json.dumps(seed.level)}\ntarget = {json.dumps(seed.target)}\n"
            f"description = {json.dumps(description)}\n" + _function_key(seed) + _repository_table(seed),
            encoding="utf-8")
        if seed.level == "repository":
            (scratch / REPOSITORY_DIR).mkdir()
        for path, text in seed.snapshot().items():
            (scratch / REPOSITORY_DIR / path).parent.mkdir(parents=True, exist_ok=True)
            (scratch / REPOSITORY_DIR / path).write_text(text, encoding="utf-8")
        for turn in turns:
            base = scratch / TURNS_DIR / str(turn.turn)
            (base / TESTS_DIR).mkdir(parents=True)
            (base / REQUIREMENT_FILE).write_text(turn.requirement.strip() + "\n", encoding="utf-8")
            (base / REFERENCE_FILE).write_text(turn.code, encoding="utf-8")
            (base / TESTS_DIR / turn.test_file).write_text(turn.tests, encoding="utf-8")
        (scratch / TRAJECTORY_FILE).write_text(json.dumps(dict(trajectory), indent=1, default=str) + "\n",
                                               encoding="utf-8")
        load_multiturn_task(scratch)  # refine must read it: a format slip fails here, not in a later refine
        if folder.exists():
            shutil.rmtree(folder)
        scratch.rename(folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return load_multiturn_task(folder)


def _function_key(seed: TaskSeed) -> str:
    """multiturn.toml's `function` at repository level: each turn's answer is the seed's target function."""
    return f"function = {json.dumps(seed.function)}\n" if seed.level == "repository" else ""


def _repository_table(seed: TaskSeed) -> str:
    """multiturn.toml's [repository] at repository level: the snapshot copied beside the turns."""
    return f"\n[repository]\nroot = {json.dumps(REPOSITORY_DIR)}\n" if seed.level == "repository" else ""
