"""`projectgen construct`: build benchmark tasks from seeds (multi-turn tasks, exercises, check tests).

Each sub-command lives in a module of its own (`construct_<name>.py`) and is added here in one line."""
from __future__ import annotations

import argparse


def add_commands(subparsers) -> None:
    """Add `construct` and its sub-commands to the CLI's sub-parsers."""
    parser = subparsers.add_parser(
        "construct", help="build benchmark tasks from seeds: multi-turn tasks, exercises, check tests",
        description="Construction pipelines of SR-Eval (multi-turn tasks) and LiveRepoReflection (exercises), "
                    "and check tests for tasks that have none. Every step that runs code runs it in the sandbox.")
    parser.set_defaults(handler=cmd_without_subcommand)
    commands = parser.add_subparsers(dest="construct_command", metavar="SUBCOMMAND")
    from projectgen.cli import construct_check_tests, construct_exercises, construct_multiturn

    construct_multiturn.add_command(commands)
    construct_exercises.add_command(commands)
    construct_check_tests.add_command(commands)


def cmd_without_subcommand(args: argparse.Namespace) -> int:
    from projectgen.errors import ProjectGenError

    raise ProjectGenError("construct needs a sub-command (projectgen construct --help)")
