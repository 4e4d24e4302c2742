"""What the test recorder said, checked: signed, in order, and with the canary tests failing.

The recorder (`sandbox_files/projectgen_results.py`) signs each event line with a per-session
secret and numbers it. A line without a valid signature, out of order or repeated was not
written by the recorder: the code under test wrote to the pipe. The recorder itself reports
when the test framework was patched ("tampered"). And where the runner cannot plant its canaries
into the suite's own modules (`planted_tests`), it adds a module of canary tests (`Canary`): tests that must
fail, through a comparison and a unittest assertion, failing with
`pytest.fail(pytrace=False)` (a traceback would cost pytest more than the rest of a small suite); a
canary that passes means outcomes were turned into passes, and one that never reports in a run that
finished means the events were written by something that left it out (`hidden_tests_problem`). Any of
these marks the run as tampered with, and none of its tests counts as passed (`TestReport.tampered`).

Nothing read is trusted: a signed line that does not parse (nested too deep for the parser, not UTF-8), is
not an event the recorder writes (unknown kind, a field missing or of the wrong type) or comes after the
finish event marks the run tampered; reading never raises, whatever the bytes.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
from collections.abc import Collection
from dataclasses import dataclass

SIGNATURE_CHARS = 32
PHASES = ("setup", "call", "teardown")
OUTCOMES = ("passed", "failed", "skipped", "rerun")  # "rerun": pytest-rerunfailures' attempt before another
# The fields of each event the recorder writes, and their types (`seq` and `event` in every one).
EVENT_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "collect_error": {"nodeid": str, "message": str},
    "collected": {"count": int, "nodeids": list},
    "start": {"nodeid": str},
    "report": {"nodeid": str, "when": str, "outcome": str, "duration": (int, float), "wasxfail": bool,
               "message": str},
    "finish": {"exitstatus": int},
    "tampered": {"what": str},
    "coverage": {},
}
# A coverage event (asked for by the runner: `SandboxRunner.reference_coverage`) holds the line coverage of the
# sources it was given, in %, or why it could not be measured: one of the two.
OPTIONAL_FIELDS = {"report": {"subtest": bool}, "coverage": {"percent": (int, float), "problem": str}}


@dataclass(frozen=True)
class ChannelEvents:
    events: list[dict]
    tampered: str | None  # why the events cannot be trusted, or None


def sign(secret: bytes, payload: bytes) -> bytes:
    return hmac.new(secret, payload, hashlib.sha256).hexdigest()[:SIGNATURE_CHARS].encode()


def read_channel(data: bytes, secret: bytes) -> ChannelEvents:
    """The recorder's events from the bytes of its pipe; a last line cut short by a kill is dropped."""
    reader = ChannelReader(secret)
    reader.feed(data)
    return reader.result()


class ChannelReader:
    """Checks the recorder's lines as they come: the runner feeds it while the tests run, so what is left to
    check once they end is the last moments' lines, not a line per test event (800 for 267 tests).

    Past `limit` bytes it takes nothing more (`overflow`); a last line without its newline (the run was
    killed while writing it) is dropped."""

    def __init__(self, secret: bytes, limit: int | None = None) -> None:
        self.secret = secret
        self.limit = limit
        self.events: list[dict] = []
        self.tampered: str | None = None
        self.expected = 1
        self.pending = bytearray()
        self.taken = 0
        self.overflow = False
        self.finished = False

    def feed(self, chunk: bytes) -> None:
        if self.overflow or (self.limit is not None and self.taken + len(chunk) > self.limit):
            self.overflow = True
            return
        self.taken += len(chunk)
        cut = chunk.rfind(b"\n")
        if cut < 0:  # no line ends here: kept in a growing buffer, not copied again with every read
            self.pending += chunk
            return
        complete = bytes(self.pending) + chunk[:cut]
        self.pending = bytearray(chunk[cut + 1:])
        for line in complete.split(b"\n"):
            self._line(line)

    def _line(self, line: bytes) -> None:
        payload, tab, signature = line.rpartition(b"\t")
        if not tab or not hmac.compare_digest(sign(self.secret, payload), signature):
            self.tampered = self.tampered or "the results pipe held a line the test recorder did not write"
            return
        try:
            event = json.loads(payload)
        except (ValueError, RecursionError, MemoryError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            self.tampered = self.tampered or "a signed line of the results pipe does not parse"
            return
        problem = event_problem(event)
        if problem:
            self.tampered = self.tampered or f"a signed event is not one the test recorder writes: {problem}"
            return
        if event["seq"] != self.expected:
            self.tampered = self.tampered or "the test recorder's events were replayed or reordered"
            return
        self.expected += 1
        if event["event"] == "tampered":
            self.tampered = self.tampered or f"the test framework was patched: {event['what']}"
            return
        if self.finished:
            self.tampered = self.tampered or "the test recorder's events went on after its finish event"
            return
        self.finished = event["event"] == "finish"
        self.events.append(event)

    def result(self) -> ChannelEvents:
        """The events read so far, and whether they can be trusted."""
        return ChannelEvents(list(self.events), self.tampered)


def event_problem(event: object) -> str | None:
    """What makes `event` (a parsed signed line) not one the recorder writes, or None: the shape `_combine`
    relies on, so that nothing it reads can make it raise."""
    if not isinstance(event, dict):
        return "not an object"
    kind = event.get("event")
    fields = EVENT_FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        return "an unknown kind of event"
    if not _is_int(event.get("seq")):
        return "no sequence number"
    optional = OPTIONAL_FIELDS.get(kind, {})
    for name, value in event.items():
        wanted = fields.get(name) or optional.get(name)
        if name in ("event", "seq"):
            continue
        if wanted is None:
            return f"an unknown field {name!r} in a {kind} event"
        if not _has_type(value, wanted):
            return f"the field {name!r} of a {kind} event has the wrong type"
    missing = [name for name in fields if name not in event]
    if missing:
        return f"a {kind} event without {missing[0]!r}"
    if kind == "report" and (event["when"] not in PHASES or event["outcome"] not in OUTCOMES
                             or not math.isfinite(event["duration"]) or event["duration"] < 0):
        return "a report of an unknown phase, outcome or duration"
    if kind == "coverage" and (("percent" in event) == ("problem" in event) or (
            "percent" in event and not (math.isfinite(event["percent"]) and 0 <= event["percent"] <= 100))):
        return "a coverage event without one percentage from 0 to 100 or one problem"
    if kind == "collected" and (event["count"] < 0 or not all(isinstance(n, str) for n in event["nodeids"])):
        return "a collected event whose node ids are not strings"
    return None


def _is_int(value: object) -> bool:
    return type(value) is int


def _has_type(value: object, wanted: type | tuple[type, ...]) -> bool:
    """isinstance, except that a bool is not an int (JSON's true is not a count)."""
    if isinstance(value, bool) and wanted is not bool:
        return False
    return isinstance(value, wanted)


def hidden_tests_problem(must_fail: Collection[str], events: list[dict]) -> str | None:
    """Why the run cannot be trusted when tests that must fail (canaries, twins) did not fail, or None.

    Each must report a failure (a failed setup or call); one that passed means outcomes were turned into
    passes, and one that never reported in a run that reached its finish event means the results were written
    by something that left it out. A run without the finish event is judged by `runner._combine` (no pass
    counts unless the runner itself stopped it, and then the tests after the stop never ran)."""
    wanted = set(must_fail)
    if not wanted:
        return None
    failed: set[str] = set()
    passed: set[str] = set()
    for event in events:
        nodeid = event.get("nodeid")
        if event.get("event") != "report" or not isinstance(nodeid, str) or nodeid not in wanted:
            continue
        if event.get("outcome") == "failed" and event.get("when") in ("setup", "call"):
            failed.add(nodeid)
        elif event.get("outcome") == "passed" and event.get("when") == "call" and not event.get("subtest"):
            passed.add(nodeid)
    if passed:
        return f"a test that must fail passed ({len(passed)} hidden test(s)): outcomes were turned into passes"
    finished = any(event.get("event") == "finish" for event in events)
    silent = wanted - failed
    if finished and silent:
        return (f"a test that must fail never reported a failure ({len(silent)} hidden test(s)) in a run that "
                "finished: the results were not the test recorder's")
    return None


@dataclass(frozen=True)
class Canary:
    """A test module of tests that must fail, under a name like any test file's."""

    module: str  # file name, e.g. "test_3f9a1c.py"
    source: str

    @classmethod
    def make(cls) -> Canary:
        word = secrets.token_hex(4)
        left, right = secrets.randbelow(900) + 100, secrets.randbelow(900) + 100
        source = f'''import unittest

import pytest


def test_{word}_sum():
    values = [{left}, {right}]
    if sum(values) != {left + right + 1}:
        pytest.fail("{word}", pytrace=False)


class Test{word.capitalize()}(unittest.TestCase):
    def test_{word}_length(self):
        try:
            self.assertEqual(len("{word}"), {len(word) + 1})
        except AssertionError:
            pytest.fail("{word}", pytrace=False)
'''
        return cls(f"test_{word}.py", source)

    def owns(self, nodeid: str, folder: str) -> bool:
        """Whether a collected test is one of the canaries (the module sits in the suite's folder)."""
        path = f"{folder}/{self.module}" if folder else self.module
        return nodeid == path or nodeid.startswith(path + "::")


def canary_problem(passed_canaries: list[str]) -> str | None:
    if not passed_canaries:
        return None
    return f"a test that must fail passed ({len(passed_canaries)} canary test(s)): outcomes were turned into passes"

