"""The methods a run can use, as first-class arms: the graph inside the attempts and the attempt settings.

Every method runs through LiveCoder's durable run path (`projectgen.runs.livecoder`): the same
run folder, checkpoints, trace, budgets and summary.json, with the attempts graph wrapping the
method's inner graph. The baselines of the papers are one attempt with no knowledge, so their
run makes exactly the calls of the inner graph:

    direct                one call: the documents in, the whole repository out (LiveCoder's Direct)
    self-reflection       direct, then up to 4 rounds on the check-test errors (LiveCoder's baseline)
    projectgen-no-iter    ProjectGen's three generators once, no judges (ProjectGen's "w/o iter")
    projectgen            ProjectGen, one pass with its judges
    livecoder             attempts around ProjectGen with knowledge and the historical best (the default)
    livecoder-no-success, livecoder-no-failure, livecoder-no-best   LiveCoder's ablations

`method_attempt_settings` resolves the settings: the method's defaults, then what the caller set
explicitly (an `AttemptSettings` field given when it was made), then the ablation's switch, which
cannot be turned back on.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from projectgen.agents import Agents, DirectGenerator
from projectgen.config import AttemptSettings, Settings
from projectgen.errors import ProjectGenError
from projectgen.graphs import build_direct_graph, build_project_graph, build_self_reflection_graph, code_stage
from projectgen.graphs.project import default_stages
from projectgen.llm.roles import DIRECT_ROLE, STAGE_ROLES

InnerGraph = Literal["project", "project-no-judges", "direct", "self-reflection"]
DEFAULT_METHOD = "livecoder"
ONE_PASS = MappingProxyType({"attempts": 1, "success_knowledge": False, "failure_knowledge": False})


@dataclass(frozen=True)
class Method:
    """One arm: its name, a one-line label for reports, its inner graph and its attempt settings."""

    name: str
    label: str
    graph: InnerGraph
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    fixed: frozenset[str] = frozenset()  # fields of `settings` the caller cannot change (an ablation's switch)

    @property
    def roles(self) -> tuple[str, ...]:
        """The model roles the method calls (the knowledge agent's only when it extracts knowledge)."""
        if self.graph in ("direct", "self-reflection"):
            return (DIRECT_ROLE,)
        if self.graph == "project-no-judges":
            return tuple(role for role in STAGE_ROLES if not role.endswith("judge"))
        return STAGE_ROLES


CATALOGUE: tuple[Method, ...] = (
    Method("direct", "Direct (one call: the documents in, the whole repository out)", "direct", ONE_PASS),
    Method("self-reflection", "Self-Reflection (Direct, then up to 4 rounds on the check-test errors)",
           "self-reflection", ONE_PASS),
    Method("projectgen-no-iter", "ProjectGen w/o iter (each generator once, no judges)", "project-no-judges",
           ONE_PASS),
    Method("projectgen", "ProjectGen (one pass with its judges)", "project", ONE_PASS),
    Method("livecoder", "LiveCoder (attempts around ProjectGen, with knowledge and the historical best)",
           "project"),
    Method("livecoder-no-success", "LiveCoder w/o success knowledge", "project",
           MappingProxyType({"success_knowledge": False}), frozenset({"success_knowledge"})),
    Method("livecoder-no-failure", "LiveCoder w/o failure knowledge", "project",
           MappingProxyType({"failure_knowledge": False}), frozenset({"failure_knowledge"})),
    Method("livecoder-no-best", "LiveCoder w/o historical best (the output is the last attempt)", "project",
           MappingProxyType({"historical_best": False}), frozenset({"historical_best"})),
)
METHODS: tuple[str, ...] = tuple(m.name for m in CATALOGUE)


def describe_method(name: str) -> Method:
    """The method called `name`; an unknown name is a user mistake (one line)."""
    for method in CATALOGUE:
        if method.name == name:
            return method
    raise ProjectGenError(f"unknown method {name!r} (methods: {', '.join(METHODS)})")


def method_attempt_settings(name: str, given: AttemptSettings | None = None) -> AttemptSettings:
    """The attempt settings of a run of method `name`: its defaults, overridden by the fields set
    explicitly in `given`, then its fixed switch (``livecoder-no-best`` keeps ``historical_best`` off)."""
    method = describe_method(name)
    explicit = given.model_dump(include=given.model_fields_set) if given is not None else {}
    values = {**method.settings, **explicit, **{key: method.settings[key] for key in method.fixed}}
    settings = AttemptSettings(**values)
    if settings.warm_start and method.graph not in ("project", "project-no-judges"):
        raise ProjectGenError(f"method {name} has no architecture or skeleton to warm-start from; "
                              "leave out --warm-start")
    return settings


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
