"""Which #Tests a task's #Pass is counted out of, as a named setting every result records.

ProjectGen's Tables 3 and 5 print one #Tests per task, and SUM adds them over every task, whatever a
method produced. Counting out of what the reference collects here differs on some tasks (a reference
that skips tests or a module at import, a data file missing from the dataset), so a published
benchmark is scored out of the paper's count by default ("published"): tests a candidate skips or
cannot collect are failed, and a run that produced nothing scores 0 of the published count.
"reference" keeps the measured denominator (what the reference collects, its skips left out),
a better figure for tasks the paper never printed; tasks without a published count use it either way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from projectgen.datasets.published import published_tests
from projectgen.datasets.task import Task

DenominatorSetting = Literal["published", "reference"]
DENOMINATOR_SETTINGS: tuple[DenominatorSetting, ...] = ("published", "reference")
DEFAULT_DENOMINATOR: DenominatorSetting = "published"


@dataclass(frozen=True)
class UnitCounts:
    """#Pass out of #Tests, and what #Tests counts: "published" (the paper's count), "expected" (the
    reference's collected tests) or "run" (the tests the output ran: nothing better was known)."""

    passed: int
    total: int
    denominator: str


def counted(task: Task, measured: UnitCounts, setting: DenominatorSetting) -> UnitCounts:
    """`measured` as `setting` counts it: under "published", out of the paper's #Tests for a task it
    prints (#Pass capped there: a reference that collects more tests than the paper counted cannot score
    above the printed count); otherwise unchanged."""
    tests = published_tests(task) if setting == "published" else None
    if tests is None:
        return measured
    return UnitCounts(passed=min(measured.passed, tests), total=tests, denominator="published")


def nothing_produced(task: Task, setting: DenominatorSetting) -> UnitCounts | None:
    """The counts of a run that produced nothing: 0 of the published #Tests (it keeps its count in SUM),
    or None when there is no published count to keep (the run has no #Tests then)."""
    tests = published_tests(task) if setting == "published" else None
    return None if tests is None else UnitCounts(passed=0, total=tests, denominator="published")
