"""Temperatures in Celsius and Fahrenheit, and readings written as text."""
import re

_READING = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)\s*([CcFf])\s*$")


def to_fahrenheit(celsius):
    return celsius * 9 / 5 + 32


def to_celsius(fahrenheit):
    return (fahrenheit - 32) * 5 / 9


def parse_reading(text):
    match = _READING.match(text)
    if match is None:
        raise ValueError(f"not a temperature reading: {text!r}")
    return float(match.group(1)), match.group(2).upper()


def normalize(text, scale):
    value, given = parse_reading(text)
    if scale not in ("C", "F"):
        raise ValueError(f"unknown scale: {scale!r}")
    if given != scale:
        value = to_fahrenheit(value) if scale == "F" else to_celsius(value)
    return round(value, 1)
