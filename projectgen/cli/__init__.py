"""`projectgen ...`: the command line, one module per command group.

    main.py        the parser and the errors -> exit codes mapping
    options.py     option builders and parsers shared by the commands; what options build
    exit_codes.py  the exit codes
    tables.py      what the commands print, on a console as wide as its tables when piped
    logs.py        log records during a command as one `projectgen: ...` line each
    evaluate.py    eval, bench-reference
    run.py         run (and --resume), demo
    experiment.py  experiment
    inspect.py     trace, report
"""
from __future__ import annotations

from projectgen.cli.main import build_parser, entry_point, main

__all__ = ["build_parser", "entry_point", "main"]
