"""Skeleton stage: per-file skeletons written in parallel <-> skeleton judge, cap default 3.

The first iteration writes every .py file of the tree; later ones rewrite only the files
the judge named (all of them when it named none). A skeleton that is not valid Python is not
accepted (`projectgen.repository.syntax`): the file keeps its previous skeleton (or has none
yet, and the code stage starts it from the tree's stub), the iteration cannot be accepted, and
the next one rewrites it with the syntax error as feedback. A state `scope` (set by `evolve`)
limits both to its files.
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from projectgen.agents.base import IncompleteFileError, combine_verdicts
from projectgen.agents.protocols import RevisionSummarizer, SkeletonGenerator, SkeletonReviewer
from projectgen.config import Settings
from projectgen.graphs.context import RunContext
from projectgen.graphs.loop import (
    after_judge, bind, describe, judge_list, memory_records, stage_summarizer, with_rejections, with_threshold_rule,
)
from projectgen.graphs.review import after_review, review_stage, review_stage_name
from projectgen.graphs.state import (
    ProjectState, documents_of, in_scope, iteration_of, last_verdict, rejection_records,
    rejections_of, ssat_of, stage_memory, verdict_record,
)
from projectgen.memory import MemoryEntry
from projectgen.repository.syntax import keep_parsable, refusal, rejection_feedback
from projectgen.ssat import SSAT, diff_ssat, render_diff, ssat_from_repository

STAGE = "skeleton"


def skeleton_diff(path: str, old: str, new: str) -> str:
    """DeepDiff of the two versions' structure; a unified diff when either does not parse."""
    try:
        before = ssat_from_repository({path: old}, "skeleton")
        after = ssat_from_repository({path: new}, "skeleton")
        if before.file_nodes and after.file_nodes:
            return render_diff(diff_ssat(before, after))
    except ValueError:
        pass
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), path, path))


def python_files(ssat: SSAT) -> list[str]:
    return [f.path for f in ssat.files() if f.path.endswith(".py")]


async def plan_skeleton(state: ProjectState, runtime: Runtime[RunContext], *, cap: int) -> dict[str, Any]:
    """Node "plan_skeleton": the next iteration begins (the skeleton so far kept for a review's diff)."""
    iteration = iteration_of(state, STAGE) + 1
    runtime.context.say(f"skeleton {iteration}/{cap}: writing files")
    previous = dict(state.get("skeleton") or {}) if iteration > 1 else None
    return {"iterations": {STAGE: iteration}, "previous": {STAGE: previous}}


def fan_out(state: ProjectState, *, gamma: float) -> list[Send] | list[str]:
    """One "write_skeleton_file" job per file to (re)write, with its feedback (and the syntax error of a
    skeleton that was not accepted) and memory; the judge when there is none."""
    ssat = ssat_of(state)
    iteration = iteration_of(state, STAGE)
    paths = in_scope(state, python_files(ssat))
    verdict = last_verdict(state, STAGE) if iteration > 1 else None
    if verdict is not None and verdict.files:
        paths = [p for p in paths if p in verdict.files] or paths
    rejected = rejections_of(state, STAGE, iteration - 1)
    memory = stage_memory(state, STAGE)
    skeleton = state.get("skeleton") or {}
    starter = documents_of(state).starter
    sends = []
    for path in paths:
        feedback = ""
        if verdict is not None:
            refused = rejection_feedback(path, rejected[path]) if path in rejected else ""
            feedback = "\n".join(filter(None, [verdict.files.get(path, ""), verdict.feedback, refused]))
        sends.append(Send("write_skeleton_file", {
            "path": path, "iteration": iteration, "ssat": state["ssat"], "previous": skeleton.get(path),
            "guidance": state.get("guidance", ""),
            "feedback": feedback,
            "memory": memory.recall(feedback, gamma, target=path) if verdict else "",
            **({"starter": starter[path]} if path in starter else {}),
        }))
    return sends or ["judge_skeleton"]


async def write_skeleton_file(job: dict[str, Any], runtime: Runtime[RunContext], *,
                              skeleton_writer: SkeletonGenerator,
                              summarizer: RevisionSummarizer | None = None) -> dict[str, Any]:
    """Node "write_skeleton_file": one file's skeleton (one `fan_out` job); one that is not valid Python
    is refused (the previous skeleton, if any, stays) and recorded for the judge and the next iteration."""
    path, iteration = job["path"], job["iteration"]
    given = {"starter": job["starter"]} if "starter" in job else {}  # only for starter files: see SkeletonGenerator
    previous = {path: job["previous"]} if job["previous"] is not None else {}
    try:
        code = await skeleton_writer.write(runtime.context.gateway, SSAT.model_validate(job["ssat"]), path,
                                           iteration=iteration, previous=job["previous"], feedback=job["feedback"],
                                           memory=job["memory"], guidance=job["guidance"], **given)
        accepted, errors = keep_parsable({path: code}, previous)
    except IncompleteFileError as exc:  # the reply stopped at the output cap inside the file
        accepted, errors = previous, {path: str(exc)}
    update: dict[str, Any] = {"skeleton": accepted}
    if errors:
        runtime.context.say(f"skeleton {iteration}: {path} is {refusal(errors[path])}; not accepted")
        update["rejected"] = rejection_records(STAGE, iteration, errors)
        code = job["previous"] or ""
    if iteration > 1:
        entry = MemoryEntry(stage=STAGE, iteration=iteration - 1, target=path, feedback=job["feedback"],
                            diff=skeleton_diff(path, job["previous"] or "", code))
        update["memory"] = await memory_records([entry], summarizer, runtime.context.gateway)
    return update


async def judge_skeleton(state: ProjectState, runtime: Runtime[RunContext], *,
                         judges: Sequence[SkeletonReviewer], settings: Settings) -> dict[str, Any]:
    """Node "judge_skeleton": the judges' combined verdict on all skeleton files (all must accept; none
    without a judge)."""
    ctx = runtime.context
    cap = settings.cap(STAGE)
    iteration = iteration_of(state, STAGE)
    if not judges:
        ctx.say(f"skeleton {iteration}/{cap}: no judge, moving on")
        return {}
    verdicts = [with_threshold_rule(await judge.review(ctx.gateway, ssat_of(state), state.get("skeleton") or {},
                                                       iteration=iteration, threshold=settings.threshold), settings)
                for judge in judges]
    verdict = with_rejections(combine_verdicts(verdicts), rejections_of(state, STAGE, iteration))
    ctx.say(f"skeleton {iteration}/{cap}: {describe(verdict.score, verdict.accepted, iteration >= cap)}")
    return {"verdicts": [verdict_record(verdict)]}


def skeleton_stage(writer: SkeletonGenerator, judges: Sequence[SkeletonReviewer] | None,
                   settings: Settings | None = None, *, review: bool = False,
                   summarizer: RevisionSummarizer | None = None):
    """The compiled stage subgraph; `writer` has ``write(...)``, each judge has ``review(...)`` (all must
    accept: `combine_verdicts`).

    Without judges (``None`` or ``[]``: ProjectGen w/o iter) every file is written once. With `review` the
    skeleton the stage ends with waits for a person's decision (node "review_skeleton",
    `projectgen.graphs.review`; the graph needs a checkpointer). `summarizer` distils each revision for the
    stage memory when the settings ask for distilled memory."""
    settings = settings or Settings()
    judges = judge_list(judges, STAGE)
    summarizer = stage_summarizer(summarizer, settings, bool(judges), STAGE)
    if not judges:
        settings = settings.model_copy(update={"skeleton_iterations": 1})
    cap = settings.cap(STAGE)
    graph = StateGraph(ProjectState, context_schema=RunContext)
    graph.add_node("plan_skeleton", bind(plan_skeleton, cap=cap))
    graph.add_node("write_skeleton_file", bind(write_skeleton_file, skeleton_writer=writer, summarizer=summarizer))
    graph.add_node("judge_skeleton", bind(judge_skeleton, judges=judges, settings=settings))
    graph.add_edge(START, "plan_skeleton")
    graph.add_conditional_edges("plan_skeleton", bind(fan_out, gamma=settings.gamma),
                                ["write_skeleton_file", "judge_skeleton"])
    graph.add_edge("write_skeleton_file", "judge_skeleton")
    reviewer = review_stage_name(STAGE) if review else None
    graph.add_conditional_edges("judge_skeleton", after_judge(STAGE, cap, "plan_skeleton", reviewer))
    if reviewer:
        graph.add_node(reviewer, bind(review_stage, stage=STAGE))
        graph.add_conditional_edges(reviewer, after_review(STAGE, "plan_skeleton"), ["plan_skeleton", END])
    return graph.compile(name=STAGE)
