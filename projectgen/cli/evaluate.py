"""`projectgen eval` and `projectgen bench-reference`: run a task's tests against a repository, or every
task's reference, in the sandbox."""
from __future__ import annotations

import argparse
from pathlib import Path

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (add_executor_options, add_runner_options, check_out_path, executor_from_args,
                                    positive_int, resolve_dataset, resolve_task, runner_from_args, task_ids)
from projectgen.cli.tables import batch_progress, bench_table, make_console, print_test_report


def add_commands(commands) -> None:
    """Add `eval` and `bench-reference` to the CLI's sub-parsers."""
    evaluate = commands.add_parser("eval", help="run one task's tests against a repository you give, in the sandbox (no model; "
                                                   "to run models on a dataset: evaluate)")
    evaluate.add_argument("--task", required=True,
                          help="task folder (CodeProjectEval, DevBench or task.toml), or a bundled example name")
    evaluate.add_argument("--repo", required=True, type=Path, help="candidate repository folder")
    evaluate.add_argument("--suite", "--tests", dest="tests", default="unit", metavar="NAME",
                          help="the suite to run: unit (default: the suite the task is scored by), check, acceptance or "
                               "another suite the task names")
    evaluate.add_argument("--out", type=Path, default=None,
                          help="JSON report path (default: ./projectgen-reports/TASK.SUITE.json)")
    evaluate.add_argument("--keep-workspace", action="store_true",
                          help="keep the session folder for inspection: what the tests were given (what they "
                               "wrote was on the sandbox's own disk, gone with it)")
    add_runner_options(evaluate)
    evaluate.set_defaults(handler=cmd_eval)

    bench = commands.add_parser("bench-reference", help="evaluate every task's reference implementation")
    bench.add_argument("dataset", help="folder of task folders, `examples` (the bundled tasks) or a fetched benchmark (devbench, codeprojecteval)")
    bench.add_argument("--workers", type=positive_int, default=None,
                       help="tasks evaluated in parallel (default: one per core, since each is a sandbox run; "
                            "with --ray-address: as many as the cluster's sandbox slots)")
    bench.add_argument("--suite", "--tests", dest="tests", default="unit", metavar="NAME",
                       help="the suite to run (default unit); tasks without it are error rows")
    bench.add_argument("--out", type=Path, default=None,
                       help="results folder with the resumable ledger (default: ./runs/bench-reference-DATASET)")
    bench.add_argument("--tasks", type=task_ids, default=None, metavar="ID,ID",
                       help="only these task ids (comma-separated)")
    bench.add_argument("--fresh", action="store_true", help="ignore the ledger and evaluate every task again")
    add_runner_options(bench)
    add_executor_options(bench)
    bench.set_defaults(handler=cmd_bench_reference)


def cmd_eval(args: argparse.Namespace) -> int:
    from projectgen.errors import ProjectGenError

    console = make_console()
    task = resolve_task(args.task)
    if not args.repo.is_dir():
        raise ProjectGenError(f"{args.repo}: repository folder not found")
    args.tests = task.role_suite(args.tests)  # unit: the suite the task is scored by (`scored` in task.toml)
    task.suite(args.tests)
    if args.out is not None:
        check_out_path(args.out, folder=False)
    runner = runner_from_args(args, log=lambda message: console.print(f"[dim]{message}[/dim]", highlight=False))
    with console.status(f"running {args.tests} tests of {task.id} in the sandbox"):
        report = runner.evaluate(task, args.repo, args.tests)
    out = args.out or Path("projectgen-reports") / f"{task.id}.{args.tests}.json"
    report.write_json(out)
    print_test_report(console, report)
    if (total := task.expected_totals.get(args.tests)) is not None:  # the benchmark's frozen count
        from projectgen.evaluation.expectations import declared_counts

        passed, total, over = declared_counts(report, total)
        console.print(f"out of the declared total: {passed}/{total} passed" + (f" ({over})" if over else ""),
                      highlight=False)
    console.print(f"report: {out}", highlight=False)
    return EXIT_OK if report.status == "passed" else EXIT_TESTS_FAILED


def cmd_bench_reference(args: argparse.Namespace) -> int:
    from projectgen.experiments import bench_reference
    from projectgen.runs import layout

    from projectgen.datasets.examples import example_tasks_dir

    args.dataset = resolve_dataset(args.dataset, example_tasks_dir())
    out = args.out or Path("runs") / f"bench-reference-{args.dataset.resolve().name}"
    check_out_path(out, folder=True)
    from projectgen.experiments.concurrency import cores

    # each unit is one sandbox run, no model: one per core; reports go back to the driver, nothing stays on a worker
    executor = executor_from_args(args, default_workers=cores())
    console = make_console()
    progress, bar, on_start = batch_progress(console, "reference implementations", "task(s)", out / layout.LEDGER)

    def on_row(row) -> None:
        progress.advance(bar)
        progress.console.print(f"{row.task_id}: {row.status} {row.passed}/{row.total}"
                               + (" (environment incomplete)" if row.incomplete else ""), highlight=False)

    runner = runner_from_args(args, log=lambda message: progress.console.print(f"[dim]{message}[/dim]",
                                                                                highlight=False))
    with progress:
        rows = bench_reference(args.dataset, runner, out, suite=args.tests,
                               executor=executor, fresh=args.fresh,
                               tasks=list(args.tasks) if args.tasks else None,
                               on_start=on_start, on_row=on_row)
    console.print(bench_table(rows, f"reference implementations, {args.tests} tests ({args.dataset})"))
    if incomplete := [row.task_id for row in rows if row.incomplete]:
        console.print(f"environment incomplete: {len(incomplete)} of {len(rows)} task(s) ({', '.join(incomplete)}); "
                      "each note names the cause: not a failure of the harness or of the reference", highlight=False)
    console.print(f"ledger and reports: {out}", highlight=False)
    return EXIT_OK
