"""Tolerant parsing of model replies: JSON in all the shapes models send it, and fenced code."""
from __future__ import annotations

import pytest
from pydantic import BaseModel

from projectgen.errors import ProjectGenError
from projectgen.llm.parsing import StructuredOutputError, extract_code_blocks, extract_json, find_json, parse_model


class Module(BaseModel):
    name: str
    functions: list[str] = []


class Architecture(BaseModel):
    modules: list[Module]
    summary: str


# --------------------------------------------------------------------------- extract_json

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1, "b": [true, null]}', {"a": 1, "b": [True, None]}),
        ('  [1, 2, {"c": "d"}]\n', [1, 2, {"c": "d"}]),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Here is the design:\n```json\n{"a": 1}\n```\nLet me know if you need changes.', {"a": 1}),
        ('Sure! The answer is {"a": {"b": [1, 2]}} as requested.', {"a": {"b": [1, 2]}}),
        ('Some thoughts first.\n\n[{"x": 1}, {"x": 2}]\n\nDone.', [{"x": 1}, {"x": 2}]),
        ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
        ('{"ok": True, "missing": None, "bad": False}', {"ok": True, "missing": None, "bad": False}),
        ('{"code": "def f():\n    return 1\n"}', {"code": "def f():\n    return 1\n"}),  # raw newlines
        ('{"pattern": "\\d+\\.py"}', {"pattern": "\\d+\\.py"}),  # unknown escapes kept as written
        ('{"emoji": "\\ud83d\\ude00 caf\\u00e9"}', {"emoji": "\U0001F600 café"}),
        ("{'a': 'single', b: 2}", {"a": "single", "b": 2}),
        ('// the plan\n{"a": 1 /* one */}', {"a": 1}),
    ],
)
def test_extracts_json_in_the_shapes_models_send_it(text: str, expected: object) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": "unterminated', {"a": "unterminated"}),
        ('{"a": [1, "two"', {"a": [1, "two"]}),
        ('{"a": {"b": {"c": true', {"a": {"b": {"c": True}}}),
        ('{"a": [1, 2', {"a": [1]}),  # the 2 might have been 25: a number at the cut is dropped
        ('{"a": 1, "dangling', {"a": 1}),
        ('{"a": 1, "b"', {"a": 1}),
        ('{"a": 1, "b":', {"a": 1}),
        ('{"a": 1, "b": tr', {"a": 1}),
        ('{"a": 1, "b": 12', {"a": 1}),  # a number at the cut may be missing digits: dropped
        ('{"a": [1, 2,', {"a": [1, 2]}),
        ('{"a": 1,', {"a": 1}),
        ('{"a": "ends in a backslash \\', {"a": "ends in a backslash "}),
        ('Here it is:\n```json\n{"files": [{"path": "a.py", "code": "print(', {"files": [{"path": "a.py", "code": "print("}]}),
    ],
)
def test_repairs_json_cut_off_at_the_end(text: str, expected: object) -> None:
    found = find_json(text)
    assert found.value == expected
    assert found.truncated


def test_complete_json_is_not_reported_as_repaired() -> None:
    found = find_json('prose {"a": [1, 2]} more prose')
    assert found.repairs == () and not found.truncated
    assert 'prose {"a": [1, 2]} more prose'[found.start:found.end] == '{"a": [1, 2]}'


def test_the_longest_value_wins_over_brackets_in_the_prose() -> None:
    text = 'As noted in [1], the {design} is:\n{"modules": [{"name": "core"}], "summary": "s"}'
    assert extract_json(text) == {"modules": [{"name": "core"}], "summary": "s"}


def test_a_fenced_json_block_is_preferred_to_other_braces() -> None:
    text = 'Use `{"x": 0}` style.\n```python\nd = {"k": [1, 2, 3, 4, 5, 6, 7, 8, 9]}\n```\n```json\n{"a": 1}\n```'
    assert extract_json(text) == {"a": 1}


def test_no_json_is_a_feedback_message() -> None:
    with pytest.raises(StructuredOutputError) as info:
        extract_json("I could not produce the architecture, sorry.")
    assert info.value.kind == "no_json"
    assert "No JSON found" in str(info.value)
    assert isinstance(info.value, ProjectGenError)


def test_invalid_json_names_line_and_column() -> None:
    text = 'Result:\n{"a": 1,\n "b": 2 "c": 3}'
    with pytest.raises(StructuredOutputError) as info:
        extract_json(text)
    assert info.value.kind == "invalid_json"
    assert "line 3 column 9" in str(info.value)
    assert "expected ',' or '}'" in str(info.value)


def test_a_broken_outer_object_is_not_replaced_by_its_inner_object() -> None:
    with pytest.raises(StructuredOutputError) as info:
        extract_json('{"a": {"b": 1} "c": 2}')
    assert info.value.kind == "invalid_json"


# --------------------------------------------------------------------------- parse_model

def test_parse_model_validates_against_the_schema() -> None:
    reply = 'Here:\n```json\n{"modules": [{"name": "store", "functions": ["get"]}], "summary": "kv",}\n```'
    arch = parse_model(reply, Architecture)
    assert arch == Architecture(modules=[Module(name="store", functions=["get"])], summary="kv")


def test_parse_model_accepts_non_model_types() -> None:
    assert parse_model('[{"name": "a"}]', list[Module]) == [Module(name="a")]


def test_schema_errors_name_the_field_locations() -> None:
    with pytest.raises(StructuredOutputError) as info:
        parse_model('{"modules": [{"functions": "x"}]}', Architecture)
    message = str(info.value)
    assert info.value.kind == "schema"
    assert "Architecture schema" in message
    assert "modules[0].name: Field required" in message
    assert "modules[0].functions: Input should be a valid list" in message
    assert "summary: Field required" in message
    assert len(message) < 600  # short enough to send back to the model


def test_schema_errors_of_a_cut_off_reply_say_so() -> None:
    # repaired and still valid: parses (the caller can tell from find_json(...).truncated)
    assert parse_model('{"summary": "kv", "modules": [{"name": "st', Architecture).modules[0].name == "st"
    with pytest.raises(StructuredOutputError) as info:
        parse_model('{"modules": [{"name": "store"}], "summ', Architecture)
    assert info.value.truncated and "cut off" in str(info.value)


def test_many_schema_errors_are_capped() -> None:
    class Wide(BaseModel):
        items: list[int]

    with pytest.raises(StructuredOutputError) as info:
        parse_model('{"items": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]}', Wide)
    assert "and 2 more" in str(info.value)


def test_parse_model_passes_no_json_through() -> None:
    with pytest.raises(StructuredOutputError) as info:
        parse_model("nothing structured", Architecture)
    assert info.value.kind == "no_json"


# --------------------------------------------------------------------------- code blocks

def test_extracts_code_blocks_with_their_info_strings() -> None:
    text = (
        "Intro\n```python\nprint(1)\n```\nmiddle\n"
        "```\nplain\n```\n"
        "~~~bash\nls -la\n~~~\n"
        "```python title=kvstore/store.py\nclass Store:\n    pass\n```\n"
    )
    assert extract_code_blocks(text) == [
        ("python", "print(1)"),
        (None, "plain"),
        ("bash", "ls -la"),
        ("python title=kvstore/store.py", "class Store:\n    pass"),
    ]


def test_a_longer_fence_encloses_shorter_ones() -> None:
    text = "````markdown\n# Readme\n```python\nx = 1\n```\n````\n"
    assert extract_code_blocks(text) == [("markdown", "# Readme\n```python\nx = 1\n```")]


def test_a_missing_closing_fence_runs_to_the_end() -> None:
    text = "```python\ndef f():\n    return 1\n```\n\n```python\ndef g():\n    return"
    assert extract_code_blocks(text) == [("python", "def f():\n    return 1"), ("python", "def g():\n    return")]


def test_indented_fences_are_dedented_and_blank_lines_kept() -> None:
    text = "1. Step:\n   ```py\n   def f():\n\n       pass\n   ```\n"
    assert extract_code_blocks(text) == [("py", "def f():\n\n    pass")]


def test_no_blocks_in_plain_text() -> None:
    assert extract_code_blocks("no fences here, only `inline` code") == []


# --------------------------------------------------------------------------- runaway replies (fault matrix)


def test_runaway_brackets_neither_crash_nor_stall_the_json_reader() -> None:
    import time

    def deep(levels: int, text: str):  # a caller already deep in its own stack (a graph node)
        return deep(levels - 1, text) if levels else find_json(text)

    for text in ("[" * 5000, "[1," * 5000, '{"a":' * 5000):
        try:
            deep(700, text)
        except StructuredOutputError:
            pass  # a message for the model; before, a RecursionError escaped every agent
    started = time.perf_counter()
    for text in ("{" * 1_000_000, "[x] " * 250_000):
        with pytest.raises(StructuredOutputError):
            find_json(text)
    assert time.perf_counter() - started < 5  # bounded: at most 10,000 parse attempts per reply
