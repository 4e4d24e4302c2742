"""`projectgen experiment`: every task x method x model of a dataset as one run each, resumable (the preset of
`evaluate("livecoder", ...)`, with the experiment's options and tables); and `projectgen experiment merge DIR...`:
shard folders joined into one result.

`merge` is a sub-command of `experiment`, which keeps its own options: ``projectgen experiment
--dataset ...`` runs an experiment as it always did, ``projectgen experiment merge A B --out C``
merges (argparse reads a first bare word as the sub-command, and `experiment` takes no other)."""
from __future__ import annotations

import argparse
from pathlib import Path

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (
    add_attempt_options,
    add_batch_options,
    add_checkpoint_option,
    add_concurrency_option,
    add_executor_options,
    add_faults_option,
    add_pipeline_options,
    add_prices_option,
    add_runner_options,
    add_sampling_options,
    attempt_settings_from_args,
    check_out_path,
    executor_from_args,
    positive_int,
    resolve_dataset,
    runner_settings_from_args,
    sampling_from_args,
    settings_from_args,
)
from projectgen.cli.tables import batch_progress, make_console, print_errored_units, print_model_table
from projectgen.llm.sampling import sampling_arguments
from projectgen.errors import ProjectGenError
from projectgen.external.systems import system_names
from projectgen.runs.methods import METHODS


def listed_systems() -> str:
    """The external systems for --method's help; a systems file that does not read says so there (the command
    itself refuses it in one line when a method needs it)."""
    try:
        return ", ".join(system_names())
    except ProjectGenError as exc:
        return f"(none: {exc})"


def add_commands(subparsers) -> None:
    """Add `experiment` to the CLI's sub-parsers."""
    parser = subparsers.add_parser(
        "experiment", help="run every task x model of a dataset (LiveCoder runs), resumable, with per-attempt tables",
        description="Each task x method x model is one run in OUT/METHOD/MODEL/TASK (a LiveCoder run: its attempts "
                    "in order; a folder begun before that layout keeps LiveCoder's at OUT/MODEL/TASK); pairs "
                    "run in parallel with --workers. A ledger (OUT/ledger.jsonl) records finished pairs: run the "
                    "same command again to continue (finished pairs are skipped, interrupted runs resume). Prints "
                    "one table per model (per attempt: unit-test pass rate, mean and LOC-weighted; reuse rate; "
                    "tokens; cost) and writes OUT/results.json and OUT/results.md. `experiment merge DIR...` joins "
                    "the folders of --shard runs into one result.")
    parser.add_argument("--dataset", help="folder of task folders, `examples` (the bundled tasks) or a fetched benchmark (devbench, codeprojecteval: `projectgen datasets`); required")
    parser.add_argument("--model", action="append", metavar="[LABEL=]SPEC",
                        help="a model to run (repeatable): PROVIDER:MODEL, a served name with --base-url, "
                             "scripted:FILE, scripted:DIR replaying DIR/<task-id>.json per task, or reference "
                             "(each task's reference replayed: an oracle, not a model); LABEL names its folder and "
                             "table (default: from the spec)")
    parser.add_argument("--method", default="livecoder", metavar="M,M",
                        help=f"the methods (arms) to run, comma-separated: {', '.join(METHODS)} (default livecoder), "
                             "or your own: package.module:factory or path/to/file.py:factory returning a "
                             "projectgen.runs.CustomMethod (examples/custom_method.py), "
                             f"or an external system run in the sandbox behind the model bridge: "
                             f"{listed_systems()} (docs/external-systems.md); each task x method x model "
                             "is one run")
    parser.add_argument("--scorer", action="append", default=[], metavar="SPEC",
                        help="your own scorer of each final output (repeatable): package.module:factory or "
                             "path/to/file.py:factory returning a Scorer; its scores are in each run's log.json, "
                             "results.json and the tables by its name")
    parser.add_argument("--system-path", action="append", default=[], metavar="[NAME=]DIR",
                        help="the checkout an external system of source \"checkout\" runs from (repeatable; NAME= "
                             "may be left out when one such system is among the methods)")
    # evaluation.denominators.DENOMINATOR_SETTINGS, spelt out: importing it would load pydantic at --help
    parser.add_argument("--denominator", choices=("published", "reference"), default="published",
                        help="what #Tests counts on a published benchmark: the paper's per-task count (published, "
                             "the default: a run that produced nothing keeps it) or what the reference collects here "
                             "(reference); other tasks always use the reference's")
    add_batch_options(parser, units="pairs", out_default="./runs/experiment-DATASET")
    add_concurrency_option(parser, units="pairs")
    add_faults_option(parser)
    parser.add_argument("--shard", default=None, metavar="I/N",
                        help="run only share I of N of the pairs (a deterministic split of the plan), e.g. on N "
                             "machines without a cluster; join the folders with `experiment merge`")
    add_prices_option(parser)
    parser.add_argument("--no-unit-tests", action="store_true",
                        help="do not run the hidden unit tests (no functional score: tokens and cost only)")
    add_sampling_options(parser)
    add_pipeline_options(parser)
    add_attempt_options(parser)
    add_checkpoint_option(parser.add_argument_group("checkpoints"))
    add_runner_options(parser)
    add_executor_options(parser)
    parser.set_defaults(handler=cmd_experiment)

    subcommands = parser.add_subparsers(dest="experiment_command", metavar="merge")
    merge = subcommands.add_parser(
        "merge", help="join experiment folders (the shares of --shard I/N) into one result",
        description="Copies every unit's run folder of the given experiment folders into OUT, writes OUT's ledger "
                    "from theirs and regenerates results.json, results.md and results.html from it, as one "
                    "machine running every unit would have. The folders must hold one experiment (the same "
                    "dataset and settings); they are only read. Merging again into OUT adds what is new.")
    merge.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="experiment folders to join")
    merge.add_argument("--out", type=Path, required=True, help="the merged experiment folder")
    merge.set_defaults(handler=cmd_merge)


def cmd_experiment(args: argparse.Namespace) -> int:
    """The preset of `evaluate("livecoder", ...)` with the experiment's options and tables. Exit 0 when every pair
    finished (whatever its scores), 1 when some pair is an error, 2 for a usage error."""
    from dataclasses import replace

    from projectgen.datasets.examples import example_tasks_dir
    from projectgen.experiments import NOTES, Concurrency, Shard
    from projectgen.experiments.models import parse_models
    from projectgen.experiments.tables import arm_lines
    from projectgen.external.methods import parse_system_paths
    from projectgen.protocols.definition import BatchOptions, Evaluation, Hooks
    from projectgen.protocols.livecoder.batch import experiment_spec, run_spec
    from projectgen.protocols.livecoder.protocol import failures
    from projectgen.protocols.livecoder.settings import LiveCoderSettings
    from projectgen.runs import layout

    missing = [option for option, value in (("--dataset", args.dataset), ("--model", args.model)) if not value]
    if missing:
        raise ProjectGenError(f"experiment needs {' and '.join(missing)} (or `experiment merge DIR... --out OUT` "
                              "to join shard folders)")
    shard = Shard.parse(args.shard) if args.shard else None
    dataset = resolve_dataset(args.dataset, example_tasks_dir())
    out = args.out or Path("runs") / f"experiment-{dataset.resolve().name}"
    check_out_path(out, folder=True)
    if args.base_url is not None:
        from projectgen.llm import check_base_url

        if not args.base_url.strip():
            raise ProjectGenError("--base-url is empty: give the endpoint, e.g. http://localhost:8000/v1")
        check_base_url(args.base_url)
    # The methods as given (empty entries too): the experiment's own check says what is wrong with them.
    methods = tuple(method.strip() for method in args.method.split(","))
    settings = LiveCoderSettings(
        methods=methods, settings=settings_from_args(args), attempt_settings=attempt_settings_from_args(args),
        max_tokens=args.max_tokens, knowledge_url=args.knowledge_store, embedding=args.embedding,
        denominator=args.denominator, faults=args.inject_faults, scorers=tuple(args.scorer),
        system_paths=parse_system_paths(args.system_path, methods), prices=args.prices, shard=shard)
    console = make_console()
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

    concurrency = Concurrency(calls=args.max_concurrent_calls)
    models = parse_models(args.model)
    options = BatchOptions(tasks=list(args.tasks) if args.tasks else None, fresh=args.fresh, base_url=args.base_url,
                           sampling=sampling_arguments(sampling_from_args(args)),
                           runner_settings=runner_settings_from_args(args), checkpoint_url=args.checkpoint_url,
                           concurrency=concurrency, hooks=Hooks(on_start=on_start, on_row=on_pair, progress=log))
    # The experiment is built once (a custom method's factory is called once) and checked before an executor connects
    # to a Ray cluster, which must refuse what the runs would keep on one machine; then it runs as the livecoder
    # protocol's batch (`livecoder_batch`, what `evaluate livecoder` runs), which checks it against the executor again.
    evaluation = Evaluation(dataset=dataset, models=models, settings=settings, out=out, options=options)
    spec = experiment_spec(evaluation)
    executor = executor_from_args(args, per_machine=spec.per_machine_state(), default_workers=concurrency.workers)
    with progress:
        results = run_spec(spec, replace(evaluation, options=replace(options, executor=executor)))
    if any(pair.selection == "unit" for report in results.models for pair in report.pairs):
        console.print("[yellow]the best attempt was selected by the hidden unit tests (the paper's oracle setting) "
                      "in some runs: see each arm's settings below[/yellow]")
    errors = failures(results)
    print_errored_units(console, errors, sum(report.final.tasks for report in results.models), "pair(s)")
    for report in results.models:
        print_model_table(console, report)
    for line in arm_lines(results):
        console.print(f"- {line}", highlight=False)
    console.print(f"[dim]{NOTES}[/dim]", highlight=False)
    console.print(f"results: {out / layout.RESULTS_MD}, {out / layout.RESULTS_JSON}, {out / layout.RESULTS_HTML}; "
                  f"runs in {out}/METHOD/MODEL/TASK (`projectgen trace DIR`)",
                  highlight=False)
    if shard is not None:
        console.print(f"share {shard} of the pairs; join the shares with `projectgen experiment merge DIR... --out "
                      "OUT`", highlight=False)
    return EXIT_OK if not errors else EXIT_TESTS_FAILED


def cmd_merge(args: argparse.Namespace) -> int:
    """Exit 0 when every merged unit finished, 1 when some unit is an error, 2 for a usage error."""
    from projectgen.experiments import NOTES, merge_experiments
    from projectgen.runs import layout

    check_out_path(args.out, folder=True)
    console = make_console()
    results, notes = merge_experiments(args.folders, args.out)
    for report in results.models:
        print_model_table(console, report)
    console.print(f"[dim]{NOTES}[/dim]", highlight=False)
    for note in notes:
        console.print(f"[yellow]{note}[/yellow]", highlight=False)
    console.print(f"merged {len(args.folders)} folder(s) into {args.out}: {args.out / layout.RESULTS_MD}, "
                  f"{args.out / layout.RESULTS_JSON}, {args.out / layout.RESULTS_HTML}", highlight=False)
    errors = sum(report.final.errors for report in results.models)
    return EXIT_OK if not errors else EXIT_TESTS_FAILED
