"""The CLI's exit codes, defined once for every command."""
from __future__ import annotations

EXIT_OK = 0  # done; for commands that run tests: every test passed
EXIT_TESTS_FAILED = 1  # done, but some test failed (or some unit of a batch ended in an error)
EXIT_USAGE = 2  # a user mistake (bad option, task, model, folder), or a model that cannot be reached: one line
EXIT_AWAITING_REVIEW = 3  # the run paused for a person's review (run --review): decide with `projectgen review DIR`
EXIT_BUG = 70  # an unexpected exception: a bug in projectgen (sysexits' EX_SOFTWARE), shown with its traceback
EXIT_INTERRUPTED = 130  # Ctrl-C: finished work is saved
EXIT_BROKEN_PIPE = 141  # the reader of our output went away (`| head`): 128 + SIGPIPE, as a shell reports it
