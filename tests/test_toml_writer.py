"""The TOML writer: whatever it writes, tomllib reads back equal."""
from __future__ import annotations

import math
import sys

import pytest

from projectgen.toml_writer import dumps

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_what_it_writes_reads_back_equal():
    data = {
        "id": "kv.change2",
        "text": 'quote " backslash \\ newline \n tab \t bell \x07 delete \x7f nul \x00 é 😀 {repo}',
        "count": 3, "negative": -7, "ratio": 0.25, "big": 1e300, "timeout": 240.0, "flag": True, "off": False,
        "empty": [], "paths": ["a b", "c\"d", "e\\f"], "nested": [[1, 2], ["x"]], "inline": [{"k": "v"}, {}],
        "a.dotted key": "kept whole",
        "table": {"x": 1, "env_vars": {"LANG": "C.UTF-8", "weird key=": "{repo}/data"}, "list": ["1"]},
        "only_tables": {"inner": {"deep": {"value": "here"}}},
        "empty_table": {},
    }
    assert tomllib.loads(dumps(data)) == data


def test_none_is_left_out_and_special_floats_are_toml_floats():
    read = tomllib.loads(dumps({"a": None, "t": {"b": None, "c": 1}, "inf": math.inf, "ninf": -math.inf,
                                "nan": math.nan}))
    assert read["t"] == {"c": 1} and "a" not in read
    assert (read["inf"], read["ninf"]) == (math.inf, -math.inf) and math.isnan(read["nan"])


def test_a_plain_value_follows_its_tables_header_not_a_subtables():
    text = dumps({"env": {"python": "3.11", "env_vars": {"A": "1"}, "install": "script"}, "top": 1})
    assert tomllib.loads(text) == {"env": {"python": "3.11", "env_vars": {"A": "1"}, "install": "script"}, "top": 1}
    assert text.index("install") < text.index("[env.env_vars]")


@pytest.mark.parametrize("value", [None, object(), b"bytes"])
def test_a_value_toml_cannot_hold_is_refused(value):
    with pytest.raises(TypeError, match="TOML has no value"):
        dumps({"list": [value]})
