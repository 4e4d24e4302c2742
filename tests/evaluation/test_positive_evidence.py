"""A pass needs positive evidence: the recorder's events for it, in its order, from a run that finished.

Signed events can still be written by code that holds the recorder's writer (docs/sandbox.md, what
remains); these are the runner's rules for what such a stream may claim (`runner._combine`,
`results_channel.hidden_tests_problem`).
"""
from __future__ import annotations

import pytest

from projectgen.evaluation.report import Outcome
from projectgen.evaluation.results_channel import hidden_tests_problem
from projectgen.evaluation.runner import OUT_OF_ORDER, _combine

STOPPED = "timed out while running"


def start(nodeid: str) -> dict:
    return {"event": "start", "nodeid": nodeid}


def report(nodeid: str, when: str, outcome: str = "passed", **extra: object) -> dict:
    return {"event": "report", "nodeid": nodeid, "when": when, "outcome": outcome, "duration": 0.5,
            "wasxfail": False, "message": "", **extra}


def passing(nodeid: str) -> list[dict]:
    return [start(nodeid), report(nodeid, "call"), report(nodeid, "teardown")]


FINISH = {"event": "finish", "exitstatus": 0}


def outcomes(events: list[dict], stop_seen: bool = False) -> dict[str, Outcome]:
    return {test.nodeid: test.outcome for test in _combine(events, STOPPED, stop_seen).tests}


def test_a_test_reported_in_the_recorders_order_passes() -> None:
    assert outcomes([*passing("t::a"), *passing("t::b"), FINISH]) == {"t::a": Outcome.PASSED, "t::b": Outcome.PASSED}


@pytest.mark.parametrize("events", [
    [start("t::a"), report("t::a", "call"), report("t::a", "call"), report("t::a", "teardown"), FINISH],
    [start("t::a"), start("t::a"), report("t::a", "call"), report("t::a", "teardown"), FINISH],
    [*passing("t::a"), *passing("t::a"), FINISH],
    [report("t::a", "call"), report("t::a", "teardown"), FINISH],
    [start("t::a"), report("t::a", "teardown"), report("t::a", "call"), FINISH],
    [start("t::a"), start("t::b"), report("t::a", "call"), report("t::a", "teardown"), FINISH],
    [*passing("t::a"), report("t::a", "call"), FINISH],
], ids=["two calls", "two starts", "run twice", "no start", "call after teardown", "another test between",
        "a call after its teardown"])
def test_a_test_reported_twice_or_out_of_order_fails(events: list[dict]) -> None:
    results = {test.nodeid: test for test in _combine(events, STOPPED, False).tests}
    assert results["t::a"].outcome is Outcome.FAILED and results["t::a"].message == OUT_OF_ORDER


def test_a_run_that_ended_on_its_own_without_the_finish_event_counts_no_pass() -> None:
    """`os._exit(0)` after the passes it wanted written: the process ended, nobody stopped it."""
    combined = _combine([*passing("t::a"), *passing("t::b")], "test process died while running", False)
    assert {test.outcome for test in combined.tests} == {Outcome.FAILED}
    assert "finish event" in combined.unfinished and "finish event" in combined.tests[0].message


def test_a_run_the_runner_stopped_keeps_the_passes_before_the_stop() -> None:
    combined = _combine([*passing("t::a"), start("t::b"), report("t::b", "call")], STOPPED, True)
    assert {test.nodeid: test.outcome for test in combined.tests} == {"t::a": Outcome.PASSED, "t::b": Outcome.ERROR}
    assert combined.unfinished is None


def test_subtests_may_fail_a_test_and_a_rerun_is_a_new_attempt() -> None:
    """pytest's subtests (unittest's subTest) report several calls; pytest-rerunfailures starts a test again."""
    events = [start("t::sub"), report("t::sub", "call", subtest=True), report("t::sub", "call", subtest=True),
              report("t::sub", "call"), report("t::sub", "teardown"),
              start("t::bad"), report("t::bad", "call", "failed", subtest=True), report("t::bad", "call"),
              report("t::bad", "teardown"),
              start("t::flaky"), report("t::flaky", "call", "rerun"), report("t::flaky", "teardown"),
              start("t::flaky"), report("t::flaky", "call"), report("t::flaky", "teardown"), FINISH]
    assert outcomes(events) == {"t::sub": Outcome.PASSED, "t::bad": Outcome.FAILED, "t::flaky": Outcome.PASSED}


def test_a_teardown_error_after_a_passing_call_counts_as_pytest_counts_it() -> None:
    """pytest says "1 passed, 1 error" and the benchmarks' harnesses (ProjectGen's, NL2Repo-Bench's) count the
    passed; a setup error or a failing call is still no pass."""
    events = [start("t::a"), report("t::a", "call"), report("t::a", "teardown", "failed", message="db left open"),
              start("t::b"), report("t::b", "setup", "failed"), report("t::b", "teardown"),
              start("t::c"), report("t::c", "call", "failed"), report("t::c", "teardown", "failed"), FINISH]
    tests = {test.nodeid: test for test in _combine(events, STOPPED, False).tests}
    assert {nodeid: test.outcome for nodeid, test in tests.items()} == {
        "t::a": Outcome.PASSED, "t::b": Outcome.ERROR, "t::c": Outcome.FAILED}
    assert "teardown failed" in tests["t::a"].message and "db left open" in tests["t::a"].message


def test_a_hidden_test_that_never_reported_in_a_finished_run_is_tampering() -> None:
    """The other languages' rule, for Python: a forged stream that leaves the canaries out."""
    canaries = ["t/test_c.py::test_c_sum", "t/test_c.py::TestC::test_c_length"]
    failing = [event for nodeid in canaries
               for event in (start(nodeid), report(nodeid, "call", "failed"), report(nodeid, "teardown"))]
    assert hidden_tests_problem(canaries, [*passing("t::a"), *failing, FINISH]) is None
    assert "never reported" in hidden_tests_problem(canaries, [*passing("t::a"), *failing[:3], FINISH])
    assert "never reported" in hidden_tests_problem(canaries, [*passing("t::a"), FINISH])
    assert hidden_tests_problem(canaries, [*passing("t::a")]) is None  # unfinished: `_combine`'s rule
    assert "passed" in hidden_tests_problem(canaries, [*passing(canaries[0]), FINISH])
