"""Lines of code of a Python source: what a task's size and a generated repository's statistics count.

It lives beside the repository value, below both `datasets` (a task's reference size) and `evaluation`
(the statistics of generated code), so neither has to import the other to count lines.
"""
from __future__ import annotations

import io
import tokenize

# Tokens that carry no code of their own: a line holding only these is blank or a comment.
_NON_CODE_TOKENS = frozenset(
    {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.ENDMARKER,
    }
)

UNREADABLE_SOURCE_ERRORS: tuple[type[BaseException], ...] = (
    SyntaxError,  # includes IndentationError and TabError
    ValueError,  # e.g. "source code string cannot contain null bytes"
    tokenize.TokenError,
    RecursionError,  # absurdly deep nesting
)
"""What tokenize, ast and the tools built on them (radon) raise for source they cannot read."""


def count_loc(source: str) -> int:
    """Lines of code: non-blank lines that are not pure comment lines.

    Why this definition: it is the usual "LOC" of code-generation papers (blank lines and
    comments cost a model nothing and say nothing about the size of the program), and it is
    what `Task.size()` reports as the reference size that ProjectGen weights scores by.

    Precisely, a line counts when it has at least one non-whitespace character and is not a
    line whose only content is a ``#`` comment. Lines of a string literal count, so
    docstring lines count (and a ``# ...`` line *inside* a string is string text, not a
    comment); blank lines inside a docstring do not. Code followed by a trailing comment
    counts. The source is tokenized to tell comments from string contents; if it cannot be
    tokenized (broken code), a line-by-line rule is used instead: a stripped line counts
    unless it is empty or starts with ``#``.
    """
    lines = source.splitlines()
    try:
        code_lines = _token_code_lines(source)
    except UNREADABLE_SOURCE_ERRORS:
        return sum(1 for line in lines if line.strip() and not line.lstrip().startswith("#"))
    return sum(1 for number in code_lines if 0 < number <= len(lines) and lines[number - 1].strip())


def _token_code_lines(source: str) -> set[int]:
    """1-based numbers of the lines covered by a token that is code (not comment/layout)."""
    numbers: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in _NON_CODE_TOKENS:
            continue
        numbers.update(range(token.start[0], token.end[0] + 1))
    return numbers

