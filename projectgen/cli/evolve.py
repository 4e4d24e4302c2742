"""`projectgen evolve`: change a finished run's repository for a new requirement, redoing only what the change needs:
the preset of `projectgen evaluate evolve` (the base run is the dataset, the change the settings) with its report."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from projectgen.cli.exit_codes import EXIT_OK, EXIT_TESTS_FAILED
from projectgen.cli.options import (add_pipeline_options, add_runner_options, add_sampling_options,
                                    runner_settings_from_args, settings_from_args)
from projectgen.cli.tables import make_console

if TYPE_CHECKING:
    from projectgen.config import Settings


class EvolveInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during an evolve run: it is saved, and `advice` says how to continue it."""

    def __init__(self, out: Path) -> None:
        super().__init__(str(out))
        self.advice = f"the run is saved in {out}; continue it with `projectgen evolve --resume {out}`"


def add_commands(subparsers) -> None:
    """Add `evolve` to the CLI's sub-parsers."""
    parser = subparsers.add_parser(
        "evolve", help="change a finished run's repository for a new requirement (only what the change needs)",
        description="Starts from a finished run (its repository/ and architecture tree, ssat.json, else a tree "
                    "derived from its code): the architect revises the tree for the new requirement (judged as "
                    "usual; the tree diff is recorded), the skeleton and code stages redo only the files the diff "
                    "touches and the files that import them (every other file keeps its code and costs no model "
                    "call), and the check tests of the earlier requirements run as regression tests beside the "
                    "change's (--tests). The result is a new run folder (its own trace, checkpoints, "
                    "`--resume`); `projectgen trace OUT` shows the tree diff, and OUT can be evolved again.")
    parser.add_argument("run", nargs="?", type=Path, default=None, help="the finished run folder to start from")
    parser.add_argument("--requirement", type=Path, default=None, metavar="FILE",
                        help="the new requirement (a text or Markdown file)")
    parser.add_argument("--tests", type=Path, default=None, metavar="DIR",
                        help="the new requirement's check tests (pytest files), run beside the earlier ones")
    parser.add_argument("--model", default=None,
                        help="chat model for every role: PROVIDER:MODEL, a served name with --base-url, or "
                             "scripted:PATH to replay a script (default $PROJECTGEN_MODEL)")
    parser.add_argument("--role-model", action="append", default=[], metavar="ROLE=SPEC",
                        help="a different model for one role (architect, architecture_judge, skeleton, "
                             "skeleton_judge, coder, code_judge); repeatable")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default $PROJECTGEN_BASE_URL)")
    parser.add_argument("--out", type=Path, default=None, help="the new run folder (default RUN-evolveN)")
    parser.add_argument("--force", action="store_true", help="replace the outputs of an earlier run in --out")
    parser.add_argument("--resume", type=Path, default=None, metavar="DIR",
                        help="continue the evolve run in DIR where it stopped (no completed model call is repeated)")
    parser.add_argument("--no-unit-tests", action="store_true", help="do not run the base task's hidden unit tests")
    add_sampling_options(parser)
    add_pipeline_options(parser)
    add_runner_options(parser)
    parser.set_defaults(handler=cmd_evolve, inject_faults=None)


def cmd_evolve(args: argparse.Namespace) -> int:
    """Exit 0 when every check test passes (the change's and the earlier ones), 1 when some fail, 2 for a usage
    error or a model that keeps failing."""
    from projectgen.errors import ProjectGenError

    if args.resume is not None:
        if args.run is not None or args.requirement is not None or args.tests is not None or args.model is not None:
            raise ProjectGenError("--resume DIR continues an evolve run with its own base run, change and models; "
                                  "give only the folder (and sandbox options)")
        return _resume(args)
    if args.run is None:
        raise ProjectGenError("give the finished run folder to evolve (or --resume DIR)")
    if args.requirement is None:
        raise ProjectGenError("give the new requirement: --requirement FILE")
    if not args.requirement.is_file():
        raise ProjectGenError(f"{args.requirement}: requirement file not found")
    try:
        requirement = args.requirement.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ProjectGenError(f"{args.requirement}: not valid UTF-8 (byte {exc.start})") from None
    from projectgen.cli.run import model_specs_from_args
    from projectgen.protocols.evolve.dataset import read_base_run
    from projectgen.protocols.evolve.task import change_number
    from projectgen.protocols.evolve.unit import check_change

    specs = model_specs_from_args(args)
    check_change(requirement, args.tests)
    base = read_base_run(args.run)
    out = args.out or args.run.with_name(f"{args.run.name}-evolve{change_number(base.task.docs.prd)}")
    return _execute(args, base.folder, out, requirement=requirement, model_specs=specs,
                    settings=settings_from_args(args), fresh=args.force)


def _resume(args: argparse.Namespace) -> int:
    """`--resume DIR`: the same `evaluate` call as the run's first, its base, change and models read from DIR."""
    from projectgen.errors import ProjectGenError
    from projectgen.protocols.evolve.batch import read_evolve_run

    if not args.resume.is_dir():
        raise ProjectGenError(f"{args.resume}: run folder not found")
    manifest, record = read_evolve_run(args.resume)
    if not manifest.models.get("default"):
        raise ProjectGenError(f"{args.resume}: the run was started from Python with model objects; resume it with "
                              "projectgen.protocols.evolve.unit.run_evolve(None, DIR, resume=True, models=...)")
    return _execute(args, Path(record.base_run), args.resume, requirement=record.change, model_specs=manifest.models,
                    settings=None, fresh=False)


def _execute(args: argparse.Namespace, base: Path, out: Path, *, requirement: str, model_specs: dict[str, str],
             settings: Settings | None, fresh: bool) -> int:
    """`evaluate("evolve", base, [model], settings, out)` with the options given, then the run's report."""
    from rich.markup import escape

    from projectgen.cli.tables import print_test_report
    from projectgen.experiments.models import ExperimentModel, model_slug
    from projectgen.llm.sampling import sampling_arguments
    from projectgen.protocols.definition import BatchOptions, Hooks
    from projectgen.protocols.evaluate import evaluate
    from projectgen.protocols.evolve.batch import EvolveResults

    console = make_console()

    def progress(key: str, message: str) -> None:
        console.print(f"[dim]{escape(message)}[/dim]", highlight=False)

    sampling = sampling_arguments(model_specs)
    roles = {role: spec for role, spec in model_specs.items()
             if role not in ("default", "base_url", "faults") and role not in sampling}
    model = ExperimentModel(slug=model_slug(model_specs["default"]), spec=model_specs["default"])
    options = BatchOptions(fresh=fresh, base_url=model_specs.get("base_url"), sampling=sampling,
                           runner_settings=runner_settings_from_args(args), hooks=Hooks(progress=progress))
    chosen = {"requirement": requirement, "tests": args.tests, "role_models": roles, "settings": settings,
              "max_tokens": args.max_tokens, "unit_tests": not args.no_unit_tests}
    try:
        results = evaluate("evolve", base, [model], chosen, out, options)
    except KeyboardInterrupt:
        raise EvolveInterrupted(out) from None
    if not isinstance(results, EvolveResults):  # the protocol's own batch (`evolve_batch`) makes these
        raise TypeError(f"the evolve protocol's batch gave {type(results).__name__}, not EvolveResults")
    record = results.record
    plan = record.plan
    console.print(f"evolve: change request {record.number} on {record.base_run} (base tree: {record.base_tree})",
                  highlight=False)
    if plan is not None:
        console.print(f"tree diff: added {', '.join(plan.added) or 'none'}; changed {', '.join(plan.changed) or 'none'}"
                      f"; removed {', '.join(plan.removed) or 'none'}", highlight=False)
        for line in plan.diff_text.splitlines()[:30]:
            console.print(f"  {line}", highlight=False, markup=False)
        console.print(f"redone: {', '.join(plan.redo) or 'nothing'} (importers: {', '.join(plan.importers) or 'none'})"
                      f"; kept byte for byte: {len(plan.kept)} file(s)"
                      + ("" if record.kept_identical
                         else f" [red]changed: {', '.join(record.changed_kept_files)}[/red]"),
                      highlight=False)
        calls = ", ".join(f"{path} {n}" for path, n in record.generator_calls.items()) or "none"
        console.print(f"generator calls per file: {calls}; on kept files: "
                      f"{', '.join(record.calls_on_kept_files) or 'none'}", highlight=False)
    if record.check_new is not None and record.check_regression is not None:
        console.print(f"check tests: the change's {record.check_new.passed}/{record.check_new.total}, the earlier "
                      f"requirements' {record.check_regression.passed}/{record.check_regression.total}",
                      highlight=False)
    if results.unit_report is not None:
        console.print("the base task's hidden unit tests (behaviour the change may alter):", highlight=False)
        print_test_report(console, results.unit_report)
    console.print(f"outputs: {out} (repository/, evolve.json, ssat.json, summary.json, events.jsonl; "
                  f"`projectgen trace {out}` shows the tree diff; evolve it again with `projectgen evolve {out} ...`)",
                  highlight=False)
    if results.stopped:
        console.print(f"[yellow]stopped: {results.stopped}[/yellow]", highlight=False)
        return EXIT_TESTS_FAILED
    report = results.check_report
    return EXIT_OK if report is not None and report.status == "passed" else EXIT_TESTS_FAILED
