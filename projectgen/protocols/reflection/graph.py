"""LiveRepoReflection's two-turn protocol on one exercise, as a graph: generate, test, repair, test, ...

    START -> write -> test -> (passed, or `tries` tries made) -> END
                        ^          |
                        +- repair <+

- ``write`` (try 1): the model gets the instructions, the solution files as they stand (stubs, or
  "does not exist yet") and the file list, and answers in the context's edit format; the reply is
  applied to the solution files (only those may be written).
- ``test``: the exercise's tests run in the sandbox on the files; the runner copies the test files
  from the task over the candidate before every run, so no reply can change them. A timeout is a
  failure. A run the harness could not make at all (`TestReport.error`: the environment did not
  build, ...) raises `TestHarnessError`: it says nothing about the model, so the task is not
  scored (a batch records it as retryable, never as a fail or a pass).
- ``repair`` (try 2, 3, ...): the model gets the current files and the failing tests' output,
  cleaned of timings and absolute paths (`projectgen.evaluation.feedback`), plus what of its last
  reply could not be applied, and answers in the same format.

Each try's record says whether its reply was well formed (parsed and applied exactly: a
whitespace-tolerant re-indented match does not count) and how its test run went. The nodes are
module-level functions over `ReflectionState` and `ReflectionContext`; `build_reflection_graph`
binds a coder (any `ReflectionGenerator`) and wires them, and compiles with a checkpointer when
given one (`projectgen.protocols.reflection.unit` does, so a killed run resumes where it stopped).
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from projectgen.agents.protocols import ReflectionGenerator
from projectgen.datasets.exercism import Exercise
from projectgen.evaluation.feedback import failure_log
from projectgen.evaluation.report import Outcome
from projectgen.graphs.context import ReflectionContext
from projectgen.graphs.loop import bind
from projectgen.graphs.state import ReflectionState
from projectgen.repository.edits import EditOutcome

DEFAULT_TRIES = 2  # the paper's: one generation, one repair


class TestHarnessError(RuntimeError):
    """The tests could not be run at all: a fault of the harness, not of the model's code."""

    __test__ = False  # not a pytest test class


def initial_reflection_state(exercise: Exercise) -> ReflectionState:
    """The state a run starts from: the exercise's stubs, no try yet."""
    return {"task_id": exercise.id, "repository": exercise.stubs(), "tries": [], "test_log": "",
            "edit_feedback": "", "passed_at": None}


def reply_update(attempt: int, outcome: EditOutcome) -> dict[str, Any]:
    """A try's reply in the state: the files after it, and its record (well formed = applied exactly)."""
    feedback = outcome.feedback()
    record = {"id": str(attempt), "try": attempt, "well_formed": outcome.exact, "applied": len(outcome.applied),
              "failed": len(outcome.failed), "reindented": len(outcome.reindented), "edit_feedback": feedback}
    return {"repository": dict(outcome.repo), "tries": [record], "edit_feedback": feedback}


async def write_solution(state: ReflectionState, runtime: Runtime[ReflectionContext], *,
                         coder: ReflectionGenerator) -> dict[str, Any]:
    """Node "write": try 1, from the instructions and the stubs."""
    ctx = runtime.context
    ctx.say(f"try 1: asking for the solution ({ctx.edit_format})")
    outcome = await coder.write(ctx.gateway, ctx.exercise, dict(state.get("repository") or {}), ctx.edit_format)
    return reply_update(1, outcome)


async def run_tests(state: ReflectionState, runtime: Runtime[ReflectionContext]) -> dict[str, Any]:
    """Node "test": the exercise's tests on the current files, in the sandbox (no model call)."""
    ctx = runtime.context
    current = dict((state.get("tries") or [{}])[-1])
    candidate = ctx.exercise.candidate(dict(state.get("repository") or {}))
    report = await asyncio.to_thread(ctx.runner.evaluate, ctx.task, candidate, ctx.task.scored_suite)
    if report.error:
        raise TestHarnessError(f"the tests of {ctx.exercise.id} could not be run: {report.error}")
    passed = report.status == "passed"
    current.update(tests_passed=report.passed, tests_total=report.total, status=report.status,
                   timed_out=report.timed_out,
                   # what did not pass, by id (a test, or a test file that did not build or collect): a declared
                   # reference defect is matched, or found stale, by them
                   failed_tests=[test.nodeid for test in report.tests if test.outcome is not Outcome.PASSED]
                   + [error.nodeid for error in report.collection_errors],
                   integrity_flags=[flag.model_dump(mode="json") for flag in report.integrity_flags])
    ctx.say(f"try {current.get('try')}: {report.passed}/{report.total} tests pass"
            + ("" if current.get("well_formed") else " (the reply was not well formed)"))
    update: dict[str, Any] = {"tries": [current], "test_log": "" if passed else failure_log(report)}
    if passed:
        update["passed_at"] = current.get("try")
    return update


async def repair_solution(state: ReflectionState, runtime: Runtime[ReflectionContext], *,
                          coder: ReflectionGenerator) -> dict[str, Any]:
    """Node "repair": the next try, from the current files and the test output."""
    ctx = runtime.context
    attempt = len(state.get("tries") or []) + 1
    ctx.say(f"try {attempt}: asking for a repair")
    outcome = await coder.repair(ctx.gateway, ctx.exercise, dict(state.get("repository") or {}), ctx.edit_format,
                                 test_log=state.get("test_log", ""), edit_feedback=state.get("edit_feedback", ""),
                                 attempt=attempt)
    return reply_update(attempt, outcome)


def after_tests(tries: int) -> Callable[[ReflectionState], str]:
    """Route after a test run: done when it passed or `tries` tries were made, else repair."""

    def route(state: ReflectionState) -> str:
        if state.get("passed_at") is not None or len(state.get("tries") or []) >= tries:
            return END
        return "repair"

    route.__name__ = "after_tests"
    return route


def build_reflection_graph(coder: ReflectionGenerator, tries: int = DEFAULT_TRIES, *, checkpointer: Any = None,
                           name: str = "reflection"):
    """The compiled protocol: at most `tries` replies (1 write, then repairs) and a test run after each.
    Run it with ``context=ReflectionContext(exercise, edit_format, ...)`` from `initial_reflection_state`."""
    if tries < 1:
        raise ValueError(f"tries must be at least 1, not {tries}")
    graph = StateGraph(ReflectionState, context_schema=ReflectionContext)
    graph.add_node("write", bind(write_solution, coder=coder))
    graph.add_node("test", run_tests)
    graph.add_node("repair", bind(repair_solution, coder=coder))
    graph.add_edge(START, "write")
    graph.add_edge("write", "test")
    graph.add_conditional_edges("test", after_tests(tries), ["repair", END])
    graph.add_edge("repair", "test")
    return graph.compile(checkpointer=checkpointer, name=name)
