"""Known defects of benchmark tasks that no test output shows, kept as data with the tests they fail.

Most defects of a published task are read from its reference's own test run (a file it opens that the
dataset does not ship: `projectgen.evaluation.dataset_defects`). A few leave no trace there: flask's dotenv
tests fail on an assertion because two dotfiles of its test apps are not in the dataset. `known_defects.toml`
names those, each checked against the upstream project, so `bench-reference` reports them instead of a bare
failure. A published exercise whose reference itself fails its tests (LiveRepoReflection's C++ `cloud_optimize`
does not compile with GCC 12) is declared the same way, keyed by its folder (`exercise_defect_key`), so `reflect`
names it beside the row, and reports the declaration as stale once the reference passes those tests.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from projectgen.datasets.task import Task

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KNOWN_DEFECTS_FILE = Path(__file__).with_name("known_defects.toml")


@dataclass(frozen=True)
class KnownDefect:
    """What a task lacks, and the tests (pytest node ids) that cannot pass without it. `intermittent`: the tests
    fail only sometimes (a race in the published code), so a run that passes them does not make it stale."""

    tests: tuple[str, ...]
    defect: str
    intermittent: bool = False

    def line(self, unpassed: Iterable[str]) -> str | None:
        """The bench note when some of its tests did not pass (`unpassed`: node ids), else None."""
        unpassed = set(unpassed)
        failing = [test for test in self.tests if test in unpassed]
        if not failing:
            return None
        kind = "intermittent " if self.intermittent else ""
        return f"dataset defect: {self.defect} ({len(failing)} {kind}test(s): {', '.join(failing)})"


def read_declarations(path: Path = KNOWN_DEFECTS_FILE) -> dict[str, KnownDefect]:
    """Every declaration in `path`, by key."""
    entries = tomllib.loads(path.read_text(encoding="utf-8"))
    return {key: KnownDefect(tests=tuple(entry["tests"]), defect=entry["defect"],
                             intermittent=bool(entry.get("intermittent", False))) for key, entry in entries.items()}


def declared_defects(key: str, path: Path = KNOWN_DEFECTS_FILE) -> list[KnownDefect]:
    """The defects declared under `key` in `path`; none for most tasks."""
    declared = read_declarations(path).get(key)
    return [declared] if declared else []


def known_defects(task: Task, path: Path = KNOWN_DEFECTS_FILE) -> list[KnownDefect]:
    """The known defects of `task` (keyed '<format>/<task id>' in `path`); none for most tasks."""
    return declared_defects(f"{task.format}/{task.id}", path)


def exercise_defect_key(language: str, folder: Path) -> str:
    """The key of an exercise's declarations: 'exercism/<language>/<folder above>/<folder>'. Not its id, which
    gets a suffix when another loaded exercise has its name; LiveRepoReflection's folder above is a
    `unit_test_<uuid>`, one per exercise, wherever the dataset is copied."""
    return f"exercism/{language.lower()}/{folder.parent.name}/{folder.name}"
