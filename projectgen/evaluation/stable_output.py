"""The text of a run as a model is shown it: the same for every run of the same candidate against the same suite.

A resumed run answers a model call from the call cache only when the prompt is the one the killed run sent
(`llm.call_cache` keys calls by a hash of the prompt), and the code judge's prompt carries the check tests'
messages and output. So what a run writes that changes from one run of the same code to the next is taken
out before anything is shown: the session folder's path (random, with the runner's pid), the environment
cache's and those that differ between installs and machines (a run folder may be resumed elsewhere) become
fixed ones (`WORKSPACE`, `SESSION`, `ENVIRONMENT`, `INTERPRETER`, `HARNESS`); object addresses
(`<... at 0x7f...>`, a mock's `id='...'`) become `ADDRESS`; the times of pytest's and unittest's summaries
become `TIME`. The line numbers of planted modules are given as in the task's own files
(`planted_tests.Planting.original_lines`). Texts are cut to their length after this, never before: where a
cut falls must not depend on a path's length. What stays run-dependent is the code's own doing (the order
of a set under hash randomisation, clocks, ports).
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

WORKSPACE = "/workspace"  # the session's workspace: what the tests run in
SESSION = "/session"  # the rest of the session folder: its home, tmp (pytest's tmp_path), install prefix
ENVIRONMENT = "/env"  # the task's cached test environment
INTERPRETER = "/python"  # the prefix of the interpreter the environment was made from (its standard library)
HARNESS = "/projectgen"  # the folder of the sandbox's files (the pytest bootstrap, the recorder)
ADDRESS = "0x..."
TIME = "N.NN"
MESSAGE_CHARS = 4000  # the end of a test's message shown (the recorder sends more: its MESSAGE_CHARS)
# `<Foo object at 0x7f...>`, `<function f at 0x...>`: a repr's address, of any length; elsewhere a hex number of
# 9 digits or more (a thread's id in a fault dump, `hex(id(x))`): a 64-bit address, not a constant a test wrote.
ADDRESSES = re.compile(r"(?<=\bat )0x[0-9a-fA-F]+\b|\b0x[0-9a-fA-F]{9,}\b")
MOCK_IDS = re.compile(r"(<\w*Mock\b[^<>]*?\bid=')\d+(')")
# Java's Object.toString: `com.example.Foo@1b6d3586` (the identity hash code, new in every JVM)
IDENTITY_HASHES = re.compile(r"(?<=[\w$]@)[0-9a-f]{5,8}\b")
# pytest's "1 failed in 0.12s (0:00:00)" (a pytester run in a message), unittest's "Ran 3 tests in 0.001s"; any
# other "in 1.25s" too (a message's "retry in 1.5s" loses its figure: the price of catching every summary)
TIMINGS = re.compile(r"(?<=\bin )\d+\.\d+s( \(\d+:\d\d:\d\d\))?")


def without_addresses(text: str) -> str:
    """`text` with object addresses and mock ids replaced by `ADDRESS`: they change with every process."""
    return MOCK_IDS.sub(rf"\g<1>{ADDRESS}\g<2>", ADDRESSES.sub(ADDRESS, text))


def without_identity_hashes(text: str) -> str:
    """`text` with Java's identity hash codes (`Foo@1b6d3586`) replaced by `ADDRESS`."""
    return IDENTITY_HASHES.sub(ADDRESS, text)


def without_timings(text: str) -> str:
    """`text` with the times of test-run summaries replaced by `TIME`s."""
    return TIMINGS.sub(f"{TIME}s", text)


@dataclass(frozen=True)
class StablePaths:
    """The run's own folders, each with the fixed path a model is shown instead (the longest first)."""

    replacements: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, folders: Iterable[tuple[Path, str]]) -> StablePaths:
        """`folders`: (a folder, its fixed path), each also replaced as spelled with its links resolved."""
        pairs = {(spelled, shown) for folder, shown in folders
                 for spelled in {str(folder), os.path.realpath(folder)} if spelled not in ("", "/")}
        return cls(tuple(sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)))

    def apply(self, text: str) -> str:
        for spelled, shown in self.replacements:
            text = text.replace(spelled, shown)
        return text


def stable_text(text: str, paths: StablePaths, lines: Callable[[str], str] | None = None) -> str:
    """`text` as a model is shown it: fixed paths, `lines` (a planted module's line numbers as in the task's
    file), no addresses, no timings."""
    text = paths.apply(text)
    if lines is not None:
        text = lines(text)
    return without_timings(without_addresses(text))


def message_tail(text: str, limit: int = MESSAGE_CHARS) -> str:
    """The end of a test's message as shown, cut (as the recorder cuts, with more kept) after `stable_text`."""
    return text if len(text) <= limit else "..." + text[-limit:]


def printed_tail(text: str, truncated: bool) -> str:
    """What a step printed, from its first whole line when the start of the stream was dropped (`truncated`): a
    partial first line may begin inside a path, too little of it left to be made stable."""
    return text.split("\n", 1)[1] if truncated and "\n" in text else text
