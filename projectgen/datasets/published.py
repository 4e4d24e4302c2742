"""The sizes the ProjectGen paper publishes for its benchmark tasks, and each task's LOC weight.

ProjectGen's AVG_weighted weights a task's #Pass by its #LOC. The paper's #LOC is not always what
counting the reference's lines gives here (DevBench chakin: 162 published, 62 counted; geotext:
470 against 134, a data file is missing here), so a task of a published benchmark is weighted by
the published figure, and any other task by its reference's physical lines. Every weight carries
where it came from, and results record it.
"""
from __future__ import annotations

import functools
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from projectgen.datasets.task import Task

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

REFERENCE_LOC = "reference LOC (physical lines of its .py files)"


@dataclass(frozen=True)
class PublishedSize:
    """A task's #LOC and #Tests as a paper table prints them."""

    loc: int
    tests: int
    source: str
    paper_name: str


@dataclass(frozen=True)
class TaskWeight:
    """A task's LOC weight in AVG_weighted, and where the figure came from."""

    loc: int
    source: str


@functools.cache
def published_sizes() -> dict[str, dict[str, PublishedSize]]:
    """dataset format -> task id -> published size (read once from the packaged table; immutable data)."""
    text = resources.files("projectgen.datasets").joinpath("published_sizes.toml").read_text(encoding="utf-8")
    table: dict[str, Any] = tomllib.loads(text)
    return {dataset: {task_id: PublishedSize(loc=entry["loc"], tests=entry["tests"], source=block["source"],
                                             paper_name=entry.get("paper_name", task_id))
                      for task_id, entry in block["tasks"].items()}
            for dataset, block in table.items()}


def published_size(task: Task) -> PublishedSize | None:
    """The paper's figures for `task`, when it is a task of a benchmark the paper reports."""
    return published_sizes().get(task.format, {}).get(task.id)


def published_tests(task: Task) -> int | None:
    """The task's published #Tests: a paper table's, else the benchmark's own (NL2Repo-Bench's
    test_case_count.txt), else None."""
    size = published_size(task)
    return size.tests if size is not None else task.published_tests


def published_tests_of(formats: Iterable[str], task_id: str) -> int | None:
    """The #Tests a paper prints for a task known only by its id (one that did not load), looked up in the
    formats its dataset's other tasks have; None when no table prints it."""
    found = {size.tests for fmt in formats if (size := published_sizes().get(fmt, {}).get(task_id)) is not None}
    return found.pop() if len(found) == 1 else None


def task_weight(task: Task) -> TaskWeight:
    """The LOC weight of `task`: the published #LOC when there is one, else its reference's lines."""
    published = published_size(task)
    if published is not None:
        return TaskWeight(loc=published.loc, source=published.source)
    return TaskWeight(loc=task.size().loc, source=REFERENCE_LOC)
