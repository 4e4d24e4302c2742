"""Architecture stage: architect <-> architecture judge, until accepted or the cap (default 3)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from projectgen.agents.base import Verdict, combine_verdicts
from projectgen.agents.protocols import ArchitectureGenerator, ArchitectureReviewer, RevisionSummarizer
from projectgen.config import Settings
from projectgen.graphs.context import RunContext
from projectgen.graphs.loop import (
    after_judge, bind, describe, judge_list, memory_records, stage_summarizer, with_threshold_rule,
)
from projectgen.graphs.review import after_review, review_stage, review_stage_name
from projectgen.graphs.state import (
    ProjectState, documents_of, iteration_of, last_verdict, ssat_data, ssat_of, stage_memory,
    verdict_record,
)
from projectgen.memory import MemoryEntry
from projectgen.llm.parsing import StructuredOutputError
from projectgen.ssat import SSATValidationError, diff_ssat, render_diff

STAGE = "architecture"


async def design_architecture(state: ProjectState, runtime: Runtime[RunContext], *,
                              architect: ArchitectureGenerator, settings: Settings,
                              summarizer: RevisionSummarizer | None = None) -> dict[str, Any]:
    """Node "architect": the next tree, revised from the last verdict and the stage memory."""
    ctx = runtime.context
    iteration = iteration_of(state, STAGE) + 1
    previous = ssat_of(state)
    verdict = last_verdict(state, STAGE)
    feedback = verdict.feedback if verdict else ""
    memory = stage_memory(state, STAGE).recall(feedback, settings.gamma) if iteration > 1 else ""
    ctx.say(f"architecture {iteration}/{settings.cap(STAGE)}: designing")
    # the tree one iteration back, for a review's diff (None at the first iteration: no entry)
    update: dict[str, Any] = {"iterations": {STAGE: iteration}, "generation_errors": {STAGE: None},
                              "previous": {STAGE: state.get("ssat")}}
    try:
        ssat = await architect.design(ctx.gateway, documents_of(state), iteration=iteration, previous=previous,
                                      feedback=feedback, memory=memory, guidance=state.get("guidance", ""))
    except (StructuredOutputError, SSATValidationError) as exc:
        update["generation_errors"] = {STAGE: f"the architecture tree could not be used: {exc}"}
        return update
    update["ssat"] = ssat_data(ssat)
    if iteration > 1:
        diff = render_diff(diff_ssat(previous, ssat)) if previous else "(new tree)"
        update["memory"] = await memory_records(
            [MemoryEntry(stage=STAGE, iteration=iteration - 1, feedback=feedback, diff=diff)], summarizer, ctx.gateway)
    return update


async def judge_architecture(state: ProjectState, runtime: Runtime[RunContext], *,
                             judges: Sequence[ArchitectureReviewer], settings: Settings) -> dict[str, Any]:
    """Node "judge_architecture": the judges' combined verdict (all must accept), or the parser's when no
    usable tree came (only the parser's without a judge)."""
    ctx = runtime.context
    cap = settings.cap(STAGE)
    iteration = iteration_of(state, STAGE)
    ssat = ssat_of(state)
    error = (state.get("generation_errors") or {}).get(STAGE)
    if error or ssat is None:
        verdict = Verdict(judge="parser", stage=STAGE, iteration=iteration, score=0, accepted=False,
                          feedback=error or "no architecture tree was produced")
    elif not judges:  # no judge (ProjectGen w/o iter): the tree is used as it is
        ctx.say(f"architecture {iteration}/{cap}: no judge, moving on")
        return {}
    else:
        verdict = combine_verdicts([
            with_threshold_rule(await judge.review(ctx.gateway, documents_of(state), ssat, iteration=iteration,
                                                   threshold=settings.threshold), settings)
            for judge in judges])
    update: dict[str, Any] = {"verdicts": [verdict_record(verdict)]}
    ctx.say(f"architecture {iteration}/{cap}: {describe(verdict.score, verdict.accepted, iteration >= cap)}")
    if not verdict.accepted and iteration >= cap and ssat is None:
        update["stopped"] = f"architecture: no usable tree after {iteration} iteration(s): {verdict.feedback}"
    return update


def architecture_stage(architect: ArchitectureGenerator, judges: Sequence[ArchitectureReviewer] | None,
                       settings: Settings | None = None, *, review: bool = False,
                       summarizer: RevisionSummarizer | None = None):
    """The compiled stage subgraph; `architect` has ``design(...)``, each judge has ``review(...)`` (all
    must accept: `combine_verdicts`).

    Without judges (``None`` or ``[]``: ProjectGen w/o iter) the architect designs once; the run stops
    only when that tree cannot be used. With `review` the tree the stage ends with waits for a person's
    decision (node "review_architecture", `projectgen.graphs.review`; the graph needs a checkpointer).
    `summarizer` distils each revision for the stage memory when the settings ask for distilled memory."""
    settings = settings or Settings()
    judges = judge_list(judges, STAGE)
    summarizer = stage_summarizer(summarizer, settings, bool(judges), STAGE)
    if not judges:
        settings = settings.model_copy(update={"architecture_iterations": 1})
    graph = StateGraph(ProjectState, context_schema=RunContext)
    graph.add_node("architect", bind(design_architecture, architect=architect, settings=settings,
                                     summarizer=summarizer))
    graph.add_node("judge_architecture", bind(judge_architecture, judges=judges, settings=settings))
    graph.add_edge(START, "architect")
    graph.add_edge("architect", "judge_architecture")
    reviewer = review_stage_name(STAGE) if review else None
    graph.add_conditional_edges("judge_architecture", after_judge(STAGE, settings.cap(STAGE), "architect", reviewer))
    if reviewer:
        graph.add_node(reviewer, bind(review_stage, stage=STAGE))
        graph.add_conditional_edges(reviewer, after_review(STAGE, "architect"), ["architect", END])
    return graph.compile(name=STAGE)
