"""Write the bundled replays of `projectgen construct` (`--model scripted:examples`).

    .venv/bin/python scripts/make_construct_replays.py

`construct-exercises.examples.json` answers every role of `construct exercises --seeds examples`: the designer
per seed, two test suites and two solutions per seed (the first solution misses an edge case the second suite
tests; the second is right), and the difficulty judge's two tries in `reflect`'s whole-file format. It plants
what the pipeline must catch: `doc_search` designs a near-copy of the bundled `word_index` exercise
(decontamination), `greeting` an exercise the judge solves at once (too easy), `checksum` one whose suites no
solution passes (human review). `construct-check-tests.examples.json` writes check tests for the bundled
`tempconv` task. Written for projectgen; recordings, not models.
"""
from __future__ import annotations

import json
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "projectgen" / "datasets" / "examples" / "scripts"
INIT = "from .{module} import {names}\n\n__all__ = [{quoted}]\n"


def init(module: str, *names: str) -> str:
    return INIT.format(module=module, names=", ".join(names), quoted=", ".join(f'"{n}"' for n in names))


def whole(files: dict[str, str]) -> str:
    return "Here are the files.\n\n" + "\n".join(f"{path}\n```python\n{text}```\n" for path, text in files.items())


# --------------------------------------------------------------------------- rle_codec (kept)
RLE_DOC = """# Instructions

Build a run-length codec for text.

- `codec.py`: `encode(text)` replaces every run of two or more equal characters by the run's length and
  the character (`"aaab"` -> `"3ab"`); a single character stays as it is. `decode(data)` reverses it: a
  number (any count of digits) repeats the character after it. The empty string encodes and decodes to
  itself. Text to encode holds no digits: `encode` raises `ValueError` on one.
- `__init__.py` makes `encode` and `decode` importable from the package.
"""
RLE_RIGHT = '''"""Run-length encoding of text without digits."""
import re


def encode(text):
    if any(ch.isdigit() for ch in text):
        raise ValueError("text to encode holds a digit")
    out = []
    for match in re.finditer(r"(.)\\1*", text, re.S):
        run = match.group(0)
        out.append(f"{len(run)}{run[0]}" if len(run) > 1 else run[0])
    return "".join(out)


def decode(data):
    return "".join(ch * int(count or 1) for count, ch in re.findall(r"(\\d*)(\\D)", data, re.S))
'''
RLE_BUGGY = '''"""Run-length encoding of text without digits."""
import re


def encode(text):
    out = []
    for match in re.finditer(r"(.)\\1*", text, re.S):
        run = match.group(0)
        out.append(f"{len(run)}{run[0]}" if len(run) > 1 else run[0])
    return "".join(out)


def decode(data):
    return "".join(ch * int(count or 1) for count, ch in re.findall(r"(\\d?)(\\D)", data, re.S))
'''
RLE_T1 = '''import unittest

from rle_codec import decode, encode


class CodecTest(unittest.TestCase):
    def test_runs_are_counted(self):
        self.assertEqual(encode("aaab"), "3ab")

    def test_single_characters_stay(self):
        self.assertEqual(encode("abc"), "abc")

    def test_decode_reverses(self):
        self.assertEqual(decode("3ab2c"), "aaabcc")

    def test_empty(self):
        self.assertEqual(encode(""), "")
        self.assertEqual(decode(""), "")
'''
RLE_T2 = RLE_T1 + '''
    def test_long_runs_have_several_digits(self):
        self.assertEqual(decode("12x"), "x" * 12)
        self.assertEqual(decode(encode("y" * 15 + "z")), "y" * 15 + "z")

    def test_digits_cannot_be_encoded(self):
        with self.assertRaises(ValueError):
            encode("a1")

    def test_spaces_are_characters(self):
        self.assertEqual(encode("a   b"), "a3 b")
'''
RLE = {"seed": "run_length", "project": "rle_codec", "topic": "run-length encoding", "doc": RLE_DOC,
       "module": "codec", "names": ("decode", "encode"), "right": RLE_RIGHT, "buggy": RLE_BUGGY,
       "t1": RLE_T1, "t2": RLE_T2, "test_name": "rle_codec_test.py"}

# --------------------------------------------------------------------------- stock_ledger (kept)
STOCK_DOC = """# Instructions

Keep the stock of a small shop.

- `stock.py`: class `Stock`. `receive(item, count)` adds `count` units of `item`; `sell(item, count)` takes
  them away, and raises `OutOfStockError` (a `ValueError`, defined in `stock.py`) when fewer are in stock,
  changing nothing; `quantity(item)` is the units in stock (0 for an unknown item); `items()` lists the
  items with at least one unit, sorted. A count must be a positive integer: anything else raises
  `ValueError`.
- `__init__.py` makes `Stock` and `OutOfStockError` importable from the package.
"""
STOCK_RIGHT = '''"""A shop's stock."""


class OutOfStockError(ValueError):
    """Fewer units in stock than asked for."""


def _checked(count):
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        raise ValueError(f"a count must be a positive integer, not {count!r}")
    return count


class Stock:
    def __init__(self):
        self._units = {}

    def receive(self, item, count):
        self._units[item] = self._units.get(item, 0) + _checked(count)

    def sell(self, item, count):
        count = _checked(count)
        if self._units.get(item, 0) < count:
            raise OutOfStockError(f"only {self.quantity(item)} of {item} in stock")
        self._units[item] -= count

    def quantity(self, item):
        return self._units.get(item, 0)

    def items(self):
        return sorted(item for item, units in self._units.items() if units > 0)
'''
STOCK_BUGGY = STOCK_RIGHT.replace('''    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:''',
                                  '''    if count <= 0:''').replace(
    "return sorted(item for item, units in self._units.items() if units > 0)", "return sorted(self._units)")
STOCK_T1 = '''import unittest

from stock_ledger import OutOfStockError, Stock


class StockTest(unittest.TestCase):
    def setUp(self):
        self.stock = Stock()
        self.stock.receive("pen", 5)

    def test_receive_and_sell(self):
        self.stock.sell("pen", 2)
        self.assertEqual(self.stock.quantity("pen"), 3)

    def test_unknown_item_has_none(self):
        self.assertEqual(self.stock.quantity("ink"), 0)

    def test_selling_too_many_changes_nothing(self):
        with self.assertRaises(OutOfStockError):
            self.stock.sell("pen", 6)
        self.assertEqual(self.stock.quantity("pen"), 5)
'''
STOCK_T2 = STOCK_T1 + '''
    def test_sold_out_items_are_not_listed(self):
        self.stock.receive("ink", 1)
        self.stock.sell("pen", 5)
        self.assertEqual(self.stock.items(), ["ink"])

    def test_counts_must_be_positive_integers(self):
        for bad in (0, -1, 1.5, "2", True):
            with self.assertRaises(ValueError):
                self.stock.receive("pen", bad)

    def test_out_of_stock_is_a_value_error(self):
        self.assertTrue(issubclass(OutOfStockError, ValueError))
'''
STOCK = {"seed": "inventory", "project": "stock_ledger", "topic": "shop stock", "doc": STOCK_DOC,
         "module": "stock", "names": ("OutOfStockError", "Stock"), "right": STOCK_RIGHT, "buggy": STOCK_BUGGY,
         "t1": STOCK_T1, "t2": STOCK_T2, "test_name": "stock_ledger_test.py"}

# --------------------------------------------------------------------------- room_gaps (kept)
GAPS_DOC = """# Instructions

Find the free time of a meeting room.

- `slots.py`: times are minutes since midnight. `merge(bookings)` takes `(start, end)` pairs (`start < end`)
  in any order and returns them sorted, with overlapping or touching bookings joined into one.
  `free(bookings, day_start, day_end)` returns the sorted `(start, end)` gaps between `day_start` and
  `day_end` that no booking covers; bookings may reach outside the day. A booking with `start >= end` raises
  `ValueError`.
- `__init__.py` makes `merge` and `free` importable from the package.
"""
GAPS_RIGHT = '''"""Bookings of a room: merged, and the gaps between them."""


def merge(bookings):
    merged = []
    for start, end in sorted(bookings):
        if start >= end:
            raise ValueError(f"a booking must end after it starts: {(start, end)}")
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def free(bookings, day_start, day_end):
    gaps, at = [], day_start
    for start, end in merge(bookings):
        if start > at:
            gaps.append((at, min(start, day_end)))
        at = max(at, end)
        if at >= day_end:
            break
    if at < day_end:
        gaps.append((at, day_end))
    return [(a, b) for a, b in gaps if a < b]
'''
GAPS_BUGGY = GAPS_RIGHT.replace("if merged and start <= merged[-1][1]:", "if merged and start < merged[-1][1]:")
GAPS_T1 = '''import unittest

from room_gaps import free, merge


class SlotsTest(unittest.TestCase):
    def test_overlapping_bookings_merge(self):
        self.assertEqual(merge([(60, 120), (0, 30), (100, 150)]), [(0, 30), (60, 150)])

    def test_gaps_of_a_day(self):
        self.assertEqual(free([(540, 600), (660, 720)], 480, 1020), [(480, 540), (600, 660), (720, 1020)])

    def test_an_empty_day_is_free(self):
        self.assertEqual(free([], 480, 1020), [(480, 1020)])
'''
GAPS_T2 = GAPS_T1 + '''
    def test_touching_bookings_merge(self):
        self.assertEqual(merge([(0, 30), (30, 60)]), [(0, 60)])

    def test_bookings_outside_the_day(self):
        self.assertEqual(free([(400, 500), (1000, 1100)], 480, 1020), [(500, 1000)])

    def test_a_backwards_booking_is_refused(self):
        with self.assertRaises(ValueError):
            merge([(50, 40)])
'''
GAPS = {"seed": "intervals", "project": "room_gaps", "topic": "meeting-room gaps", "doc": GAPS_DOC,
        "module": "slots", "names": ("free", "merge"), "right": GAPS_RIGHT, "buggy": GAPS_BUGGY,
        "t1": GAPS_T1, "t2": GAPS_T2, "test_name": "room_gaps_test.py"}

# --------------------------------------------------------------------------- greeter (too easy)
GREET_DOC = """# Instructions

Greet people.

- `greeter.py`: `greet(name)` returns `"Hello, NAME!"` with the name stripped of surrounding white space;
  an empty name greets `"Hello, World!"`.
- `__init__.py` makes `greet` importable from the package.
"""
GREET_RIGHT = '''"""Greetings."""


def greet(name):
    return f"Hello, {name.strip() or 'World'}!"
'''
GREET_BUGGY = '''"""Greetings."""


def greet(name):
    return f"Hello, {name.strip()}!"
'''
GREET_T1 = '''import unittest

from greeter import greet


class GreetTest(unittest.TestCase):
    def test_a_name(self):
        self.assertEqual(greet("Ada"), "Hello, Ada!")

    def test_spaces_are_stripped(self):
        self.assertEqual(greet("  Ada "), "Hello, Ada!")
'''
GREET_T2 = GREET_T1 + '''
    def test_nobody(self):
        self.assertEqual(greet(""), "Hello, World!")
'''
GREET = {"seed": "greeting", "project": "greeter", "topic": "greetings", "doc": GREET_DOC,
         "module": "greeter", "names": ("greet",), "right": GREET_RIGHT, "buggy": GREET_BUGGY,
         "t1": GREET_T1, "t2": GREET_T2, "test_name": "greeter_test.py", "easy": True}

# --------------------------------------------------------------------------- account_check (human review)
CHECK_DOC = """# Instructions

Check account numbers.

- `digits.py`: `check_digit(number)` returns the check digit of a string of digits: from the right, digits
  are weighted 2, 1, 2, 1, ...; the check digit is `(10 - sum % 10) % 10`. `is_valid(number)` says whether
  the last digit is the check digit of the ones before it.
- `__init__.py` makes `check_digit` and `is_valid` importable from the package.
"""
CHECK_RIGHT = '''"""Check digits of account numbers."""


def check_digit(number):
    total = sum((2 if i % 2 == 0 else 1) * int(d) for i, d in enumerate(reversed(number)))
    return (10 - total % 10) % 10


def is_valid(number):
    return len(number) > 1 and check_digit(number[:-1]) == int(number[-1])
'''
CHECK_WRONG_TEST = '''import unittest

from account_check import check_digit, is_valid


class DigitsTest(unittest.TestCase):
    def test_check_digit(self):
        self.assertEqual(check_digit("1234"), 7)

    def test_valid(self):
        self.assertTrue(is_valid("12347"))
'''
CHECK = {"seed": "checksum", "project": "account_check", "topic": "check digits", "doc": CHECK_DOC,
         "module": "digits", "names": ("check_digit", "is_valid"), "right": CHECK_RIGHT, "buggy": CHECK_RIGHT,
         "t1": CHECK_WRONG_TEST, "t2": CHECK_WRONG_TEST, "test_name": "account_check_test.py", "no_judge": True}

# --------------------------------------------------------------------------- a near-copy of word_index
NEAR_COPY_DOC = """# Instructions

Build a small full-text index over a few documents.

- `words.py`: `words(text)` lists the words of a text in order, lower-cased. A word is a run of
  letters and digits, and may hold apostrophes between them (`"don't"` is one word); everything
  else separates words.
- `index.py`: `build_index(documents)` takes a mapping from document id to text and returns a
  mapping from each word to the sorted list of the ids of the documents that hold it.
  `search(index, query)` returns the sorted ids of the documents holding *every* word of the
  query (its words as `words` reads them); a query without words finds nothing.

`__init__.py` makes `words`, `build_index` and `search` importable from the package.
"""


def designer(exercise: dict) -> dict:
    return {"role": "exercise_designer", "target": f"{exercise['seed']}/1",
            "content": {"topic": exercise["topic"], "project": exercise["project"], "language": "python",
                        "instructions": exercise["doc"],
                        "solution_files": ["__init__.py", f"{exercise['module']}.py"],
                        "stubs": {"__init__.py": init(exercise["module"], *exercise["names"])}}}


def entries(exercise: dict) -> list[dict]:
    seed, module = exercise["seed"], f"{exercise['module']}.py"
    package = init(exercise["module"], *exercise["names"])
    found = [designer(exercise)]
    for number, key in ((1, "t1"), (2, "t2")):
        found.append({"role": "exercise_test_writer", "target": f"{seed}/{number}",
                      "content": {"files": {exercise["test_name"]: exercise[key]}}})
    for number, key in ((1, "buggy"), (2, "right")):
        found.append({"role": "exercise_solution_writer", "target": f"{seed}/{number}",
                      "content": {"files": {"__init__.py": package, module: exercise[key]}}})
    if exercise.get("no_judge"):
        return found
    first = exercise["right"] if exercise.get("easy") else exercise["buggy"]
    found.append({"role": "reflection", "stage": "reflection_whole", "target": exercise["project"],
                  "iteration": 1, "content": whole({"__init__.py": package, module: first})})
    found.append({"role": "reflection", "stage": "reflection_whole", "target": exercise["project"],
                  "iteration": 2, "content": whole({module: exercise["right"]})})
    return found


def exercises_script() -> dict:
    responses = [entry for exercise in (RLE, STOCK, GAPS, GREET, CHECK) for entry in entries(exercise)]
    responses.append({"role": "exercise_designer", "target": "doc_search/1",
                      "content": {"topic": "a word index", "project": "note_index", "language": "python",
                                  "instructions": NEAR_COPY_DOC,
                                  "solution_files": ["__init__.py", "words.py", "index.py"]}})
    return {"label": "bundled construct-exercises replay (scripted, not a model)", "responses": responses}


CHECK_TESTS = '''import pytest

from tempconv import parse_reading, to_celsius, to_fahrenheit


def test_freezing_and_boiling_points():
    assert to_fahrenheit(0) == 32
    assert to_fahrenheit(100) == 212
    assert to_celsius(212) == 100


def test_round_trip():
    assert to_celsius(to_fahrenheit(37.5)) == pytest.approx(37.5)


def test_readings_name_their_scale():
    assert parse_reading("21.5C") == (21.5, "C")
    assert parse_reading(" -4 f ") == (-4.0, "F")


def test_a_reading_without_a_scale_is_refused():
    with pytest.raises(ValueError):
        parse_reading("21.5")
'''


def check_tests_script() -> dict:
    return {"label": "bundled construct-check-tests replay (scripted, not a model)",
            "responses": [{"role": "check_test_writer", "target": "tempconv", "iteration": 1,
                           "content": {"files": {"check_tests/test_tempconv_check.py": CHECK_TESTS}}}]}


def main() -> None:
    for name, script in (("construct-exercises.examples", exercises_script()),
                         ("construct-check-tests.examples", check_tests_script())):
        (SCRIPTS / f"{name}.json").write_text(json.dumps(script, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {SCRIPTS / name}.json ({len(script['responses'])} responses)")


if __name__ == "__main__":
    main()
