"""Known environment fixes for benchmark tasks, kept as data with a reason each.

Benchmark requirement files are mostly unpinned, so today's package index
installs versions the reference code predates (a newer pyjwt that checks key
curves, a setuptools without pkg_resources). `compat.toml` lists, per task, the
extra requirements and version bounds that let each reference pass its own
tests; they apply to every candidate of that task alike, so scores stay fair.
"""
from __future__ import annotations

import sys
from pathlib import Path

from projectgen.datasets.task import Task

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

COMPAT_FILE = Path(__file__).with_name("compat.toml")


def load_compat(path: Path = COMPAT_FILE) -> dict[str, dict]:
    """Entries keyed by '<format>/<task id>'."""
    return tomllib.loads(path.read_text(encoding="utf-8"))


def apply_compat(task: Task, entries: dict[str, dict] | None = None) -> Task:
    """The task with its known environment fixes added (unchanged if it has none)."""
    entry = (load_compat() if entries is None else entries).get(f"{task.format}/{task.id}")
    if not entry:
        return task
    env = task.env.model_copy(
        update={
            "requirements": task.env.requirements + tuple(entry.get("requirements", ())),
            "constraints": task.env.constraints + tuple(entry.get("constraints", ())),
        }
    )
    return task.model_copy(update={"env": env})
