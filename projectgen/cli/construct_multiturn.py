"""`projectgen construct multiturn`: SR-Eval's multi-turn task construction from seed tasks, the preset of
`projectgen evaluate multiturn_construction` with the paper's options as flags."""
from __future__ import annotations

import argparse
from pathlib import Path

from projectgen.cli.exit_codes import EXIT_AWAITING_REVIEW, EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (add_runner_options, add_sampling_options, bundled_script_spec, check_out_path,
                                    positive_int, resolve_dataset, runner_settings_from_args, sampling_from_args,
                                    task_ids)

ABLATIONS = ("full", "no-evaluator", "no-dc-evaluator")  # as multiturn_construction.turns has them (light --help)
BUNDLED_SCRIPT = "construct-multiturn"  # scripts/construct-multiturn.json: `--model scripted:examples`


def add_command(commands) -> None:
    """Add `multiturn` to `construct`'s sub-commands."""
    parser = commands.add_parser(
        "multiturn", help="SR-Eval: multi-turn tasks from seed tasks (decompose, evaluate, discriminative tests)",
        description="Builds multi-turn tasks (the folders `projectgen refine` reads) from seed tasks (a complete "
                    "requirement, its reference and tests): seed filters, then a Decomposer, Evaluator and Analyzer "
                    "turn the requirement into 2-5 ordered turns, then per turn a Coder writes the code and tests, "
                    "kept only when the tests pass on the code (in the sandbox), fail on the previous turn's code "
                    "and an Evaluator finds them aligned with the requirement. A seed over a cap, or whose "
                    "Evaluator asks for its requirement to be rewritten, pauses for a person (exit code 3): "
                    "`projectgen review OUT/runs/SEED` shows it and takes --approve, --edit FILE.json or --reject "
                    "FEEDBACK. "
                    "Resumable: run it again to continue (OUT/ledger.jsonl).")
    parser.add_argument("--seeds", required=True, help="folder of seed folders (docs/construction.md), or `examples` "
                                                       "for the bundled seeds")
    parser.add_argument("--model", required=True, metavar="SPEC",
                        help="the model of every role: PROVIDER:MODEL, a served name with --base-url, scripted:FILE "
                             "(scripted:examples: the bundled replay of the bundled seeds)")
    parser.add_argument("--out", type=Path, required=True, help="the dataset folder to write (resumable)")
    parser.add_argument("--ablation", choices=ABLATIONS, default="full",
                        help="SR-Eval Table 7: full (default), no-evaluator (stage 3 off), no-dc-evaluator "
                             "(stages 2 and 3 off)")
    parser.add_argument("--decomposition-cap", type=positive_int, default=6,
                        help="Decomposer <-> Evaluator iterations before a seed goes to review (paper: 6)")
    parser.add_argument("--turn-cap", type=positive_int, default=10,
                        help="Coder drafts per turn before the seed goes to review (paper: M = 10)")
    parser.add_argument("--contamination", action="store_true",
                        help="also drop seeds whose tests a probe model passes from the function's signature and "
                             "docstring alone (leaked); the probe is --model unless --contamination-model names them")
    parser.add_argument("--contamination-model", action="append", default=[], metavar="SPEC",
                        dest="contamination_models",
                        help="a probe model of the contamination check (repeat it: SR-Eval probes three models and "
                             "drops a seed any of them passes); implies --contamination")
    parser.add_argument("--no-docstring-instructions", dest="docstring_instructions", action="store_false",
                        help="repository-level seeds start from requirement.md, not (as SR-Eval) from their target "
                             "function's signature and docstring converted into an instruction by the model")
    parser.add_argument("--only", type=task_ids, default=None, metavar="ID,ID", help="only these seeds")
    parser.add_argument("--fresh", action="store_true", help="forget the ledger and build every seed again")
    parser.add_argument("--workers", type=positive_int, default=1, help="seeds built at once (default 1)")
    parser.add_argument("--max-tokens", type=positive_int, default=None,
                        help="stop a seed's construction beyond this many tokens (it becomes an error)")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint for the model")
    add_sampling_options(parser)
    add_runner_options(parser)
    parser.set_defaults(handler=cmd_construct_multiturn)


def model_spec(text: str) -> str:
    """``scripted:examples`` is the bundled replay of the bundled seeds (`cli.options.bundled_script_spec`); a
    scripted path is made absolute (run.json must name it from anywhere)."""
    from projectgen.errors import ProjectGenError
    from projectgen.llm.specs import REFERENCE_SPEC, absolute_script

    if text.strip() == REFERENCE_SPEC:
        raise ProjectGenError("construct multiturn writes new turns, which have no reference to replay: give a model "
                              "(or scripted:examples)")
    return absolute_script(bundled_script_spec(text.strip(), BUNDLED_SCRIPT))


def cmd_construct_multiturn(args: argparse.Namespace) -> int:
    """Exit 0 when every seed became a task or was filtered out, 1 when some seed failed, 3 when some seed waits
    for a person (and none failed), 2 for a usage error. The preset of `projectgen evaluate multiturn_construction`
    with the command's flags and its lines."""
    from projectgen.cli.tables import make_console
    from projectgen.experiments.executors import LocalExecutor
    from projectgen.llm.sampling import sampling_arguments
    from projectgen.protocols.definition import BatchOptions, Hooks
    from projectgen.protocols.evaluate import evaluate
    from projectgen.protocols.multiturn_construction.batch import seed_run_dir
    from projectgen.protocols.multiturn_construction.seeds import bundled_seeds_dir

    check_out_path(args.out, folder=True)
    seeds = resolve_dataset(args.seeds, bundled_seeds_dir())
    spec_text = model_spec(args.model)
    probes = tuple(model_spec(spec) for spec in args.contamination_models)
    settings = {"ablation": args.ablation, "decomposition_cap": args.decomposition_cap, "turn_cap": args.turn_cap,
                "contamination": args.contamination or bool(probes), "contamination_models": probes,
                "docstring_instructions": args.docstring_instructions, "max_tokens": args.max_tokens}
    console = make_console()

    def on_row(row) -> None:
        colour = {"task": "green", "filtered": "yellow", "review": "red", "error": "red"}[row.status]
        detail = f"{row.turns} turns, {row.drafts} Coder drafts" if row.status == "task" else row.reason
        console.print(f"{row.seed}: [{colour}]{row.status}[/{colour}] ({detail}; "
                      f"{row.input_tokens + row.output_tokens:,} tokens, {row.cost})", highlight=False)

    def say(key: str, message: str) -> None:  # the sandbox's lines
        console.print(f"[dim]{key}: {message}[/dim]", highlight=False)

    results = evaluate("multiturn_construction", seeds, [spec_text], settings, args.out, BatchOptions(
        tasks=args.only, fresh=args.fresh, executor=LocalExecutor(workers=args.workers), base_url=args.base_url,
        sampling=sampling_arguments(sampling_from_args(args)), runner_settings=runner_settings_from_args(args),
        hooks=Hooks(on_row=on_row, progress=say)))
    built = [row for row in results.outcomes if row.status == "task"]
    console.print(f"{len(built)} task(s) in {args.out} (projectgen refine --dataset {args.out}); "
                  f"model: {results.model_description}", highlight=False)
    if results.review():
        from projectgen.runs.folder import RunFolder
        from projectgen.runs.pending_review import read_pending_review, review_commands

        console.print(f"{len(results.review())} seed(s) await a person's decision:", highlight=False)
        for row in results.review():
            run_dir = seed_run_dir(args.out, row.seed)
            pending = read_pending_review(RunFolder(run_dir)) or {}
            console.print(f"  {row.seed}: {row.reason}", highlight=False, markup=False, soft_wrap=True)
            for what, command in review_commands(run_dir, pending.get("stage")):
                console.print(f"    {what + ':':10} {command}", highlight=False, markup=False, soft_wrap=True)
    if results.errors():
        return EXIT_TESTS_FAILED
    return EXIT_AWAITING_REVIEW if results.review() else EXIT_OK
