"""The ProjectGen graph: stage subgraphs in a row, stopping early when a stage cannot go on."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph

from projectgen.agents import Agents
from projectgen.config import Settings
from projectgen.errors import ProjectGenError
from projectgen.graphs.architecture import architecture_stage
from projectgen.graphs.code import code_stage
from projectgen.graphs.skeleton import skeleton_stage
from projectgen.graphs.context import RunContext
from projectgen.graphs.state import ProjectState

Stage = tuple[str, Any]  # (node name, compiled stage subgraph or any LangGraph node)


def default_stages(agents: Agents, settings: Settings, *, judges: bool = True) -> list[Stage]:
    """Architecture -> skeleton -> code, as in the paper; ``judges=False`` is its "w/o iter" ablation:
    each generator runs once and no judge is asked (no check tests run inside the stages)."""
    if not judges:
        return [("architecture", architecture_stage(agents.architect, None, settings)),
                ("skeleton", skeleton_stage(agents.skeleton, None, settings)),
                ("code", code_stage(agents.coder, [], settings))]
    return [
        ("architecture", architecture_stage(agents.architect, agents.architecture_judge, settings)),
        ("skeleton", skeleton_stage(agents.skeleton, agents.skeleton_judge, settings)),
        ("code", code_stage(agents.coder, [agents.code_judge, *agents.extra_code_judges], settings)),
    ]


def _continue_or_stop(next_node: str) -> Callable[[ProjectState], str]:
    def route(state: ProjectState) -> str:
        return END if state.get("stopped") else next_node

    return route


def build_project_graph(models: Any = None, *, agents: Agents | None = None, settings: Settings | None = None,
                        stages: Sequence[Stage] | None = None, checkpointer: Any = None, name: str = "projectgen"):
    """The compiled ProjectGen graph. Run it with ``context=RunContext(...)``.

    `models` is a `ModelRoles` (or one chat model for every role) used to make default
    `agents`; pass `agents` to swap some (``Agents.from_models(m).replace(coder=MyCoder(m))``),
    or `stages` to change the pipeline itself (drop the skeleton stage, add judges).
    """
    settings = settings or Settings()
    if stages is None:
        if agents is None:
            if models is None:
                raise ProjectGenError("build_project_graph needs models, agents or stages")
            agents = Agents.from_models(models)
        stages = default_stages(agents, settings)
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
