"""The ProjectGen graph: stage subgraphs in a row, stopping early when a stage cannot go on."""
from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph

from projectgen.agents import Agents
from projectgen.config import Settings
from projectgen.errors import ProjectGenError
from projectgen.graphs.architecture import architecture_stage
from projectgen.graphs.code import code_stage
from projectgen.graphs.review import check_review_stages
from projectgen.graphs.skeleton import skeleton_stage
from projectgen.graphs.context import RunContext
from projectgen.graphs.state import ProjectState

Stage = tuple[str, Any]  # (node name, compiled stage subgraph or any LangGraph node)


def default_stages(agents: Agents, settings: Settings, *, judges: bool = True,
                   review: Collection[str] = ()) -> list[Stage]:
    """Architecture -> skeleton -> code, as in the paper; ``judges=False`` is its "w/o iter" ablation:
    each generator runs once and no judge is asked (no check tests run inside the stages). The stages
    named in `review` ("architecture", "skeleton") wait for a person's decision on their output
    (`projectgen.graphs.review`; the graph then needs a checkpointer)."""
    review = check_review_stages(review)
    architecture = "architecture" in review
    skeleton = "skeleton" in review
    if not judges:
        return [("architecture", architecture_stage(agents.architect, [], settings, review=architecture)),
                ("skeleton", skeleton_stage(agents.skeleton, [], settings, review=skeleton)),
                ("code", code_stage(agents.coder, [], settings))]
    summarizer = agents.memory_summarizer
    return [
        ("architecture", architecture_stage(agents.architect, [agents.architecture_judge], settings,
                                            review=architecture, summarizer=summarizer)),
        ("skeleton", skeleton_stage(agents.skeleton, [agents.skeleton_judge], settings, review=skeleton,
                                    summarizer=summarizer)),
        ("code", code_stage(agents.coder, [agents.code_judge, *agents.extra_code_judges], settings,
                            summarizer=summarizer)),
    ]


def _continue_or_stop(next_node: str) -> Callable[[ProjectState], str]:
    def route(state: ProjectState) -> str:
        return END if state.get("stopped") else next_node

    return route


def build_project_graph(models: Any = None, *, agents: Agents | None = None, settings: Settings | None = None,
                        stages: Sequence[Stage] | None = None, checkpointer: Any = None, name: str = "projectgen",
                        review: Collection[str] = ()):
    """The compiled ProjectGen graph. Run it with ``context=RunContext(...)``.

    `models` is a `ModelRoles` (or one chat model for every role) used to make default
    `agents`; pass `agents` to swap some (``Agents.from_models(m).replace(coder=MyCoder(m))``),
    or `stages` to change the pipeline itself (drop the skeleton stage, add judges).
    `review` names the default stages whose output waits for a person's decision (``("architecture",)``:
    the graph pauses there; resume it with ``Command(resume={"action": "approve"})``, see
    `projectgen.graphs.review`); stages you pass are built with their own ``review=``.
    """
    settings = settings or Settings()
    if stages is not None and review:
        raise ProjectGenError("review= applies to the default stages; build your stages with review=True "
                              "(architecture_stage(..., review=True))")
    if stages is None:
        if agents is None:
            if models is None:
                raise ProjectGenError("build_project_graph needs models, agents or stages")
            agents = Agents.from_models(models, settings)
        stages = default_stages(agents, settings, review=review)
    if not stages:
        raise ProjectGenError("a project graph needs at least one stage")
    names = [n for n, _ in stages]
    if len(set(names)) != len(names):
        raise ProjectGenError(f"stage names must be unique, got {names}")
    graph = StateGraph(ProjectState, context_schema=RunContext)
    for node_name, stage in stages:
        graph.add_node(node_name, stage)
    graph.add_edge(START, names[0])
    for current, following in zip(names, [*names[1:], END]):
        graph.add_conditional_edges(current, _continue_or_stop(following), [following, END] if following != END
                                    else [END])
    return graph.compile(checkpointer=checkpointer, name=name)
