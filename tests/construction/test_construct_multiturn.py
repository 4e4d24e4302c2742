"""`construct multiturn` end to end in the sandbox (issue 26's "done when"): the bundled seeds with the bundled
scripted replay (which holds failing, non-discriminative and misaligned drafts) give tasks whose every turn's tests
pass on that turn's reference and fail on the previous turn's, checked by running them (`refine`'s validation), and
`refine --model reference` scores them at Avg Acc 1.0; the ablations let the weaker drafts through; a second
invocation builds nothing again."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.datasets.examples import example_script_path
from projectgen.datasets.multiturn import (TURN_SUITE, TaskCheck, load_multiturn_dataset, load_multiturn_task,
                                           turn_task)
from projectgen.experiments.executors import LocalExecutor
from projectgen.llm import ScriptedChatModel
from projectgen.experiments.results_writer import render_markdown
from projectgen.protocols.multiturn_construction.batch import (ConstructionResults, ConstructionSpec, construction_page,
                                                               run_construction)
from projectgen.protocols.multiturn_construction.seeds import bundled_seeds_dir
from projectgen.protocols.multiturn_construction.settings import ConstructionSettings

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
def built(tmp_path_factory, env_cache):
    """The issue's command, as written (and the module's environment cache)."""
    out = tmp_path_factory.mktemp("construct") / "A"
    assert main(["construct", "multiturn", "--seeds", "examples", "--model", "scripted:examples", "--out", str(out),
                 "--cache-dir", str(env_cache)]) == 0
    return out, ConstructionResults.model_validate_json((out / "results.json").read_text())


def trajectory(out: Path, seed: str) -> dict:
    return json.loads((out / seed / "construction.json").read_text())


def test_the_bundled_seeds_become_four_tasks_and_the_short_one_is_filtered(built):
    out, results = built
    outcomes = {row.seed: row for row in results.outcomes}
    assert {seed: row.status for seed, row in outcomes.items()} == {
        "clamp": "filtered", "grading": "task", "inventory": "task", "rle": "task", "wrap": "task"}
    assert "clamp's body has 1 code line(s), fewer than 10" in outcomes["clamp"].reason
    assert all(outcomes[seed].turns == 3 and outcomes[seed].input_tokens > 0
               for seed in ("grading", "inventory", "rle", "wrap"))
    tasks, errors = load_multiturn_dataset(out)
    assert [(task.id, task.level) for task in tasks] == [("grading", "function"), ("inventory", "function"),
                                                         ("rle", "function"), ("wrap", "repository")]
    assert errors == {} and tasks[3].snapshot().keys() == {"textkit/__init__.py", "textkit/case.py"}
    # the repository-level task answers its target function each turn, the code above it the local context
    assert [task.function for task in tasks] == [None, None, None, "wrap_words"]
    assert "def _pieces(" in tasks[3].local_context(1) and tasks[3].answer(3).startswith("def wrap_words(")
    assert results.review() == [] and not list(out.glob("runs/*/review.json"))  # no seed waits for a person
    assert "4 task(s) built" in (out / "results.md").read_text()
    assert outcomes["rle"].cost_usd == 0.0 and outcomes["rle"].calls == 12  # a replay is priced at nothing


def test_refine_scores_the_reference_at_full_marks_and_every_turn_tells_its_code_from_the_previous(built, env_cache):
    out, _ = built
    refined = out.parent / "R"
    assert main(["refine", "--dataset", str(out), "--model", "reference", "--strategy", "fh", "--context", "basic",
                 "--out", str(refined), "--cache-dir", str(env_cache)]) == 0
    results = json.loads((refined / "results.json").read_text())
    assert [(e["tasks"], e["avg_acc"], e["completion_rate"]) for e in results["summary"]] == [(4, 1.0, 1.0)]
    # refine's validation ran every turn's tests on its reference and on the previous turn's, in the sandbox
    checks = [TaskCheck.model_validate(check) for check in results["validation"]]
    assert [check.task_id for check in checks] == ["grading", "inventory", "rle", "wrap"]
    for check in checks:
        assert check.valid and [turn.discriminative for turn in check.turns] == [None, True, True], check.problems()
        assert all(turn.previous_passed < turn.previous_total for turn in check.turns[1:])


def test_the_weak_drafts_were_refused_for_the_reason_each_stage_gives(built):
    out, _ = built
    decisions = {seed: [[draft["decision"] for draft in turn["drafts"]] for turn in trajectory(out, seed)["turns"]]
                 for seed in ("grading", "inventory", "rle", "wrap")}
    assert decisions == {"grading": [["test_failed", "kept"], ["kept"], ["kept"]],
                         "inventory": [["kept"], ["kept"], ["test_refine", "kept"]],
                         "rle": [["kept"], ["not_discriminative", "kept"], ["kept"]],
                         "wrap": [["kept"], ["kept"], ["kept"]]}
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


def test_the_results_page_names_the_construction_choices_docs_fidelity_names():
    """results.md said only the ablation: the contamination check (off, or its probes and their union), the
    body-line filter and how it counts, and the docstring-to-instruction step were in results.json alone."""
    settings = ConstructionSettings(contamination=True, contamination_models=("a:x", "b:y", "c:z"),
                                    min_function_lines=12, docstring_instructions=False).protocol()
    page = render_markdown(construction_page(ConstructionResults(seeds="s", model="m", model_description="m",
                                                                 settings=settings, outcomes=[])))
    line = next(line for line in page.splitlines() if line.startswith("Settings (docs/fidelity.md)"))
    assert f"contamination True (probes: a:x, b:y, c:z; {settings['contamination_rule']})" in line
    assert f"min_function_lines 12 ({settings['length_measure']})" in line and "docstring_instructions False" in line
