import math

import pytest

from kvstore import SerializationError, decode, encode, validate_value
from kvstore.codec import clone


def test_encode_decode_roundtrip_nested_values():
    value = {"b": [1, 2.5, None, True], "a": {"nested": "é"}, "n": -3}
    text = encode(value)
    assert decode(text) == value
    assert text.index('"a"') < text.index('"b"')  # keys sorted
    assert "é" in text  # non-ASCII kept as is


def test_unsupported_values_are_rejected():
    bad_values = [(1, 2), {1, 2}, b"bytes", object(), {"k": (1,)}, [1, {2}], {1: "one"}]
    bad_values += [math.nan, [math.inf], {"x": -math.inf}]
    for bad in bad_values:
        with pytest.raises(SerializationError):
            validate_value(bad)
        with pytest.raises(SerializationError):
            encode(bad)


def test_decode_rejects_invalid_json():
    with pytest.raises(SerializationError):
        decode("{not json")
    with pytest.raises(SerializationError):
        decode("NaN")


def test_clone_returns_independent_copy():
    original = {"items": [1, 2]}
    copy = clone(original)
    copy["items"].append(3)
    assert original == {"items": [1, 2]}
