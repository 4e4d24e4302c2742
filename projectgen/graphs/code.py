"""Code stage: the coder fills files layer by layer in dependency order (parallel within a layer);
the code judge runs the feedback suite's tests (`Settings.feedback_suite`: the check tests, or the unit
tests); named files are repaired; cap default 5 rounds.

Round 1 fills every file: layer k's files are sent out together (LangGraph `Send`, bounded by
the run's ``max_concurrency``), each with its skeleton and the interfaces of the files it
imports, which earlier layers have already filled. Later rounds repair only the files the
judges named, in the configured edit format; an edit that does not apply is recorded (the
well-format rate) and its reason goes back to the coder with the next request. A filled or
repaired file that is not valid Python is not accepted (`projectgen.repository.syntax`): the
file keeps its previous version (the skeleton, for a fill), the round cannot be accepted, and
the next round repairs it with the syntax error as feedback. A state `scope` (set by `evolve`)
limits filling and repairs to its files; the others keep their code.
"""
from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from projectgen.agents.base import IncompleteFileError, combine_verdicts
from projectgen.agents.code_judge import feedback_tests
from projectgen.agents.coder import interface_of
from projectgen.agents.protocols import CodeGenerator, CodeReviewer, RevisionSummarizer
from projectgen.config import EditFormat, FeedbackSuite, Settings
from projectgen.repository.dependencies import dependency_layers, import_graph
from projectgen.graphs.context import RunContext
from projectgen.graphs.loop import (
    after_judge, bind, describe, judge_list, memory_records, stage_summarizer, with_rejections,
)
from projectgen.graphs.state import (
    ProjectState, documents_of, in_scope, iteration_of, last_verdict, rejection_records,
    rejections_of, ssat_of, stage_memory, verdict_record,
)
from projectgen.memory import MemoryEntry
from projectgen.prompts.suite_words import suite_words
from projectgen.repository.syntax import keep_parsable, refusal, rejection_feedback
from projectgen.ssat import SSAT, render_stub

STAGE = "code"


def starting_skeleton(state: ProjectState) -> dict[str, str]:
    """The skeleton stage's files, or, when a graph has no skeleton stage, the task's starter file
    for a path of the tree that has one, else a stub rendered from the tree."""
    skeleton = dict(state.get("skeleton") or {})
    ssat = ssat_of(state)
    if ssat is not None:
        starter = documents_of(state).starter
        for node in ssat.files():
            skeleton.setdefault(node.path, starter.get(node.path) or render_stub(node))
    return skeleton


def fill_layers(skeleton: dict[str, str]) -> list[list[str]]:
    """Python files by dependency layer, then any other files in one last layer."""
    layers = dependency_layers(import_graph(skeleton))
    others = sorted(p for p in skeleton if not p.endswith(".py"))
    return layers + ([others] if others else [])


def code_diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))


def tree_reader() -> Callable[[str], SSAT]:
    """A stage's reader of the tree every fill job of a layer carries (as JSON text): it validates
    each tree once rather than once per file (validation compiles every default and type: tens of
    ms of event-loop time per file)."""
    return functools.lru_cache(maxsize=2)(SSAT.model_validate_json)


async def plan_code(state: ProjectState, runtime: Runtime[RunContext], *, cap: int) -> dict[str, Any]:
    """Node "plan_code": round 1 lays out the dependency layers to fill; later rounds repair."""
    iteration = iteration_of(state, STAGE) + 1
    update: dict[str, Any] = {"iterations": {STAGE: iteration}}
    if iteration == 1:
        skeleton = starting_skeleton(state)
        layers = [layer for layer in (in_scope(state, files) for files in fill_layers(skeleton)) if layer]
        update.update(skeleton=skeleton, layers=layers, layer=0)
        runtime.context.say(f"code 1/{cap}: filling {sum(map(len, layers))} files in {len(layers)} dependency layers")
    else:
        verdict = last_verdict(state, STAGE)
        runtime.context.say(f"code {iteration}/{cap}: repairing {', '.join(sorted(verdict.files)) or 'all files'}")
    return update


def fill_jobs(state: ProjectState) -> list[Send] | list[str]:
    """One "fill_file" job per file of the current layer, with the interfaces of what it imports;
    the judge once every layer is filled."""
    layers, layer = state.get("layers") or [], state.get("layer", 0)
    if layer >= len(layers):
        return ["judge_code"]
    skeleton, repository = state.get("skeleton") or {}, state.get("repository") or {}
    graph = import_graph(skeleton)
    jobs = []
    for path in layers[layer]:
        deps = {d: interface_of(d, repository[d]) if d in repository else skeleton[d]
                for d in sorted(graph.get(path, ()))}
        jobs.append(Send("fill_file", {"path": path, "skeleton": skeleton[path], "dependencies": deps,
                                       "ssat": state.get("ssat"), "guidance": state.get("guidance", "")}))
    return jobs


def repair_jobs(state: ProjectState, *, gamma: float, suite: FeedbackSuite = "check") -> list[Send] | list[str]:
    """One "repair_file" job per file the judges named (every .py file when they named none), each
    with the reason its previous edit did not apply or was not accepted, if so; its memory names the
    feedback `suite`'s tests as the repair prompt does."""
    iteration = iteration_of(state, STAGE)
    verdict = last_verdict(state, STAGE)
    repository = state.get("repository") or {}
    memory = stage_memory(state, STAGE)
    failed_edits = {r["path"]: r["feedback"] for r in state.get("edits") or []
                    if r["iteration"] == iteration - 1 and r["feedback"]}
    rejected = rejections_of(state, STAGE, iteration - 1)
    targets = verdict.files or {p: verdict.feedback for p in repository if p.endswith(".py")}
    if state.get("scope") is not None:  # evolve: only the files the plan redoes are repaired
        allowed = set(in_scope(state, sorted(repository)))
        targets = ({p: s for p, s in targets.items() if p in allowed}
                   or {p: verdict.feedback for p in sorted(allowed) if p.endswith(".py")})
    jobs = []
    for path, suggestion in sorted(targets.items()):
        if path in failed_edits:
            suggestion += f"\n\nYour previous edit of this file did not apply:\n{failed_edits[path]}"
        if path in rejected:
            suggestion = f"{suggestion}\n\n{rejection_feedback(path, rejected[path])}".strip()
        jobs.append(Send("repair_file", {
            "path": path, "content": repository.get(path, ""), "suggestion": suggestion,
            "log": verdict.log, "iteration": iteration, "guidance": state.get("guidance", ""),
            "passed_before": verdict.check.passed if verdict.check else None,
            "memory": memory.recall(f"{suggestion}\n{verdict.log}", gamma, target=path, exclude_regressions=True,
                                    tests=suite_words(suite).tests),
        }))
    return jobs or ["judge_code"]


def after_plan(state: ProjectState, *, gamma: float, suite: FeedbackSuite = "check") -> list[Send] | list[str]:
    """Round 1 fills, later rounds repair."""
    return fill_jobs(state) if iteration_of(state, STAGE) == 1 else repair_jobs(state, gamma=gamma, suite=suite)


async def fill_file(job: dict[str, Any], runtime: Runtime[RunContext], *, coder: CodeGenerator,
                    read_tree: Callable[[str], SSAT] = SSAT.model_validate_json) -> dict[str, Any]:
    """Node "fill_file": one file implemented from its skeleton (one `fill_jobs` job); a file that is not
    valid Python is refused (the skeleton stays) and recorded for the next round."""
    ssat = read_tree(json.dumps(job["ssat"], sort_keys=True)) if job["ssat"] else None
    path = job["path"]
    try:
        code = await coder.fill(runtime.context.gateway, ssat, path, job["skeleton"],
                                dependencies=job["dependencies"], iteration=1, guidance=job["guidance"])
        accepted, errors = keep_parsable({path: code}, {path: job["skeleton"]})
    except IncompleteFileError as exc:  # the reply stopped at the output cap inside the file
        accepted, errors = {path: job["skeleton"]}, {path: str(exc)}
    if errors:
        runtime.context.say(f"code 1: {path} is {refusal(errors[path])}; kept its skeleton")
        return {"repository": accepted, "rejected": rejection_records(STAGE, 1, errors)}
    return {"repository": accepted}


async def next_layer(state: ProjectState) -> dict[str, Any]:
    """Node "next_layer": the layer just filled is done."""
    return {"layer": state.get("layer", 0) + 1}


async def repair_file(job: dict[str, Any], runtime: Runtime[RunContext], *, coder: CodeGenerator,
                      edit_format: EditFormat) -> dict[str, Any]:
    """Node "repair_file": one file edited (one `repair_jobs` job), the edit recorded, and a pending
    memory entry that the judge completes with the check tests passed after it."""
    path, iteration = job["path"], job["iteration"]
    outcome = await coder.repair(runtime.context.gateway, path, job["content"], suggestion=job["suggestion"],
                                 error_log=job["log"], memory=job["memory"], iteration=iteration,
                                 edit_format=edit_format, guidance=job["guidance"])
    accepted, errors = keep_parsable({path: outcome.repo.get(path, job["content"])}, {path: job["content"]})
    new = accepted[path]
    record = {"id": f"{iteration}:{path}", "path": path, "iteration": iteration, "format": outcome.format,
              "well_formed": outcome.well_formed, "applied": len(outcome.applied),
              "failed": len(outcome.failed), "feedback": outcome.feedback(), "rejected": bool(errors)}
    pending = {"iteration": iteration - 1, "feedback": job["suggestion"], "passed_before": job["passed_before"],
               "diff": code_diff(path, job["content"], new)}
    update: dict[str, Any] = {"repository": {path: new}, "edits": [record], "pending": {path: pending}}
    if errors:
        runtime.context.say(f"code {iteration}: the edit of {path} is not valid Python; kept the previous version")
        update["rejected"] = rejection_records(STAGE, iteration, errors)
    return update


async def judge_code(state: ProjectState, runtime: Runtime[RunContext], *, judges: Sequence[CodeReviewer],
                     cap: int, summarizer: RevisionSummarizer | None = None, tests: str = "check") -> dict[str, Any]:
    """Node "judge_code": every judge in turn (all must accept); completes the pending memory entries. `tests`
    names the feedback suite in the progress lines ("check", or "hidden unit": `feedback_tests`)."""
    ctx = runtime.context
    iteration = iteration_of(state, STAGE)
    repository = state.get("repository") or {}
    if not judges:  # ProjectGen w/o iter: one fill, nothing run, no verdict
        ctx.say(f"code {iteration}/{cap}: no judge, done")
        return {}
    ctx.say(f"code {iteration}/{cap}: running {tests} tests")
    verdicts = [await judge.review(ctx.gateway, ctx.task, repository, runner=ctx.runner, iteration=iteration)
                for judge in judges]
    verdict = with_rejections(combine_verdicts(verdicts), rejections_of(state, STAGE, iteration))
    check = f" ({verdict.check.passed}/{verdict.check.total} {tests} tests)" if verdict.check else ""
    ctx.say(f"code {iteration}/{cap}: {describe(verdict.score, verdict.accepted, iteration >= cap)}{check}")
    pending = state.get("pending") or {}
    passed_after = verdict.check.passed if verdict.check else None
    entries = await memory_records([MemoryEntry(stage=STAGE, iteration=p["iteration"], target=path,
                                                feedback=p["feedback"], diff=p["diff"],
                                                passed_before=p["passed_before"], passed_after=passed_after)
                                    for path, p in sorted(pending.items())], summarizer, ctx.gateway)
    return {"verdicts": [verdict_record(verdict)], "memory": entries, "pending": {p: None for p in pending}}


def code_stage(coder: CodeGenerator, judges: Sequence[CodeReviewer] | None, settings: Settings | None = None, *,
               summarizer: RevisionSummarizer | None = None):
    """The compiled stage subgraph. `coder` has ``fill``/``repair``; each judge has ``review(...)``
    (the code judge first; all must accept: `combine_verdicts`). With no judges (``None`` or ``[]``:
    ProjectGen w/o iter) every file is filled once and nothing is run or repaired. `summarizer` distils
    each repair for the stage memory when the settings ask for distilled memory."""
    settings = settings or Settings()
    judges = judge_list(judges, STAGE)
    summarizer = stage_summarizer(summarizer, settings, bool(judges), STAGE)
    if not judges:
        settings = settings.model_copy(update={"code_iterations": 1})
    cap = settings.cap(STAGE)
    graph = StateGraph(ProjectState, context_schema=RunContext)
    graph.add_node("plan_code", bind(plan_code, cap=cap))
    graph.add_node("fill_file", bind(fill_file, coder=coder, read_tree=tree_reader()))
    graph.add_node("next_layer", next_layer)
    graph.add_node("repair_file", bind(repair_file, coder=coder, edit_format=settings.edit_format))
    graph.add_node("judge_code", bind(judge_code, judges=judges, cap=cap, summarizer=summarizer,
                                      tests=feedback_tests(settings.feedback_suite)))
    graph.add_edge(START, "plan_code")
    graph.add_conditional_edges("plan_code", bind(after_plan, gamma=settings.gamma, suite=settings.feedback_suite),
                                ["fill_file", "repair_file", "judge_code"])
    graph.add_edge("fill_file", "next_layer")
    graph.add_conditional_edges("next_layer", fill_jobs, ["fill_file", "judge_code"])
    graph.add_edge("repair_file", "judge_code")
    graph.add_conditional_edges("judge_code", after_judge(STAGE, cap, "plan_code"))
    return graph.compile(name=STAGE)
