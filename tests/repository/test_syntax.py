"""Generated Python is compiled before a repository accepts it (projectgen.repository.syntax)."""
from __future__ import annotations

from projectgen.repository.syntax import keep_parsable, rejection_feedback, syntax_error

PROSE = "Sure! Here is the implementation you asked for.\nIt stores values in a dict.\n"


def test_valid_python_and_other_files_pass():
    assert syntax_error("pkg/a.py", "def f():\n    return 1\n") is None
    assert syntax_error("pkg/a.py", "") is None
    assert syntax_error("README.md", PROSE) is None  # only Python files are checked
    assert syntax_error("pkg/a.py", 'PATTERN = "\\d+"\n') is None  # a warning is not an error


def test_prose_names_the_line_and_the_error():
    error = syntax_error("pkg/a.py", PROSE)
    assert error is not None and error.startswith("line 1: invalid syntax")
    assert "Sure! Here is the implementation" in error  # the offending line is shown


def test_errors_the_parser_alone_lets_through_are_caught():
    assert syntax_error("pkg/a.py", "x = 1\nreturn x\n").startswith("line 2: 'return' outside function")
    assert syntax_error("pkg/a.pyi", "def f(:\n") is not None
    assert "null bytes" in syntax_error("pkg/a.py", "x = 1\0\n")
    assert syntax_error("pkg/a.py", "def f():\nreturn 1\n").startswith("line 2: expected an indented block")


def test_keep_parsable_keeps_the_previous_version_or_leaves_a_new_file_out():
    old = {"a.py": "A = 1\n", "legacy.py": "def (:\n"}
    new = {"a.py": PROSE, "b.py": PROSE, "c.py": "C = 3\n", "notes.txt": PROSE, "legacy.py": "def (:\n"}
    accepted, errors = keep_parsable(new, old)
    assert accepted == {"a.py": "A = 1\n", "c.py": "C = 3\n", "notes.txt": PROSE, "legacy.py": "def (:\n"}
    assert set(errors) == {"a.py", "b.py"}  # an unchanged file was accepted before: not checked again
    assert keep_parsable({"a.py": "A = 2\n"}, old) == ({"a.py": "A = 2\n"}, {})


def test_the_feedback_names_the_file_the_line_and_the_error():
    text = rejection_feedback("pkg/a.py", syntax_error("pkg/a.py", PROSE))
    assert "pkg/a.py" in text and "not valid Python" in text and "line 1: invalid syntax" in text


def test_a_spurious_recursion_depth_error_from_another_thread_is_compiled_again(monkeypatch) -> None:
    """CPython 3.11 < 3.11.9 can raise this SystemError for valid code while another thread compiles;
    it turned a task run into an error row under load. A real SyntaxError is still reported."""
    import builtins

    from projectgen.repository import syntax

    real, calls = builtins.compile, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=69, after=95)")
        return real(*args, **kwargs)

    monkeypatch.setattr(builtins, "compile", flaky)
    assert syntax.syntax_error("a.py", "x = 1\n") is None and len(calls) == 2
    assert syntax.syntax_error("b.py", "def (\n").startswith("line 1")


def test_every_parse_retries_the_spurious_error_but_not_another_or_one_that_persists(monkeypatch) -> None:
    """`parse_python` is what the SSAT, dependency, metric and observation code parse with: each of them
    runs beside other threads in a batch, so each would otherwise fail a unit on this CPython bug."""
    import ast
    import builtins

    import pytest

    from projectgen.repository import syntax

    real, calls = builtins.compile, []

    def flaky(message: str, failures: int):
        def compile_(*args, **kwargs):
            calls.append(1)
            if len(calls) <= failures:
                raise SystemError(message)
            return real(*args, **kwargs)
        return compile_

    monkeypatch.setattr(builtins, "compile", flaky("AST constructor recursion depth mismatch (before=1, after=2)", 2))
    tree = syntax.parse_python("def f(a): return a\n", "m.py")
    assert isinstance(tree, ast.Module) and tree.body[0].name == "f" and len(calls) == 3
    calls.clear()
    monkeypatch.setattr(builtins, "compile", flaky("AST constructor recursion depth mismatch", syntax.COMPILE_ATTEMPTS))
    with pytest.raises(SystemError):
        syntax.parse_python("x = 1\n")
    assert len(calls) == syntax.COMPILE_ATTEMPTS
    calls.clear()
    monkeypatch.setattr(builtins, "compile", flaky("some other interpreter error", 1))
    with pytest.raises(SystemError, match="other"):
        syntax.parse_python("x = 1\n")
    assert len(calls) == 1
