"""The plots of an experiment's results.html (inline SVG).

Two plots: the functional score per attempt of every (method, model), and #Pass per task of each
(method, model) against the task's #Tests.
"""
from __future__ import annotations

from projectgen.experiments.results import ExperimentResults, ModelReport
from projectgen.experiments.results_writer import series_color
from projectgen.inspection.charts import line_chart, stacked_bars



def label(report: ModelReport) -> str:
    """How a plot names a (method, model) series."""
    return report.column


def score_per_attempt(results: ExperimentResults) -> str:
    """The mean unit pass rate of the output after each attempt, one line per (method, model)."""
    attempts = max((r.attempts for r in results.models), default=0)
    series = [(label(r), series_color(i), "line",
               [row.output_mean for row in r.per_attempt] + [None] * (attempts - len(r.per_attempt)))
              for i, r in enumerate(results.models) if any(row.output_mean is not None for row in r.per_attempt)]
    if not series:
        return ""
    return line_chart("Functional score of the output after each attempt (mean unit pass rate)",
                      [f"A{t}" for t in range(1, attempts + 1)], series, width=1060)


def pass_per_task(report: ModelReport) -> str:
    """#Pass and the rest of #Tests per task of one (method, model)."""
    scored = [p for p in report.pairs if p.ok and p.final_unit_total]
    if not scored:
        return ""
    passed = [float(p.final_unit_passed or 0) for p in scored]
    rest = [float((p.final_unit_total or 0) - (p.final_unit_passed or 0)) for p in scored]
    return stacked_bars(f"#Pass per task: {label(report)}", [p.task_id for p in scored],
                        [("#Pass", "#2f9e44", passed), ("not passed", "#e9ecef", rest)],
                        notes=[f"{p.final_unit_passed}/{p.final_unit_total}" for p in scored], width=1060,
                        y_title="unit tests")
