"""What the test recorder said, checked: signed, in order, and with the canary tests failing.

The recorder (`sandbox_files/projectgen_results.py`) signs each event line with a per-session
secret and numbers it. A line without a valid signature, out of order or repeated was not
written by the recorder: the code under test wrote to the pipe. The recorder itself reports
when the test framework was patched ("tampered"). And where the runner cannot plant its canaries
into the suite's own modules (`planted_tests`), it adds a module of canary tests (`Canary`): tests that must
fail, through a comparison and a unittest assertion, failing with
`pytest.fail(pytrace=False)` (a traceback would cost pytest more than the rest of a small suite); a
canary that passes means outcomes were turned into passes. Any of these marks the run as
tampered with, and none of its tests counts as passed (`TestReport.tampered`).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass

SIGNATURE_CHARS = 32


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
        event = json.loads(payload)
        if not isinstance(event, dict) or event.get("seq") != self.expected:
            self.tampered = self.tampered or "the test recorder's events were replayed or reordered"
            return
        self.expected += 1
        if event.get("event") == "tampered":
            self.tampered = self.tampered or f"the test framework was patched: {event.get('what')}"
            return
        self.events.append(event)

    def result(self) -> ChannelEvents:
        return ChannelEvents(list(self.events), self.tampered)


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

