"""The `projectgen` command: its parser (one module per command group) and the one place that turns
errors into exit codes. Start-up stays fast: each command imports what it needs when it runs."""
from __future__ import annotations

import atexit
import os
import signal
import sys
import threading

from projectgen.cli import (construct, datasets, doctor, evaluate, evolve, experiment, inspect, protocol, reflect, refine,
                            review, run)
from projectgen.cli.exit_codes import EXIT_BROKEN_PIPE, EXIT_BUG, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from projectgen.cli.options import Parser


def build_parser() -> Parser:
    """The parser of every command; each command's handler is its `handler` default."""
    parser = Parser(
        prog="projectgen",
        description="Generate repositories from requirement documents and measure them by running their tests.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    evaluate.add_commands(commands)
    protocol.add_commands(commands)
    run.add_run_command(commands)
    evolve.add_commands(commands)
    review.add_commands(commands)
    experiment.add_commands(commands)
    reflect.add_commands(commands)
    refine.add_commands(commands)
    inspect.add_commands(commands)
    datasets.add_commands(commands)
    construct.add_commands(commands)
    run.add_demo_command(commands)
    doctor.add_commands(commands)
    return parser


def version() -> str:
    from projectgen import __version__

    return __version__


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
    from projectgen.cli.logs import command_logging
    from projectgen.errors import ProjectGenError, one_line

    # SIGTERM (a scheduler, `kill`) ends a command as Ctrl-C does: finished work saved, run.json updated.
    in_main_thread = threading.current_thread() is threading.main_thread()  # signals can only be set there
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler) if in_main_thread else None
    try:
        with command_logging():
            code = args.handler(args)
        sys.stdout.flush()  # a reader gone away is met here, not in the interpreter's last flush
        return code
    except ProjectGenError as exc:
        print(f"projectgen: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # `projectgen trace DIR | head`: the reader has what it wanted; nothing is wrong and nothing more can be
        # written. Point stdout at /dev/null so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt as exc:
        advice = getattr(exc, "advice", "finished work is saved; run the same command to continue")
        print(f"projectgen: interrupted ({advice})", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # noqa: BLE001 - not a user mistake: show everything
        import traceback

        traceback.print_exc()
        print("projectgen: internal error: this is a bug in projectgen, not a problem with your input; please "
              "report it with the traceback above", file=sys.stderr)
        return EXIT_BUG
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def entry_point() -> None:
    """The `projectgen` command: `main`, then exit with its code. After an interrupt a batch's worker threads may
    still be inside a library's native code, and the interpreter's tear-down ends such threads with
    pthread_exit, which aborts the process there ("FATAL: exception not rethrown": SIGABRT, not exit 130). So
    an interrupted command with threads still running ends once its exit functions ran and its output is
    flushed, without the tear-down (finished work is already on disk)."""
    code = main()
    if code == EXIT_INTERRUPTED and any(thread.is_alive() for thread in threading.enumerate()
                                        if thread is not threading.current_thread()):
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed or broken stream: nothing more can be said there
        os._exit(code)
    sys.exit(code)

