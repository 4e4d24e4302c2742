"""The methods a run can use, as first-class arms: the graph inside the attempts and the attempt settings.

Every method runs through LiveCoder's durable run path (`projectgen.runs.livecoder`): the same
run folder, checkpoints, trace, budgets and summary.json, with the attempts graph wrapping the
method's inner graph. The baselines of the papers are one attempt with no knowledge, so their
run makes exactly the calls of the inner graph:

    direct                one call: the documents in, the whole repository out (LiveCoder's Direct)
    self-reflection       direct, then up to 4 rounds on the feedback tests' errors (LiveCoder's baseline)
    projectgen-no-iter    ProjectGen's three generators once, no judges (ProjectGen's "w/o iter")
    projectgen            ProjectGen, one pass with its judges
    livecoder             attempts around ProjectGen with knowledge and the historical best (the default)
    livecoder-no-success, livecoder-no-failure, livecoder-no-best   LiveCoder's ablations

`method_attempt_settings` resolves the settings: the method's defaults, then what the caller set
explicitly (an `AttemptSettings` field given when it was made), then the ablation's switch, which
cannot be turned back on. The graphs themselves are built by `projectgen.runs.method_graphs`; this
module stays light (no pydantic, LangChain or LangGraph), so the CLI can list the methods at start-up.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from projectgen.errors import ProjectGenError
from projectgen.llm.roles import DIRECT_ROLE, STAGE_ROLES

if TYPE_CHECKING:
    from projectgen.config import AttemptSettings, Profile

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


    @property
    def stages(self) -> tuple[str, ...]:
        """The ProjectGen stages its inner graph has (none for the baselines' one-call generator)."""
        return ("architecture", "skeleton", "code") if self.graph in ("project", "project-no-judges") else ()


CATALOGUE: tuple[Method, ...] = (
    Method("direct", "Direct (one call: the documents in, the whole repository out)", "direct", ONE_PASS),
    Method("self-reflection", "Self-Reflection (Direct, then up to 4 rounds on the feedback tests' errors)",
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


def method_attempt_settings(name: str, given: AttemptSettings | None = None,
                            profile: Profile | None = None) -> AttemptSettings:
    """The attempt settings of a run of method `name`: `profile`'s (the run's pipeline profile; None: the
    fields' defaults), under the method's defaults, under the fields set explicitly in `given`, then its
    fixed switch (``livecoder-no-best`` keeps ``historical_best`` off)."""
    from projectgen.config import AttemptSettings

    method = describe_method(name)
    explicit = given.model_dump(include=given.model_fields_set) if given is not None else {}
    values = {**({"profile": profile} if profile else {}), **method.settings, **explicit,
              **{key: method.settings[key] for key in method.fixed}}
    settings = AttemptSettings(**values)
    if settings.warm_start and method.graph not in ("project", "project-no-judges"):
        raise ProjectGenError(f"method {name} has no architecture or skeleton to warm-start from; "
                              "leave out --warm-start")
    return settings


def check_review(name: str, stages: tuple[str, ...]) -> None:
    """`run --review STAGES` needs a method whose graph has those stages (the baselines have none)."""
    method = describe_method(name)
    missing = [stage for stage in stages if stage not in method.stages]
    if missing:
        raise ProjectGenError(f"method {name} has no {' or '.join(missing)} stage to review; --review goes with "
                              "projectgen-no-iter, projectgen or a livecoder method")
