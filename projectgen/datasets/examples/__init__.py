"""Small example tasks bundled with projectgen (package data), for demos and tests.

Each sub-folder holding a `task.toml` is one task in the "taskdir" format:
requirement documents under `docs/`, visible `check_tests/`, hidden
`unit_tests/`, and a reference implementation.

- `kvstore`: a key-value store package (five layered modules plus a CLI) with
  TTL expiry, namespaces and transactions.
- `wordfreq`: a single-module word counter.

`exercises/` holds three small multi-file exercises in the Exercism layout of LiveRepoReflection
(`projectgen reflect --dataset examples`): `unit_convert`, `ledger_book` and `word_index`.

`scripts/` holds replay scripts for the scripted chat model (`scripts/kvstore.demo.json`
drives `projectgen demo`, `scripts/exercises.reflect.json` replays a model on the exercises);
they are recordings, not models, and live outside the task folders so that no script is
copied into a test sandbox.
"""
from __future__ import annotations

from pathlib import Path

from projectgen.errors import ProjectGenError

_EXAMPLES_DIR = Path(__file__).resolve().parent


def example_tasks_dir() -> Path:
    """Folder holding the bundled example tasks."""
    return _EXAMPLES_DIR


def example_exercises_dir() -> Path:
    """Folder holding the bundled Exercism-layout exercises (`projectgen reflect --dataset examples`)."""
    return _EXAMPLES_DIR / "exercises"


def example_task_names() -> list[str]:
    """Names of the bundled example tasks, sorted."""
    return sorted(p.name for p in _EXAMPLES_DIR.iterdir() if (p / "task.toml").is_file())


def example_task_path(name: str) -> Path:
    """Folder of the bundled example task `name`; ProjectGenError listing the names if unknown."""
    names = example_task_names()
    if name not in names:
        raise ProjectGenError(f"unknown example task {name!r} (available: {', '.join(names) or 'none'})")
    return _EXAMPLES_DIR / name


def example_script_path(name: str) -> Path:
    """The bundled replay script ``scripts/NAME.json`` (e.g. ``kvstore.demo``)."""
    path = _EXAMPLES_DIR / "scripts" / f"{name}.json"
    if not path.is_file():
        known = sorted(p.stem for p in (_EXAMPLES_DIR / "scripts").glob("*.json"))
        raise ProjectGenError(f"unknown example script {name!r} (available: {', '.join(known) or 'none'})")
    return path
