"""Code stage: the coder fills files layer by layer in dependency order (parallel within a layer);
the code judge runs the check tests; named files are repaired; cap default 5 rounds.

Round 1 fills every file: layer k's files are sent out together (LangGraph `Send`, bounded by
the run's ``max_concurrency``), each with its skeleton and the interfaces of the files it
imports, which earlier layers have already filled. Later rounds repair only the files the
judges named, in the configured edit format; an edit that does not apply is recorded (the
well-format rate) and its reason goes back to the coder with the next request.
"""
from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Sequence
from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from projectgen.agents.base import combine_verdicts
from projectgen.agents.coder import interface_of
from projectgen.config import Settings
from projectgen.repository.dependencies import dependency_layers, import_graph
from projectgen.graphs.loop import after_judge, describe
from projectgen.graphs.state import (
    ProjectState, RunContext, iteration_of, last_verdict, memory_record, ssat_of, stage_memory, verdict_record,
)
from projectgen.memory import MemoryEntry
from projectgen.ssat import SSAT, render_stub

STAGE = "code"


def starting_skeleton(state: ProjectState) -> dict[str, str]:
    """The skeleton stage's files, or stubs rendered from the tree when a graph has no skeleton stage."""
    skeleton = dict(state.get("skeleton") or {})
    ssat = ssat_of(state)
    if ssat is not None:
        for node in ssat.files():
            skeleton.setdefault(node.path, render_stub(node))
    return skeleton


def fill_layers(skeleton: dict[str, str]) -> list[list[str]]:
    """Python files by dependency layer, then any other files in one last layer."""
    layers = dependency_layers(import_graph(skeleton))
    others = sorted(p for p in skeleton if not p.endswith(".py"))
    return layers + ([others] if others else [])


def code_diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))


def code_stage(coder: Any, judges: Sequence[Any], settings: Settings | None = None):
    """The compiled stage subgraph. `coder` has ``fill``/``repair``; each judge has ``review(...)``
    (the code judge first; all must accept)."""
    settings = settings or Settings()
    cap = settings.cap(STAGE)
    if not judges:
        raise ValueError("the code stage needs at least one judge")

    @functools.lru_cache(maxsize=2)
    def tree_of(text: str) -> SSAT:
        """The tree every fill job of a layer carries, validated once rather than once per file
        (validation compiles every default and type: tens of ms of event-loop time per file)."""
        return SSAT.model_validate_json(text)

    async def plan(state: ProjectState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        iteration = iteration_of(state, STAGE) + 1
        update: dict[str, Any] = {"iterations": {STAGE: iteration}}
        if iteration == 1:
            skeleton = starting_skeleton(state)
            layers = fill_layers(skeleton)
            update.update(skeleton=skeleton, layers=layers, layer=0)
            runtime.context.say(f"code 1/{cap}: filling {len(skeleton)} files in {len(layers)} dependency layers")
        else:
            verdict = last_verdict(state, STAGE)
            runtime.context.say(f"code {iteration}/{cap}: repairing {', '.join(sorted(verdict.files)) or 'all files'}")
        return update

    def fill_jobs(state: ProjectState) -> list[Send] | list[str]:
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

    def after_plan(state: ProjectState) -> list[Send] | list[str]:
        return fill_jobs(state) if iteration_of(state, STAGE) == 1 else repair_jobs(state)

    def repair_jobs(state: ProjectState) -> list[Send] | list[str]:
        iteration = iteration_of(state, STAGE)
        verdict = last_verdict(state, STAGE)
        repository = state.get("repository") or {}
        memory = stage_memory(state, STAGE)
        failed_edits = {r["path"]: r["feedback"] for r in state.get("edits") or []
                        if r["iteration"] == iteration - 1 and r["feedback"]}
        targets = verdict.files or {p: verdict.feedback for p in repository if p.endswith(".py")}
        jobs = []
        for path, suggestion in sorted(targets.items()):
            if path in failed_edits:
                suggestion += f"\n\nYour previous edit of this file did not apply:\n{failed_edits[path]}"
            jobs.append(Send("repair_file", {
                "path": path, "content": repository.get(path, ""), "suggestion": suggestion,
                "log": verdict.log, "iteration": iteration, "guidance": state.get("guidance", ""),
                "passed_before": verdict.check.passed if verdict.check else None,
                "memory": memory.recall(f"{suggestion}\n{verdict.log}", settings.gamma, target=path,
                                        exclude_regressions=True),
            }))
        return jobs or ["judge_code"]

    async def fill_file(job: dict[str, Any], runtime: Runtime[RunContext]) -> dict[str, Any]:
        ssat = tree_of(json.dumps(job["ssat"], sort_keys=True)) if job["ssat"] else None
        code = await coder.fill(runtime.context.gateway, ssat, job["path"], job["skeleton"],
                                dependencies=job["dependencies"], iteration=1, guidance=job["guidance"])
        return {"repository": {job["path"]: code}}

    async def next_layer(state: ProjectState) -> dict[str, Any]:
        return {"layer": state.get("layer", 0) + 1}

    async def repair_file(job: dict[str, Any], runtime: Runtime[RunContext]) -> dict[str, Any]:
        path, iteration = job["path"], job["iteration"]
        outcome = await coder.repair(runtime.context.gateway, path, job["content"], suggestion=job["suggestion"],
                                     error_log=job["log"], memory=job["memory"], iteration=iteration,
                                     edit_format=settings.edit_format, guidance=job["guidance"])
        new = outcome.repo.get(path, job["content"])
        record = {"id": f"{iteration}:{path}", "path": path, "iteration": iteration, "format": outcome.format,
                  "well_formed": outcome.well_formed, "applied": len(outcome.applied),
                  "failed": len(outcome.failed), "feedback": outcome.feedback()}
        pending = {"iteration": iteration - 1, "feedback": job["suggestion"], "passed_before": job["passed_before"],
                   "diff": code_diff(path, job["content"], new)}
        return {"repository": {path: new}, "edits": [record], "pending": {path: pending}}

    async def review(state: ProjectState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = runtime.context
        iteration = iteration_of(state, STAGE)
        repository = state.get("repository") or {}
        ctx.say(f"code {iteration}/{cap}: running check tests")
        verdicts = [await judge.review(ctx.gateway, ctx.task, repository, runner=ctx.runner, iteration=iteration)
                    for judge in judges]
        verdict = combine_verdicts(verdicts)
        check = f" ({verdict.check.passed}/{verdict.check.total} check tests)" if verdict.check else ""
        ctx.say(f"code {iteration}/{cap}: {describe(verdict.score, verdict.accepted, iteration >= cap)}{check}")
        pending = state.get("pending") or {}
        passed_after = verdict.check.passed if verdict.check else None
        entries = [memory_record(MemoryEntry(stage=STAGE, iteration=p["iteration"], target=path,
                                             feedback=p["feedback"], diff=p["diff"],
                                             passed_before=p["passed_before"], passed_after=passed_after))
                   for path, p in sorted(pending.items())]
        return {"verdicts": [verdict_record(verdict)], "memory": entries, "pending": {p: None for p in pending}}

    graph = StateGraph(ProjectState, context_schema=RunContext)
    graph.add_node("plan_code", plan)
    graph.add_node("fill_file", fill_file)
    graph.add_node("next_layer", next_layer)
    graph.add_node("repair_file", repair_file)
    graph.add_node("judge_code", review)
    graph.add_edge(START, "plan_code")
    graph.add_conditional_edges("plan_code", after_plan, ["fill_file", "repair_file", "judge_code"])
    graph.add_edge("fill_file", "next_layer")
    graph.add_conditional_edges("next_layer", fill_jobs, ["fill_file", "judge_code"])
    graph.add_edge("repair_file", "judge_code")
    graph.add_conditional_edges("judge_code", after_judge(STAGE, cap, "plan_code"))
    return graph.compile(name=STAGE)
