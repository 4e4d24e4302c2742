"""`projectgen construct check-tests`: a small visible suite for a task without one, kept only if its reference
passes it and an empty stub fails it, so ProjectGen's code judge works on the task."""
from __future__ import annotations

import argparse
from pathlib import Path

from projectgen.cli.construct_exercises import add_model_options
from projectgen.cli.options import add_runner_options, check_out_path, positive_int

BUNDLED_REPLAY = "construct-check-tests.examples"
WITHOUT_CHECK_TESTS = "without_check_tests"


def add_command(commands) -> None:
    """Add `construct check-tests` to the `construct` group's sub-parsers."""
    parser = commands.add_parser(
        "check-tests", help="write check tests for a task that has none (reference passes, empty stub fails)",
        description="A model writes a few check tests from the task's documents; a draft is kept only if every "
                    "test passes on the task's reference and some test fails on an empty stub of it (signatures "
                    "with `pass` bodies), both run in the sandbox; a refused draft goes back as feedback. The "
                    "kept suite is written to check_tests/ and named in task.toml as [tests].check, in the task "
                    "folder or in a copy of it (--out). Python task.toml tasks only.")
    parser.add_argument("task", help="a task folder, or the name of a bundled example ('tempconv' has no check "
                                     "tests)")
    parser.add_argument("--model", required=True, metavar="SPEC",
                        help="PROVIDER:MODEL, scripted:FILE, or scripted:examples (the bundled tasks' replay)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write a copy of the task folder there, with the suite (default: the task folder "
                             "itself; required for a bundled example)")
    parser.add_argument("--tries", type=positive_int, default=3, help="drafts at most (default 3)")
    add_model_options(parser)
    add_runner_options(parser)
    parser.set_defaults(handler=cmd_construct_check_tests)


def load(spec: str):
    """(the task, whether it is bundled): a folder, a bundled example, or a bundled task without check tests."""
    from projectgen.cli.options import resolve_task
    from projectgen.datasets.examples import example_tasks_dir
    from projectgen.datasets.loaders import load_task

    unchecked = example_tasks_dir() / WITHOUT_CHECK_TESTS / spec
    if not Path(spec).exists() and "/" not in spec and unchecked.is_dir():
        return load_task(unchecked), True
    task = resolve_task(spec)
    return task, task.root.resolve().is_relative_to(example_tasks_dir().resolve())


def cmd_construct_check_tests(args: argparse.Namespace) -> int:
    from projectgen.cli.construct_exercises import resolve_spec
    from projectgen.cli.options import runner_from_args, sampling_from_args
    from projectgen.cli.tables import make_console
    from projectgen.construction.check_tests import ModelCheckTestWriter, check_task, construct_check_tests
    from projectgen.errors import ProjectGenError
    from projectgen.llm.factory import make_chat_model
    from projectgen.llm.sampling import sampling_arguments

    task, bundled = load(args.task)
    check_task(task)
    if bundled and args.out is None:
        raise ProjectGenError(f"{task.id} is a bundled example (part of the installed package): give --out DIR "
                              "for a copy with the check tests")
    if args.out is not None:
        check_out_path(args.out, folder=True)
    model = make_chat_model(resolve_spec(args.model, BUNDLED_REPLAY), base_url=args.base_url,
                            **sampling_arguments(sampling_from_args(args)))
    console = make_console()
    runner = runner_from_args(args, lambda message: console.print(f"[dim]{message}[/dim]", highlight=False))
    written, kept, drafts = construct_check_tests(task, ModelCheckTestWriter(model), runner, out=args.out,
                                                  tries=args.tries)
    for number, draft in enumerate(drafts, 1):
        console.print(f"draft {number}: " + (f"refused: {draft.refused}" if draft.refused else
                                              f"kept ({draft.reference.passed}/{draft.reference.total} pass on the "
                                              f"reference, {draft.stub.passed}/{draft.stub.total} on an empty stub)"),
                      highlight=False)
    if kept is None:
        raise ProjectGenError(f"no check-test draft of {task.id} passed on the reference and failed on an empty stub "
                              f"in {len(drafts)} tr(ies); see the drafts above")
    console.print(f"check tests written: {', '.join(sorted(kept.files))} in {written} (\\[tests].check in task.toml)",
                  highlight=False)
    return 0
