"""A test run told back to a model: what failed and why, cleaned of what changes from run to run.

The sandbox runs every suite in a fresh temporary workspace, in a cached environment, so raw
pytest output names absolute paths that differ between runs and machines (the workspace, the
environment's site-packages, the interpreter's standard library), timings and memory addresses.
A model gains nothing from them, and a prompt that holds them differs on every run (a repeat of
the same protocol would not be the same prompt). `clean_output` makes paths relative (inside the
workspace) or short (``<site-packages>/``, ``<python>/``), and drops timings and addresses, as
Aider's benchmark cleans its test output. Pure functions.
"""
from __future__ import annotations

import re

from projectgen.evaluation.report import TestReport

_PART = r"[^/\s'\"():,;<>\[\]]+"
_WORKSPACE = re.compile(rf"(?:/{_PART})*/projectgen-{_PART}/(?:repo/)?")  # a session folder's workspace
_SITE_PACKAGES = re.compile(rf"(?:/{_PART})+/(?:site|dist)-packages/")
_STDLIB = re.compile(rf"(?:/{_PART})+/lib/python\d+(?:\.\d+)?/")
_ABSOLUTE = re.compile(rf"(?<![\w.<>])(?:/{_PART}){{2,}}/(?={_PART})")  # any other absolute folder path
_TIMING = re.compile(r"\s+in \d+(?:\.\d+)?s\b(?: \(\d+:\d\d:\d\d\))?")  # "2 passed in 0.12s", "Ran 3 tests in 0.001s"
_DURATION = re.compile(r"\b\d+\.\d+s (?=call|setup|teardown)")  # --durations lines
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


def clean_output(text: str) -> str:
    """`text` with workspace paths made relative, other absolute paths shortened, and timings and
    memory addresses dropped."""
    text = _WORKSPACE.sub("", text)
    text = _SITE_PACKAGES.sub("<site-packages>/", text)
    text = _STDLIB.sub("<python>/", text)
    text = _ABSOLUTE.sub(".../", text)
    text = _TIMING.sub("", text)
    text = _DURATION.sub("", text)
    return _ADDRESS.sub("0x...", text)


def failure_log(report: TestReport, limit: int = 12_000) -> str:
    """What a repair needs to know about a run: the counts, every failing test and collection error with
    its message, and the end of the output when nothing else explains the result; cleaned, and at most
    `limit` characters (the start is kept: the first failures explain the most)."""
    head = f"{report.passed} of {report.total} tests passed."
    if report.timed_out:
        head += " The test run timed out: tests that had not finished count as failed."
    parts = [head]
    for error in report.collection_errors:
        parts.append(f"ERROR collecting {error.nodeid}\n{error.message.rstrip()}")
    for test in report.failures():
        parts.append(f"{test.outcome.value.upper()} {test.nodeid}\n{test.message.rstrip()}")
    if len(parts) == 1 and report.output_tail.strip():
        parts.append("pytest output (end):\n" + report.output_tail.strip())
    text = clean_output("\n\n".join(parts))
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters ...]"
