"""Generated Python must parse before a repository accepts it.

A model that answers in prose, or cuts a file short, gives text that is not Python; written
into a ``.py`` file it fails every test that imports it, and the run scores 0 without saying
why. Every stage that takes generated files into the repository state (skeleton, code fill
and repair, the Direct and Self-Reflection baselines) passes them through `keep_parsable`:
a Python file that does not compile keeps its previous version (or stays out when it had
none), and the error, naming the file, the line and the syntax error, goes back to the
generator as feedback.

The check compiles (``compile(text, path, "exec")``, which also catches errors the parser
alone lets through, such as ``return`` outside a function); nothing is executed. It uses
this interpreter's grammar, so syntax newer than the interpreter running projectgen (a task
pinned to a newer Python) is refused too.
"""
from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Mapping
from typing import TypeVar

PYTHON_SUFFIXES = (".py", ".pyi")


COMPILE_ATTEMPTS = 5
T = TypeVar("T")


def spurious_system_error(exc: SystemError) -> bool:
    """CPython 3.11 before 3.11.9 keeps the AST constructor's recursion depth per interpreter, not per
    thread: two threads parsing at once (batch workers checking generated files, a run's observations
    beside a sandbox thread) can make one of them raise ``SystemError: AST constructor recursion depth
    mismatch`` for valid code. That error says nothing about the text."""
    return "recursion depth mismatch" in str(exc)


def retry_spurious(work: Callable[[], T]) -> T:
    """`work()`, tried again (up to COMPILE_ATTEMPTS in all) while it raises the spurious SystemError."""
    for attempt in range(COMPILE_ATTEMPTS):
        try:
            return work()
        except SystemError as exc:
            if not spurious_system_error(exc) or attempt == COMPILE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


def compile_quietly(text: str, path: str) -> None:
    """`compile(text, path, "exec")` without warnings, raising only for the code itself (tried again on
    the spurious SystemError: `spurious_system_error`; seen under load in the test suite, where it
    turned a task run into an error row)."""

    def check() -> None:
        with warnings.catch_warnings():  # invalid escapes and the like warn; only errors matter here
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)

    retry_spurious(check)


def parse_python(text: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse`, tried again on the spurious SystemError (`spurious_system_error`): every parse of
    generated or reference code goes through here, as it may run beside another thread's."""
    return retry_spurious(lambda: ast.parse(text, filename=filename, mode=mode))


def syntax_error(path: str, text: str) -> str | None:
    """Why `text` is not valid Python for `path` (``"line 3: invalid syntax"`` and the offending line),
    or None when it compiles or `path` is not a Python file."""
    if not path.endswith(PYTHON_SUFFIXES):
        return None
    try:
        compile_quietly(text, path)
    except SyntaxError as exc:
        shown = (exc.text or "").strip()
        return f"line {exc.lineno or '?'}: {exc.msg}" + (f"\n    {shown[:200]}" if shown else "")
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes; nesting too deep to compile
        return f"{type(exc).__name__}: {exc}"
    return None


def keep_parsable(new: Mapping[str, str], old: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """`new` as a repository may accept it, and the errors of the files it refused (path -> `syntax_error`).

    Only files that differ from their `old` version are checked (what was accepted before stays);
    a Python file that does not compile is put back to its `old` version, or left out when `old`
    has none."""
    accepted: dict[str, str] = {}
    errors: dict[str, str] = {}
    for path, text in new.items():
        error = None if old.get(path) == text else syntax_error(path, text)
        if error is None:
            accepted[path] = text
            continue
        errors[path] = error
        if path in old:
            accepted[path] = old[path]
    return accepted, errors


CUT_OFF = "cut off at the output limit"
"""How a refused file's error begins when its reply stopped at the output cap before the file ended: the
part that came may compile, but it is not the file (`projectgen.agents.base.IncompleteFileError`)."""


def cut_off_error() -> str:
    """The error recorded for a file whose reply was cut at the output cap before the file ended."""
    return f"{CUT_OFF}: the reply ended before the file did"


def refusal(error: str) -> str:
    """What a refused file was, from its error: "not valid Python" or "cut off at the output limit"."""
    return CUT_OFF if error.startswith(CUT_OFF) else "not valid Python"


def rejection_feedback(path: str, error: str) -> str:
    """The feedback for a generator whose file `path` was refused with `error` (`syntax_error`, or
    `cut_off_error`)."""
    if error.startswith(CUT_OFF):
        return (f"Your version of {path} was not accepted: the reply was cut off at the output limit before "
                "the file ended, so it was not written (answer with the whole file and nothing else, more "
                "briefly).")
    return (f"Your version of {path} was not accepted: it is not valid Python, so it was not written "
            f"(reply with Python code for the file, not prose).\n{path}, {error}")


def function_node(tree: ast.Module, dotted: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """The definition of `dotted` (a top-level function or ``Class.method``) in `tree`; ValueError when absent."""
    scope: list[ast.stmt] = tree.body
    *owners, name = dotted.split(".")
    for owner in owners:
        found = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == owner), None)
        if found is None:
            raise ValueError(f"class {owner!r} not found")
        scope = found.body
    for node in scope:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    raise ValueError(f"function {dotted!r} not found")


def function_lines(code: str, dotted: str) -> tuple[int, int]:
    """The 0-based line range [start, end) of `dotted`'s definition in `code`, its decorators included
    (ValueError when `code` does not define it, SyntaxError when it does not parse)."""
    node = function_node(parse_python(code), dotted)  # type: ignore[arg-type]
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    return start, node.end_lineno or node.lineno
