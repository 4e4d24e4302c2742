"""Difficulty selection: keep the exercises several models do not all solve at once.

Each judge model plays LiveRepoReflection's own protocol on the packaged exercise (`projectgen reflect`'s
unit run: write, test, repair from the test output, test again; `protocols/reflection/unit`), and its run is read as
one of:

- ``success``: the first try passed;
- ``failure-then-success``: the first try failed, the repair passed;
- ``failure-failure``: neither passed;
- ``timeout``: a test run hit the time limit.

`select_by_difficulty` drops an exercise every judge solves at the first try (too easy), and one with any
timeout (the timeout filter: a task whose tests can hang is not a fair test). The counts of each outcome go
into the report. LiveRepoReflection also names a reject-sampling step, but its text gives no score to
compute, so none is computed (docs/construction.md).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SUCCESS = "success"
FAILURE_THEN_SUCCESS = "failure-then-success"
FAILURE_FAILURE = "failure-failure"
TIMEOUT = "timeout"
OUTCOMES = (SUCCESS, FAILURE_THEN_SUCCESS, FAILURE_FAILURE, TIMEOUT)


def judge_outcome(tries: list[Mapping[str, Any]], passed_at: int | None) -> str:
    """One judge's outcome from its reflect run's tries (each with `timed_out`) and first passing try."""
    if any(attempt.get("timed_out") for attempt in tries):
        return TIMEOUT
    if passed_at == 1:
        return SUCCESS
    if passed_at is not None:
        return FAILURE_THEN_SUCCESS
    return FAILURE_FAILURE


@dataclass(frozen=True)
class DifficultyDecision:
    """Whether the exercise stays, why not, and how the judges did."""

    keep: bool
    reason: str | None
    outcomes: dict[str, str]  # judge -> outcome
    counts: dict[str, int]

    def to_dict(self) -> dict[str, object]:
        return {"keep": self.keep, "reason": self.reason, "outcomes": self.outcomes, "counts": self.counts}


def select_by_difficulty(outcomes: Mapping[str, str]) -> DifficultyDecision:
    """Drop an exercise with a timeout, or that every judge solved at the first try (see the module)."""
    counts = Counter(outcomes.values())
    tally = {name: counts.get(name, 0) for name in OUTCOMES}
    if not outcomes:
        return DifficultyDecision(True, None, {}, tally)
    if counts[TIMEOUT]:
        return DifficultyDecision(False, f"timeout filter: {counts[TIMEOUT]} judge run(s) timed out",
                                  dict(outcomes), tally)
    if counts[SUCCESS] == len(outcomes):
        return DifficultyDecision(False, "too easy: every judge passed at the first try", dict(outcomes), tally)
    return DifficultyDecision(True, None, dict(outcomes), tally)
