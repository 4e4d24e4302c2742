"""The refinement graph: what each strategy and context shows the model at each turn, and the turn records.

Tests run through a fake `evaluate` (a turn passes when the code holds the turn's marker) except where
said; the sandbox path is covered by tests/experiments/test_refinement.py.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from projectgen.agents.base import ModelGateway
from projectgen.protocols.refinement.refiner import Refiner, RefinerReply, localized_context, turn_messages
from projectgen.datasets.multiturn import bundled_dataset_dir, load_multiturn_task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import Outcome, TestReport, TestResult
from projectgen.protocols.refinement.graph import (RefinementContext, build_refinement_graph, initial_refinement_state,
                                          recursion_limit)
from projectgen.llm import CallCache, UsageRecorder
from projectgen.llm.scripted import scripted_chat_model_class
from projectgen.oracles.refinement_replay import reference_turn_script
from projectgen.prompts import load_prompt
from projectgen.repository.edits import fenced_python

from test_support import write_multiturn_task


def marked_task(root: Path, turns: int = 3):
    """A task whose turn k's reference holds the marker `# turn k`."""
    specs = [(f"requirement {k}", f"# turn {k}\nVALUE = {k}\n",
              {f"test_t{k}.py": f"def test_{k}():\n    assert True\n"}) for k in range(1, turns + 1)]
    return load_multiturn_task(write_multiturn_task(root, specs))


def fake_evaluate(task, candidate):
    """Passes when the candidate's file holds the marker of the turn (task id ends in .turnK)."""
    number = int(task.id.rsplit("turn", 1)[1])
    ok = f"# turn {number}" in next(iter(candidate.values()))
    return TestReport(task_id=task.id, suite="check",
                      tests=[TestResult(nodeid="t", outcome=Outcome.PASSED if ok else Outcome.FAILED)])


class RecordingRefiner:
    """Answers turn k from `answers[k]` and keeps every prompt it was shown."""

    def __init__(self, answers: dict[int, str]):
        self.prompt = load_prompt("refine")
        self.answers = answers
        self.seen: dict[int, list[tuple[str, str]]] = {}

    async def answer(self, gateway, messages, *, task_id: str, turn: int, language: str = "python") -> RefinerReply:
        self.seen[turn] = list(messages)
        text = self.answers[turn]
        return RefinerReply(text=text, code=text.split("```python\n")[-1].split("```")[0], input_tokens=10 * turn,
                            output_tokens=turn)


def play(task, refiner, strategy: str, context: str, **kwargs):
    graph = build_refinement_graph(refiner, strategy, context)
    ctx = RefinementContext(task=task, evaluate=kwargs.pop("evaluate", fake_evaluate), **kwargs)
    return asyncio.run(graph.ainvoke(initial_refinement_state(task, strategy, context), context=ctx,
                                     config={"recursion_limit": recursion_limit(task)}))


WRONG_2 = {1: "first\n" + fenced_python("# turn 1\n"), 2: "second\n" + fenced_python("# forgot\n"), 3: fenced_python("# turn 3\n")}


def test_every_turn_is_played_and_recorded_even_after_a_failed_turn(tmp_path: Path):
    task = marked_task(tmp_path / "t")
    final = play(task, RecordingRefiner(WRONG_2), "fh", "basic")
    records = sorted(final["turns"], key=lambda r: r["turn"])
    assert [(r["turn"], r["passed"]) for r in records] == [(1, True), (2, False), (3, True)]
    assert [(r["input_tokens"], r["output_tokens"]) for r in records] == [(10, 1), (20, 2), (30, 3)]
    assert records[1]["code"] == "# forgot\n" and records[1]["failing"] == ["t"] and final["turn"] == 4


def test_full_history_basic_shows_the_models_own_answers_and_golden_the_references(tmp_path: Path):
    task = marked_task(tmp_path / "t")
    basic = RecordingRefiner(WRONG_2)
    play(task, basic, "fh", "basic")
    roles = [role for role, _ in basic.seen[3]]
    assert roles == ["system", "human", "ai", "human", "ai", "human"]
    assert basic.seen[3][1][1].endswith("requirement 1\n") and basic.seen[3][5][1] == "requirement 3"
    assert basic.seen[3][2][1] == WRONG_2[1] and basic.seen[3][4][1] == WRONG_2[2]  # the raw replies
    golden = RecordingRefiner(WRONG_2)
    play(task, golden, "fh", "golden")
    assert golden.seen[3][2][1] == fenced_python(task.reference_code(1)) and golden.seen[3][4][1] == fenced_python(
        task.reference_code(2))


def test_code_edit_carries_the_previous_code_and_only_the_new_instruction(tmp_path: Path):
    task = marked_task(tmp_path / "t")
    basic = RecordingRefiner(WRONG_2)
    play(task, basic, "ce", "basic")
    assert [role for role, _ in basic.seen[1]] == ["system", "human"]
    assert basic.seen[1][1][1].strip() == "requirement 1"  # nothing to edit yet
    turn3 = basic.seen[3][1][1]
    assert "# forgot" in turn3 and "requirement 3" in turn3 and "requirement 2" not in turn3
    golden = RecordingRefiner(WRONG_2)
    final = play(task, golden, "ce", "golden")
    assert "# turn 2" in golden.seen[3][1][1] and "# forgot" not in golden.seen[3][1][1]
    assert [r["passed"] for r in sorted(final["turns"], key=lambda r: r["turn"])] == [True, False, True]


def test_cumulative_instruction_lists_every_requirement_and_no_code(tmp_path: Path):
    task = marked_task(tmp_path / "t")
    refiner = RecordingRefiner(WRONG_2)
    play(task, refiner, "ci", "basic")
    assert len(refiner.seen[3]) == 2
    text = refiner.seen[3][1][1]
    assert "1. requirement 1" in text and "2. requirement 2" in text and "3. requirement 3" in text
    assert "# forgot" not in text and "# turn" not in text
    with pytest.raises(ProjectGenError, match="golden context does not apply"):
        build_refinement_graph(refiner, "ci", "golden")
    with pytest.raises(ProjectGenError, match="unknown strategy"):
        build_refinement_graph(refiner, "xx", "basic")


def test_repository_prompts_add_the_localized_context():
    task = load_multiturn_task(bundled_dataset_dir() / "kvstore-cli")
    context = localized_context(task)
    assert "`kvstore/cli.py` belongs to a repository" in context
    assert "class KVStore" in context and "def set(self, key: str, value: Any" in context  # signatures ...
    assert "_expired(entry, now)" not in context  # ... not bodies
    prompt = load_prompt("refine")
    for strategy in ("fh", "ce", "ci"):
        messages = turn_messages(prompt, target=task.target, strategy=strategy, requirements=["a", "b"],
                                 earlier_answers=["x"], previous_code="x = 1\n", context=context)
        assert "# Repository context" in messages[1][1], strategy
    function_level = load_multiturn_task(bundled_dataset_dir() / "roman")
    assert localized_context(function_level) == ""


def test_a_start_file_is_shown_before_turn_one(tmp_path: Path):
    root = write_multiturn_task(tmp_path / "t", [("r1", "# turn 1\n", {"test_1.py": "def test():\n    pass\n"}),
                                                 ("r2", "# turn 2\n", {"test_2.py": "def test():\n    pass\n"})],
                                extra_config='start = "start.py"\n')
    (root / "start.py").write_text("# the old file\n")
    task = load_multiturn_task(root)
    ce, fh = RecordingRefiner(WRONG_2), RecordingRefiner(WRONG_2)
    play(task, ce, "ce", "basic")
    play(task, fh, "fh", "basic")
    assert "# the old file" in ce.seen[1][1][1] and "# the old file" in fh.seen[1][1][1]


def test_the_real_refiner_goes_through_the_door_and_a_rerun_replays_from_the_call_cache(tmp_path: Path):
    task = marked_task(tmp_path / "t")
    script = reference_turn_script(task.id, [task.reference_code(k) for k in (1, 2, 3)])
    model = scripted_chat_model_class()(script=script, label=script.label)
    recorder = UsageRecorder(tmp_path / "usage.jsonl")
    gateway = ModelGateway(recorder=recorder, cache=CallCache(tmp_path / "calls.jsonl", scope="u"))
    final = play(task, Refiner(model), "ce", "basic", gateway=gateway)
    records = sorted(final["turns"], key=lambda r: r["turn"])
    assert all(r["passed"] for r in records) and len(model.calls) == 3
    assert [(c["role"], c["target"], c["iteration"]) for c in model.calls] == [("refiner", task.id, k) for k in (1, 2, 3)]
    assert sum(r["input_tokens"] + r["output_tokens"] for r in records) == recorder.totals().total_tokens
    again = scripted_chat_model_class()(script=script, label=script.label)
    rerun = play(task, Refiner(again), "ce", "basic",
                 gateway=ModelGateway(recorder=UsageRecorder(tmp_path / "usage.jsonl"),
                                      cache=CallCache(tmp_path / "calls.jsonl", scope="u")))
    assert again.calls == []  # every call answered from the cache
    assert [r["input_tokens"] for r in sorted(rerun["turns"], key=lambda r: r["turn"])] == [
        r["input_tokens"] for r in records]
    assert len(UsageRecorder.load(tmp_path / "usage.jsonl").records) == 3  # and not recorded twice


def test_a_turn_passes_only_with_as_many_passing_tests_as_its_reference(tmp_path: Path):
    task = marked_task(tmp_path / "t", turns=2)
    answers = {1: fenced_python("# turn 1\n"), 2: fenced_python("# turn 2\n")}
    final = play(task, RecordingRefiner(answers), "fh", "basic", expected={1: 1, 2: 2})
    assert [r["passed"] for r in sorted(final["turns"], key=lambda r: r["turn"])] == [True, False]
