"""LiveCoder's Tables 1 and 2 (RAL-Bench and NL2Repo-Bench): their arithmetic and their shape for an experiment.

Table 1 prints, per backbone and method, the functional score, `non_functional` (the AHP-weighted
mean of the five dimensions, `projectgen.evaluation.nonfunctional`) and the five dimensions, each
with its change from Direct in points. Table 2 prints the pass rate overall and per difficulty bucket
(easy <= 1.5k LOC, medium, hard >= 4k), the change from Direct, and an `Imp.` row: Ours against the
best of the other methods, Direct included, as a relative change in %. Every figure is a mean over
tasks, so the overall figure is the bucket means weighted by the buckets' task counts.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from projectgen.evaluation.nonfunctional import (DIMENSIONS, MAINTAINABILITY_MEASURE, MAINTAINABILITY_MEASURE_NOTE,
                                                 RESOURCE_MEASURE, RESOURCE_MEASURE_NOTE)
from projectgen.experiments.results import DIFFICULTIES, ExperimentResults, ModelReport
from projectgen.experiments.results_writer import Block, Heading, Table, TableBlock, Text

TABLE1_METRICS: tuple[str, ...] = ("functional", "non_functional", *DIMENSIONS)
TABLE2_METRICS: tuple[str, ...] = ("overall", *DIFFICULTIES)
BASELINE_METHOD = "direct"
OURS_METHOD = "livecoder"


def changes_from(values: Mapping[str, float | None], baseline: str) -> dict[str, float | None]:
    """Each method's change from `baseline`'s value in points (None where either is missing)."""
    base = values.get(baseline)
    return {name: None if value is None or base is None else value - base for name, value in values.items()}


def improvement_over_best(ours: float, others: Iterable[float]) -> float:
    """Table 2's `Imp.`: (ours - the best other method) / that best x 100."""
    best = max(others)
    return (ours - best) / best * 100


def overall_from_buckets(means: Mapping[str, float], tasks: Mapping[str, int]) -> float:
    """The mean over every task from the per-bucket means and how many tasks each bucket holds."""
    total = sum(tasks[name] for name in means)
    return math.fsum(means[name] * tasks[name] for name in means) / total


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _change(value: float | None) -> str:
    return "" if value is None else f"{value:+.2f}"


def _with_change(value: float | None, change: float | None) -> str:
    """A value (%) and, in parentheses, its change from Direct when there is one."""
    return _percent(value) + ("" if change is None else f" ({_change(change)})")


def ralbench_table(reports: Sequence[ModelReport], figures: Mapping[tuple[str, str], Mapping[str, float | None]]
                   ) -> list[Table]:
    """LiveCoder Table 1's shape, one table per model: a row per metric as printed, per method its value (%)
    and its change from Direct. `figures`: (method, model) -> metric -> value in %."""
    tables: list[Table] = []
    for model in dict.fromkeys(r.model for r in reports):
        methods = [r.method for r in reports if r.model == model]
        header = [model, *(f"{m}{'' if m == BASELINE_METHOD else ' (vs Direct)'}" for m in methods)]
        rows = []
        for metric in TABLE1_METRICS:
            values = {m: figures.get((m, model), {}).get(metric) for m in methods}
            changes = changes_from(values, BASELINE_METHOD)
            rows.append([metric, *(_percent(values[m]) if m == BASELINE_METHOD else _with_change(values[m], changes[m])
                                   for m in methods)])
        tables.append((header, rows))
    return tables


def nl2repo_table(reports: Sequence[ModelReport], figures: Mapping[tuple[str, str], Mapping[str, float | None]]
                  ) -> list[Table]:
    """LiveCoder Table 2's shape, one table per model: a row per method with overall, easy, medium and hard
    (%) and the change from Direct, then `Imp.` when LiveCoder and another method both have the figure."""
    tables: list[Table] = []
    for model in dict.fromkeys(r.model for r in reports):
        methods = [r.method for r in reports if r.model == model]
        rows = []
        by_metric = {metric: {m: figures.get((m, model), {}).get(metric) for m in methods}
                     for metric in TABLE2_METRICS}
        changes = {metric: changes_from(values, BASELINE_METHOD) for metric, values in by_metric.items()}
        for method in methods:
            rows.append([method, *(_with_change(by_metric[metric][method], changes[metric][method])
                                   for metric in TABLE2_METRICS)])
        imp = []
        for metric in TABLE2_METRICS:
            ours = by_metric[metric].get(OURS_METHOD)
            others = [v for m, v in by_metric[metric].items() if m != OURS_METHOD and v is not None]
            imp.append("" if ours is None or not others or max(others) <= 0
                       else f"{improvement_over_best(ours, others):+.1f}")
        if any(imp):
            rows.append(["Imp.", *imp])
        tables.append(([model, *TABLE2_METRICS], rows))
    return tables


def _mean(values: Sequence[float | None]) -> float | None:
    """The mean of a figure over tasks, None when any task lacks it (a mean over a subset is not the paper's)."""
    if not values or any(v is None for v in values):
        return None
    return math.fsum(v for v in values if v is not None) / len(values)


def report_figures(report: ModelReport) -> dict[str, float | None]:
    """One (method, model)'s Table 1 and Table 2 figures (%): functional (the mean final pass rate, a published
    task that failed counting 0 of its #Tests), the non-functional ones averaged over its finished tasks, and
    the pass rate overall and per difficulty bucket of the tasks that carry a label."""
    counted = [p for p in report.pairs if p.ok or p.unit_denominator == "published"]
    rates = [None if not p.final_unit_total else 100 * (p.final_unit_passed or 0) / p.final_unit_total
             for p in counted]
    figures: dict[str, float | None] = {"functional": _mean(rates)}
    finished = [p for p in report.pairs if p.ok]
    for name in ("non_functional", *DIMENSIONS):
        figures[name] = _mean([None if p.non_functional is None else p.non_functional.get(name) for p in finished])
    labelled = [(p.difficulty, rate) for p, rate in zip(counted, rates) if p.difficulty]
    if labelled:
        figures["overall"] = _mean([rate for _, rate in labelled])
        for bucket in DIFFICULTIES:
            inside = [rate for label, rate in labelled if label == bucket]
            figures[bucket] = _mean(inside) if inside else None
    return figures


def livecoder_blocks(results: ExperimentResults) -> list[Block]:
    """LiveCoder Tables 1 and 2 for an experiment on RAL-Bench or NL2Repo-Bench (none for other datasets)."""
    reports = results.models
    figures = {(r.method, r.model): report_figures(r) for r in reports}
    blocks: list[Block] = []
    if any(p.non_functional is not None for r in reports for p in r.pairs):
        blocks += [Heading("Functional and non-functional scores (LiveCoder Table 1, RAL-Bench)"),
                   Text("%; functional: mean pass rate of the functional suite; non_functional: AHP-weighted mean "
                        "(maintainability 0.36, security 0.24, robustness 0.16, efficiency 0.12, resource 0.12) of "
                        "the five scores against the reference measured here (projectgen.evaluation.nonfunctional); "
                        f"in parentheses the change from Direct. Maintainability ({MAINTAINABILITY_MEASURE}): "
                        f"{MAINTAINABILITY_MEASURE_NOTE}. Resource ({RESOURCE_MEASURE}): {RESOURCE_MEASURE_NOTE}."),
                   *(TableBlock(table) for table in ralbench_table(reports, figures))]
    if any(p.difficulty for r in reports for p in r.pairs):
        blocks += [Heading("Pass rate by difficulty (LiveCoder Table 2, NL2Repo-Bench)"),
                   Text("% of each task's published #Tests passed, mean over tasks, overall and per published "
                        "difficulty label (easy <= 1.5k LOC, medium, hard >= 4k); in parentheses the change from "
                        "Direct; Imp.: LiveCoder against the best other method, relative, %."),
                   *(TableBlock(table) for table in nl2repo_table(reports, figures))]
    return blocks
