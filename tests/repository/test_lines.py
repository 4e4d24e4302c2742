"""Known-answer tests for projectgen.repository.lines.count_loc: every expected number is worked out
by hand in a comment next to it or in the snippet itself."""
from __future__ import annotations

import pytest

from projectgen.repository.lines import count_loc


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("", 0),
        ("\n\n   \n\t\n", 0),
        ("# only a comment\n    # an indented one\n", 0),
        ("x = 1\n", 1),
        ("x = 1", 1),  # no final newline
        ("x = 1  # a trailing comment does not hide the code\n", 1),
        ("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport os\n", 1),
        ("a = 1\r\n\r\nb = 2\r\n", 2),  # CRLF
        ("total = 1 + \\\n    2\n", 2),  # backslash continuation: both lines hold code
        ("items = [\n    1,\n    # two is missing\n    3,\n]\n", 4),
    ],
)
def test_count_loc_simple_snippets(source: str, expected: int) -> None:
    assert count_loc(source) == expected


def test_count_loc_counts_docstring_lines_but_not_blank_ones() -> None:
    source = (
        "def f():\n"  # 1 counts
        '    """Doc line one.\n'  # 2 counts (docstring)
        "\n"  # 3 blank, even inside the docstring
        "    # not a comment: this is docstring text\n"  # 4 counts
        '    """\n'  # 5 counts
        "    # a real comment\n"  # 6 does not count
        "    return 1\n"  # 7 counts
    )
    assert count_loc(source) == 5


def test_count_loc_module_mixing_everything() -> None:
    source = '''"""Module docstring."""
# licence header
import os  # why os


def main() -> int:
    # explain
    value = (
        1
        + 2
    )

    return value
'''
    # Counted: docstring, import, def, "value = (", "1", "+ 2", ")", return = 8.
    assert count_loc(source) == 8


def test_count_loc_survives_code_that_does_not_tokenize() -> None:
    # An unterminated triple-quoted string cannot be tokenized; the line rule takes
    # over: "x = '''" counts, "# inside" is taken for a comment, "y = 1" counts.
    source = "x = '''\n# inside\ny = 1\n"
    assert count_loc(source) == 2
    # Broken syntax that still tokenizes is counted by the token rule as usual.
    assert count_loc("def f(:\n    # c\n    pass\n") == 2
