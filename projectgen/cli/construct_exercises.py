"""`projectgen construct exercises`: LiveRepoReflection's exercise construction from seed code into a folder
of Exercism-layout exercises that `projectgen reflect --dataset OUT` runs: the preset of `projectgen evaluate
exercise_construction` with the paper's roles as flags."""
from __future__ import annotations

import argparse
from pathlib import Path
from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (add_concurrency_option, add_runner_options, add_sampling_options, check_out_path,
                                    positive_int, sampling_from_args)

BUNDLED_REPLAY = "construct-exercises.examples"


def add_command(commands) -> None:
    """Add `construct exercises` to the `construct` group's sub-parsers."""
    parser = commands.add_parser(
        "exercises", help="LiveRepoReflection: seed code -> new exercises, cross-executed, filtered, decontaminated",
        description="From each seed code file: a creative model (drawn at random, seeded) designs an exercise; "
                    "every reasoning model writes a test suite and a solution; every suite x solution pair runs "
                    "in the sandbox and the lowest-pass-rate suite and highest-pass solution are kept (0%-pass "
                    "programs go to OUT/human-review.json); judge models play reflect's protocol on it and "
                    "exercises every judge solves at once, or that time out, are dropped; near-duplicates of "
                    "--reference (character 5-gram MinHash + LSH, exact Jaccard > 0.8) are removed "
                    "(OUT/decontamination.json). Kept exercises are written to OUT/<project> in the Exercism "
                    "layout; OUT/construction.json is the report. Seeds are built --workers at a time; the ledger "
                    "(OUT/ledger.jsonl) records finished seeds: run the same command again to continue.")
    parser.add_argument("--seeds", required=True, help="a folder of seed code files, or 'examples' (the bundled set)")
    parser.add_argument("--model", required=True, metavar="SPEC",
                        help="the model of every role not given below: PROVIDER:MODEL, scripted:FILE, or "
                             "scripted:examples (the bundled seeds' replay)")
    parser.add_argument("--creative", default=None, metavar="SPEC[,SPEC...]",
                        help="the creative models, one drawn per seed (default: --model)")
    parser.add_argument("--reasoning", default=None, metavar="SPEC[,SPEC...]",
                        help="the reasoning models, each writing a test suite and a solution (default: --model "
                             "twice, two drafts)")
    parser.add_argument("--judges", default=None, metavar="SPEC[,SPEC...]",
                        help="the difficulty judges, each playing reflect's protocol (default: --model)")
    parser.add_argument("--reference", action="append", type=Path, default=None, metavar="DIR",
                        help="exercises to decontaminate against (repeatable; default with --seeds examples: the "
                             "bundled exercises; otherwise none, said in the report)")
    parser.add_argument("--rng-seed", type=int, default=0, help="seeds the draw of creative models (default 0)")
    parser.add_argument("--judge-tries", type=positive_int, default=2,
                        help="tries of each judge: 1 write then repairs (default 2, reflect's)")
    parser.add_argument("--out", type=Path, required=True, help="the output folder (exercises and reports)")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="seeds built at once (default: --max-concurrent-calls); the across-seed steps "
                             "(difficulty, near-duplicates, names) run after them in seed order, so the result is "
                             "the same for any number")
    add_model_options(parser)
    add_runner_options(parser)
    add_concurrency_option(parser, units="seeds")
    parser.set_defaults(handler=cmd_construct_exercises)


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """--base-url and the sampling overrides, for every model the command makes."""
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default $PROJECTGEN_BASE_URL)")
    add_sampling_options(parser)


def model_list(text: str | None, default: str, copies: int = 1) -> list[str]:
    """The specs of a comma-separated list (each resolved like --model), or `default` `copies` times."""
    from projectgen.errors import ProjectGenError

    if text is None:
        return [default] * copies
    specs = [resolve_spec(item.strip()) for item in text.split(",") if item.strip()]
    if not specs:
        raise ProjectGenError("an empty model list: give at least one SPEC")
    return specs


def resolve_spec(text: str, bundled: str = BUNDLED_REPLAY) -> str:
    """``scripted:examples`` -> the command's bundled replay; a bundled script name -> its path (as `reflect`)."""
    from projectgen.cli.reflect import model_spec

    return model_spec(f"scripted:{bundled}" if text.strip() == "scripted:examples" else text)


def cmd_construct_exercises(args: argparse.Namespace) -> int:
    """Exit 0 when every seed was built (kept, dropped or sent to human review), 1 when some seed's construction
    failed (it is built again by the next invocation), 2 for a usage error. The preset of `projectgen evaluate
    exercise_construction` with the command's flags and its lines."""
    from projectgen.cli.options import executor_from_args, runner_settings_from_args
    from projectgen.cli.tables import batch_progress, make_console
    from projectgen.datasets.examples import example_exercises_dir
    from projectgen.experiments.concurrency import Concurrency
    from projectgen.llm.sampling import sampling_arguments
    from projectgen.protocols.definition import BatchOptions, Hooks
    from projectgen.protocols.evaluate import evaluate
    from projectgen.protocols.exercise_construction.package import EXAMPLES, example_seeds_dir
    from projectgen.protocols.exercise_construction.seed_run import DROPPED, ERROR, KEPT, REVIEW
    from projectgen.runs import layout

    check_out_path(args.out, folder=True)
    dataset = example_seeds_dir() if args.seeds == EXAMPLES else Path(args.seeds)
    model = resolve_spec(args.model)
    concurrency = Concurrency(calls=args.max_concurrent_calls)
    settings = {"creative": model_list(args.creative, model), "reasoning": model_list(args.reasoning, model, copies=2),
                "judges": model_list(args.judges, model),
                "references": args.reference or ([example_exercises_dir()] if args.seeds == EXAMPLES else []),
                "rng_seed": args.rng_seed, "judge_tries": args.judge_tries}
    console = make_console()
    progress, bar, on_start = batch_progress(console, "seeds", "seed(s)", args.out / layout.LEDGER)

    def on_loaded(plan) -> None:
        console.print(f"{len(plan.seeds)} seed(s); models: {plan.models}; "
                      f"decontamination against {plan.references} reference exercise(s)", highlight=False)

    def say(key: str, message: str) -> None:  # the sandbox's lines, and each pair's run
        progress.console.print(f"[dim]sandbox: {message}[/dim]" if key == "sandbox" else f"[dim]{message}[/dim]",
                               highlight=False)

    def on_row(record) -> None:
        progress.advance(bar)
        reason = f" ({record['reason']})" if record.get("reason") else ""
        colour = "red" if record["status"] == ERROR else "default"
        progress.console.print(f"{record['seed']}: [{colour}]{record['status']}[/{colour}]{reason}", highlight=False)

    options = BatchOptions(executor=executor_from_args(args, default_workers=concurrency.workers),
                           concurrency=concurrency, base_url=args.base_url,
                           sampling=sampling_arguments(sampling_from_args(args)),
                           runner_settings=runner_settings_from_args(args),
                           hooks=Hooks(on_loaded=on_loaded, on_start=on_start, on_row=on_row, progress=say))
    with progress:
        report = evaluate("exercise_construction", dataset, [model], settings, args.out, options)
    for seed, record in report.seeds.items():  # what the across-seed steps decided of each judged seed
        if "judge_outcomes" in record:
            said = (f"kept as {record['exercise']}" if record["status"] == KEPT
                    else f"{record['status']} at {record['stage']} ({record['reason']})")
            console.print(f"{seed}: {said}", highlight=False)
    kept, dropped, review, failed = (report.ids(status) for status in (KEPT, DROPPED, REVIEW, ERROR))
    console.print(f"kept {len(kept)}: {', '.join(report.seeds[s].get('exercise', s) for s in kept) or '-'}; "
                  f"dropped {len(dropped)}; to human review {len(review)}"
                  + (f"; failed {len(failed)} (run again to build them): {', '.join(failed)}" if failed else ""),
                  highlight=False)
    console.print(f"exercises in {args.out}; report {args.out / 'construction.json'} (decontamination.json, "
                  f"human-review.json); run `projectgen reflect --dataset {args.out} --model reference`",
                  highlight=False)
    return EXIT_TESTS_FAILED if failed else EXIT_OK
