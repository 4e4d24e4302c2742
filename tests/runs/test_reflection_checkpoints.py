"""`reflect` units with a checkpoint URL: each unit's checkpoints in the shared database, on a thread of its
own, and a unit continued from a copy of its folder (as Ray retries it on another machine) resumes there.

The shared database is LangGraph's in-memory saver put in place of PostgreSQL (the driver's `open_checkpointer`
is the seam), and a real PostgreSQL server where one can be had (tests/postgres_server.py; skipped otherwise)."""
from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from projectgen.datasets.examples import example_exercises_dir, example_script_path
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.protocols.definition import Hooks
from projectgen.protocols.reflection.batch import run_reflect
from test_support import strict_jsonl

MODEL = f"scripted:{example_script_path('exercises.reflect')}"
FAKE_URL = "postgresql://projectgen@db-host/checkpoints"


class SharedStore:
    """One in-memory checkpoint database for every unit, standing in for PostgreSQL; records who opened it."""

    def __init__(self) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        self.saver = InMemorySaver()
        self.opened: list[tuple[str, str | None]] = []

    @asynccontextmanager
    async def open(self, run_dir: Path, url: str | None, before_write: Any = None) -> AsyncIterator[Any]:
        self.opened.append((str(run_dir), url))
        assert url is not None, "a unit of a batch given a checkpoint URL opened SQLite"
        yield self.saver

    async def check(self, url: str | None) -> None:
        assert url == FAKE_URL


# a real PostgreSQL server starts in the slow suite only; the in-memory saver stands in for it by default
@pytest.fixture(params=["in-memory", pytest.param("postgresql", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, SharedStore | None]]:
    """(the URL to give, the fake store or None for a real server)."""
    if request.param == "postgresql":
        yield request.getfixturevalue("postgres_url"), None
        return
    import projectgen.runs.checkpoints as checkpoints
    import projectgen.runs.driver as driver

    fake = SharedStore()
    monkeypatch.setattr(driver, "open_checkpointer", fake.open)
    monkeypatch.setattr(checkpoints, "check_checkpoint_database", fake.check)
    yield FAKE_URL, fake


def threads(out: Path) -> dict[str, str]:
    return {str(p.parent.relative_to(out)): json.loads(p.read_text())["thread_id"] for p in sorted(out.glob("*/*/*/thread.json"))}


def test_each_unit_checkpoints_in_the_shared_database_on_a_thread_of_its_own(tmp_path: Path, env_cache: Path,
                                                                             store) -> None:
    url, fake = store
    settings = RunnerSettings(cache_dir=env_cache)
    batches = [tmp_path / "a", tmp_path / "b"]  # two batches of the same units in one database
    results = [run_reflect(example_exercises_dir(), [MODEL], out, formats=["whole"], checkpoint_url=url,
                           tasks=["ledger_book", "unit_convert", "word_index"],  # the Python ones
                           runner_factory=lambda: SandboxRunner(settings)) for out in batches]
    assert [r.summary[0].pass_at_2 for r in results] == [pytest.approx(66.7, abs=0.1)] * 2
    for out in batches:
        assert not list(out.rglob("checkpoints.sqlite*"))
        assert len(threads(out)) == 3  # one per unit, in its folder
    every = [*threads(batches[0]).values(), *threads(batches[1]).values()]
    assert len(set(every)) == 6  # no two units share a thread, across batches too
    if fake is not None:
        assert {url for _, url in fake.opened} == {FAKE_URL} and len(fake.opened) == 6
        assert set(fake.saver.storage) == set(every)  # what each unit checkpointed is in the shared store
        for unit, thread in threads(batches[0]).items():
            state = fake.saver.get_tuple({"configurable": {"thread_id": thread}}).checkpoint["channel_values"]
            summary = json.loads((batches[0] / unit / "summary.json").read_text())
            assert state["passed_at"] == summary["passed_at"]


def test_a_unit_continued_from_a_copy_of_its_folder_resumes_from_the_shared_database(tmp_path: Path,
                                                                                      env_cache: Path, store,
                                                                                      monkeypatch) -> None:
    """Cut short after its repair's reply came in, the unit's folder copied elsewhere (as Ray's retry on another
    machine gets the driver's copy), continued there: it goes on from the checkpoint, not from try 1."""
    import projectgen.protocols.reflection.graph as graph_module

    url, _ = store
    real = graph_module.reply_update
    cut = {"done": False}

    def killed_once(attempt: int, outcome):  # noqa: ANN001
        if attempt == 2 and not cut["done"]:
            cut["done"] = True
            raise KeyboardInterrupt  # as a dying worker would, right after the reply came in
        return real(attempt, outcome)

    monkeypatch.setattr(graph_module, "reply_update", killed_once)
    settings = RunnerSettings(cache_dir=env_cache)
    messages: list[str] = []
    common = dict(formats=["whole"], tasks=["ledger_book"], checkpoint_url=url,
                  runner_factory=lambda: SandboxRunner(settings),
                  hooks=Hooks(progress=lambda key, message: messages.append(message)))
    with pytest.raises(KeyboardInterrupt):
        run_reflect(example_exercises_dir(), [MODEL], tmp_path / "first", **common)
    assert "try 1: asking for the solution (whole)" in messages
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(tmp_path / "first", elsewhere)
    messages.clear()
    results = run_reflect(example_exercises_dir(), [MODEL], elsewhere, **common)
    assert results.summary[0].pass_at_1 == 0.0 and results.summary[0].pass_at_2 == 100.0
    # Resumed from its checkpoint, not started over (the checkpoint after try 1's test run may not have been
    # written yet when the unit died: LangGraph writes checkpoints in the background, so that run may repeat).
    assert "try 1: asking for the solution (whole)" not in messages and messages[-1] == "try 2: 9/9 tests pass"
    unit = elsewhere / "scripted-exercises.reflect/whole/ledger_book"
    assert threads(elsewhere) == threads(tmp_path / "first")
    assert [u["iteration"] for u in strict_jsonl(unit / "usage.jsonl")] == [1, 2]  # no call made twice
    assert not list(elsewhere.rglob("checkpoints.sqlite*"))
