"""The baselines LiveCoder's paper compares against, as graphs over `ProjectState`:

- Direct: one call, the documents in, the whole repository out as files.
- Self-Reflection: Direct, then up to `rounds` (default 4) rounds of: run the check tests in the
  sandbox (the hidden unit tests with `Settings.feedback_suite` "unit": LiveCoder's protocol where a
  benchmark has no visible tests), give the errors back, take the files the model rewrites. It stops
  early once every such test passes (or the tests cannot be run at all). With `carry_reflections` (the paper
  profile) each round first asks for a verbal reflection on the errors, kept in the round's edit
  record; every later round's reflection and fix are asked with all the reflections so far.

A file of a reply that is not valid Python is not accepted (`projectgen.repository.syntax`):
it keeps its previous version (Direct: it is left out), the refusal is recorded (`rejected`), and
Self-Reflection's next round gives its syntax error back with the test errors.

Their state is the project graph's, so LiveCoder's attempts graph wraps them like the
project graph: `repository` is the output, and each check run is a "code" verdict (judge
"check_tests"), so attempt records show its check-test status like a ProjectGen attempt's.
"""
from __future__ import annotations

import asyncio
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from projectgen.agents.base import Verdict
from projectgen.agents.code_judge import check_status, error_log, feedback_tests, run_feedback_tests
from projectgen.agents.protocols import RepositoryGenerator
from projectgen.config import FeedbackSuite, Settings
from projectgen.graphs.context import RunContext
from projectgen.graphs.loop import after_judge, bind
from projectgen.graphs.state import (
    ProjectState, documents_of, iteration_of, last_verdict, rejection_records, rejections_of, verdict_record,
)
from projectgen.repository.syntax import keep_parsable, rejection_feedback

STAGE = "code"  # the rounds count as code rounds: attempt records read the check status from this stage
CHECK_JUDGE = "check_tests"
REFLECTION_ROUNDS = 4


async def generate_directly(state: ProjectState, runtime: Runtime[RunContext], *,
                            generator: RepositoryGenerator) -> dict[str, Any]:
    """Node "direct": the whole repository from the documents, in one call."""
    ctx = runtime.context
    ctx.say("direct: writing the whole repository in one call")
    outcome = await generator.generate(ctx.gateway, documents_of(state), guidance=state.get("guidance", ""))
    repository, refused = keep_parsable(outcome.repo, {})
    if not repository:
        ctx.say("direct: the reply held no usable file")
    errors = "\n".join([outcome.feedback(), *(rejection_feedback(p, e) for p, e in sorted(refused.items()))])
    return {"repository": repository, "iterations": {STAGE: 1}, "rejected": rejection_records(STAGE, 1, refused),
            "generation_errors": {STAGE: errors.strip() or None}}


async def run_check_tests(state: ProjectState, runtime: Runtime[RunContext], *, log_chars: int,
                          cap: int, suite: FeedbackSuite = "check") -> dict[str, Any]:
    """Node "check": the feedback suite (`Settings.feedback_suite`: the check tests, or the hidden unit tests
    where LiveCoder's protocol gives those) on the current repository, as a verdict (no model call)."""
    ctx = runtime.context
    iteration = iteration_of(state, STAGE)
    base = dict(judge=CHECK_JUDGE, stage=STAGE, iteration=iteration)
    tests = feedback_tests(suite)
    report = await asyncio.to_thread(run_feedback_tests, ctx.task, state.get("repository") or {}, ctx.runner, suite)
    if report is None:
        verdict = Verdict(**base, score=10, accepted=True, feedback=f"the task has no {suite} tests; nothing was run")
        return {"verdicts": [verdict_record(verdict)]}
    status = check_status(report)
    if report.error:
        verdict = Verdict(**base, check=status, score=0, accepted=False, stop=True,
                          feedback=f"the {tests} tests could not be run: {report.error}")
    else:
        verdict = Verdict(**base, check=status, score=round(10 * report.pass_rate, 2),
                          accepted=status.status == "passed", log=error_log(report, log_chars),
                          feedback=f"{status.passed} of {status.total} {tests} tests pass")
    ctx.say(f"self-reflection {iteration}/{cap}: {status.passed}/{status.total} {tests} tests pass")
    return {"verdicts": [verdict_record(verdict)]}


def carried_reflections(state: ProjectState) -> list[str]:
    """The verbal reflections of the rounds so far, oldest first (kept in the rounds' edit records)."""
    records = sorted((r for r in state.get("edits") or [] if r.get("reflection")), key=lambda r: r["iteration"])
    return [r["reflection"] for r in records]


async def reflect(state: ProjectState, runtime: Runtime[RunContext], *,
                  generator: RepositoryGenerator, carry: bool = False) -> dict[str, Any]:
    """Node "reflect": the errors go back to the model, the files it rewrites replace the old ones. With
    `carry` (the paper's baseline) the model first writes a verbal reflection, which is kept: every later
    round sees all of them, and the fix is asked with them."""
    ctx = runtime.context
    iteration = iteration_of(state, STAGE) + 1
    verdict = last_verdict(state, STAGE)
    check = verdict.check
    ctx.say(f"self-reflection {iteration}: giving {len(check.failing) if check else 0} failures back")
    before = dict(state.get("repository") or {})
    refused_before = rejections_of(state, STAGE, iteration - 1)
    error_log = "\n\n".join([*(rejection_feedback(p, e) for p, e in sorted(refused_before.items())), verdict.log])
    shown = dict(error_log=error_log.strip(), passed=check.passed if check else 0,
                 total=check.total if check else 0, iteration=iteration)
    reflections: list[str] = []
    reflection = ""
    if carry:
        reflections = carried_reflections(state)
        reflection = await generator.reflect_verbally(ctx.gateway, documents_of(state), before, **shown,
                                                      reflections=reflections)
        reflections = [*reflections, reflection] if reflection else reflections
    outcome = await generator.reflect(ctx.gateway, documents_of(state), before, **shown,
                                      guidance=state.get("guidance", ""), reflections=reflections)
    repository, refused = keep_parsable(outcome.repo, before)
    record = {"id": f"{iteration}:*", "path": "*", "iteration": iteration, "format": outcome.format,
              "well_formed": outcome.well_formed, "applied": len(outcome.applied), "failed": len(outcome.failed),
              "feedback": outcome.feedback(), "rejected": len(refused), "reflection": reflection}
    return {"repository": repository, "iterations": {STAGE: iteration}, "edits": [record],
            "rejected": rejection_records(STAGE, iteration, refused)}


def build_direct_graph(generator: RepositoryGenerator, *, name: str = "direct"):
    """The compiled Direct graph: one node, one model call. Run it with ``context=RunContext(...)``."""
    graph = StateGraph(ProjectState, context_schema=RunContext)
    graph.add_node("direct", bind(generate_directly, generator=generator))
    graph.add_edge(START, "direct")
    graph.add_edge("direct", END)
    return graph.compile(name=name)


def build_self_reflection_graph(generator: RepositoryGenerator, rounds: int = REFLECTION_ROUNDS,
                                settings: Settings | None = None, *, name: str = "self-reflection"):
    """The compiled Self-Reflection graph: Direct, then up to `rounds` check -> reflect rounds (at most
    1 + `rounds` model calls, twice as many rounds' calls with `settings.carry_reflections`); `settings`
    gives the error-log excerpt's size and whether verbal reflections are carried."""
    if rounds < 0:
        raise ValueError(f"rounds must be 0 or more, not {rounds}")
    settings = settings or Settings()
    cap = rounds + 1  # the direct reply is iteration 1
    graph = StateGraph(ProjectState, context_schema=RunContext)
    graph.add_node("direct", bind(generate_directly, generator=generator))
    graph.add_node("check", bind(run_check_tests, log_chars=settings.error_log_chars, cap=cap,
                                 suite=settings.feedback_suite))
    graph.add_node("reflect", bind(reflect, generator=generator, carry=settings.carry_reflections))
    graph.add_edge(START, "direct")
    graph.add_edge("direct", "check")
    graph.add_conditional_edges("check", after_judge(STAGE, cap, "reflect"), ["reflect", END])
    graph.add_edge("reflect", "check")
    return graph.compile(name=name)
