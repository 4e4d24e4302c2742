"""`projectgen reflect`: LiveRepoReflection's protocol (generate, then repair from test errors) on a folder of
Exercism-layout exercises, every exercise x model x edit format, resumable, with Pass@k, FW and WF: the preset of
`projectgen evaluate reflection` with the paper's options and its tables."""
from __future__ import annotations

import argparse
from pathlib import Path

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (
    BUNDLED_DATASET,
    bundled_script_spec,
    add_batch_options,
    add_checkpoint_option,
    add_concurrency_option,
    add_executor_options,
    add_sampling_options,
    add_runner_options,
    check_out_path,
    executor_from_args,
    positive_int,
    resolve_dataset,
    runner_settings_from_args,
    sampling_from_args,
)
from projectgen.llm.sampling import sampling_arguments
from projectgen.cli.tables import batch_progress, make_console, print_errored_units


def add_commands(subparsers) -> None:
    """Add `reflect` to the CLI's sub-parsers."""
    parser = subparsers.add_parser(
        "reflect", help="LiveRepoReflection: write each exercise's files, repair them from the test errors; "
                        "Pass@1/Pass@2, Fix Weight, Well Format",
        description="Runs LiveRepoReflection's protocol on every exercise (Python, Go, Rust, C++, JavaScript, Java; "
                    "Exercism layout: .docs/, .meta/config.json, stubs, tests) found below --dataset, skipping those "
                    "whose toolchain this machine lacks (said, with what to install; see `projectgen doctor`): "
                    "try 1 answers the instructions and stubs, each later try repairs the files from the cleaned test output, in the chosen edit format(s). "
                    "Each exercise x model x format is one unit in OUT/MODEL/FORMAT/TASK; a ledger (OUT/ledger."
                    "jsonl) records finished units: run the same command again to continue. Writes OUT/results."
                    "json, OUT/results.md and OUT/results.html (pass@k curves).")
    parser.add_argument("--dataset", required=True,
                        help="a folder of exercises at any depth (python/exercises/practice/NAME/, unit_test_UUID/"
                             f"PROJECT/, ...), one exercise folder, or '{BUNDLED_DATASET}' for the bundled ones (one per language, three in Python)")
    parser.add_argument("--model", action="append", required=True, metavar="[LABEL=]SPEC",
                        help="a model (repeatable): PROVIDER:MODEL, a served name with --base-url, scripted:FILE, "
                             "scripted:DIR (DIR/<task-id>.json per task), scripted:exercises.reflect (the bundled "
                             "exercises' replay), or reference (each exercise's .meta example replayed: an oracle, "
                             "not a model)")
    parser.add_argument("--edit-format", default="whole", metavar="whole|patch|whole,patch",
                        help="how the model answers: whole files, patch blocks (ORIGINAL/UPDATED), or both "
                             "(default whole)")
    parser.add_argument("--tries", type=positive_int, default=2,
                        help="replies per task: 1 generation, then repairs (default 2, the paper's; up to 10 for "
                             "pass@k curves)")
    add_batch_options(parser, units="units", out_default="./runs/reflect-DATASET", tasks="exercises")
    add_sampling_options(parser)
    add_checkpoint_option(parser.add_argument_group("checkpoints"))
    add_runner_options(parser)
    add_executor_options(parser)
    add_concurrency_option(parser, units="units")
    parser.set_defaults(handler=cmd_reflect)


def dataset_path(text: str) -> Path:
    """The --dataset folder, or the bundled exercises for `examples` (`cli.options.resolve_dataset`)."""
    from projectgen.datasets.examples import example_exercises_dir

    return resolve_dataset(text, example_exercises_dir())


def model_spec(text: str) -> str:
    """`[LABEL=]scripted:NAME` naming a bundled script (when no such file exists) becomes its path."""
    from projectgen.llm.specs import SCRIPTED_PREFIX

    label, sep, spec = text.partition("=")
    if not sep or not spec.startswith(SCRIPTED_PREFIX):
        label, sep, spec = "", "", text
    return f"{label}{sep}{bundled_script_spec(spec)}"


def cmd_reflect(args: argparse.Namespace) -> int:
    """Exit 0 when every unit finished (whatever its score; an environment-incomplete exercise, named, is a finished
    outcome), 1 when some unit is an error or some exercise does not load, 2 for a usage error."""
    from projectgen.experiments.concurrency import Concurrency
    from projectgen.protocols.definition import BatchOptions, Hooks
    from projectgen.protocols.evaluate import evaluate
    from projectgen.protocols.reflection.batch import parse_formats
    from projectgen.protocols.reflection.protocol import failures
    from projectgen.protocols.reflection.settings import ReflectionSettings
    from projectgen.protocols.reflection.results import (INCOMPLETE, NOTES, declared_lead, incomplete_lead, models_lines,
                                                         pct, stale_lead)
    from projectgen.runs import layout
    from projectgen.runs.checkpoints import check_checkpoint_url, per_machine_checkpoints

    dataset = dataset_path(args.dataset)
    formats = parse_formats(args.edit_format)
    if args.base_url is not None:
        from projectgen.errors import ProjectGenError
        from projectgen.llm import check_base_url

        if not args.base_url.strip():
            raise ProjectGenError("--base-url is empty: give the endpoint, e.g. http://localhost:8000/v1")
        check_base_url(args.base_url)
    if args.tries > 10:
        from projectgen.errors import ProjectGenError

        raise ProjectGenError(f"--tries must be from 1 to 10, got {args.tries}")
    out = args.out or Path("runs") / f"reflect-{dataset.resolve().name}"
    check_out_path(out, folder=True)
    models = [model_spec(m) for m in args.model]
    sampling = sampling_arguments(sampling_from_args(args))
    from rich.markup import escape

    console = make_console()
    progress, bar, on_start = batch_progress(console, "exercise x model x format", "unit(s)", out / layout.LEDGER)

    def on_row(row) -> None:
        progress.advance(bar)
        if row.status == "error":
            progress.console.print(f"[red]{row.key}: error[/red] {escape(str(row.error))}", highlight=False)
            return
        if row.status == INCOMPLETE:
            progress.console.print(f"[yellow]{row.key}: not scored[/yellow] {escape(str(row.error))}", highlight=False)
            return
        result = row.result or {}
        passed = f"passed at try {result.get('passed_at')}" if row.status == "passed" else "failed"
        formed = "well formed" if result.get("well_formed") else "NOT well formed"
        progress.console.print(f"{row.key}: {passed}, {len(result.get('tries') or [])} tr(ies), {formed}",
                               highlight=False)

    def log(key: str, message: str) -> None:
        progress.console.print(f"[dim]{key}: {message}[/dim]", highlight=False)

    def on_loaded(found) -> None:
        if line := found.skipped_line():
            progress.console.print(line, highlight=False)
        for task_id, reason in sorted(found.errors.items()):
            progress.console.print(f"[red]{task_id}: does not load[/red] {reason}", highlight=False)

    def on_missing(lines: dict[str, str]) -> None:
        for language, line in lines.items():
            progress.console.print(f"[yellow]{language}: {line}[/yellow]", highlight=False)

    # Without --checkpoint-url each unit keeps SQLite checkpoints in its folder, which a unit retried on
    # another machine would not find: a cluster of several nodes is refused then.
    check_checkpoint_url(args.checkpoint_url)
    concurrency = Concurrency(calls=args.max_concurrent_calls)
    executor = executor_from_args(args, per_machine=per_machine_checkpoints(args.checkpoint_url),
                                  default_workers=concurrency.workers)
    with progress:
        results = evaluate("reflection", dataset, models, ReflectionSettings(edit_formats=formats, tries=args.tries),
                           out, BatchOptions(
                               tasks=list(args.tasks) if args.tasks else None, executor=executor, fresh=args.fresh,
                               base_url=args.base_url, sampling=sampling or {},
                               runner_settings=runner_settings_from_args(args), checkpoint_url=args.checkpoint_url,
                               concurrency=concurrency, hooks=Hooks(on_start=on_start, on_row=on_row, progress=log,
                                                                    on_loaded=on_loaded, on_missing=on_missing)))
    print_errored_units(console, sum(entry.errors for entry in results.summary),
                        sum(entry.tasks for entry in results.summary), "exercise run(s)")
    print_summary(console, results, pct)
    if results.environment_incomplete:
        console.print(f"[yellow]{incomplete_lead(len(results.environment_incomplete))}[/yellow]", highlight=False)
        for task_id, reason in results.environment_incomplete.items():
            console.print(f"- {task_id}: {escape(reason)}", highlight=False)
    if results.declared_defects:
        console.print(f"[yellow]{declared_lead(len(results.declared_defects))}[/yellow]", highlight=False)
        for task_id, defect in results.declared_defects.items():
            console.print(f"- {task_id}: {escape(defect)}", highlight=False)
    if results.stale_declarations:
        console.print(f"[red]{stale_lead(len(results.stale_declarations))}[/red]", highlight=False)
        for task_id, reason in results.stale_declarations.items():
            console.print(f"- {task_id}: {escape(reason)}", highlight=False)
    for line in models_lines(results):
        console.print(f"- {line}", highlight=False)
    console.print(f"[dim]{NOTES}[/dim]", highlight=False)
    console.print(f"results: {out / layout.RESULTS_MD}, {out / layout.RESULTS_JSON}, {out / layout.RESULTS_HTML}; "
                  f"runs in {out}/MODEL/FORMAT/TASK", highlight=False)
    return EXIT_OK if not failures(results) else EXIT_TESTS_FAILED


def print_summary(console, results, pct) -> None:
    """One row per (model, edit format, language), All last: the paper's four figures, Pass@1 without the
    exercises whose reference is declared defective (beside the raw one), then the pass@k curve."""
    from rich.table import Table

    from projectgen.protocols.reflection.results import summary_rows

    table = Table(title=f"LiveRepoReflection protocol, {results.tries} tries ({results.dataset})")
    for column in ("model", "edit format", "language", "tasks", "Pass@1", "Pass@2", "FW", "WF", "declared defective",
                   "Pass@1 without them", "errors", "incomplete", "pass@k"):
        table.add_column(column, justify="left" if column in ("model", "edit format", "language", "pass@k")
                         else "right", overflow="fold")
    for e in summary_rows(results):
        table.add_row(e.model, e.edit_format, e.language, str(e.tasks), pct(e.pass_at_1), pct(e.pass_at_2),
                      pct(e.fix_weight), pct(e.well_formed), str(e.declared_defective),
                      pct(e.pass_at_1_without_declared), str(e.errors), str(e.environment_incomplete),
                      " ".join(pct(v) for v in e.pass_at_k))
    console.print(table)
