"""`construct multiturn` end to end in the sandbox (issue 26's "done when"): the bundled seeds with the bundled
scripted replay (which holds failing, non-discriminative and misaligned drafts) give tasks whose every turn's tests
pass on that turn's reference and fail on the previous turn's, checked by running them; the ablations let the weaker
drafts through; a second invocation builds nothing again."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.construction.multiturn.batch import ConstructionSpec, run_construction
from projectgen.construction.multiturn.pipeline import ConstructionSettings
from projectgen.construction.multiturn.seeds import bundled_seeds_dir
from projectgen.datasets.examples import example_script_path
from projectgen.datasets.multiturn import (TURN_SUITE, check_multiturn_task, load_multiturn_dataset,
                                           load_multiturn_task, turn_task)
from projectgen.experiments.executors import LocalExecutor
from projectgen.llm import ScriptedChatModel

SCRIPT = example_script_path("construct-multiturn")


def scripted_draft(target: str, iteration: int) -> str:
    """The test file of the bundled replay's Coder draft for `target` (``SEED/turnK``) at `iteration`."""
    from projectgen.llm.scripted import load_script

    entry = load_script(SCRIPT).match("turn_coder", target, iteration, 0)
    return entry.text.split("```python\n")[2].split("```")[0]


def construct(out: Path, runner, *, ablation: str = "full", only: tuple[str, ...] | None = None, rows=None):
    spec = ConstructionSpec(seeds=bundled_seeds_dir(), spec=f"scripted:{SCRIPT}",
                            settings=ConstructionSettings(ablation=ablation), only=only)
    return run_construction(spec, out, model=ScriptedChatModel.from_file(SCRIPT), runner=runner,
                            executor=LocalExecutor(workers=2), on_row=rows.append if rows is not None else None)


@pytest.fixture(scope="module")
def built(tmp_path_factory, runner):
    out = tmp_path_factory.mktemp("construct")
    return out, construct(out, runner)


def trajectory(out: Path, seed: str) -> dict:
    return json.loads((out / seed / "construction.json").read_text())


def test_the_bundled_seeds_become_three_tasks_and_the_short_one_is_filtered(built):
    out, results = built
    outcomes = {row.seed: row for row in results.outcomes}
    assert {seed: row.status for seed, row in outcomes.items()} == {
        "clamp": "filtered", "grading": "task", "inventory": "task", "rle": "task"}
    assert "clamp has 3 line(s), fewer than 10" in outcomes["clamp"].reason
    assert all(outcomes[seed].turns == 3 and outcomes[seed].input_tokens > 0 for seed in ("grading", "inventory", "rle"))
    tasks, errors = load_multiturn_dataset(out)
    assert [task.id for task in tasks] == ["grading", "inventory", "rle"] and errors == {}
    assert json.loads((out / "review.json").read_text()) == {"pending": []}
    assert "3 task(s) built" in (out / "results.md").read_text()


def test_every_turn_passes_on_its_reference_and_fails_on_the_previous_one_in_the_sandbox(built, runner):
    out, _ = built
    tasks, _ = load_multiturn_dataset(out)
    for task in tasks:
        check = check_multiturn_task(task, lambda turn_task, candidate: runner.evaluate(turn_task, candidate,
                                                                                        TURN_SUITE))
        assert check.valid and check.not_discriminative == [], check.problems()
        assert [turn.discriminative for turn in check.turns] == [None, True, True]


def test_the_weak_drafts_were_refused_for_the_reason_each_stage_gives(built):
    out, _ = built
    decisions = {seed: [[draft["decision"] for draft in turn["drafts"]] for turn in trajectory(out, seed)["turns"]]
                 for seed in ("grading", "inventory", "rle")}
    assert decisions == {"grading": [["test_failed", "kept"], ["kept"], ["kept"]],
                         "inventory": [["kept"], ["kept"], ["test_refine", "kept"]],
                         "rle": [["kept"], ["not_discriminative", "kept"], ["kept"]]}
    rle = trajectory(out, "rle")["requirements"]["iterations"]
    assert [step["decision"] for step in rle] == ["refine", "retain"] and "'nicer' cannot be tested" in rle[0]["feedback"]
    assert (out / "rle" / "turns" / "2" / "tests" / "test_rle_turn2.py").read_text() == scripted_draft("rle/turn2", 2)
    events = [json.loads(line)["event"] for line in (out / "runs" / "rle" / "events.jsonl").read_text().splitlines()]
    assert events[0] == "run_start" and events[-1] == "run_end" and events.count("turn_draft") == 4


def test_a_second_invocation_builds_nothing_again(built, runner):
    out, results = built
    rows: list = []
    again = construct(out, runner, rows=rows)
    assert rows == [] and again.outcomes == results.outcomes


def test_without_distinctiveness_and_evaluator_the_non_discriminative_draft_is_kept(tmp_path, runner):
    results = construct(tmp_path, runner, ablation="no-dc-evaluator", only=("rle",))
    assert [row.status for row in results.outcomes] == ["task"]
    weak = scripted_draft("rle/turn2", 1)
    assert (tmp_path / "rle" / "turns" / "2" / "tests" / "test_rle_turn2.py").read_text() == weak
    task = load_multiturn_task(tmp_path / "rle")
    on_turn_1 = runner.evaluate(turn_task(task, 2), task.candidate(task.reference_code(1)), TURN_SUITE)
    assert on_turn_1.passed == on_turn_1.total > 0  # turn 2's tests do not tell turn 1's code from turn 2's


def test_without_the_evaluator_the_misaligned_draft_is_kept(tmp_path, runner):
    results = construct(tmp_path, runner, ablation="no-evaluator", only=("inventory",))
    assert [row.status for row in results.outcomes] == ["task"]
    turns = trajectory(tmp_path, "inventory")["turns"]
    assert [[draft["decision"] for draft in turn["drafts"]] for turn in turns] == [["kept"], ["kept"], ["kept"]]
    assert "alignment" not in turns[2]["drafts"][0]
    assert (tmp_path / "inventory" / "turns" / "3" / "tests" / "test_inventory_turn3.py").read_text() == \
        scripted_draft("inventory/turn3", 1)
