"""The rich tables and summaries the commands print: test reports, reference benchmarks, attempts, experiments,
and the progress bar of a batch."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

WIDE = 1000
"""Columns of a console that is not a terminal (piped, captured): rich's default of 80 cuts tables; a table is
as wide as its cells anyway, so this only lifts the cap."""


def make_console(*, stderr: bool = False, piped_width: int = WIDE) -> Console:
    """The commands' rich console: a terminal's own width; piped or captured, `piped_width` (default `WIDE`, so
    tables are whole: grep and files see every cell), whatever COLUMNS a parent process left in the environment."""
    from rich.console import Console

    console = Console(stderr=stderr)
    return console if console.is_terminal else Console(stderr=stderr, width=piped_width)


def print_test_report(console, report) -> None:
    """Outcome counts, pass rate, and the first collection errors and failures of one test run. Every text of
    the run (test names, messages, exception names, file names) is the code under test's: escaped, so that
    markup in it is printed as it is, never read (a stray "[/]" made rich raise)."""
    from rich.table import Table

    from rich.markup import escape

    reason = report.not_run_reason()
    if reason:  # a table of zeros would hide it
        console.print(f"[red]{escape(f'{report.task_id} - {report.suite} tests did not run: {reason}')}[/red]",
                      highlight=False)
    else:
        table = Table(title=escape(f"{report.task_id} - {report.suite} tests"), show_lines=False)
        table.add_column("outcome")
        table.add_column("count", justify="right")
        for key, value in report.summary().items():
            if key not in ("total", "pass_rate", "status") and value:
                table.add_row(key, str(value))
        table.add_row("total", str(report.total))
        table.add_row("pass rate", f"{report.pass_rate:.1%}")
        console.print(table)
    if report.tampered:
        console.print(f"[red]{escape(f'the results were tampered with: {report.tampered}')}; no test counts as "
                      "passed[/red]", highlight=False)
    if report.unprotected:
        console.print("[yellow]isolation none: the tests ran unprotected, and the code under test could have "
                      "faked this score[/yellow]", highlight=False)
    if report.integrity_flags:
        from projectgen.evaluation.integrity_flags import describe_counts

        console.print(f"[yellow]integrity flags (known gaming moves; they do not change the score): "
                      f"{describe_counts(report.integrity_flags)}; the report's JSON lists where[/yellow]",
                      highlight=False)
    if (env := report.environment) and env.python_fallback:
        console.print(f"[yellow]Python {env.python_requested} was not found: the tests ran on Python "
                      f"{env.python}[/yellow]", highlight=False)
    for error in report.collection_errors[:10]:
        last = [line for line in error.message.strip().splitlines() if line.startswith("E ")][-1:] or [""]
        console.print(f"  [red]collection error[/red] {escape(f'{error.nodeid}: {last[0][:160]}')}", highlight=False)
    for failure in report.failures()[:10]:
        last = failure.message.strip().splitlines()[-1:] or [""]
        console.print(f"  [red]{failure.outcome.value}[/red] {escape(f'{failure.nodeid}: {last[0][:160]}')}",
                      highlight=False)
    if report.timed_out and not reason:
        console.print("[yellow]the run hit its timeout; unfinished tests count as errors[/yellow]")


def statistics_table(rows, title: str):
    """ProjectGen's Table 2: a row per task, then AVG and MEDIAN; an empty cell is a figure not had (the
    task's note says why)."""
    from rich.markup import escape
    from rich.table import Table

    from projectgen.evaluation.dataset_statistics import COLUMNS, summary_rows

    table = Table(title=title)
    table.add_column("task")
    for column in COLUMNS:
        table.add_column(column, justify="right")
    table.add_column("note", overflow="fold")

    def cell(value) -> str:
        if value is None:
            return ""
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    for row in rows:
        table.add_row(escape(row.task_id), *(cell(row.value(column)) for column in COLUMNS),
                      escape("; ".join(row.notes)))
    summary = summary_rows(rows)
    for name in ("AVG", "MEDIAN"):
        table.add_row(name, *(cell(summary[name][column]) for column in COLUMNS), "")
    return table


def bench_table(rows, title: str):
    """One row per task: status, passed/total, rate, seconds and a note."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title)
    for column, justify in (("task", "left"), ("status", "left"), ("passed", "right"), ("total", "right"),
                            ("rate", "right"), ("seconds", "right"), ("note", "left")):
        table.add_column(column, justify=justify, overflow="fold")
    for row in rows:
        color = {"passed": "green", "failed": "yellow"}.get(row.status, "red")
        table.add_row(row.task_id, f"[{color}]{row.status}[/{color}]", str(row.passed), str(row.total),
                      f"{row.pass_rate:.1%}", f"{row.duration:.1f}", escape(row.note[:300]))  # the run's words
    return table


def print_attempts(console, outcome) -> None:
    """The attempts of a LiveCoder run, the model(s), the output chosen and its unit tests."""
    from rich.table import Table

    summary = outcome.summary
    oracle = " (selection by hidden unit tests: oracle setting)" if summary.get("oracle") else ""
    table = Table(title=f"{summary['task_id']}: {summary.get('method', 'livecoder')} attempts{oracle}")
    for column in ("attempt", "score", "unit tests", "stage iterations", "best so far", "knowledge in", "tokens"):
        table.add_column(column)
    for row in summary["attempts"]:
        if row.get("reused"):
            table.add_row(str(row["attempt"]), "reused", "", "", f"{row['best_score']:.2f} (#{row['best_attempt']})",
                          "", "0")
            continue
        if row.get("budget_limited"):
            table.add_row(str(row["attempt"]), "[red]budget[/red]", "", "", "", "", str(row["tokens"]["total_tokens"]))
            continue
        unit = row.get("unit") or {}
        stages = row.get("stages") or {}
        iterations = "/".join(str(stages[s]["iterations"]) for s in ("architecture", "skeleton", "code") if s in stages)
        used = row.get("knowledge_used") or {}
        table.add_row(str(row["attempt"]), f"{row['score']:.2f}",
                      f"{unit.get('passed', '')}/{unit.get('total', '')}" if unit else "", iterations,
                      f"{row['best_score']:.2f} (#{row['best_attempt']})",
                      f"{len(used.get('success', []))} ok, {len(used.get('failure', []))} failed",
                      str(row["tokens"]["total_tokens"]))
    console.print(table)
    models = sorted(set(summary.get("model_descriptions", {}).values()) or set(summary.get("models", {}).values()))
    if models:
        console.print(f"model(s): {'; '.join(models)}", highlight=False)
    final = summary.get("final") or {}
    console.print(f"output: attempt {final.get('attempt')} ({final.get('source')}), score {final.get('score')}"
                  + ("; [red]stopped by the budget[/red]" if summary.get("budget_limited") else ""), highlight=False)
    if outcome.unit_report is not None:
        print_test_report(console, outcome.unit_report)


def print_model_table(console, report) -> None:
    """One model's per-attempt table, its final-output figures and its errors."""
    from rich.table import Table

    from projectgen.experiments import attempt_cells, final_lines

    table = Table(title=f"{report.name}: {report.final.tasks} task(s), {report.attempts} attempt(s)",
                  caption="hidden unit-test pass rates: mean over tasks / LOC-weighted", caption_justify="left")
    for column in ("t", "generated", "attempt t", "output after t", "reuse", "tokens", "cost", "MI", "MI (VS)"):
        table.add_column(column, justify="left" if column == "t" else "right", no_wrap=True)
    for row in report.per_attempt:
        cells = attempt_cells(row)
        table.add_row(cells[0], cells[1], f"{cells[2]} / {cells[3]}", f"{cells[4]} / {cells[5]}", *cells[6:])
    console.print(table)
    console.print(f"model: {report.spec}", highlight=False)
    for line in final_lines(report):
        console.print(line, highlight=False)
    for pair in report.pairs:
        if pair.status == "error":
            console.print(f"  [red]error[/red] {pair.task_id}: {pair.error}", highlight=False)


def batch_progress(console, description: str, units: str, ledger: Path):
    """A batch's progress bar, its task id and the batch's `on_start` hook, which sets the total, says how
    many `units` the ledger already holds and only then shows the bar: a batch refused while it is checked
    (unknown task, bad model spec) prints its one line with no empty bar before it. `with progress:` stops it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    class CheckedFirstProgress(Progress):
        def __enter__(self) -> CheckedFirstProgress:  # started by on_start, once the batch is checked
            return self

        def stop(self) -> None:  # a bar never started leaves nothing behind, not even rich's blank line
            if self.live.is_started:
                super().stop()

    progress = CheckedFirstProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                    TimeElapsedColumn(), console=console)
    bar = progress.add_task(description, total=None)

    def on_start(pending: int, already: int) -> None:
        progress.update(bar, total=pending)
        if already:
            console.print(f"{already} {units} already finished in the ledger {ledger}; continuing", highlight=False)
        progress.start()

    return progress, bar, on_start


def print_errored_units(console, errored: int, scored: int, units: str) -> None:
    """Said before any figure: figures over the scored units only must not read as the whole batch's."""
    if errored:
        console.print(f"[red]{errored} {units} ended in an error: the figures below cover the {scored} scored "
                      f"{units} only; run the same command again to retry the others[/red]", highlight=False)
