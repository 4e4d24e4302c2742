"""The scripted replay of the bundled exercises (projectgen/datasets/examples/scripts/exercises.reflect.json).

Written from the exercises' own reference code, in both edit formats (the entries are keyed by the
stage ``reflection_whole`` / ``reflection_patch``, the target the exercise and the iteration the try):

- ``unit_convert`` passes at try 1: the reference;
- ``ledger_book`` fails at try 1 (amounts parsed through a float: 0.29 becomes 28 cents) and is
  repaired at try 2 (only entries.py changes);
- ``word_index`` gets an ill-formed reply at try 1 (whole: the words.py block is cut off; patch:
  its ORIGINAL lines are not in the file), so its stub stays; try 2 is well formed, writes words.py
  and makes search match any word instead of every word, and a test still fails.

So in both formats: Pass@1 33.3, Pass@2 66.7, FW 50.0, WF 66.7 over the three Python exercises. The
exercises in the other languages (``POLYGLOT``: Go, Rust, C++, JavaScript, Java) get their reference at
try 1. Run this file to rewrite the script
after changing an exercise; tests/cli/test_reflect.py checks that the bundled script is this one.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from projectgen.datasets.examples import example_exercises_dir, example_script_path
from projectgen.datasets.exercism import load_exercise
from projectgen.repository.edits import make_search_replace_reply, make_whole_file_reply

FLOAT_CENTS = ('    cents = int(units) * 100 + int((decimals or "0").ljust(2, "0"))\n',
               '    cents = int(float(f"{units}.{decimals or 0}") * 100)\n')
ANY_WORD = ("        found &= set(index.get(word, []))\n", "        found |= set(index.get(word, []))\n")
HELLO = "Here are the changes.\n\n"
SCRIPT_NAME = "exercises.reflect"
PYTHON_EXERCISES = ("unit_convert", "ledger_book", "word_index")
POLYGLOT = ("bracket_depth", "digit_sum", "clamp_range", "word_caps", "stack_calc")


def edited(text: str, change: tuple[str, str]) -> str:
    old, new = change
    assert text.count(old) == 1, old
    return text.replace(old, new)


def reply(fmt: str, before: dict[str, str], after: dict[str, str]) -> str:
    """The reply turning `before` into `after` in an edit format: whole files of what changed, or patch blocks."""
    if fmt == "whole":
        return HELLO + make_whole_file_reply(sorted(p for p in after if before.get(p) != after[p]), after)
    return HELLO + make_search_replace_reply(before, after, markers="original_updated")


def replies(name: str, fmt: str) -> list[str]:
    """The replies to the exercise's tries, in order."""
    exercise = load_exercise(example_exercises_dir() / name)
    stubs, reference = exercise.stubs(), exercise.reference()
    if name == "unit_convert" or name in POLYGLOT:
        return [reply(fmt, stubs, reference)]
    if name == "ledger_book":
        buggy = {**reference, "entries.py": edited(reference["entries.py"], FLOAT_CENTS)}
        return [reply(fmt, stubs, buggy), reply(fmt, buggy, reference)]
    assert name == "word_index"
    first = {**stubs, "index.py": reference["index.py"]}  # what try 1 manages to apply
    if fmt == "whole":
        cut = f"words.py\n```python\n{reference['words.py'][:60]}"  # the reply ends inside the block
        ill_formed = HELLO + make_whole_file_reply(["index.py"], reference) + "\n" + cut
    else:
        wrong = {"words.py": "def words(text: str) -> list[str]:\n    ...\n"}  # not what the stub says
        ill_formed = reply(fmt, stubs, first) + "\n" + make_search_replace_reply(
            wrong, {"words.py": reference["words.py"]}, markers="original_updated")
    second = {**reference, "index.py": edited(reference["index.py"], ANY_WORD)}
    return [ill_formed, reply(fmt, first, second)]


def script() -> dict[str, Any]:
    responses = [{"role": "reflection", "stage": f"reflection_{fmt}", "target": name, "iteration": attempt,
                  "content": text}
                 for fmt in ("whole", "patch") for name in (*PYTHON_EXERCISES, *POLYGLOT)
                 for attempt, text in enumerate(replies(name, fmt), start=1)]
    return {"label": "bundled exercises replay (scripted, not a model)", "responses": responses}


def script_text() -> str:
    return json.dumps(script(), indent=1) + "\n"


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else example_script_path(SCRIPT_NAME)
    target.write_text(script_text(), encoding="utf-8")
    print(f"wrote {target}")
