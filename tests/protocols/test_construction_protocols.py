"""Construction as protocols: `evaluate exercise_construction` and `evaluate multiturn_construction` run the same
pipelines as `projectgen construct exercises` / `multiturn` (their presets), with typed settings checked in one
line, and resume from their ledgers; exercise construction's judges play reflection through its `play` (a judge's
folder is a reflect run), never by importing it (tests/test_layout.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.cli.main import main
from projectgen.construction.execution import WORK
from projectgen.datasets.examples import example_script_path
from projectgen.errors import ProjectGenError
from projectgen.protocols.definition import BatchOptions
from projectgen.protocols.evaluate import evaluate
from projectgen.protocols.exercise_construction.seed_run import DROPPED, KEPT
from projectgen.protocols.multiturn_construction.batch import ConstructionResults
from projectgen.protocols.multiturn_construction.seeds import bundled_seeds_dir
from projectgen.protocols.names import protocol_names
from projectgen.protocols.registry import load_protocol
from projectgen.runs.folder import RunFolder
from projectgen.runs.run_log import read_run_log
from tests.construction.test_construct_multiturn_logic import FakeRunner
from tests.construction.test_construct_pipeline import SCRIPT, MarkerRunner


@pytest.fixture
def exercise_seeds(tmp_path: Path) -> dict[str, Path]:
    """Two seed files and the pipeline test's replay as a script file (`scripted:FILE`)."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for name in ("alpha", "easy"):
        (seeds / f"{name}.py").write_text(f"# seed {name}\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"label": "pipeline test replay", "responses": SCRIPT}))
    return {"seeds": seeds, "script": script, "out": tmp_path / "B"}


class CountedRunner:
    """One `MarkerRunner` for every worker, so a test counts the sandbox runs of a whole batch."""

    def __init__(self) -> None:
        self.runner = MarkerRunner()

    def __call__(self) -> MarkerRunner:
        return self.runner


def test_the_constructions_are_bundled_protocols_with_their_own_batch() -> None:
    for name in ("exercise_construction", "multiturn_construction"):
        assert name in protocol_names()
        protocol = load_protocol(name)
        assert protocol.batch is not None and protocol.failures is not None, name
    assert load_protocol("reflection").play is not None  # what exercise construction's judges play
    assert load_protocol("exercise_construction").results_file == "construction.json"


def test_evaluate_builds_exercises_judged_by_reflection_and_resumes(exercise_seeds: dict[str, Path]) -> None:
    runner = CountedRunner()
    options = BatchOptions(runner_factory=runner)
    report = evaluate("exercise_construction", exercise_seeds["seeds"], [f"scripted:{exercise_seeds['script']}"],
                      {"rng_seed": 3}, exercise_seeds["out"], options)
    assert report.ids(KEPT) == ["alpha"] and report.ids(DROPPED) == ["easy"]
    assert report.seeds["easy"]["reason"] == "too easy: every judge passed at the first try"
    assert report.seeds["alpha"]["difficulty"]["outcomes"] == {"1-scripted-script": "failure-then-success"}
    # the judge's folder is reflection's own run (its run log), reached through reflection's `play`
    judge = read_run_log(RunFolder(exercise_seeds["out"] / WORK / "alpha" / "judges" / "1-scripted-script"))
    assert judge.kind == "reflect" and judge.record["passed_at"] == 2
    assert report.seeds["alpha"]["judges"]["1-scripted-script"]["passed_at"] == 2
    written = (exercise_seeds["out"] / "construction.json").read_text()
    runs = runner.runner.runs
    again = evaluate("exercise_construction", exercise_seeds["seeds"], [f"scripted:{exercise_seeds['script']}"],
                     {"rng_seed": 3}, exercise_seeds["out"], options)
    assert runner.runner.runs == runs and again.seeds == report.seeds  # nothing built or judged again
    assert (exercise_seeds["out"] / "construction.json").read_text() == written


@pytest.mark.parametrize(("models", "settings", "said"), [
    (2, {}, "exercise construction takes one model"),
    (1, {"judge_tries": 0}, "bad settings (judge_tries: "),
    (1, {"judges": []}, "bad settings (judges: "),
    (1, {"creative": "a", "unknown": 1}, "bad settings (unknown: "),
])
def test_exercise_construction_refuses_what_it_cannot_run_in_one_line(
        exercise_seeds: dict[str, Path], models: int, settings: dict, said: str) -> None:
    specs = [f"scripted:{exercise_seeds['script']}", "second=scripted:" + str(exercise_seeds["script"])][:models]
    with pytest.raises(ProjectGenError) as raised:
        evaluate("exercise_construction", exercise_seeds["seeds"], specs, settings, exercise_seeds["out"],
                 BatchOptions(runner_factory=CountedRunner()))
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert not exercise_seeds["out"].exists()


def test_evaluate_multiturn_construction_writes_what_the_preset_writes(tmp_path: Path, capsys) -> None:
    """The seed `clamp` is dropped by the length filter before any code runs; the preset and `projectgen evaluate`
    give the same results.json, and a second `evaluate` builds nothing again."""
    script = example_script_path("construct-multiturn")
    preset, evaluated = tmp_path / "preset", tmp_path / "evaluated"
    assert main(["construct", "multiturn", "--seeds", "examples", "--model", "scripted:examples", "--only", "clamp",
                 "--out", str(preset)]) == 0
    assert main(["evaluate", "multiturn_construction", "--dataset", str(bundled_seeds_dir()), "--model",
                 f"scripted:{script}", "--tasks", "clamp", "--out", str(evaluated)]) == 0
    assert f"results: {evaluated / 'results.json'}" in capsys.readouterr().out
    assert (evaluated / "results.json").read_text() == (preset / "results.json").read_text()
    results = ConstructionResults.model_validate_json((evaluated / "results.json").read_text())
    assert [(row.seed, row.status) for row in results.outcomes] == [("clamp", "filtered")]
    runner = FakeRunner()
    again = evaluate("multiturn_construction", bundled_seeds_dir(), [f"scripted:{script}"], {}, evaluated,
                     BatchOptions(tasks=["clamp"], runner_factory=lambda: runner))
    assert again.outcomes == results.outcomes and runner.runs == 0


@pytest.mark.parametrize(("settings", "said"), [
    ({"ablation": "none"}, "unknown ablation 'none'"),
    ({"contamination_models": ["scripted:x"]}, "contamination models are named but the contamination check is off"),
    ({"turn_cap": 0}, "bad settings (turn_cap: "),
])
def test_multiturn_construction_settings_are_checked_in_one_line(tmp_path: Path, settings: dict, said: str) -> None:
    with pytest.raises(ProjectGenError) as raised:
        evaluate("multiturn_construction", bundled_seeds_dir(),
                 [f"scripted:{example_script_path('construct-multiturn')}"], settings, tmp_path / "out",
                 BatchOptions(runner_factory=FakeRunner))
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert not (tmp_path / "out").exists()
