"""`projectgen experiment`: every task x model of a dataset as LiveCoder runs, resumable, with tables per model.

Wired into `projectgen.cli` through `add_experiment_command(subparsers)`, which adds the
sub-command and returns its handler by name::

    COMMANDS.update(add_experiment_command(commands))
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def add_experiment_command(subparsers) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``experiment`` to the CLI's sub-parsers; return ``{"experiment": handler}``."""
    from projectgen.cli import _add_attempt_options, _add_pipeline_options, _add_runner_options, _positive_int, \
        _add_prices_option

    parser = subparsers.add_parser(
        "experiment", help="run every task x model of a dataset (LiveCoder runs), resumable, with per-attempt tables",
        description="Each task x model pair is one LiveCoder run in OUT/MODEL/TASK (its attempts in order); pairs "
                    "run in parallel with --workers. A ledger (OUT/ledger.jsonl) records finished pairs: run the "
                    "same command again to continue (finished pairs are skipped, interrupted runs resume). Prints "
                    "one table per model (per attempt: unit-test pass rate, mean and LOC-weighted; reuse rate; "
                    "tokens; cost) and writes OUT/results.json and OUT/results.md.")
    parser.add_argument("--dataset", required=True, type=Path, help="folder of task folders")
    parser.add_argument("--model", action="append", required=True, metavar="[LABEL=]SPEC",
                        help="a model to run (repeatable): PROVIDER:MODEL, a served name with --base-url, "
                             "scripted:FILE, or scripted:DIR replaying DIR/<task-id>.json per task; LABEL names "
                             "its folder and table (default: from the spec)")
    parser.add_argument("--tasks", default=None, metavar="ID,ID", help="only these task ids (comma-separated)")
    parser.add_argument("--workers", type=_positive_int, default=1, help="pairs run in parallel (default 1)")
    parser.add_argument("--out", type=Path, default=None,
                        help="experiment folder with the resumable ledger (default: ./runs/experiment-DATASET)")
    parser.add_argument("--fresh", action="store_true", help="forget the ledger and run every pair again")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint for every model")
    _add_prices_option(parser)
    parser.add_argument("--no-unit-tests", action="store_true",
                        help="do not run the hidden unit tests (no functional score: tokens and cost only)")
    _add_pipeline_options(parser)
    _add_attempt_options(parser)
    _add_runner_options(parser)
    return {"experiment": cmd_experiment}


def cmd_experiment(args: argparse.Namespace) -> int:
    """Exit 0 when every pair finished (whatever its scores), 1 when some pair is an error, 2 for a usage error."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from projectgen.cli import EXIT_OK, EXIT_TESTS_FAILED, _attempt_settings, _runner, _settings, check_out_path
    from projectgen.errors import ProjectGenError
    from projectgen.experiments import NOTES, ExperimentHooks, ExperimentSpec, LocalExecutor, run_experiment
    from projectgen.runs import layout

    if not args.dataset.is_dir():
        raise ProjectGenError(f"{args.dataset}: dataset folder not found")
    out = args.out or Path("runs") / f"experiment-{args.dataset.resolve().name}"
    check_out_path(out, folder=True)
    if args.knowledge_store:
        from projectgen.memory.knowledge_store import parse_server_url

        parse_server_url(args.knowledge_store)
    if args.base_url is not None:
        from projectgen.llm import check_base_url

        if not args.base_url.strip():
            raise ProjectGenError("--base-url is empty: give the endpoint, e.g. http://localhost:8000/v1")
        check_base_url(args.base_url)
    prices, source = _prices(args.prices)
    console = Console()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console)
    bar = progress.add_task("task x model runs", total=None)

    def on_start(pending: int, already: int) -> None:
        progress.update(bar, total=pending)
        if already:
            console.print(f"{already} pair(s) already finished in the ledger {out / layout.LEDGER}; continuing",
                          highlight=False)

    def on_pair(result) -> None:
        if result.how != "load":
            progress.advance(bar)
        if result.status == "error":
            progress.console.print(f"[red]{result.key}: error[/red] {result.error}", highlight=False)
            return
        unit = (f" unit {result.final_unit_passed}/{result.final_unit_total}"
                if result.final_unit_total is not None else "")
        how = {"resumed": " (resumed)", "collected": " (recorded from its folder)"}.get(result.how, "")
        progress.console.print(f"{result.key}: {result.status}{unit}, {result.attempts_run} attempt(s) run{how}",
                               highlight=False)

    def log(key: str, message: str) -> None:
        progress.console.print(f"[dim]{key}: {message}[/dim]", highlight=False)

    tasks = args.tasks.split(",") if args.tasks else None
    with progress:
        spec = ExperimentSpec(dataset=args.dataset, models=args.model, settings=_settings(args),
                              attempt_settings=_attempt_settings(args), tasks=tasks, max_tokens=args.max_tokens,
                              base_url=args.base_url, knowledge_url=args.knowledge_store)
        results = run_experiment(
            spec, out, executor=LocalExecutor(workers=args.workers), fresh=args.fresh,
            runner_factory=lambda: _runner(args, log=lambda message: log("sandbox", message)),
            prices=prices, prices_source=source, hooks=ExperimentHooks(on_start, on_pair, progress=log))
    if results.attempt_settings.get("selection") == "unit":
        console.print("[yellow]the best attempt was selected by the hidden unit tests: the paper's oracle "
                      "setting[/yellow]")
    for report in results.models:
        print_model_table(console, report)
    console.print(f"[dim]{NOTES}[/dim]", highlight=False)
    console.print(f"results: {out / 'results.md'}, {out / 'results.json'}; runs in {out}/MODEL/TASK "
                  f"(`projectgen trace DIR`)", highlight=False)
    errors = sum(report.final.errors for report in results.models)
    return EXIT_OK if not errors else EXIT_TESTS_FAILED


def _prices(path: Path | None):
    from projectgen.llm.pricing import PRICES_AS_OF, PriceTable

    if path is None:
        return PriceTable.default(), f"list prices as of {PRICES_AS_OF}"
    return PriceTable.from_file(path), f"{path} over list prices as of {PRICES_AS_OF}"


def print_model_table(console, report) -> None:
    """One model's per-attempt table, its final-output figures and its errors."""
    from rich.table import Table

    from projectgen.experiments import attempt_cells, final_lines

    table = Table(title=f"{report.model}: {report.final.tasks} task(s), {report.attempts} attempt(s)",
                  caption="hidden unit-test pass rates: mean over tasks / LOC-weighted", caption_justify="left")
    for column in ("t", "generated", "attempt t", "output after t", "reuse", "tokens", "cost"):
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
