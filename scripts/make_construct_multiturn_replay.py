"""Write the bundled replay of `projectgen construct multiturn` (`--model scripted:examples`).

    .venv/bin/python scripts/make_construct_multiturn_replay.py

`construct-multiturn.json` answers every role for the bundled seeds (`datasets/examples/seeds/multiturn/`), keyed
by role, target (`SEED` or `SEED/turnK`) and iteration. It plants what Algorithm 1 must catch: a vague decomposition
the Evaluator refines (`rle`), a Coder draft whose tests fail on its own code (`grading` turn 1), tests that do not
tell turn 2 from turn 1 (`rle` turn 2), tests of what the requirement does not ask (`inventory` turn 3, TEST_REFINE).
Written for projectgen; a recording, not a model.
"""
from __future__ import annotations

import json
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "projectgen" / "datasets" / "examples"
OUT = EXAMPLES / "scripts" / "construct-multiturn.json"


def reference(seed: str) -> str:
    """A bundled seed's reference implementation."""
    return (EXAMPLES / "seeds" / "multiturn" / seed / "reference.py").read_text(encoding="utf-8")

def files(code_path, code, test_path, tests):
    return f"{code_path}\n```python\n{code}```\n\n{test_path}\n```python\n{tests}```\n"

R = []
def add(role, content, target=None, iteration=None):
    e = {"role": role}
    if target: e["target"] = target
    if iteration: e["iteration"] = iteration
    e["content"] = content
    R.append(e)

retain_all = {"requirements": [{"requirement": i, "testability": 5, "completeness": 5, "distinctiveness": 5,
                                "authenticity": 5, "decision": "retain", "feedback": ""} for i in range(5)]}
add("requirement_evaluator", retain_all)
add("analyzer", {"edges": [[0, 1], [1, 2]]})
add("alignment_evaluator", {"decision": "RETAIN", "feedback": ""})
add("contamination_probe", "```python\ndef unknown(*args):\n    raise NotImplementedError\n```\n")

# ---------------------------------------------------------------- rle
rle_core = ("Write a Python module `rle.py` with a function `encode(text: str) -> str` that run-length encodes a "
            "text: each maximal run of one character becomes the character followed by the length of the run, so "
            "`encode(\"aaab\")` is `\"a3b1\"` and `encode(\"\")` is `\"\"`. Spaces and punctuation are characters "
            "like any other (`encode(\"a  b\")` is `\"a1 2b1\"`).")
add("decomposer", {"core": rle_core, "evolving": [
    "A run of length 1 is now written as the character alone.",
    "Make the encoding nicer."]}, "rle", 1)
add("requirement_evaluator", {"requirements": [
    {"requirement": 0, "testability": 5, "completeness": 5, "distinctiveness": 5, "authenticity": 5,
     "decision": "retain"},
    {"requirement": 1, "testability": 4, "completeness": 3, "distinctiveness": 5, "authenticity": 5,
     "decision": "refine",
     "feedback": "give an example, e.g. encode(\"aaab\") is \"a3b\""},
    {"requirement": 2, "testability": 1, "completeness": 1, "distinctiveness": 2, "authenticity": 2,
     "decision": "refine",
     "feedback": "'nicer' cannot be tested; the complete requirement asks for digits to be refused with ValueError"}]},
    "rle", 1)
add("decomposer", {"core": rle_core, "evolving": [
    "A run of length 1 is now written as the character alone: `encode(\"aaab\")` is `\"a3b\"` and `encode(\"abc\")` "
    "is `\"abc\"`.",
    "A text holding a digit cannot be encoded unambiguously: `encode` raises `ValueError` for it."]}, "rle", 2)
add("requirement_evaluator", retain_all, "rle", 2)
add("analyzer", {"edges": [[0, 1], [0, 2]]}, "rle")

rle1 = '''"""Run-length encoding."""


def encode(text: str) -> str:
    """Each run of one character as the character and the run's length."""
    parts = []
    index = 0
    while index < len(text):
        char = text[index]
        end = index
        while end < len(text) and text[end] == char:
            end += 1
        parts.append(f"{char}{end - index}")
        index = end
    return "".join(parts)
'''
rle1_tests = '''from rle import encode


def test_runs_with_their_lengths():
    assert encode("aaab") == "a3b1"
    assert encode("aabbbcccc") == "a2b3c4"


def test_empty_text():
    assert encode("") == ""


def test_spaces_are_characters():
    assert encode("a  b") == "a1 2b1"
'''
add("turn_coder", files("rle.py", rle1, "test_rle_turn1.py", rle1_tests), "rle/turn1")
rle2 = rle1.replace('"""Each run of one character as the character and the run\'s length."""',
                    '"""Each run of one character as the character and the run\'s length (a run of 1: the '
                    'character alone)."""'
                    ).replace('        parts.append(f"{char}{end - index}")\n',
                              '        count = end - index\n'
                              '        parts.append(char if count == 1 else f"{char}{count}")\n')
rle2_weak = '''from rle import encode


def test_runs():
    assert encode("aaa") == "a3"
    assert encode("") == ""
'''
rle2_tests = '''from rle import encode


def test_single_characters_alone():
    assert encode("abc") == "abc"
    assert encode("aaab") == "a3b"


def test_longer_runs_keep_their_length():
    assert encode("aabbbcccc") == "a2b3c4"
    assert encode("a  b") == "a 2b"
'''
add("turn_coder", files("rle.py", rle2, "test_rle_turn2.py", rle2_weak), "rle/turn2", 1)
add("turn_coder", files("rle.py", rle2, "test_rle_turn2.py", rle2_tests), "rle/turn2", 2)
rle3 = rle2.replace('    parts = []\n', '    if any(char.isdigit() for char in text):\n'
                    '        raise ValueError("a text holding digits cannot be run-length encoded")\n    parts = []\n')
rle3_tests = '''import pytest

from rle import encode


def test_digits_refused():
    with pytest.raises(ValueError):
        encode("a1")
    with pytest.raises(ValueError):
        encode("2024")


def test_text_without_digits_still_encoded():
    assert encode("aab") == "a2b"
'''
add("turn_coder", files("rle.py", rle3, "test_rle_turn3.py", rle3_tests), "rle/turn3")

# ---------------------------------------------------------------- grading
add("decomposer", {"core": "Write a Python module `grading.py` with a function `letter_grade(score: float) -> str`: a "
    "score of 90 or more is \"A\", 80 or more \"B\", 70 or more \"C\", 60 or more \"D\", anything lower \"F\".",
    "evolving": [
    "A score below 0 or above 100 is not a score: `letter_grade` raises `ValueError` for it.",
    "Within the A to D bands, a score 7 or more points above the band's floor gets a \"+\" (87 is \"B+\", 100 is "
    "\"A+\") and one less than 3 points above it a \"-\" (81 is \"B-\"); an \"F\" never gets a sign."]}, "grading")
g1_bad = '''"""Letter grades."""

_BANDS = ((90, "A"), (80, "B"), (70, "C"), (60, "D"))


def letter_grade(score: float) -> str:
    """The letter of `score`."""
    for floor, letter in _BANDS:
        if score > floor:
            return letter
    return "F"
'''
g1 = g1_bad.replace("score > floor", "score >= floor")
g1_tests = '''from grading import letter_grade


def test_letters():
    assert letter_grade(95) == "A"
    assert letter_grade(85) == "B"
    assert letter_grade(75) == "C"
    assert letter_grade(65) == "D"
    assert letter_grade(12) == "F"


def test_band_floors():
    assert letter_grade(90) == "A"
    assert letter_grade(60) == "D"
    assert letter_grade(59.5) == "F"
'''
add("turn_coder", files("grading.py", g1_bad, "test_grading_turn1.py", g1_tests), "grading/turn1", 1)
add("turn_coder", files("grading.py", g1, "test_grading_turn1.py", g1_tests), "grading/turn1", 2)
g2 = g1.replace('    """The letter of `score`."""\n', '    """The letter of `score` (0 to 100)."""\n'
                '    if not 0 <= score <= 100:\n'
                '        raise ValueError(f"a score is between 0 and 100, got {score}")\n')
g2_tests = '''import pytest

from grading import letter_grade


def test_out_of_range():
    with pytest.raises(ValueError):
        letter_grade(-1)
    with pytest.raises(ValueError):
        letter_grade(100.5)


def test_range_ends_are_scores():
    assert letter_grade(0) == "F"
    assert letter_grade(100) == "A"
'''
add("turn_coder", files("grading.py", g2, "test_grading_turn2.py", g2_tests), "grading/turn2")
g3 = reference("grading")  # the last turn is the seed's reference
g3_tests = '''from grading import letter_grade


def test_signs():
    assert letter_grade(87) == "B+"
    assert letter_grade(81) == "B-"
    assert letter_grade(100) == "A+"


def test_middle_of_a_band_has_no_sign():
    assert letter_grade(85) == "B"
    assert letter_grade(74) == "C"


def test_f_has_no_sign():
    assert letter_grade(59) == "F"
    assert letter_grade(0) == "F"
'''
add("turn_coder", files("grading.py", g3, "test_grading_turn3.py", g3_tests), "grading/turn3")

# ---------------------------------------------------------------- inventory
add("decomposer", {"core": "Write a Python module `inventory.py` with a function `apply_orders(stock: dict[str, int], "
    "orders: list[tuple[str, int]]) -> dict[str, int]` that returns the stock left after the orders (item, "
    "quantity), taken in order. The given `stock` is never changed, and an order for an item not in the stock "
    "raises `KeyError`.", "evolving": [
    "An order for more than is left of its item, or for fewer than 1, raises `ValueError`, and then no order "
    "applies.",
    "Items whose count reaches zero are left out of the result."]}, "inventory")
i1 = '''"""Orders taken from a stock."""
from __future__ import annotations


def apply_orders(stock: dict[str, int], orders: list[tuple[str, int]]) -> dict[str, int]:
    """The stock left after `orders`; `stock` itself is not changed."""
    left = dict(stock)
    for item, quantity in orders:
        if item not in left:
            raise KeyError(item)
        left[item] -= quantity
    return left
'''
i1_tests = '''import pytest

from inventory import apply_orders


def test_orders_taken_in_order():
    assert apply_orders({"apple": 5, "pear": 2}, [("apple", 2), ("apple", 1)]) == {"apple": 2, "pear": 2}


def test_stock_unchanged():
    stock = {"apple": 5}
    apply_orders(stock, [("apple", 2)])
    assert stock == {"apple": 5}


def test_unknown_item():
    with pytest.raises(KeyError):
        apply_orders({"apple": 5}, [("plum", 1)])
'''
add("turn_coder", files("inventory.py", i1, "test_inventory_turn1.py", i1_tests), "inventory/turn1")
i2 = i1.replace('"""The stock left after `orders`; `stock` itself is not changed."""',
                '"""The stock left after `orders`, all or nothing; `stock` itself is not changed."""').replace(
    '            raise KeyError(item)\n',
    '            raise KeyError(item)\n        if quantity < 1:\n'
    '            raise ValueError(f"an order is for at least 1 {item}, got {quantity}")\n'
    '        if quantity > left[item]:\n'
    '            raise ValueError(f"not enough {item}: {left[item]} left, {quantity} ordered")\n')
i2_tests = '''import pytest

from inventory import apply_orders


def test_not_enough():
    with pytest.raises(ValueError):
        apply_orders({"apple": 1}, [("apple", 2)])


def test_nothing_applies_after_a_refused_order():
    stock = {"apple": 3, "pear": 1}
    with pytest.raises(ValueError):
        apply_orders(stock, [("apple", 2), ("pear", 2)])
    assert stock == {"apple": 3, "pear": 1}


def test_exact_stock_can_be_ordered():
    assert apply_orders({"apple": 2}, [("apple", 2)]) == {"apple": 0}


def test_fewer_than_one():
    with pytest.raises(ValueError):
        apply_orders({"apple": 2}, [("apple", 0)])
    with pytest.raises(ValueError):
        apply_orders({"apple": 2}, [("apple", -1)])
'''
add("turn_coder", files("inventory.py", i2, "test_inventory_turn2.py", i2_tests), "inventory/turn2")
i3_sorted = i2.replace("    return left\n",
                       "    return {item: left[item] for item in sorted(left) if left[item] > 0}\n")
i3 = i2.replace("    return left\n", "    return {item: count for item, count in left.items() if count > 0}\n")
i3_misaligned = '''from inventory import apply_orders


def test_sold_out_items_left_out():
    assert apply_orders({"apple": 2, "pear": 1}, [("pear", 1)]) == {"apple": 2}


def test_items_sorted_by_name():
    assert list(apply_orders({"pear": 1, "apple": 2}, [("pear", 1), ("apple", 1)])) == ["apple"]
    assert list(apply_orders({"pear": 1, "apple": 2}, [])) == ["apple", "pear"]
'''
i3_tests = '''from inventory import apply_orders


def test_sold_out_items_left_out():
    assert apply_orders({"apple": 2, "pear": 1}, [("pear", 1)]) == {"apple": 2}
    assert apply_orders({"apple": 2}, [("apple", 2)]) == {}


def test_items_in_stock_kept():
    assert apply_orders({"apple": 2, "pear": 1}, [("apple", 1)]) == {"apple": 1, "pear": 1}
'''
add("turn_coder", files("inventory.py", i3_sorted, "test_inventory_turn3.py", i3_misaligned), "inventory/turn3", 1)
add("turn_coder", files("inventory.py", i3, "test_inventory_turn3.py", i3_tests), "inventory/turn3", 2)
add("alignment_evaluator", {"decision": "TEST_REFINE", "feedback": "The requirement does not ask for the items in "
    "sorted order: test only that sold-out items are left out, and keep the items' order as it was."},
    "inventory/turn3", 1)
add("alignment_evaluator", {"decision": "RETAIN", "feedback": ""}, "inventory/turn3", 2)

# ---------------------------------------------------------------- wrap (repository level)
# SR-Eval's seed preparation: the target function's signature and docstring as an instruction, the Decomposer's start
add("instruction_converter", "In the module `textkit/wrap.py` of the `textkit` package, write a function "
    "`wrap_words(text: str, width: int) -> list[str]` that returns the words of `text` packed greedily into lines of "
    "at most `width` characters; a word longer than `width` is cut into pieces of `width` characters. A `width` below "
    "1 raises `ValueError`.", "wrap")
add("decomposer", {"core": "Add a module `textkit/wrap.py` to the `textkit` package with a function `wrap_words(text: "
    "str, width: int) -> list[str]` that packs the whitespace-separated words of `text` greedily into lines of at most "
    "`width` characters, the words of a line joined with single spaces: `wrap_words(\"the quick brown fox\", 10)` is "
    "`[\"the quick\", \"brown fox\"]`, and a text without words gives `[]`. A word longer than `width` stands on a "
    "line "
    "of its own.", "evolving": [
    "A word longer than `width` is now cut into pieces of `width` characters (the last one shorter), each placed like "
    "a word: `wrap_words(\"a verylongword b\", 5)` is `[\"a\", \"veryl\", \"ongwo\", \"rd b\"]`.",
    "A `width` below 1 raises `ValueError`."]}, "wrap")
w1 = '''"""Words wrapped into lines."""
from __future__ import annotations


def _pieces(word: str, width: int) -> list[str]:
    """`word` cut into pieces of `width` characters, the last one shorter."""
    return [word[start:start + width] for start in range(0, len(word), width)]


def wrap_words(text: str, width: int) -> list[str]:
    """The words of `text` packed greedily into lines of at most `width` characters."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            if line:
                lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines
'''
w1_tests = '''from textkit.wrap import wrap_words


def test_words_packed_greedily():
    assert wrap_words("the quick brown fox", 10) == ["the quick", "brown fox"]
    assert wrap_words("a  b", 5) == ["a b"]


def test_no_words():
    assert wrap_words("  ", 4) == []


def test_a_long_word_stands_alone():
    assert wrap_words("a verylongword b", 5) == ["a", "verylongword", "b"]
'''
add("turn_coder", files("textkit/wrap.py", w1, "test_wrap_turn1.py", w1_tests), "wrap/turn1")
w2 = w1.replace('"""The words of `text` packed greedily into lines of at most `width` characters."""',
                '"""The words of `text` packed greedily into lines of at most `width` characters; a longer '
                'word is cut."""'
                ).replace('''    for word in text.split():
        if line and len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            if line:
                lines.append(line)
            line = word
''', '''    for word in text.split():
        for piece in _pieces(word, width):
            if line and len(line) + 1 + len(piece) <= width:
                line += " " + piece
            else:
                if line:
                    lines.append(line)
                line = piece
''')
w2_tests = '''from textkit.wrap import wrap_words


def test_long_words_cut():
    assert wrap_words("a verylongword b", 5) == ["a", "veryl", "ongwo", "rd b"]
    assert wrap_words("abcdefgh", 3) == ["abc", "def", "gh"]


def test_short_words_still_packed():
    assert wrap_words("the quick brown fox", 10) == ["the quick", "brown fox"]
'''
add("turn_coder", files("textkit/wrap.py", w2, "test_wrap_turn2.py", w2_tests), "wrap/turn2")
w3 = w2.replace('    lines: list[str] = []\n', '    if width < 1:\n'
                '        raise ValueError(f"width must be at least 1, got {width}")\n    lines: list[str] = []\n'
                ).replace('a longer word is cut."""', 'a longer word is cut into\n    pieces of `width` characters. '
                          'A `width` below 1 raises ValueError."""')
w3_tests = '''import pytest

from textkit.wrap import wrap_words


def test_width_below_one():
    with pytest.raises(ValueError):
        wrap_words("a b", -1)
    with pytest.raises(ValueError):
        wrap_words("", 0)


def test_width_one():
    assert wrap_words("ab c", 1) == ["a", "b", "c"]
'''
add("turn_coder", files("textkit/wrap.py", w3, "test_wrap_turn3.py", w3_tests), "wrap/turn3")
assert w3 == reference("wrap")  # the last turn is the seed's reference

script = {"label": "construct multiturn examples: a recording of the bundled seeds' construction, with failing, "
          "non-discriminative and misaligned drafts", "responses": R}
OUT.write_text(json.dumps(script, indent=1) + "\n")
