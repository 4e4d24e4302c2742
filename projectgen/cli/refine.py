"""`projectgen refine`: SR-Eval's stepwise requirement refinement over a dataset of multi-turn tasks: the preset of
`projectgen evaluate refinement` (through `run_refinement`) with the paper's options and its tables."""
from __future__ import annotations

import argparse
from pathlib import Path

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (
    add_batch_options,
    add_concurrency_option,
    add_executor_options,
    add_runner_options,
    add_sampling_options,
    check_out_path,
    executor_from_args,
    positive_int,
    resolve_dataset,
    runner_from_args,
    runner_settings_from_args,
    sampling_from_args,
)
from projectgen.cli.tables import make_console
from projectgen.llm.sampling import sampling_arguments

STRATEGIES = ("fh", "ce", "ci")  # as projectgen.protocols.refinement.refiner has them; kept here so `--help` imports nothing
CONTEXTS = ("basic", "golden")


def choices(text: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """A comma-separated list of allowed names, in the given order, without repeats."""
    picked = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    unknown = [p for p in picked if p not in allowed]
    if unknown or not picked:
        raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(unknown) or repr(text)} "
                                         f"(choose from {', '.join(allowed)}, comma-separated)")
    return picked


def add_commands(subparsers) -> None:
    """Add `refine` to the CLI's sub-parsers."""
    parser = subparsers.add_parser(
        "refine", help="multi-turn stepwise requirement refinement (SR-Eval): Acc(k), Avg Acc, CR, ATC",
        description="Plays every multi-turn task of a dataset turn by turn (each turn's code is tested in the sandbox "
                    "against that turn's tests) for every model, prompting strategy (fh: Full History, ce: Code "
                    "Edit, ci: Cumulative Instruction) and context (basic: the model's own code carried forward; "
                    "golden: the previous turn's reference). The tasks are validated first (each turn's reference "
                    "passes its own tests; tests that also pass on the previous turn's reference are named). A "
                    "ledger (OUT/ledger.jsonl) makes the command resumable: run it again to continue. Writes "
                    "OUT/results.json, results.md and results.html (Acc(k) curves).")
    parser.add_argument("--dataset", required=True,
                        help="folder of multi-turn task folders (docs/refinement.md), or `examples` for the bundled "
                             "tasks")
    parser.add_argument("--check-only", action="store_true",
                        help="only validate the tasks (each turn's reference on its own tests and on the next "
                             "turn's) and print what was found; no model is needed, and --workers defaults to one "
                             "per core")
    parser.add_argument("--stats", action="store_true",
                        help="print the dataset's statistics as SR-Eval's Table 1 (per level and language: tasks, "
                             "repositories, turns per task, mean characters and lines of a turn's requirement, "
                             "reference code and tests) and stop; nothing runs, no model is needed")
    parser.add_argument("--json", action="store_true", help="with --stats: print the table as JSON")
    parser.add_argument("--model", action="append", default=None, metavar="[LABEL=]SPEC",
                        help="a model (repeatable): PROVIDER:MODEL, a served name with --base-url, scripted:FILE "
                             "(scripted:examples: the bundled replay of the bundled tasks), or reference (each turn "
                             "answered with its reference: an oracle, not a model)")
    parser.add_argument("--strategy", type=lambda t: choices(t, STRATEGIES, "strategy"), default=STRATEGIES,
                        metavar="fh,ce,ci", help="prompting strategies (default: all three)")
    parser.add_argument("--context", type=lambda t: choices(t, CONTEXTS, "context"), default=CONTEXTS,
                        metavar="basic,golden", help="context settings (default: both; ci runs in basic only)")
    add_batch_options(parser, units="task runs", out_default="./runs/refine-DATASET")
    parser.add_argument("--max-tokens", type=positive_int, default=None,
                        help="stop a task run beyond this many tokens (it becomes an error row)")
    add_sampling_options(parser)
    add_runner_options(parser)
    add_executor_options(parser)
    add_concurrency_option(parser, units="task runs")
    parser.set_defaults(handler=cmd_refine)


def dataset_path(text: str) -> Path:
    """The --dataset folder, or the bundled multi-turn tasks for `examples` (`cli.options.resolve_dataset`)."""
    from projectgen.datasets.multiturn import bundled_dataset_dir

    return resolve_dataset(text, bundled_dataset_dir())


def cmd_refine(args: argparse.Namespace) -> int:
    """Exit 0 when every task loaded and every task run finished (whatever it scored), 1 when some task did not load
    or some run ended in an error, 2 for a usage error."""
    from projectgen.errors import ProjectGenError
    from projectgen.experiments.concurrency import Concurrency
    from projectgen.protocols.definition import Hooks
    from projectgen.protocols.refinement.batch import RefinementSpec, resolve_model, run_refinement
    from projectgen.protocols.refinement.protocol import failures
    from projectgen.runs import layout

    dataset = dataset_path(args.dataset)
    if args.stats:
        return print_statistics(args, dataset)
    if args.json:
        raise ProjectGenError("--json goes with --stats (a refinement run writes OUT/results.json)")
    out = args.out or Path("runs") / f"refine-{args.dataset if args.dataset == 'examples' else dataset.resolve().name}"
    check_out_path(out, folder=True)
    if args.check_only:
        return check_only(args, dataset, out)
    if not args.model:
        raise ProjectGenError("give a model: --model SPEC (or --model reference; --check-only needs none)")
    if args.base_url is not None:
        from projectgen.llm import check_base_url

        if not args.base_url.strip():
            raise ProjectGenError("--base-url is empty: give the endpoint, e.g. http://localhost:8000/v1")
        check_base_url(args.base_url)
    spec = RefinementSpec(dataset=dataset, models=tuple(resolve_model(m) for m in args.model),
                          strategies=args.strategy, contexts=args.context,
                          tasks=args.tasks,
                          base_url=args.base_url, sampling=sampling_arguments(sampling_from_args(args)),
                          max_tokens=args.max_tokens)
    console = make_console()
    from projectgen.cli.tables import batch_progress

    progress, bar, on_start = batch_progress(console, "task runs", "task run(s)", out / layout.LEDGER)

    def on_check(check) -> None:
        for problem in check.problems():
            progress.console.print(f"[yellow]{problem}[/yellow]", highlight=False)

    def on_row(row) -> None:
        progress.advance(bar)
        if not row.ok:
            progress.console.print(f"[red]{row.key}: error[/red] {row.error}", highlight=False)
            return
        marks = "".join("P" if passed else "F" for passed in row.verdicts)
        progress.console.print(f"{row.key}: {marks} ({row.tokens:,} tokens)", highlight=False)

    def log(key: str, message: str) -> None:
        if key == "sandbox":
            progress.console.print(f"[dim]{key}: {message}[/dim]", highlight=False)

    concurrency = Concurrency(calls=args.max_concurrent_calls)
    executor = executor_from_args(args, default_workers=concurrency.workers)
    with progress:  # the default runner's lines come to `log` as "sandbox"
        results = run_refinement(spec, out, runner_settings=runner_settings_from_args(args), executor=executor,
                                 fresh=args.fresh, concurrency=concurrency,
                                 hooks=Hooks(on_check=on_check, on_start=on_start, on_row=on_row, progress=log))
    # tasks that do not load first: a table over the others must not read as the dataset's result
    for task, reason in results.load_errors.items():
        console.print(f"[red]{task}: does not load:[/red] {reason}", highlight=False)
    print_refinement(console, results)
    console.print(f"results: {out / layout.RESULTS_MD}, {out / layout.RESULTS_JSON}, {out / layout.RESULTS_HTML}; "
                  f"task runs in {out}/MODEL/STRATEGY-CONTEXT/TASK", highlight=False)
    if results.load_errors:
        console.print(f"[red]{len(results.load_errors)} task(s) did not load (above): left out of the figures[/red]",
                      highlight=False)
    return EXIT_OK if not failures(results) else EXIT_TESTS_FAILED


def print_refinement(console, results) -> None:
    """The summary table (one row per model, strategy and context), the models, and the tasks' validation."""
    from rich.table import Table

    turns = max((len(entry.acc_per_turn) for entry in results.summary), default=0)
    tasks = max((entry.tasks for entry in results.summary), default=0)
    table = Table(title=f"stepwise requirement refinement (SR-Eval), {tasks} task(s)", box=None,
                  pad_edge=False, padding=(0, 1, 0, 0),
                  caption="Acc(k): passed turns k / tasks with a turn k; Avg Acc: mean of the Acc(k); CR: tasks with "
                          "every turn passed; ATC: mean tokens per task", caption_justify="left")
    for column in ("setting", *(f"Acc({k})" for k in range(1, turns + 1)), "Avg Acc", "CR", "ATC"):
        table.add_column(column, justify="left" if column == "setting" else "right", no_wrap=True)
    several = len({entry.model for entry in results.summary}) > 1  # one model: its name is printed below
    for entry in results.summary:
        accs = [f"{a:.3f}" for a in entry.acc_per_turn] + [""] * (turns - len(entry.acc_per_turn))
        setting = f"{entry.strategy.upper()} {entry.context}"
        table.add_row(f"{entry.model} {setting}" if several else setting, *accs, f"{entry.avg_acc:.3f}",
                      f"{entry.completion_rate:.3f}", f"{entry.atc:,.0f}")
    for entry in results.summary:  # before the table: its figures cover the scored task runs only
        if entry.errors:
            console.print(f"[red]{entry.model} {entry.strategy.upper()} {entry.context}: {entry.errors} task run(s) "
                          "ended in an error: the figures below leave them out; run the same command again to "
                          "retry them[/red]", highlight=False)
    console.print(table)
    for slug, description in results.models.items():
        console.print(f"{slug}: {description}", highlight=False)
    for note in results.skipped_settings:
        console.print(f"[dim]not run: {note}[/dim]", highlight=False)
    checked = len(results.validation)
    if results.validation_problems:
        for problem in results.validation_problems:
            console.print(f"[yellow]{problem}[/yellow]", highlight=False)
    else:
        console.print(f"validation: {checked} task(s); every turn's reference passes its own tests, and the tests of "
                      "every later turn fail on the previous turn's reference", highlight=False)


def print_statistics(args: argparse.Namespace, dataset: Path) -> int:
    """`--stats`: SR-Eval's Table 1 of the tasks that load; exit 1 when some task does not load (named), else 0."""
    import json
    import sys

    from rich.table import Table

    from projectgen.datasets.multiturn import load_multiturn_dataset
    from projectgen.errors import ProjectGenError
    from projectgen.protocols.refinement.statistics import COLUMNS, MEASURES, statistics_json, statistics_rows

    tasks, load_errors = load_multiturn_dataset(dataset)
    if args.tasks is not None:
        unknown = sorted(set(args.tasks) - {task.id for task in tasks} - set(load_errors))
        if unknown:
            raise ProjectGenError(f"{dataset}: no multi-turn task {', '.join(unknown)}")
        tasks = [task for task in tasks if task.id in args.tasks]
        load_errors = {task: reason for task, reason in load_errors.items() if task in args.tasks}
    rows = statistics_rows(tasks)
    if args.json:
        print(json.dumps(statistics_json(rows, str(args.dataset)), indent=2))
    else:
        table = Table(title=f"{args.dataset}: dataset statistics (SR-Eval Table 1)",
                      caption="; ".join(f"{name}: {text}" for name, text in MEASURES.items()))
        for column in ("level", "language", *COLUMNS):
            table.add_column(column, justify="left" if column in ("level", "language") else "right")
        for row in rows:
            table.add_row(row.level, row.language, *("" if (value := row.value(column)) is None
                                                    else f"{value:.2f}" if isinstance(value, float) else str(value)
                                                    for column in COLUMNS))
        make_console().print(table)
    for task, reason in load_errors.items():
        print(f"projectgen: {task}: does not load, left out: {reason}", file=sys.stderr)
    return EXIT_TESTS_FAILED if load_errors else EXIT_OK


def check_only(args: argparse.Namespace, dataset: Path, out: Path) -> int:
    """`--check-only`: the tasks' validation as a table; exit 0 when every reference passes its own tests."""
    from rich import box
    from rich.table import Table

    from projectgen.experiments.concurrency import cores
    from projectgen.protocols.definition import Hooks
    from projectgen.protocols.refinement.batch import check_dataset

    console = make_console()
    runner = runner_from_args(args, log=lambda message: console.print(f"[dim]sandbox: {message}[/dim]",
                                                                       highlight=False))
    with console.status(f"validating the multi-turn tasks of {dataset}"):
        checks, load_errors = check_dataset(
            dataset, out, tasks=args.tasks, runner=runner,
            executor=executor_from_args(args, default_workers=cores()), fresh=args.fresh, hooks=Hooks())
    table = Table(title="multi-turn tasks: each turn's reference on its own tests, and the previous turn's "
                        "reference on them", box=box.SIMPLE)
    for column in ("task", "turn", "reference", "previous reference", "discriminative"):
        table.add_column(column, justify="left" if column == "task" else "right")
    for check in checks:
        for turn in check.turns:
            previous = "" if turn.previous_passed is None else f"{turn.previous_passed}/{turn.previous_total}"
            mark = {None: "", True: "yes", False: "[yellow]no[/yellow]"}[turn.discriminative]
            ok = "green" if turn.reference_ok else "red"
            table.add_row(check.task_id, str(turn.turn),
                          f"[{ok}]{turn.reference_passed}/{turn.reference_total}[/{ok}]", previous, mark)
    console.print(table)
    for check in checks:
        for problem in check.problems():
            console.print(f"[yellow]{problem}[/yellow]", highlight=False)
    for task, reason in load_errors.items():
        console.print(f"[red]{task}: does not load:[/red] {reason}", highlight=False)
    valid = all(check.valid for check in checks) and not load_errors
    console.print(f"{sum(c.valid for c in checks)} of {len(checks) + len(load_errors)} task(s) valid; ledger: "
                  f"{out}", highlight=False)
    return EXIT_OK if valid else EXIT_TESTS_FAILED
