"""`construct multiturn` seeds a person must look at: REQUIREMENT_REFINE and the caps pause the seed's graph with
LangGraph's interrupt (checkpointed in OUT/runs/SEED, as `run --review` pauses a run), the batch finishes the
other seeds and exits 3, and `projectgen review OUT/runs/SEED` decides: approve, edit (checked) or reject (one more
draft with the person's feedback); the seed then goes on from its checkpoint without paying a call twice.

The models are scripted replays. The end-to-end test runs the sandbox; the others answer test runs with a fake
runner that reads the tests it is given (no code runs)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.datasets.examples import example_script_path
from projectgen.datasets.multiturn import TURN_SUITE, check_multiturn_task, load_multiturn_task
from projectgen.graphs.review import ReviewDecision, ReviewError
from projectgen.llm import ScriptedChatModel, UsageRecorder
from projectgen.protocols.multiturn_construction.batch import (ConstructionResults, ConstructionSpec, continue_seed,
                                                               run_construction)
from projectgen.protocols.multiturn_construction.review import parse_construction_decision
from projectgen.protocols.multiturn_construction.seeds import bundled_seeds_dir
from projectgen.protocols.multiturn_construction.settings import ConstructionSettings
from projectgen.runs.folder import RunFolder
from projectgen.runs.pending_review import read_pending_review
from tests.construction.test_construct_multiturn_logic import RETAIN_ALL, FakeRunner, draft

REQUIREMENT_REFINE = {"decision": "REQUIREMENT_REFINE", "feedback": "say what a run of one character gives"}


def calls(run_dir: Path) -> list[tuple[str, str, int]]:
    """(role, target, iteration) of every model call the seed's run recorded."""
    return [(r.role, r.target, r.iteration) for r in UsageRecorder.load(RunFolder(run_dir).usage).records]


def test_requirement_refine_pauses_the_seed_the_batch_exits_3_and_an_approval_writes_a_valid_task(
        tmp_path: Path, env_cache: Path, runner, capsys):
    bundled = json.loads(example_script_path("construct-multiturn").read_text())
    bundled["responses"].append({"role": "alignment_evaluator", "target": "rle/turn2", "iteration": 2,
                                 "content": REQUIREMENT_REFINE})
    script = tmp_path / "script.json"
    script.write_text(json.dumps(bundled))
    out, run_dir = tmp_path / "A", tmp_path / "A" / "runs" / "rle"
    assert main(["construct", "multiturn", "--seeds", "examples", "--model", f"scripted:{script}", "--only",
                 "clamp,rle", "--out", str(out), "--cache-dir", str(env_cache)]) == 3
    printed = capsys.readouterr().out
    assert f"projectgen review {run_dir} --approve" in printed and "say what a run of one" in printed
    results = ConstructionResults.model_validate_json((out / "results.json").read_text())
    assert {row.seed: row.status for row in results.outcomes} == {"clamp": "filtered", "rle": "review"}
    assert not (out / "rle").exists()  # (a second seed built beside a paused one: the tests below, without sandbox)
    assert RunFolder(run_dir).read_manifest().status == "awaiting-review"
    pending = read_pending_review(RunFolder(run_dir))
    assert (pending["stage"], pending["request"]["turn"], pending["request"]["actions"]) == (
        "turn", 2, ["approve", "edit", "reject"])
    before = calls(run_dir)

    assert main(["review", str(run_dir)]) == 0  # shows what waits, decides nothing
    shown = capsys.readouterr().out
    assert "the requirement of turn 2" in shown and "def encode" in shown and "test_rle_turn2.py" in shown
    assert main(["review", str(run_dir), "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {"turns/2/requirement.md", "turns/2/reference.py",
                                                        "turns/2/tests/test_rle_turn2.py"}

    assert main(["review", str(run_dir), "--approve", "--cache-dir", str(env_cache)]) == 0
    # nothing before the pause ran again: the calls after it are turn 3's only
    assert calls(run_dir)[:len(before)] == before
    assert calls(run_dir)[len(before):] == [("turn_coder", "rle/turn3", 1), ("alignment_evaluator", "rle/turn3", 1)]
    task = load_multiturn_task(out / "rle")
    check = check_multiturn_task(task, lambda turn, candidate: runner.evaluate(turn, candidate, TURN_SUITE))
    assert check.valid and [turn.discriminative for turn in check.turns] == [None, True, True], check.problems()
    trajectory = json.loads((out / "rle" / "construction.json").read_text())
    assert [r["action"] for r in trajectory["reviews"]] == ["approve"]
    assert [d["decision"] for d in trajectory["turns"][1]["drafts"]] == ["not_discriminative", "requirement_refine"]
    results = ConstructionResults.model_validate_json((out / "results.json").read_text())
    assert {row.seed: row.status for row in results.outcomes} == {"clamp": "filtered", "rle": "task"}
    assert RunFolder(run_dir).read_manifest().status == "finished" and not RunFolder(run_dir).review.exists()
    assert main(["review", str(run_dir), "--approve"]) == 2  # nothing waits any more: one line
    assert "no review is pending" in capsys.readouterr().err


# --------------------------------------------------------------------------- the other decisions, no sandbox

def fake_runner() -> FakeRunner:
    return FakeRunner(lambda code, tests: not ("@v1" in code and "@t2" in tests))  # turn 2's tests fail on turn 1


def write_script(path: Path, extra: list[dict]) -> Path:
    responses = [{"role": "decomposer", "content": {"core": "c", "evolving": ["e"]}},
                 {"role": "requirement_evaluator", "content": RETAIN_ALL},
                 {"role": "analyzer", "content": {"edges": [[0, 1]]}},
                 {"role": "alignment_evaluator", "content": {"decision": "RETAIN"}}]
    for name, target in (("grading", "grading.py"), ("rle", "rle.py")):
        for turn in (1, 2):
            responses.append({"role": "turn_coder", "target": f"{name}/turn{turn}",
                              "content": draft(f"# {name} @v{turn}", f"# tests @t{turn}", target)})
    path.write_text(json.dumps({"label": "test", "responses": responses + extra}))
    return path


def build(tmp_path: Path, extra: list[dict], settings: ConstructionSettings = ConstructionSettings(),
          runner: FakeRunner | None = None) -> tuple[ConstructionResults, Path, Path]:
    script = write_script(tmp_path / "s.json", extra)
    out = tmp_path / "out"
    results = run_construction(ConstructionSpec(seeds=bundled_seeds_dir(), spec=f"scripted:{script}",
                                                only=("grading", "rle"), settings=settings),
                               out, model=ScriptedChatModel.from_file(script), runner=runner or fake_runner())
    return results, out, out / "runs" / "rle"


def prompts(run_dir: Path) -> str:
    return RunFolder(run_dir).prompts.read_text()


def test_a_rejection_is_one_more_draft_with_the_feedback_in_the_coders_prompt(tmp_path: Path):
    results, out, run_dir = build(tmp_path, [
        {"role": "alignment_evaluator", "target": "rle/turn1", "content": REQUIREMENT_REFINE},
        {"role": "alignment_evaluator", "target": "rle/turn1", "iteration": 2, "content": {"decision": "RETAIN"}}])
    assert {row.seed: row.status for row in results.outcomes} == {"grading": "task", "rle": "review"}
    assert "person reviewed" not in prompts(run_dir)
    outcome = continue_seed(run_dir, ReviewDecision(action="reject", feedback="name the function `encode`"),
                            runner=fake_runner())
    assert outcome.status == "task" and outcome.turns == 2
    assert ("turn_coder", "rle/turn1", 2) in calls(run_dir)
    assert "A person reviewed your last draft and asks: name the function `encode`" in prompts(run_dir)
    drafts = json.loads((out / "rle" / "construction.json").read_text())["turns"][0]["drafts"]
    assert [d["decision"] for d in drafts] == ["requirement_refine", "kept"]


def test_a_turn_over_the_cap_pauses_without_approve_and_a_checked_edit_goes_on(tmp_path: Path, capsys):
    always = FakeRunner()  # every test passes on every code: turn 2 never tells itself from turn 1
    results, out, run_dir = build(tmp_path, [], ConstructionSettings(turn_cap=2), always)
    rows = {row.seed: row for row in results.outcomes}
    assert rows["rle"].status == "review" and rows["rle"].reason.startswith("turn 2: no draft kept in 2 iterations")
    request = read_pending_review(RunFolder(run_dir))["request"]
    assert request["actions"] == ["edit", "reject"] and "did not pass stages 1 and 2" in request["approve_refused"]
    with pytest.raises(ReviewError, match="cannot approve"):
        parse_construction_decision({"action": "approve"}, request)
    assert main(["review", str(run_dir), "--approve"]) == 2
    assert "cannot approve" in capsys.readouterr().err
    with pytest.raises(ReviewError, match="not valid Python"):
        parse_construction_decision({"action": "edit", "files": {"turns/2/reference.py": "def ("}}, request)
    with pytest.raises(ReviewError, match="is not a file of turn 2"):
        parse_construction_decision({"action": "edit", "files": {"turns/3/reference.py": "x = 1"}}, request)
    assert RunFolder(run_dir).read_manifest().status == "awaiting-review"  # a refused decision changed nothing

    tests = "turns/2/tests/test_rle_turn2.py"
    still = continue_seed(run_dir, ReviewDecision(action="edit", files={tests: "# my tests\n"}), runner=always)
    assert still.status == "review"  # the edit does not tell turn 2 from turn 1: asked again, with why
    again = read_pending_review(RunFolder(run_dir))["request"]
    assert again["error"].startswith("the edited turn did not pass: Stage 2 (distinctiveness)")
    telling = FakeRunner(lambda code, tests: not ("@v1" in code and "@mine" in tests))
    done = continue_seed(run_dir, ReviewDecision(action="edit", files={tests: "# tests @mine\n"}), runner=telling)
    assert done.status == "task"
    task = load_multiturn_task(out / "rle")
    assert (out / "rle" / "turns" / "2" / "tests" / "test_rle_turn2.py").read_text() == "# tests @mine\n"
    assert task.turns[1].requirement == "e"
    reviews = json.loads((out / "rle" / "construction.json").read_text())["reviews"]
    assert [(r["action"], r["edited"]) for r in reviews] == [("edit", [tests])] * 2


def test_requirements_over_the_cap_pause_and_a_persons_requirements_are_built(tmp_path: Path):
    refine = {"requirements": [{"requirement": 0, "testability": 1, "completeness": 1, "distinctiveness": 1,
                                "authenticity": 1, "decision": "refine", "feedback": "vague"}]}
    results, out, run_dir = build(tmp_path, [{"role": "requirement_evaluator", "target": "rle", "content": refine}],
                                  ConstructionSettings(decomposition_cap=1))
    assert {row.seed: row.status for row in results.outcomes} == {"grading": "task", "rle": "review"}
    request = read_pending_review(RunFolder(run_dir))["request"]
    assert request["stage"] == "requirements" and request["editable"] == {"turns/1/requirement.md": "c",
                                                                        "turns/2/requirement.md": "e"}
    with pytest.raises(ReviewError, match="turns 1 to N"):
        parse_construction_decision({"action": "edit", "files": {"turns/2/requirement.md": "x"}}, request)
    edit = {"turns/1/requirement.md": "encode runs", "turns/2/requirement.md": "and decode them"}
    outcome = continue_seed(run_dir, ReviewDecision(action="edit", files=edit), runner=fake_runner())
    assert outcome.status == "task"
    assert [turn.requirement for turn in load_multiturn_task(out / "rle").turns] == ["encode runs",
                                                                                     "and decode them"]
    # the decomposition was not drafted again: one Decomposer and one Evaluator call in all
    assert [c for c in calls(run_dir) if c[0] in ("decomposer", "requirement_evaluator")] == [
        ("decomposer", "rle", 1), ("requirement_evaluator", "rle", 1)]

