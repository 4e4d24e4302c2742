"""results.html: an experiment's tables and plots on one self-contained page (inline CSS and SVG, no scripts).

Two plots per the issue: the functional score per attempt of every (method, model), and #Pass per
task of each (method, model) against the task's #Tests; then ProjectGen's #Pass table.
"""
from __future__ import annotations

from datetime import datetime, timezone

from projectgen.experiments.results import ExperimentResults, ModelReport
from projectgen.experiments.tables import Table, pass_table
from projectgen.inspection.charts import line_chart, stacked_bars
from projectgen.inspection.formatting import esc
from projectgen.inspection.html import REPORT_CSS

# One color per (method, model) series, in order (colorblind-safe Tableau 10).
SERIES_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac")


def label(report: ModelReport) -> str:
    return f"{report.method} / {report.model}"


def score_per_attempt(results: ExperimentResults) -> str:
    """The mean unit pass rate of the output after each attempt, one line per (method, model)."""
    attempts = max((r.attempts for r in results.models), default=0)
    series = [(label(r), SERIES_COLORS[i % len(SERIES_COLORS)], "line",
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


def html_table(table: Table) -> str:
    """A table of escaped cells."""
    header, rows = table
    out = ["<table><tr>" + "".join(f"<th>{esc(c)}</th>" for c in header) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows]
    return "\n".join(out + ["</table>"])


def render_html(results: ExperimentResults) -> str:
    """The whole page."""
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Experiment on "
             f"{esc(results.dataset)}</title><style>{REPORT_CSS}</style></head><body><main>",
             f"<h1>Experiment on {esc(results.dataset)}</h1>",
             f"<p class='muted'>attempts: {esc(results.attempt_settings.get('attempts'))}, selection: "
             f"{esc(results.attempt_settings.get('selection'))}; prices: {esc(results.prices)}</p>"]
    charts = [("Functional score per attempt (mean unit pass rate of the output after each attempt)",
               score_per_attempt(results)),
              *((f"#Pass per task: {label(r)}", pass_per_task(r)) for r in results.models)]
    if any(chart for _, chart in charts):
        parts.append("<h2>Plots</h2><div class='charts'>"
                     + "".join(f"<div class='card wide'><h3>{esc(title)}</h3>{chart}</div>"
                               for title, chart in charts if chart) + "</div>")
    if table := pass_table(results):
        parts += ["<h2>#Pass per task (ProjectGen Tables 3 and 5)</h2>", "<div class='scroll'>",
                  html_table(table), "</div>"]
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f"<footer>projectgen experiment results, written {stamp}; results.md and results.json hold "
                 "every figure.</footer></main></body></html>")
    return "\n".join(parts)
