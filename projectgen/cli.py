"""`projectgen ...`: the command line.

Start-up stays fast: each command imports what it needs when it runs. User
mistakes (a missing task folder, a bad option value) end with one line on
stderr and exit code 2, never a traceback.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_TESTS_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _add_runner_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sandbox")
    group.add_argument("--timeout", type=_positive_float, default=300.0, help="seconds per test run (default 300)")
    group.add_argument("--memory-mb", type=_positive_int, default=8192, help="address-space limit (default 8192)")
    group.add_argument("--isolation", choices=["auto", "namespaces", "none"], default="auto",
                       help="auto: namespaces when available, else say so and run without")
    group.add_argument("--cache-dir", type=Path, default=None,
                       help="environment cache (default $PROJECTGEN_CACHE_DIR or ~/.cache/projectgen)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="projectgen",
        description="Generate Python repositories from requirement documents and measure them by running their tests.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    evaluate = commands.add_parser("eval", help="run a task's tests against a repository in the sandbox")
    evaluate.add_argument("--task", required=True, type=Path, help="task folder (CodeProjectEval, DevBench or task.toml)")
    evaluate.add_argument("--repo", required=True, type=Path, help="candidate repository folder")
    evaluate.add_argument("--tests", choices=["check", "unit", "acceptance"], default="unit")
    evaluate.add_argument("--out", type=Path, default=None,
                          help="JSON report path (default: ./projectgen-reports/TASK.SUITE.json)")
    evaluate.add_argument("--keep-workspace", action="store_true", help="keep the sandbox workspace for inspection")
    _add_runner_options(evaluate)

    bench = commands.add_parser("bench-reference", help="evaluate every task's reference implementation")
    bench.add_argument("dataset", type=Path, help="folder of task folders")
    bench.add_argument("--workers", type=_positive_int, default=1, help="tasks evaluated in parallel (default 1)")
    bench.add_argument("--tests", choices=["check", "unit", "acceptance"], default="unit")
    bench.add_argument("--out", type=Path, default=None,
                       help="results folder with the resumable ledger (default: ./runs/bench-reference-DATASET)")
    bench.add_argument("--fresh", action="store_true", help="ignore the ledger and evaluate every task again")
    _add_runner_options(bench)

    demo = commands.add_parser("demo", help="evaluate the bundled example task's reference (offline)")
    demo.add_argument("--out", type=Path, default=Path("demo-output"))
    _add_runner_options(demo)
    return parser


def _version() -> str:
    from projectgen import __version__

    return __version__


def _runner(args: argparse.Namespace, log) -> "SandboxRunner":  # noqa: F821
    from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
    from projectgen.evaluation.sandbox import Limits

    settings = RunnerSettings(
        timeout=args.timeout, limits=Limits(memory_bytes=args.memory_mb * 1024**2), isolation=args.isolation,
        cache_dir=args.cache_dir, keep_workspace=getattr(args, "keep_workspace", False),
    )
    return SandboxRunner(settings, log=log)


def _print_report(console, report) -> None:
    from rich.table import Table

    table = Table(title=f"{report.task_id} - {report.suite} tests", show_lines=False)
    table.add_column("outcome")
    table.add_column("count", justify="right")
    for key, value in report.summary().items():
        if key not in ("total", "pass_rate", "status") and value:
            table.add_row(key, str(value))
    table.add_row("total", str(report.total))
    table.add_row("pass rate", f"{report.pass_rate:.1%}")
    console.print(table)
    for error in report.collection_errors[:10]:
        last = [line for line in error.message.strip().splitlines() if line.startswith("E ")][-1:] or [""]
        console.print(f"  [red]collection error[/red] {error.nodeid}: {last[0][:160]}", highlight=False)
    for failure in report.failures()[:10]:
        last = failure.message.strip().splitlines()[-1:] or [""]
        console.print(f"  [red]{failure.outcome.value}[/red] {failure.nodeid}: {last[0][:160]}", highlight=False)
    if report.timed_out:
        console.print("[yellow]the run hit its timeout; unfinished tests count as errors[/yellow]")
    if report.error:
        console.print(f"[red]{report.error}[/red]", highlight=False)


def cmd_eval(args: argparse.Namespace) -> int:
    from rich.console import Console

    from projectgen.datasets.loaders import load_task
    from projectgen.errors import ProjectGenError

    console = Console(stderr=False)
    task = load_task(args.task)
    if not args.repo.is_dir():
        raise ProjectGenError(f"{args.repo}: repository folder not found")
    task.suite(args.tests)
    runner = _runner(args, log=lambda message: console.print(f"[dim]{message}[/dim]", highlight=False))
    with console.status(f"running {args.tests} tests of {task.id} in the sandbox"):
        report = runner.evaluate(task, args.repo, args.tests)
    out = args.out or Path("projectgen-reports") / f"{task.id}.{args.tests}.json"
    report.write_json(out)
    _print_report(console, report)
    console.print(f"report: {out}", highlight=False)
    return EXIT_OK if report.status == "passed" else EXIT_TESTS_FAILED


def _bench_table(rows, title: str):
    from rich.table import Table

    table = Table(title=title)
    for column, justify in (("task", "left"), ("status", "left"), ("passed", "right"), ("total", "right"),
                            ("rate", "right"), ("seconds", "right"), ("note", "left")):
        table.add_column(column, justify=justify, overflow="fold")
    for row in rows:
        color = {"passed": "green", "failed": "yellow"}.get(row.status, "red")
        table.add_row(row.task_id, f"[{color}]{row.status}[/{color}]", str(row.passed), str(row.total),
                      f"{row.pass_rate:.1%}", f"{row.duration:.1f}", row.note[:300])
    return table


def cmd_bench_reference(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from projectgen.evaluation.bench import bench_reference
    from projectgen.errors import ProjectGenError

    if not args.dataset.is_dir():
        raise ProjectGenError(f"{args.dataset}: dataset folder not found")
    out = args.out or Path("runs") / f"bench-reference-{args.dataset.resolve().name}"
    console = Console()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console)
    bar = progress.add_task("reference implementations", total=None)

    def on_start(pending: int, already: int) -> None:
        progress.update(bar, total=pending)
        if already:
            console.print(f"{already} task(s) already in the ledger {out / 'ledger.jsonl'}; continuing")

    def on_row(row) -> None:
        progress.advance(bar)
        progress.console.print(f"{row.task_id}: {row.status} {row.passed}/{row.total}", highlight=False)

    runner = _runner(args, log=lambda message: progress.console.print(f"[dim]{message}[/dim]", highlight=False))
    with progress:
        rows = bench_reference(args.dataset, runner, out, suite=args.tests, workers=args.workers,
                               fresh=args.fresh, on_start=on_start, on_row=on_row)
    console.print(_bench_table(rows, f"reference implementations, {args.tests} tests ({args.dataset})"))
    console.print(f"ledger and reports: {out}", highlight=False)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from rich.console import Console

    from projectgen.datasets.examples import example_task_path
    from projectgen.datasets.loaders import load_task

    console = Console()
    task = load_task(example_task_path("kvstore"))
    console.print(f"[bold]demo[/bold]: evaluating the bundled example task {task.id!r} (its reference code) offline")
    runner = _runner(args, log=lambda message: console.print(f"[dim]{message}[/dim]", highlight=False))
    status = EXIT_OK
    for suite in ("check", "unit"):
        report = runner.evaluate(task, task.reference_files(), suite)
        out = args.out / f"{task.id}.{suite}.json"
        report.write_json(out)
        _print_report(console, report)
        console.print(f"report: {out}", highlight=False)
        status = status or (EXIT_OK if report.status == "passed" else EXIT_TESTS_FAILED)
    return status


COMMANDS = {"eval": cmd_eval, "bench-reference": cmd_bench_reference, "demo": cmd_demo}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    from projectgen.errors import ProjectGenError

    try:
        return COMMANDS[args.command](args)
    except ProjectGenError as exc:
        print(f"projectgen: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("projectgen: interrupted (finished work is saved; run the same command to continue)", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
