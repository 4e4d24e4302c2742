"""`projectgen evaluate PROTOCOL`: any protocol (a folder of `projectgen.protocols`, or a module defining PROTOCOL)
on a dataset under models, resumable; `projectgen reflect` and the other per-protocol commands are presets of it.
Not `projectgen eval`, which runs one task's tests against a repository that already exists."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (add_batch_options, add_checkpoint_option, add_concurrency_option,
                                    add_executor_options, add_runner_options, add_sampling_options, check_out_path,
                                    executor_from_args, runner_settings_from_args, sampling_from_args)


def add_commands(commands) -> None:
    """Add `evaluate` to the CLI's sub-parsers (the protocols are listed without importing any)."""
    from projectgen.protocols.names import protocol_names

    names = ", ".join(protocol_names())
    parser = commands.add_parser(
        "evaluate", help=f"run a protocol ({names}) on a dataset under models, resumable (not `eval`)",
        description=f"Runs a protocol on every sample of --dataset under every --model into --out, resumable: run the "
                    f"same command again to continue. PROTOCOL is a bundled one ({names}) or a module that defines "
                    "PROTOCOL (module or module:NAME). --set KEY=VALUE gives the protocol's settings (checked against "
                    "its own settings model; a VALUE is read as JSON when it parses, else as text). Writes "
                    "OUT/results.json, or the results file its protocol names.")
    parser.add_argument("protocol", metavar="PROTOCOL", help=f"{names}, or module[:NAME] of your own")
    parser.add_argument("--dataset", required=True, type=Path, help="the dataset folder the protocol reads")
    parser.add_argument("--model", action="append", required=True, metavar="[LABEL=]SPEC",
                        help="a model (repeatable): PROVIDER:MODEL, a served name with --base-url, scripted:FILE or "
                             "scripted:DIR (DIR/<task-id>.json per task)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                        help="one of the protocol's settings (repeatable)")
    add_batch_options(parser, units="units", out_default="./runs/evaluate-PROTOCOL-DATASET", tasks="sample ids")
    add_sampling_options(parser)
    add_checkpoint_option(parser.add_argument_group("checkpoints"))
    add_runner_options(parser)
    add_executor_options(parser)
    add_concurrency_option(parser, units="units")
    parser.set_defaults(handler=cmd_evaluate)


def parse_settings(pairs: list[str]) -> dict[str, object]:
    """``KEY=VALUE`` pairs as a mapping; a VALUE that parses as JSON is that value (``3``, ``true``, ``["a"]``)."""
    from projectgen.errors import ProjectGenError

    settings: dict[str, object] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ProjectGenError(f"--set {pair!r}: give KEY=VALUE")
        try:
            settings[key.strip()] = json.loads(text)
        except json.JSONDecodeError:
            settings[key.strip()] = text
    return settings


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Exit 0 when every unit was scored, 1 when some unit is an error, 2 for a usage error."""
    from rich.markup import escape

    from projectgen.cli.reflect import model_spec
    from projectgen.cli.tables import make_console
    from projectgen.errors import ProjectGenError
    from projectgen.experiments.concurrency import Concurrency
    from projectgen.llm.sampling import sampling_arguments
    from projectgen.protocols.definition import BatchOptions, Hooks
    from projectgen.protocols.evaluate import evaluate
    from projectgen.protocols.registry import load_protocol
    from projectgen.protocols.samples import EvaluationResults
    from projectgen.runs.checkpoints import check_checkpoint_url, per_machine_checkpoints

    protocol = load_protocol(args.protocol)
    if not args.dataset.exists():
        raise ProjectGenError(f"--dataset {args.dataset}: no such file or folder")
    out = args.out or Path("runs") / f"evaluate-{protocol.name}-{args.dataset.resolve().name}"
    check_out_path(out, folder=True)
    check_checkpoint_url(args.checkpoint_url)
    concurrency = Concurrency(calls=args.max_concurrent_calls)
    executor = executor_from_args(args, per_machine=per_machine_checkpoints(args.checkpoint_url),
                                  default_workers=concurrency.workers)
    console = make_console()
    results = evaluate(protocol, args.dataset, [model_spec(m) for m in args.model], parse_settings(args.settings), out,
                       BatchOptions(tasks=list(args.tasks) if args.tasks else None, executor=executor,
                                    fresh=args.fresh, base_url=args.base_url,
                                    sampling=sampling_arguments(sampling_from_args(args)),
                                    runner_settings=runner_settings_from_args(args),
                                    checkpoint_url=args.checkpoint_url, concurrency=concurrency,
                                    hooks=Hooks(progress=lambda key, message: console.print(
                                        f"[dim]{escape(key)}: {escape(message)}[/dim]", highlight=False))))
    console.print(f"results: {out / protocol.results_file}", highlight=False)
    if protocol.failures is not None:  # a protocol with its own batch: its results say what failed
        failed = protocol.failures(results)
        if failed:
            console.print(f"{failed} unit(s) ended in an error or did not load: see {out / protocol.results_file}",
                          highlight=False)
        return EXIT_TESTS_FAILED if failed else EXIT_OK
    if not isinstance(results, EvaluationResults):
        raise TypeError(f"protocol {protocol.name}: its results are {type(results).__name__}, not EvaluationResults")
    for entry in results.summary:
        means = ", ".join(f"{name} {value:.3f}" if value is not None else f"{name} -"
                          for name, value in entry.means.items())
        console.print(f"{entry.model}: {entry.samples} sample(s), {entry.errors} error(s); {means}", highlight=False)
    for row in results.rows:
        if row.status == "error":
            console.print(f"{row.key}: error {row.error}", highlight=False, markup=False)
    return EXIT_TESTS_FAILED if any(entry.errors for entry in results.summary) else EXIT_OK
