"""An experiment's results as tables: results.md, and the cells and lines the CLI's tables share."""
from __future__ import annotations

from pathlib import Path

from projectgen.durable_files import write_atomic
from projectgen.experiments.results import AttemptRow, ExperimentResults, ModelReport
from projectgen.runs import layout


def percent(value: float | None) -> str:
    """A rate as a percentage with one decimal; "n/a" when there is none."""
    return "n/a" if value is None else f"{value:.1%}"


ATTEMPT_COLUMNS = ("attempt", "generated", "attempt t: mean", "attempt t: LOC-w.", "output: mean",
                   "output: LOC-w.", "reuse", "tokens", "cost")


def attempt_cells(row: AttemptRow) -> list[str]:
    """The cells of one per-attempt table row (shared by the rich and Markdown tables)."""
    return [str(row.attempt), f"{row.generated}/{row.tasks}", percent(row.attempt_mean),
            percent(row.attempt_loc_weighted), percent(row.output_mean), percent(row.output_loc_weighted),
            percent(row.reuse_rate), f"{row.tokens.total_tokens:,}", row.cost.label()]


def final_lines(report: ModelReport) -> list[str]:
    """The final-output figures as short lines (shared by the CLI and Markdown)."""
    f = report.final
    lines = []
    if f.tasks and f.mean_pass_rate is not None:
        lines.append(f"final output (hidden unit tests): #Pass {f.passed}/{f.total}, mean {percent(f.mean_pass_rate)}, "
                     f"LOC-weighted {percent(f.loc_weighted_pass_rate)}, fully passing {f.fully_passing}/{f.tasks} "
                     "tasks")
    elif f.tasks:
        lines.append("final output: hidden unit tests not run")
    lines.append(f"tasks: {f.tasks} scored, {f.errors} error(s); attempts run per task: "
                 f"{'n/a' if f.mean_attempts_run is None else f'{f.mean_attempts_run:.2f}'}; reused: {f.reused}; "
                 f"stopped by the budget: {f.budget_limited}")
    lines.append(f"tokens: {f.tokens.total_tokens:,} in {f.tokens.calls} calls; cost: {f.cost.label()}")
    return lines


NOTES = ("'attempt t' is the unit pass rate of attempt t; 'output' the pass rate of what the run outputs after t "
         "attempts (the historical best so far). An attempt that generated nothing (a reuse of a full-score best, "
         "a budget stop, or after the run ended) carries the best so far forward; attempts after a reuse count as "
         "reuses. Means are over tasks; LOC-w. weights each task by its reference LOC (ProjectGen). Error pairs "
         "are left out. Tokens and cost: calls tagged with attempt t, summed over tasks.")


def render_markdown(results: ExperimentResults) -> str:
    """results.md: the settings, then per model its per-attempt table, final figures and per-task table."""
    lines = [f"# Experiment on {results.dataset}", "",
             f"attempts: {results.attempt_settings.get('attempts')}, selection: "
             f"{results.attempt_settings.get('selection')}"
             + (" (oracle: hidden unit tests)" if results.attempt_settings.get("selection") == "unit" else "")
             + (f", token cap per run: {results.max_tokens}" if results.max_tokens else "")
             + (f"; prices: {results.prices}" if results.prices else ""), "", NOTES, ""]
    for report in results.models:
        lines += [f"## {report.model}", "", f"model: `{report.spec}`", "",
                  "| " + " | ".join(ATTEMPT_COLUMNS) + " |", "|" + "---|" * len(ATTEMPT_COLUMNS)]
        lines += ["| " + " | ".join(attempt_cells(row)) + " |" for row in report.per_attempt]
        lines += [""] + [f"- {line}" for line in final_lines(report)] + [""]
        lines += ["| task | status | LOC | unit (final) | attempts run | reused at | tokens | cost | note |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for p in report.pairs:
            unit = f"{p.final_unit_passed}/{p.final_unit_total}" if p.final_unit_total is not None else ""
            note = (p.error or "").replace("|", "\\|")[:200]
            lines.append(f"| {p.task_id} | {p.status} | {p.loc if p.loc is not None else ''} | {unit} | "
                         f"{p.attempts_run if p.ok else ''} | {p.reused_at or ''} | "
                         f"{p.tokens.total_tokens:,} | {p.cost.label() if p.ok else ''} | {note} |")
        lines.append("")
    return "\n".join(lines)


def write_results(results: ExperimentResults, out_dir: Path) -> None:
    """Write ``results.json`` and ``results.md`` into the experiment folder (each whole or not at all)."""
    write_atomic(out_dir / layout.RESULTS_JSON, results.model_dump_json(indent=1) + "\n")
    write_atomic(out_dir / layout.RESULTS_MD, render_markdown(results))
