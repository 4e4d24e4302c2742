"""What kind of error each failing test of a report met: the exception class pytest names for it, read from the
report as it was written (nothing is run again), and a coarse category of it.

ProjectGen's Figure 5 and LiveCoder's Figure 5 break failing tests down by error; neither paper's text (as far as
it could be found) defines the breakdown, so this is the closest documented thing (docs/fidelity.md): a failing
test's type is the exception pytest reports for it (its crash line ``file.py:12: KeyError``, else its last
``E   KeyError: ...`` line), and the categories group those types by what went wrong. A test's message is text the
code under test could shape, so these figures describe; they never change a score (docs/sandbox.md).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from projectgen.evaluation.report import Outcome, TestReport

NO_EXCEPTION = "(no exception named)"
"""The type of a failing test whose message names no exception: a timeout, a crash of the test process, a test
the run never reached."""
MAX_NAME = 80
_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_CRASH_LINE = re.compile(rf"^\S+:\d+: ({_NAME})$")
_ERROR_LINE = re.compile(rf"^E\s+({_NAME})(?::|$)")
_EXCEPTION_NAME = re.compile(r"(Error|Exception|Exit|Interrupt|Warning|Iteration|Failed|Skipped)$")

CATEGORIES: dict[str, tuple[str, ...]] = {
    "wrong result": ("AssertionError", "Failed"),
    "missing module or name": ("ImportError", "ModuleNotFoundError", "NameError", "UnboundLocalError"),
    "interface mismatch": ("AttributeError", "TypeError", "NotImplementedError"),
    "bad value or state": ("ValueError", "KeyError", "IndexError", "LookupError", "RuntimeError", "StopIteration",
                           "ZeroDivisionError", "ArithmeticError", "OverflowError", "UnicodeError",
                           "UnicodeDecodeError", "UnicodeEncodeError"),
    "environment or I/O": ("OSError", "FileNotFoundError", "PermissionError", "IsADirectoryError",
                           "NotADirectoryError", "FileExistsError", "ConnectionError", "TimeoutError", "EOFError"),
    "syntax": ("SyntaxError", "IndentationError", "TabError"),
    "timeout or crash": (NO_EXCEPTION, "RecursionError", "MemoryError", "SystemExit", "KeyboardInterrupt"),
}
"""The categories of error types and the exception classes each takes (by their last dotted name); any other
exception is "other exception" (a library's own or the project's)."""
OTHER = "other exception"
CATEGORY_ORDER: tuple[str, ...] = (*CATEGORIES, OTHER)


def error_type(message: str) -> str:
    """The exception class named in a failing test's message (its last dotted part: ``json.JSONDecodeError``
    counts as ``JSONDecodeError``), or `NO_EXCEPTION`."""
    lines = [line.rstrip() for line in message.splitlines() if line.strip()]
    for pattern in (_CRASH_LINE, _ERROR_LINE):
        for line in reversed(lines):
            found = pattern.match(line.strip() if pattern is _CRASH_LINE else line)
            if found and _EXCEPTION_NAME.search(found.group(1)):
                return found.group(1).rsplit(".", 1)[-1][:MAX_NAME]
    return NO_EXCEPTION


def category(name: str) -> str:
    """The category of an error type (`CATEGORIES`; `OTHER` for the rest)."""
    return next((label for label, names in CATEGORIES.items() if name in names), OTHER)


def failing_error_types(report: TestReport) -> dict[str, int]:
    """Error type -> failing tests (failed or error) of the report that met it."""
    return dict(Counter(error_type(test.message) for test in report.tests
                        if test.outcome in (Outcome.FAILED, Outcome.ERROR)))


def collection_error_types(report: TestReport) -> dict[str, int]:
    """Error type -> test modules the report could not collect (their tests are unknown, so a module counts once)."""
    return dict(Counter(error_type(error.message) for error in report.collection_errors))


def by_category(types: dict[str, int]) -> dict[str, int]:
    """Error type counts summed per category, in `CATEGORY_ORDER` (categories with none left out)."""
    sums = Counter({category(name): 0 for name in types})
    for name, count in types.items():
        sums[category(name)] += count
    return {label: sums[label] for label in CATEGORY_ORDER if sums.get(label)}


def merged(counts: Iterable[dict[str, int] | None]) -> dict[str, int]:
    """Several reports' counts added up (None: a report not read)."""
    total: Counter[str] = Counter()
    for one in counts:
        total.update(one or {})
    return dict(total)
