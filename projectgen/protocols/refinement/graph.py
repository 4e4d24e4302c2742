"""SR-Eval's multi-turn protocol as a graph: answer turn k, check it in the sandbox, go on to turn k+1.

`build_refinement_graph(refiner, strategy, context)` plays one multi-turn task
(`projectgen.datasets.multiturn.MultiTurnTask`) under one prompting strategy (Full History,
Code Edit, Cumulative Instruction) and one context setting (basic: the model's own code is
carried forward; golden: the previous turn's reference is). Every turn is played whatever the
earlier turns gave, as SR-Eval does, so Acc(k) can be measured at every turn:

    START -> answer (one model call, through the door) -> check (the turn's tests) -> answer ... -> END

A turn passes when the candidate (at repository level: the snapshot with the target replaced; with a
target function, the turn's reference file with that function replaced)
passes every test of the turn, and at least as many as the turn's reference does. The per-turn
records in the state hold the reply, the code, the tokens and the verdict; the metrics are
`projectgen.protocols.refinement.metrics`'s, the batch over tasks, strategies and contexts is
`projectgen.protocols.refinement.batch`.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from projectgen.agents.base import ModelGateway
from projectgen.protocols.refinement.refiner import (
    Refiner, check_setting, local_context_section, localized_context, start_section, turn_messages,
)
from projectgen.datasets.multiturn import TURN_SUITE, MultiTurnTask, turn_task
from projectgen.datasets.task import Task
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs.loop import bind
from projectgen.graphs.state import RefinementState, turn_record
from projectgen.repository.edits import fenced_code

FAILING_SHOWN = 20  # failing test ids kept per turn record


@dataclass
class RefinementContext:
    """What a refinement run needs besides its state: the task, how tests run, the gateway, progress.

    `evaluate(task, candidate)` runs a turn's tests (default: `runner.evaluate` with the turn suite);
    `expected` maps a turn to the tests its reference passes (from `check_multiturn_task`), which a
    candidate must pass too.
    """

    task: MultiTurnTask
    runner: SandboxRunner | None = None
    evaluate: Callable[[Task, Mapping[str, str]], TestReport] | None = None
    gateway: ModelGateway = field(default_factory=ModelGateway)
    expected: Mapping[int, int] = field(default_factory=dict)
    progress: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        if self.evaluate is None and self.runner is None:
            self.runner = SandboxRunner()

    def run_tests(self, task: Task, candidate: Mapping[str, str]) -> TestReport:
        if self.evaluate is not None:
            return self.evaluate(task, candidate)
        assert self.runner is not None
        return self.runner.evaluate(task, candidate, TURN_SUITE)

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)


def initial_refinement_state(task: MultiTurnTask, strategy: str, context: str) -> RefinementState:
    """The state a task starts from: turn 1, nothing played."""
    return {"task_id": task.id, "strategy": strategy, "context": context, "turn": 1, "last_turn": len(task.turns),
            "turns": []}


async def answer_turn(state: RefinementState, runtime: Runtime[RefinementContext], *, refiner: Refiner,
                      strategy: str, context: str) -> dict[str, Any]:
    """Node "answer": the prompt the strategy builds for this turn, one model call, the file in the reply."""
    ctx = runtime.context
    task, number = ctx.task, state["turn"]
    earlier = [turn_record(state, k) or {} for k in range(1, number)]
    if context == "golden":
        answers = [fenced_code(task.answer(k), task.language) for k in range(1, number)]
        previous_code = task.answer(number - 1)
    else:
        answers = [record.get("reply", "") for record in earlier]
        previous_code = earlier[-1].get("code", "") if earlier else task.answer(0)
    prompt = refiner.prompt if task.function is None else refiner.function_prompt
    messages = turn_messages(prompt, target=task.answer_name, strategy=strategy,
                             requirements=[turn.requirement for turn in task.turns[:number]],
                             earlier_answers=answers, previous_code=previous_code,
                             context=localized_context(task) + local_context_section(task, number),
                             start=start_section(task), language=task.language)
    ctx.say(f"{task.id} turn {number}/{len(task.turns)}: asking the model ({strategy}, {context})")
    reply = await refiner.answer(ctx.gateway, messages, task_id=task.id, turn=number, language=task.language)
    return {"turns": [{"id": str(number), "turn": number, "reply": reply.text, "code": reply.code,
                       "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens, "passed": None}]}


async def check_turn(state: RefinementState, runtime: Runtime[RefinementContext]) -> dict[str, Any]:
    """Node "check": the turn's tests on the candidate in the sandbox (no model call); then the next turn."""
    ctx = runtime.context
    task, number = ctx.task, state["turn"]
    record = turn_record(state, number) or {"id": str(number), "turn": number, "code": ""}
    report = await asyncio.to_thread(ctx.run_tests, turn_task(task, number),
                                     task.candidate(record.get("code", ""), number))
    expected = ctx.expected.get(number)
    passed = report.status == "passed" and (expected is None or report.passed >= expected)
    record.update(passed=passed, tests_passed=report.passed, tests_total=report.total, status=report.status,
                  failing=[t.nodeid for t in report.failures()][:FAILING_SHOWN]
                  + [e.nodeid for e in report.collection_errors][:FAILING_SHOWN],
                  error=report.error, integrity_flags=[flag.model_dump(mode="json") for flag in report.integrity_flags])
    ctx.say(f"{task.id} turn {number}/{len(task.turns)}: {'passed' if passed else 'failed'} "
            f"({report.passed}/{report.total} tests)")
    return {"turns": [record], "turn": number + 1}


def next_turn(state: RefinementState) -> str:
    """After a check: the next turn, or the end once the last turn was checked."""
    return "answer" if state["turn"] <= state["last_turn"] else END


def build_refinement_graph(refiner: Refiner, strategy: str = "fh", context: str = "basic"):
    """The compiled graph playing every turn of a task (in the runtime context) under `strategy` and `context`.

    `refiner` has a `prompt` (and a `function_prompt` for tasks with a target function) and
    ``answer(gateway, messages, task_id=, turn=)`` (the default `Refiner`).
    Golden context with Cumulative Instruction is refused: that strategy carries no code.
    """
    check_setting(strategy, context)
    graph = StateGraph(RefinementState, context_schema=RefinementContext)
    graph.add_node("answer", bind(answer_turn, refiner=refiner, strategy=strategy, context=context))
    graph.add_node("check", check_turn)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", "check")
    graph.add_conditional_edges("check", next_turn, ["answer", END])
    return graph.compile(name=f"refinement-{strategy}-{context}")


def recursion_limit(task: MultiTurnTask) -> int:
    """LangGraph's step limit for a task: two nodes per turn and some room."""
    return 2 * len(task.turns) + 10
