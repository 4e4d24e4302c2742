"""LiveRepoReflection's figures ("Turning the Tide: Repository-based Code Reflection", Tables 1-2).

Per task, the protocol records the first try whose tests all passed (None: none did), whether
every reply of the task was well formed, and its tokens. Over a set of tasks, in percent:

- Pass@k: tasks that passed by try k (cumulative: Pass@2 counts the tasks passed at try 1 or 2);
  Pass@1 and Pass@2 are the tables' P1 and P2, and k = 1..tries gives the pass@k curve;
- Fix Weight, FW = (Pass@2 - Pass@1) / Pass@2 x 100, 0 when Pass@2 is 0: the share of the
  solved tasks that the repair round solved;
- Well Format, WF: tasks whose every reply parsed and applied exactly;
- "All": the test-count-weighted mean of the languages' figures (the paper does not state the
  weighting; every printed All cell fits it, with the counts of its appendix Table 3), and All's
  FW the formula applied to All's Pass@1 and Pass@2. Weighted by each language's number of tasks,
  the mean is the figure over all tasks pooled.

Everything here is a pure function of its arguments.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

ALL = "All"
PAPER_TEST_COUNTS: dict[str, int] = {"Python": 820, "Java": 250, "Cpp": 143, "Rust": 212, "Go": 403, "JavaScript": 60}
"""LiveRepoReflection's test cases per language (appendix Table 3; 1888 in all): the weights of its All column."""


class TaskOutcome(BaseModel):
    """One task under one model and edit format, as the figures need it."""

    task_id: str
    language: str = "Python"
    passed_at: int | None = Field(default=None, description="the first try whose tests all passed; None: none")
    tries: int = Field(default=0, description="tries run (a pass ends the task)")
    well_formed: bool = Field(default=False, description="every reply parsed and applied exactly")
    input_tokens: int = 0
    output_tokens: int = 0


def percent(part: int, whole: int) -> float:
    """part / whole x 100 (0 for no whole)."""
    return 100.0 * part / whole if whole else 0.0


def pass_at(outcomes: Sequence[TaskOutcome], k: int) -> float:
    """Pass@k in percent: tasks whose tests all passed by try k."""
    return percent(sum(1 for o in outcomes if o.passed_at is not None and o.passed_at <= k), len(outcomes))


def pass_at_curve(outcomes: Sequence[TaskOutcome], tries: int) -> list[float]:
    """Pass@1 .. Pass@tries: the pass@k curve over repair rounds (never decreasing)."""
    return [pass_at(outcomes, k) for k in range(1, tries + 1)]


def fix_weight(pass_at_1: float, pass_at_2: float) -> float:
    """FW = (Pass@2 - Pass@1) / Pass@2 x 100, and 0 when Pass@2 is 0."""
    return (pass_at_2 - pass_at_1) / pass_at_2 * 100.0 if pass_at_2 else 0.0


def well_formed_rate(outcomes: Sequence[TaskOutcome]) -> float:
    """WF in percent: tasks whose every reply was well formed."""
    return percent(sum(1 for o in outcomes if o.well_formed), len(outcomes))


def weighted_all(values: Mapping[str, float], weights: Mapping[str, int]) -> float:
    """The All column: sum(value x weight) / sum(weight) over the languages given (each needs a weight)."""
    missing = sorted(set(values) - set(weights))
    if missing:
        raise ValueError(f"no weight for {', '.join(missing)}")
    total = sum(weights[lang] for lang in values)
    return math.fsum(values[lang] * weights[lang] for lang in values) / total if total else 0.0


class ReflectionFigures(BaseModel):
    """The figures of a set of tasks (one language, or All), percentages unrounded."""

    tasks: int
    pass_at_1: float
    pass_at_2: float | None = Field(description="None when only one try was allowed")
    fix_weight: float | None
    well_formed: float
    pass_at_k: list[float] = Field(description="Pass@1 .. Pass@tries")
    input_tokens: int = 0
    output_tokens: int = 0


def figures(outcomes: Sequence[TaskOutcome], tries: int) -> ReflectionFigures:
    """The figures of `outcomes` pooled."""
    curve = pass_at_curve(outcomes, tries)
    second = curve[1] if tries >= 2 else None
    return ReflectionFigures(
        tasks=len(outcomes), pass_at_1=curve[0] if curve else 0.0, pass_at_2=second,
        fix_weight=fix_weight(curve[0], second) if second is not None else None,
        well_formed=well_formed_rate(outcomes), pass_at_k=curve,
        input_tokens=sum(o.input_tokens for o in outcomes), output_tokens=sum(o.output_tokens for o in outcomes))


def by_language(outcomes: Sequence[TaskOutcome], tries: int) -> dict[str, ReflectionFigures]:
    """Each language's figures, then All: the languages' figures weighted by their number of tasks
    (the paper's weighting, its weights being its test counts), FW from All's Pass@1 and Pass@2."""
    groups: dict[str, list[TaskOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault(outcome.language, []).append(outcome)
    per = {lang: figures(group, tries) for lang, group in sorted(groups.items())}
    if not per:
        return {ALL: figures([], tries)}
    weights = {lang: f.tasks for lang, f in per.items()}
    curve = [weighted_all({lang: f.pass_at_k[k] for lang, f in per.items()}, weights) for k in range(tries)]
    second = curve[1] if tries >= 2 else None
    per[ALL] = ReflectionFigures(
        tasks=sum(weights.values()), pass_at_1=curve[0], pass_at_2=second,
        fix_weight=fix_weight(curve[0], second) if second is not None else None,
        well_formed=weighted_all({lang: f.well_formed for lang, f in per.items() if lang != ALL}, weights),
        pass_at_k=curve, input_tokens=sum(f.input_tokens for f in per.values()),
        output_tokens=sum(f.output_tokens for f in per.values()))
    return per
