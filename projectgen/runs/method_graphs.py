"""The graph inside the attempts for each method of `projectgen.runs.methods`, or the caller's own.

A caller may bring the graph each attempt runs (`RunParts(project_graph=...)` or
`stages=[...]`): it replaces the ProjectGen graph of a ProjectGen or LiveCoder method, and the run
keeps everything else (checkpoints, trace, attempts, knowledge, the historical best). run.json
records its node names (`custom_graph`), so a resume given another graph, or none, is refused.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from projectgen.agents import Agents, DirectGenerator
from projectgen.config import FeedbackSuite, Settings
from projectgen.errors import ProjectGenError
from projectgen.graphs import build_direct_graph, build_project_graph, build_self_reflection_graph, code_stage
from projectgen.graphs.project import Stage, default_stages
from projectgen.llm import ModelRoles
from projectgen.llm.roles import DIRECT_ROLE
from projectgen.runs.methods import check_review, describe_method


def direct_generator(models: ModelRoles | None, suite: FeedbackSuite) -> DirectGenerator:
    """The baselines' generator on the "direct" role's model; its reflection prompts name `suite`, the
    feedback suite Self-Reflection runs (`Settings.feedback_suite`)."""
    if models is None:
        raise ProjectGenError("the direct and self-reflection methods need models (the 'direct' role's)")
    return DirectGenerator(models.for_role(DIRECT_ROLE), suite=suite)


def inner_graph(name: str, agents: Agents | None, settings: Settings, *, models: ModelRoles | None = None,
                review: Sequence[str] = ()) -> Any:
    """The compiled graph one attempt of method `name` runs (over `ProjectState`): the project graph
    (with or without its judges) from `agents`, or a baseline from the "direct" role of `models`. The
    stages named in `review` wait for a person's decision on their output (`projectgen.graphs.review`)."""
    method = describe_method(name)
    check_review(name, tuple(review))
    if method.graph in ("direct", "self-reflection"):
        generator = direct_generator(models, settings.feedback_suite)
        if method.graph == "direct":
            return build_direct_graph(generator)
        return build_self_reflection_graph(generator, settings=settings)
    if agents is None:
        raise ProjectGenError(f"method {name} needs the ProjectGen agents (models or agents)")
    if method.graph == "project-no-judges":
        return build_project_graph(stages=default_stages(agents, settings, judges=False, review=review),
                                   settings=settings)
    return build_project_graph(agents=agents, settings=settings, review=review)


def warm_graph(name: str, agents: Agents | None, settings: Settings) -> Any:
    """The graph of warm-started attempts (the code stage, from the best attempt's design); None for
    the baselines, which have no design to start from."""
    method = describe_method(name)
    if agents is None or method.graph not in ("project", "project-no-judges"):
        return None
    judges = [agents.code_judge, *agents.extra_code_judges] if method.graph == "project" else []
    return build_project_graph(stages=[("code", code_stage(agents.coder, judges, settings,
                                                           summarizer=agents.memory_summarizer))])


def custom_inner_graph(project_graph: Any = None, stages: Sequence[Stage] | None = None) -> Any:
    """The caller's graph for every attempt: `project_graph` (a compiled graph over `ProjectState`, or a
    `StateGraph` over it, compiled here) or `stages` chained by `build_project_graph`; None for neither."""
    from langgraph.graph import StateGraph

    if project_graph is not None and stages is not None:
        raise ProjectGenError("give a project graph or a list of stages, not both")
    if stages is not None:
        return build_project_graph(stages=list(stages))
    if isinstance(project_graph, StateGraph):
        project_graph = project_graph.compile()
    if project_graph is not None and not (hasattr(project_graph, "ainvoke") and hasattr(project_graph, "nodes")):
        raise ProjectGenError(f"project_graph must be a compiled LangGraph graph over ProjectState, not "
                              f"{type(project_graph).__name__}")
    return project_graph


def custom_graph_nodes(graph: Any) -> list[str]:
    """The top-level node names of a compiled graph (what run.json records of a custom graph)."""
    return [name for name in graph.nodes if name != "__start__"]


def custom_warm_graph(stages: Sequence[Stage] | None) -> Any:
    """Warm-started attempts of a custom stage list: its stages from the one named "code" on (they start
    from the best attempt's design); None when there is no such stage or the caller gave a compiled graph."""
    names = [name for name, _ in stages or ()]
    if "code" not in names:
        return None
    return build_project_graph(stages=list(stages)[names.index("code"):])


def check_custom_graph(method_name: str, nodes: list[str] | None, warm: Any, *, warm_start: bool) -> None:
    """A custom graph replaces the ProjectGen graph only: the baselines run their own inner graph, and a
    warm start needs the custom stages' code stage."""
    if nodes is None:
        return
    method = describe_method(method_name)
    if method.graph != "project":
        raise ProjectGenError(f"method {method_name} runs its own inner graph; a custom project graph goes with "
                              "projectgen or a livecoder method")
    if warm_start and warm is None:
        raise ProjectGenError("a warm start with a custom project graph needs its stages (stages=[...]) with one "
                              "named 'code'; leave out warm_start or pass stages")
