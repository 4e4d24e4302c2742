"""`projectgen experiment`: every task x method x model of a dataset as one run each, resumable."""
from __future__ import annotations

import argparse
from pathlib import Path

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (add_attempt_options, add_pipeline_options, add_prices_option, add_runner_options,
                                    add_sampling_options, attempt_settings_from_args, check_out_path, positive_int,
                                    prices_from_args, resolve_dataset, runner_from_args, sampling_arguments,
                                    sampling_from_args, settings_from_args)
from projectgen.cli.tables import batch_progress, print_model_table
from projectgen.runs.methods import METHODS


def add_commands(subparsers) -> None:
    """Add `experiment` to the CLI's sub-parsers."""
    parser = subparsers.add_parser(
        "experiment", help="run every task x model of a dataset (LiveCoder runs), resumable, with per-attempt tables",
        description="Each task x model pair is one LiveCoder run in OUT/MODEL/TASK (its attempts in order); pairs "
                    "run in parallel with --workers. A ledger (OUT/ledger.jsonl) records finished pairs: run the "
                    "same command again to continue (finished pairs are skipped, interrupted runs resume). Prints "
                    "one table per model (per attempt: unit-test pass rate, mean and LOC-weighted; reuse rate; "
                    "tokens; cost) and writes OUT/results.json and OUT/results.md.")
    parser.add_argument("--dataset", required=True, help="folder of task folders, or `examples` (the bundled tasks)")
    parser.add_argument("--model", action="append", required=True, metavar="[LABEL=]SPEC",
                        help="a model to run (repeatable): PROVIDER:MODEL, a served name with --base-url, "
                             "scripted:FILE, scripted:DIR replaying DIR/<task-id>.json per task, or reference "
                             "(each task's reference replayed: an oracle, not a model); LABEL names its folder and "
                             "table (default: from the spec)")
    parser.add_argument("--method", default="livecoder", metavar="M,M",
                        help=f"the methods (arms) to run, comma-separated: {', '.join(METHODS)} (default livecoder); "
                             "each task x method x model is one run")
    parser.add_argument("--tasks", default=None, metavar="ID,ID", help="only these task ids (comma-separated)")
    parser.add_argument("--workers", type=positive_int, default=1, help="pairs run in parallel (default 1)")
    parser.add_argument("--out", type=Path, default=None,
                        help="experiment folder with the resumable ledger (default: ./runs/experiment-DATASET)")
    parser.add_argument("--fresh", action="store_true", help="forget the ledger and run every pair again")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint for every model")
    add_prices_option(parser)
    parser.add_argument("--no-unit-tests", action="store_true",
                        help="do not run the hidden unit tests (no functional score: tokens and cost only)")
    add_sampling_options(parser)
    add_pipeline_options(parser)
    add_attempt_options(parser)
    add_runner_options(parser)
    parser.set_defaults(handler=cmd_experiment)


def cmd_experiment(args: argparse.Namespace) -> int:
    """Exit 0 when every pair finished (whatever its scores), 1 when some pair is an error, 2 for a usage error."""
    from rich.console import Console

    from projectgen.errors import ProjectGenError
    from projectgen.experiments import NOTES, ExperimentHooks, ExperimentSpec, LocalExecutor, run_experiment
    from projectgen.runs import layout

    from projectgen.datasets.examples import example_tasks_dir

    args.dataset = resolve_dataset(args.dataset, example_tasks_dir())
    out = args.out or Path("runs") / f"experiment-{args.dataset.resolve().name}"
    check_out_path(out, folder=True)
    if args.knowledge_store:
        from projectgen.memory.knowledge_store import parse_server_url

        parse_server_url(args.knowledge_store)
    if args.embedding is not None:
        from projectgen.memory.embedding_models import make_embeddings

        make_embeddings(args.embedding)
    if args.base_url is not None:
        from projectgen.llm import check_base_url

        if not args.base_url.strip():
            raise ProjectGenError("--base-url is empty: give the endpoint, e.g. http://localhost:8000/v1")
        check_base_url(args.base_url)
    prices, source = prices_from_args(args.prices)
    console = Console()
    progress, bar, on_start = batch_progress(console, "task x model runs", "pair(s)", out / layout.LEDGER)

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
        spec = ExperimentSpec(dataset=args.dataset, models=args.model, methods=tuple(args.method.split(",")),
                              sampling=sampling_arguments(sampling_from_args(args)),
                              settings=settings_from_args(args),
                              attempt_settings=attempt_settings_from_args(args), tasks=tasks,
                              max_tokens=args.max_tokens, base_url=args.base_url, knowledge_url=args.knowledge_store,
                              embedding=args.embedding)
        results = run_experiment(
            spec, out, executor=LocalExecutor(workers=args.workers), fresh=args.fresh,
            runner_factory=lambda: runner_from_args(args, log=lambda message: log("sandbox", message)),
            prices=prices, prices_source=source, hooks=ExperimentHooks(on_start, on_pair, progress=log))
    if results.attempt_settings.get("selection") == "unit":
        console.print("[yellow]the best attempt was selected by the hidden unit tests: the paper's oracle "
                      "setting[/yellow]")
    for report in results.models:
        print_model_table(console, report)
    console.print(f"[dim]{NOTES}[/dim]", highlight=False)
    console.print(f"results: {out / layout.RESULTS_MD}, {out / layout.RESULTS_JSON}, {out / layout.RESULTS_HTML}; "
                  f"runs in {out}/MODEL/TASK, other methods in {out}/METHOD/MODEL/TASK (`projectgen trace DIR`)",
                  highlight=False)
    errors = sum(report.final.errors for report in results.models)
    return EXIT_OK if not errors else EXIT_TESTS_FAILED
