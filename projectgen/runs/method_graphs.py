"""The graph inside the attempts for each method of `projectgen.runs.methods`."""
from __future__ import annotations

from typing import Any

from projectgen.agents import Agents, DirectGenerator
from projectgen.config import Settings
from projectgen.errors import ProjectGenError
from projectgen.graphs import build_direct_graph, build_project_graph, build_self_reflection_graph, code_stage
from projectgen.graphs.project import default_stages
from projectgen.llm.roles import DIRECT_ROLE
from projectgen.runs.methods import describe_method


def direct_generator(models: Any) -> DirectGenerator:
    """The baselines' generator on the "direct" role's model (`ModelRoles`, or one model for all)."""
    if models is None:
        raise ProjectGenError("the direct and self-reflection methods need models (the 'direct' role's)")
    return DirectGenerator(getattr(models, "for_role", lambda role: models)(DIRECT_ROLE))


def inner_graph(name: str, agents: Agents | None, settings: Settings, *, models: Any = None) -> Any:
    """The compiled graph one attempt of method `name` runs (over `ProjectState`): the project graph
    (with or without its judges) from `agents`, or a baseline from the "direct" role of `models`."""
    method = describe_method(name)
    if method.graph in ("direct", "self-reflection"):
        generator = direct_generator(models)
        if method.graph == "direct":
            return build_direct_graph(generator)
        return build_self_reflection_graph(generator, settings=settings)
    if agents is None:
        raise ProjectGenError(f"method {name} needs the ProjectGen agents (models or agents)")
    if method.graph == "project-no-judges":
        return build_project_graph(stages=default_stages(agents, settings, judges=False), settings=settings)
    return build_project_graph(agents=agents, settings=settings)


def warm_graph(name: str, agents: Agents | None, settings: Settings) -> Any:
    """The graph of warm-started attempts (the code stage, from the best attempt's design); None for
    the baselines, which have no design to start from."""
    method = describe_method(name)
    if agents is None or method.graph not in ("project", "project-no-judges"):
        return None
    judges = [agents.code_judge, *agents.extra_code_judges] if method.graph == "project" else []
    return build_project_graph(stages=[("code", code_stage(agents.coder, judges, settings))])
