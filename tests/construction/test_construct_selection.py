"""The decisions of exercise construction on known inputs: decontamination, the cross-execution matrix, difficulty."""
from __future__ import annotations

import random

import pytest

from projectgen.construction.execution import Execution
from projectgen.datasets.examples import example_exercises_dir
from projectgen.datasets.exercism import load_exercises
from projectgen.protocols.exercise_construction.cross_execution import select_pair
from projectgen.protocols.exercise_construction.decontamination import decontaminate, jaccard, shingles
from projectgen.protocols.exercise_construction.difficulty import (FAILURE_FAILURE, FAILURE_THEN_SUCCESS, SUCCESS,
                                                                   TIMEOUT, judge_outcome, select_by_difficulty)


# --------------------------------------------------------------------------- decontamination

def test_shingles_and_jaccard_by_hand() -> None:
    assert shingles("AB  cdEF") == {"ab cd", "b cde", " cdef"}
    assert shingles("abc") == {"abc"}
    assert jaccard({"a", "b", "c"}, {"b", "c", "d"}) == 0.5
    assert jaccard(set(), set()) == 0.0


def near_copy(text: str, rng: random.Random, edits: int) -> str:
    """`text` with `edits` words swapped for made-up ones: a planted near-duplicate."""
    words = text.split(" ")
    for index in rng.sample(range(len(words)), edits):
        words[index] = "zq" + words[index][::-1]
    return " ".join(words)


def test_exactly_the_planted_near_duplicates_are_removed() -> None:
    references = {e.id: e.instructions for e in load_exercises(example_exercises_dir()).exercises}
    rng = random.Random(7)
    planted = {f"copy-of-{name}": near_copy(text, rng, 2) for name, text in sorted(references.items())[:4]}
    # Other candidates: the same domain in other words, and a text sharing about half of a reference (which an
    # LSH index at a lower threshold might propose, and the exact check must keep).
    first = sorted(references)[4]
    half = references[first][: len(references[first]) // 2] + " Then also print a table of every unit, " \
        "sorted by name, with its factor and a short note on where it is used in practice, one per line."
    fresh = {"fresh-stack": "Write a stack machine that reads postfix tokens and evaluates them, with errors "
                            "for an empty stack and unknown operators.",
             "fresh-half": half}
    candidates = {**fresh, **planted}
    kept, removed = decontaminate(candidates, references)
    assert {match.candidate for match in removed} == set(planted)
    assert kept == list(fresh)
    for match in removed:
        assert match.reference == match.candidate.removeprefix("copy-of-")
        assert match.jaccard > 0.8
        assert match.jaccard == pytest.approx(jaccard(shingles(candidates[match.candidate]),
                                                      shingles(references[match.reference])))
    assert jaccard(shingles(half), shingles(references[first])) < 0.8


# --------------------------------------------------------------------------- cross-execution

def run(passed: int, total: int, anomaly: str | None = None) -> Execution:
    return Execution({f"t{i}": "passed" if i < passed else "failed" for i in range(total)}, anomaly)


def test_the_lowest_pass_rate_test_and_the_highest_pass_solution_are_kept() -> None:
    tests, solutions = ["t1", "t2", "t3"], ["s1", "s2", "s3"]
    matrix = {
        ("t1", "s1"): run(4, 4), ("t1", "s2"): run(4, 4), ("t1", "s3"): run(2, 4),   # t1: (1 + 1 + .5) / 3
        ("t2", "s1"): run(3, 6), ("t2", "s2"): run(6, 6), ("t2", "s3"): run(0, 6),   # t2: (.5 + 1 + 0) / 3
        ("t3", "s1"): run(0, 2), ("t3", "s2"): run(0, 2, "timeout"),                  # t3: 0 -> human review
        ("t3", "s3"): run(0, 2),
    }
    chosen = select_pair(tests, solutions, matrix)
    assert (chosen.test, chosen.solution) == ("t2", "s2")
    assert chosen.test_rates == pytest.approx({"t1": 2.5 / 3, "t2": 0.5, "t3": 0.0})
    # s2's timeout with t3 is dropped, not counted as a failure: s2 = (1 + 1) / 2.
    assert chosen.solution_rates == pytest.approx({"s1": 1.5 / 3, "s2": 1.0, "s3": 0.5 / 3})
    assert chosen.anomalies == {"t3 x s2": "timeout"}
    assert chosen.human_review == ["test t3: no solution passes any of its tests"]
    assert chosen.reason is None


def test_no_pair_when_the_best_solution_fails_the_hardest_test_or_nothing_passes() -> None:
    matrix = {("t1", "s1"): run(2, 2), ("t1", "s2"): run(1, 2), ("t2", "s1"): run(1, 4), ("t2", "s2"): run(2, 4)}
    chosen = select_pair(["t1", "t2"], ["s1", "s2"], matrix)
    assert chosen.test is None and chosen.solution is None
    assert "does not pass the kept test suite t2" in chosen.reason and chosen.reason in chosen.human_review
    nothing = select_pair(["t1"], ["s1", "s2"], {("t1", "s1"): run(0, 3), ("t1", "s2"): run(0, 3, "build: x")})
    assert nothing.test is None and nothing.reason == "no test suite passes on any solution"
    assert "solution s1: passes no test of any suite" in nothing.human_review


# --------------------------------------------------------------------------- difficulty

def test_judge_outcomes_and_the_difficulty_filter() -> None:
    assert judge_outcome([{"timed_out": False}], 1) == SUCCESS
    assert judge_outcome([{}, {}], 2) == FAILURE_THEN_SUCCESS
    assert judge_outcome([{}, {}], None) == FAILURE_FAILURE
    assert judge_outcome([{}, {"timed_out": True}], None) == TIMEOUT
    easy = select_by_difficulty({"a": SUCCESS, "b": SUCCESS})
    assert not easy.keep and "too easy" in easy.reason and easy.counts[SUCCESS] == 2
    kept = select_by_difficulty({"a": SUCCESS, "b": FAILURE_THEN_SUCCESS, "c": FAILURE_FAILURE})
    assert kept.keep and kept.counts == {SUCCESS: 1, FAILURE_THEN_SUCCESS: 1, FAILURE_FAILURE: 1, TIMEOUT: 0}
    slow = select_by_difficulty({"a": FAILURE_FAILURE, "b": TIMEOUT})
    assert not slow.keep and slow.reason.startswith("timeout filter")
