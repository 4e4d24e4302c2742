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
EXIT_BUG = 70  # an unexpected exception: a bug in projectgen (sysexits' EX_SOFTWARE), shown with its traceback


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage block), like every other user mistake."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"projectgen: error: {message} (see `{self.prog} --help`)\n")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0: {text!r}")
    return value


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _non_negative_int(text: str) -> int:
    if (value := _whole_number(text)) < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


def _positive_int(text: str) -> int:
    if (value := _whole_number(text)) <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _add_prices_option(parser) -> None:
    """`--prices FILE`, the same for every command that prices model calls."""
    parser.add_argument("--prices", type=Path, default=None, metavar="FILE",
                        help="model prices (TOML or JSON, USD per 1M tokens) over the built-in list prices")


def _add_runner_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sandbox")
    group.add_argument("--timeout", type=_positive_float, default=300.0, help="seconds per test run (default 300)")
    group.add_argument("--memory-mb", type=_positive_int, default=8192, help="address-space limit (default 8192)")
    group.add_argument("--isolation", choices=["auto", "namespaces", "none"], default="auto",
                       help="auto: namespaces when available, else say so and run without")
    group.add_argument("--cache-dir", type=Path, default=None,
                       help="environment cache (default $PROJECTGEN_CACHE_DIR or ~/.cache/projectgen)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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

    run = commands.add_parser("run", help="generate a repository for a task (ProjectGen inside LiveCoder's attempts)",
                              description="Attempts (LiveCoder) of architecture -> skeleton -> code (each stage "
                                          "with its judge loop); keeps knowledge and the best repository across "
                                          "attempts, checkpoints to DIR/checkpoints.sqlite, traces to "
                                          "DIR/events.jsonl, and ends with the hidden unit tests.")
    run.add_argument("task", nargs="?", default=None,
                     help="task folder (CodeProjectEval, DevBench or task.toml), or a bundled example name")
    run.add_argument("--resume", type=Path, default=None, metavar="DIR",
                     help="continue the run in DIR where it stopped (no completed model call is repeated)")
    run.add_argument("--model", default=None,
                     help="chat model for every role: PROVIDER:MODEL (openai:gpt-4o-mini), a served model name "
                          "with --base-url, or scripted:PATH to replay a script (default $PROJECTGEN_MODEL)")
    run.add_argument("--role-model", action="append", default=[], metavar="ROLE=SPEC",
                     help="a different model for one role (architect, architecture_judge, skeleton, "
                          "skeleton_judge, coder, code_judge); repeatable")
    run.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default $PROJECTGEN_BASE_URL)")
    run.add_argument("--out", type=Path, default=None, help="output folder (default runs/TASK-TIMESTAMP)")
    run.add_argument("--force", action="store_true", help="replace the outputs of an earlier run in --out")
    run.add_argument("--inject-faults", default=None, metavar="SPEC",
                     help="wrap the models in a fault-injecting wrapper (testing), e.g. rate_limit=0.2,prose=0.1,"
                          "seed=7; kinds: see projectgen.llm.faults")
    _add_pipeline_options(run)
    _add_attempt_options(run)
    run.add_argument("--no-unit-tests", action="store_true",
                     help="do not run the hidden unit tests (neither per attempt nor at the end)")
    durable = run.add_argument_group("budget and checkpoints")
    durable.add_argument("--max-cost", type=_positive_float, default=None, metavar="USD",
                         help="stop the run (keeping the best so far) once its priced calls cost more than this")
    _add_prices_option(durable)
    durable.add_argument("--checkpoint-url", default=None, metavar="URL",
                         help="PostgreSQL database for the checkpoints (postgresql://user@host/db), for runs "
                              "shared between machines; default: DIR/checkpoints.sqlite")
    _add_runner_options(run)

    from projectgen.cli.experiment import add_experiment_command
    from projectgen.cli.inspect import add_inspect_commands

    for name, handler in {**add_experiment_command(commands), **add_inspect_commands(commands)}.items():
        commands.choices[name].set_defaults(handler=handler)

    demo = commands.add_parser("demo", help="run the whole pipeline offline on the bundled example (scripted replay)")
    demo.add_argument("--out", type=Path, default=Path("demo-output"), help="output folder (replaced on each run)")
    _add_runner_options(demo)
    return parser


def _iteration_caps(text: str) -> tuple[int, int, int]:
    parts = text.split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"give three numbers ARCH,SKELETON,CODE, e.g. 3,3,5: {text!r}")
    return tuple(_positive_int(p.strip()) for p in parts)  # type: ignore[return-value]


def _score(text: str) -> float:
    value = _positive_float(text)
    if value > 10:
        raise argparse.ArgumentTypeError(f"scores go from 0 to 10: {text!r}")
    return value


def _add_attempt_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("attempts (LiveCoder; paper defaults)")
    group.add_argument("--attempts", type=_positive_int, default=4, help="attempts at the task (default 4)")
    group.add_argument("--selection", choices=["check", "unit"], default="check",
                       help="tests that pick the best attempt: check (visible, default) or unit (hidden: the "
                            "paper's oracle setting, labelled in every report)")
    group.add_argument("--no-success-knowledge", action="store_true", help="ablation: no success knowledge")
    group.add_argument("--no-failure-knowledge", action="store_true", help="ablation: no failure knowledge")
    group.add_argument("--no-best", action="store_true",
                       help="ablation: no historical best (the output is the last attempt)")
    group.add_argument("--warm-start", action="store_true",
                       help="later attempts start from the best attempt's architecture and skeleton")
    group.add_argument("--knowledge-store", default=None, metavar="URL",
                       help="a Chroma server (http://host:port) shared between runs; default: embedded in DIR")


def _add_pipeline_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("pipeline (paper defaults)")
    group.add_argument("--threshold", type=_score, default=8.0, help="judge score a stage needs (default 8)")
    group.add_argument("--iterations", type=_iteration_caps, default=(3, 3, 5), metavar="A,S,C",
                       help="iteration caps of the architecture, skeleton and code stages (default 3,3,5)")
    group.add_argument("--gamma", type=_non_negative_int, default=2,
                       help="stage-memory entries per prompt (default 2)")
    group.add_argument("--edit-format", choices=["whole", "search_replace"], default="whole",
                       help="how the coder answers repair requests (default whole)")
    group.add_argument("--max-concurrency", type=_positive_int, default=4,
                       help="model calls in flight while filling one dependency layer (default 4)")
    group.add_argument("--max-tokens", type=_positive_int, default=None, help="stop the run beyond this many tokens")


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
    if args.out is not None:
        check_out_path(args.out, folder=False)
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

    from projectgen.experiments.reference_bench import bench_reference
    from projectgen.errors import ProjectGenError

    if not args.dataset.is_dir():
        raise ProjectGenError(f"{args.dataset}: dataset folder not found")
    out = args.out or Path("runs") / f"bench-reference-{args.dataset.resolve().name}"
    check_out_path(out, folder=True)
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


def check_out_path(path: Path, *, folder: bool) -> None:
    """Refuse, before any work, an output path that cannot be made: a file where a folder is needed (or
    the reverse), or a path below a file."""
    from projectgen.errors import ProjectGenError

    if path.exists():
        if folder and not path.is_dir():
            raise ProjectGenError(f"{path} exists and is not a folder; choose another --out")
        if not folder and path.is_dir():
            raise ProjectGenError(f"{path} is a folder; --out takes the path of a file")
        return
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ProjectGenError(f"{path}: cannot write there ({parent} is not a folder); choose another --out")


def _resolve_task(spec: str):
    """A task folder, or the name of a bundled example."""
    from projectgen.datasets.examples import example_task_names, example_task_path
    from projectgen.datasets.loaders import load_task
    from projectgen.errors import ProjectGenError

    path = Path(spec)
    if not path.exists() and spec in example_task_names():
        path = example_task_path(spec)
    elif not path.exists() and "/" not in spec and spec not in (".", ".."):
        raise ProjectGenError(f"{spec}: no such task folder or bundled example (examples: "
                              f"{', '.join(example_task_names())})")
    return load_task(path)


def _model_specs(args: argparse.Namespace) -> dict[str, str]:
    """``{"default": SPEC, ROLE: SPEC, ..., "base_url": URL}`` from the options: what run.json records."""
    import os

    from projectgen.errors import ProjectGenError

    if args.model is not None and not args.model.strip():
        raise ProjectGenError("--model is empty: give PROVIDER:MODEL (e.g. openai:gpt-4o-mini) or scripted:PATH")
    default = args.model or os.environ.get("PROJECTGEN_MODEL")
    if not default:
        raise ProjectGenError("no model given: pass --model PROVIDER:MODEL (or scripted:PATH), or set "
                              "PROJECTGEN_MODEL")
    specs = {"default": default}
    for item in args.role_model:
        role, sep, spec = item.partition("=")
        if not sep or not role.strip() or not spec.strip():
            raise ProjectGenError(f"--role-model expects ROLE=SPEC (e.g. coder=openai:gpt-4o), got {item!r}")
        specs[role.strip()] = spec.strip()
    if args.base_url is not None:
        if not args.base_url.strip():
            raise ProjectGenError("--base-url is empty: give the endpoint, e.g. http://localhost:8000/v1")
        specs["base_url"] = args.base_url
    if getattr(args, "inject_faults", None):
        specs["faults"] = args.inject_faults
    return specs


def _models_from_specs(specs: dict[str, str]):
    """The `ModelRoles` a spec mapping (see `_model_specs`) describes."""
    from projectgen.llm import ModelRoles

    roles = dict(specs)
    default = roles.pop("default")
    base_url = roles.pop("base_url", None)
    faults = roles.pop("faults", None)
    if faults:
        from projectgen.llm.faults import FaultPlan, inject_faults

        plan = FaultPlan.parse(faults)  # a bad spec is refused before any model is made
        return inject_faults(ModelRoles.from_specs(default, base_url=base_url, **roles), plan)
    return ModelRoles.from_specs(default, base_url=base_url, **roles)


def _settings(args: argparse.Namespace):
    from projectgen.config import Settings

    arch, skeleton, code = args.iterations
    return Settings(threshold=args.threshold, architecture_iterations=arch, skeleton_iterations=skeleton,
                    code_iterations=code, gamma=args.gamma, edit_format=args.edit_format,
                    max_concurrency=args.max_concurrency)


def _attempt_settings(args: argparse.Namespace):
    from projectgen.config import AttemptSettings

    return AttemptSettings(attempts=args.attempts, selection=args.selection,
                           success_knowledge=not args.no_success_knowledge,
                           failure_knowledge=not args.no_failure_knowledge, historical_best=not args.no_best,
                           warm_start=args.warm_start, measure_unit_tests=not args.no_unit_tests)


def _print_attempts(console, outcome) -> None:
    from rich.table import Table

    summary = outcome.summary
    oracle = " (selection by hidden unit tests: oracle setting)" if summary.get("oracle") else ""
    table = Table(title=f"{summary['task_id']}: attempts{oracle}")
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
        _print_report(console, outcome.unit_report)


def _execute_run(args: argparse.Namespace, task, *, models, model_specs, settings, attempt_settings, out: Path,
                 force: bool, resume: bool = False) -> int:
    from rich.console import Console

    from projectgen.errors import ProjectGenError
    from projectgen.runs import read_manifest, run_livecoder
    from projectgen.llm import MODEL_FAILURES, model_failure_reason

    console = Console()

    def progress(message: str) -> None:
        console.print(f"[dim]{message}[/dim]", highlight=False)

    try:
        outcome = run_livecoder(task, out, models=models, model_specs=model_specs, settings=settings,
                                attempt_settings=attempt_settings, runner=_runner(args, log=progress),
                                knowledge_url=getattr(args, "knowledge_store", None),
                                max_tokens=getattr(args, "max_tokens", None),
                                max_cost_usd=getattr(args, "max_cost", None), prices_file=getattr(args, "prices", None),
                                checkpoint_url=getattr(args, "checkpoint_url", None), resume=resume, force=force,
                                progress=progress, evaluate_unit=not getattr(args, "no_unit_tests", False))
    except MODEL_FAILURES as exc:  # the run recorded its end; say what happened and where the best so far is
        reason = read_manifest(out).reason or model_failure_reason(exc)
        raise ProjectGenError(f"the run failed ({reason}); the best so far is in {out / 'repository'}; "
                              f"continue with `projectgen run --resume {out}`") from None
    _print_attempts(console, outcome)
    console.print(f"outputs: {out} (repository/, summary.json, events.jsonl, usage.jsonl, attempts/; "
                  f"inspect with `projectgen trace {out}` and `projectgen report {out}`)", highlight=False)
    if outcome.unit_report is not None:
        return EXIT_OK if outcome.unit_report.status == "passed" else EXIT_TESTS_FAILED
    final = outcome.summary.get("final") or {}
    return EXIT_OK if final.get("score") == 1.0 else EXIT_TESTS_FAILED


def cmd_run(args: argparse.Namespace) -> int:
    from datetime import datetime

    from projectgen.errors import ProjectGenError

    if args.resume is not None:
        given = _options_fixed_by_run_json(args)
        if given:
            raise ProjectGenError(f"--resume DIR continues a run with the task, models, settings, budgets and folder "
                                  f"in its run.json: leave out {', '.join(given)}")
        return _resume(args)
    if not args.task:
        raise ProjectGenError("give a task (a folder or a bundled example name), or --resume DIR")
    # Everything the user gave is checked here, before the run folder is made or any model is called.
    task = _resolve_task(args.task)
    specs = _model_specs(args)
    models = _models_from_specs(specs)
    settings, attempt_settings = _settings(args), _attempt_settings(args)
    if attempt_settings.selection not in task.suites:
        raise ProjectGenError(f"task {task.id!r} has no {attempt_settings.selection} tests, which score its "
                              f"attempts (--selection {attempt_settings.selection}); it has: "
                              f"{', '.join(task.suites) or 'no tests'}")
    if args.knowledge_store:
        from projectgen.memory.knowledge_store import parse_server_url

        parse_server_url(args.knowledge_store)
    out = args.out or Path("runs") / f"{task.id}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    return _execute_run(args, task, models=models, model_specs=specs, settings=settings,
                        attempt_settings=attempt_settings, out=out, force=args.force)


# What `run --resume` may be given besides the folder: the sandbox's options, which run.json does not keep.
_RESUME_MAY_CHANGE = frozenset({"resume", "timeout", "memory_mb", "isolation", "cache_dir", "handler", "command"})


def _options_fixed_by_run_json(args: argparse.Namespace) -> list[str]:
    """The `run` options given along with --resume that the run's run.json fixes, as the user spelled them.

    Silently running with run.json's value instead would surprise whoever typed, say, --attempts 8.
    """
    defaults = vars(build_parser().parse_args(["run"]))
    return ["TASK" if dest == "task" else "--" + dest.replace("_", "-")
            for dest, default in defaults.items()
            if dest not in _RESUME_MAY_CHANGE and getattr(args, dest, default) != default]


def _resume(args: argparse.Namespace) -> int:
    from projectgen.config import AttemptSettings, Settings
    from projectgen.datasets.loaders import load_task
    from projectgen.errors import ProjectGenError
    from projectgen.runs import read_manifest

    if not args.resume.is_dir():
        raise ProjectGenError(f"{args.resume}: run folder not found" if not args.resume.exists()
                              else f"{args.resume}: not a folder (--resume takes a run folder)")
    manifest = read_manifest(args.resume)
    if not manifest.models.get("default"):
        raise ProjectGenError(f"{args.resume}: the run was started from Python with model objects; resume it "
                              "with projectgen.runs.livecoder.run_livecoder(..., resume=True)")
    if not Path(manifest.task_path).exists():
        raise ProjectGenError(f"{args.resume}: the run's task folder {manifest.task_path} is gone; put it back "
                              "to resume")
    task = load_task(Path(manifest.task_path))
    models = _models_from_specs(manifest.models)
    args.knowledge_store = manifest.knowledge_store
    attempt_settings = AttemptSettings.model_validate(manifest.attempt_settings)
    args.no_unit_tests = not attempt_settings.measure_unit_tests
    return _execute_run(args, task, models=models, model_specs=manifest.models,
                        settings=Settings.model_validate(manifest.settings), attempt_settings=attempt_settings,
                        out=args.resume, force=False, resume=True)


def cmd_demo(args: argparse.Namespace) -> int:
    from rich.console import Console

    from projectgen.config import AttemptSettings, Settings
    from projectgen.datasets.examples import example_script_path, example_task_path
    from projectgen.datasets.loaders import load_task
    from projectgen.errors import ProjectGenError
    from projectgen.llm import ScriptedChatModel

    console = Console()
    task = load_task(example_task_path("kvstore"))
    script = example_script_path("kvstore.demo")
    console.print(f"[bold]demo[/bold]: the full pipeline (LiveCoder attempts around ProjectGen) on the bundled "
                  f"example task {task.id!r}, offline.\n"
                  f"The model is a [bold]scripted replay[/bold] of {script.name}, not a real model: it answers "
                  "each agent from the script. Run a real model with `projectgen run kvstore --model "
                  "openai:gpt-4o-mini`.", highlight=False)
    model = ScriptedChatModel.from_file(script)
    from projectgen.runs import layout

    if args.out.is_dir() and any(args.out.iterdir()) and not (args.out / layout.MANIFEST).is_file():
        raise ProjectGenError(f"{args.out} holds files that are not from a run (the demo replaces its outputs); "
                              "choose another --out")
    args.no_unit_tests = False
    return _execute_run(args, task, models=model, model_specs={"default": f"scripted:{script}"},
                        settings=Settings(), attempt_settings=AttemptSettings(), out=args.out, force=True)


COMMANDS = {"eval": cmd_eval, "bench-reference": cmd_bench_reference, "run": cmd_run, "demo": cmd_demo}


def main(argv: list[str] | None = None) -> int:
    """Run one command. A user mistake (bad option, task, model, folder) is one line on stderr and exit code 2;
    an unexpected exception is a bug: its traceback is shown, with a line saying so, and exit code 70."""
    import warnings

    # When one task of a parallel LangGraph step fails for good, LangGraph drops the sibling tasks it
    # had not started, and Python warns about their never-awaited coroutines: noise after our one line.
    warnings.filterwarnings("ignore", message="coroutine '.*' was never awaited", category=RuntimeWarning)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help or --version (0), or a usage error already printed as one line
        return exc.code if isinstance(exc.code, int) else EXIT_OK if exc.code is None else EXIT_USAGE
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    from projectgen.errors import ProjectGenError, one_line

    try:
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        return handler(args)
    except ProjectGenError as exc:
        print(f"projectgen: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("projectgen: interrupted (finished work is saved; run the same command to continue)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # noqa: BLE001 - not a user mistake: show everything
        import traceback

        traceback.print_exc()
        print("projectgen: internal error: this is a bug in projectgen, not a problem with your input; please "
              "report it with the traceback above", file=sys.stderr)
        return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main())
