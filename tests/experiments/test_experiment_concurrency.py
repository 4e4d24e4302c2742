"""An experiment's pairs wait on the model at once, capped per model, while sandbox runs stay at their slots.

Four pairs (kvstore, wordfreq x projectgen, direct) with the reference replay behind a latency fault,
four pairs in flight, two calls per model, one sandbox slot. Concurrency is counted (the latency
fault's waits that overlap, the sandbox runs that overlap), never timed.
"""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from projectgen.config import AttemptSettings
from projectgen.datasets.examples import example_tasks_dir
from projectgen.evaluation.runner import SandboxRunner
from projectgen.experiments import Concurrency, ExperimentSpec, run_experiment

LATENCY = 0.15  # the fault's delay: what tells its waits from every other sleep


class Overlap:
    """The most calls seen in flight at once."""

    def __init__(self) -> None:
        self.lock, self.now, self.peak, self.count = threading.Lock(), 0, 0, 0

    def __enter__(self) -> None:
        with self.lock:
            self.now, self.count = self.now + 1, self.count + 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *exc: Any) -> None:
        with self.lock:
            self.now -= 1


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> tuple[Overlap, Overlap]:
    """(model calls answered at once, sandbox suites run at once), counted through the latency fault's waits
    and `SandboxRunner.run_suite`."""
    calls, runs = Overlap(), Overlap()
    real_sleep, real_run_suite = asyncio.sleep, SandboxRunner.run_suite

    async def sleep(seconds: float, *args: Any) -> Any:
        if seconds != LATENCY:
            return await real_sleep(seconds, *args)
        with calls:
            return await real_sleep(seconds, *args)

    def run_suite(self: SandboxRunner, *args: Any) -> Any:
        with runs:
            return real_run_suite(self, *args)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    monkeypatch.setattr(SandboxRunner, "run_suite", run_suite)
    return calls, runs


def test_pairs_overlap_on_the_model_up_to_the_cap_and_sandbox_runs_up_to_their_slots(
        tmp_path: Path, counted: tuple[Overlap, Overlap]) -> None:
    calls, runs = counted
    spec = ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("projectgen", "direct"),
                          attempt_settings=AttemptSettings(attempts=1), faults=f"latency={LATENCY}s")
    results = run_experiment(spec, tmp_path / "out", concurrency=Concurrency(calls=2, sandboxes=1, pairs=4))

    assert sum(report.final.errors for report in results.models) == 0
    assert all(report.final.passed for report in results.models)  # the replay passes its tests, as alone
    assert calls.count >= 8 and calls.peak == 2  # pairs waited on the model together, never more than 2 calls
    assert runs.count >= 4 and runs.peak == 1  # ... while the sandbox ran one suite at a time


def test_reflect_units_overlap_on_the_model_up_to_the_cap_and_sandbox_runs_up_to_their_slots(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: tuple[Overlap, Overlap]) -> None:
    """The three Python exercises under the reference replay behind the latency fault: three units in flight,
    two calls at a time, one sandbox run at a time; every exercise still passes."""
    from projectgen.datasets.examples import example_exercises_dir
    from projectgen.protocols.reflection.batch import run_reflect
    from projectgen.llm.faults import inject_faults
    from projectgen.oracles import reference_replay

    replay = reference_replay.exercise_reference_model
    monkeypatch.setattr(reference_replay, "exercise_reference_model",
                        lambda exercise: inject_faults(replay(exercise), f"latency={LATENCY}s"))
    calls, runs = counted
    results = run_reflect(example_exercises_dir(), ["reference"], tmp_path / "out",
                          tasks=["ledger_book", "unit_convert", "word_index"],
                          concurrency=Concurrency(calls=2, sandboxes=1, pairs=3))
    (report,) = results.reports
    assert [row.status for row in report.rows] == ["passed"] * 3
    assert calls.count == 3 and calls.peak == 2  # one reply each (the reference passes at once), 2 at a time
    assert runs.count >= 3 and runs.peak == 1


@pytest.mark.slow  # the same caps for experiment pairs stay in the default suite
def test_refine_task_runs_overlap_on_the_model_up_to_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             counted: tuple[Overlap, Overlap]) -> None:
    """Three bundled multi-turn tasks under the reference behind the latency fault, one setting: three task runs
    in flight, two calls at a time, one sandbox run at a time; each still scores every turn."""
    from projectgen.datasets.multiturn import bundled_dataset_dir
    from projectgen.protocols.refinement import batch as refinement
    from projectgen.llm.faults import inject_faults

    build = refinement.build_model
    monkeypatch.setattr(refinement, "build_model", lambda *args, **kwargs: inject_faults(
        build(*args, **kwargs), f"latency={LATENCY}s"))
    calls, runs = counted
    spec = refinement.RefinementSpec(dataset=bundled_dataset_dir(), models=("reference",), strategies=("fh",),
                                     contexts=("basic",), tasks=("roman", "slugify", "durations"))
    results = refinement.run_refinement(spec, tmp_path / "out", concurrency=Concurrency(calls=2, sandboxes=1, pairs=3))
    assert [row.status for row in results.rows] == ["ok"] * 3 and all(all(row.verdicts) for row in results.rows)
    assert calls.count >= 6 and calls.peak == 2
    assert runs.peak == 1
