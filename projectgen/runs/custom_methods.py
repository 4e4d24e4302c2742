"""A user's own method (an arm with its own inner graph) and scorer, named by spec strings.

A method factory (``--method package.module:factory``) returns a `CustomMethod`: its name (its folder and
table column), a label, and a graph factory called like the built-in inner graphs
(`projectgen.runs.method_graphs.inner_graph`): with the run's agents, its settings and its models, it
returns the compiled graph each attempt runs. The run is otherwise the one of its `base` method (a
ProjectGen or LiveCoder method): its attempt settings, checkpoints, trace, knowledge and historical best.

A scorer factory (``--scorer package.module:factory``) returns a `projectgen.runs.output_scorers.Scorer`:
its scores go into each run's log under its name, and from there into the experiment's results and tables.
A scorer runs in the harness's process: generated code it wants to run must go through the sandbox runner
it is given, never be imported or executed directly (docs/sandbox.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from projectgen.errors import ProjectGenError
from projectgen.runs.methods import METHODS, describe_method
from projectgen.runs.plugins import PluginIdentity, load_factory

if TYPE_CHECKING:
    from projectgen.agents import Agents
    from projectgen.config import Settings
    from projectgen.llm import ModelRoles
    from projectgen.runs.output_scorers import Scorer

ARM_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")


class GraphFactory(Protocol):
    """Builds the compiled graph (over `ProjectState`) every attempt of a run runs."""

    def __call__(self, agents: Agents | None, settings: Settings, models: ModelRoles | None) -> Any: ...


@dataclass(frozen=True)
class CustomMethod:
    """A user's arm: `name` (lower-case, a folder name), a one-line `label` for reports, the `graph` factory, and
    the built-in method whose attempt settings the run takes (`base`: one whose inner graph is ProjectGen's)."""

    name: str
    label: str
    graph: GraphFactory
    base: str = "projectgen"


@dataclass(frozen=True)
class LoadedMethod:
    """A custom method and the identity of the code it came from."""

    method: CustomMethod
    identity: PluginIdentity

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickled as its spec (an executor on other processes loads it there; a function of a file loaded by
        path would not pickle)."""
        return load_method, (self.identity.spec,)

    def record(self) -> dict[str, str]:
        """What experiment.json and run.json record of it (a continued folder must find the same)."""
        return {**self.identity.record(), "name": self.method.name, "label": self.method.label,
                "base": self.method.base}


@dataclass(frozen=True)
class LoadedScorer:
    """A custom scorer and the identity of the code it came from."""

    scorer: Scorer
    identity: PluginIdentity

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickled as its spec, as `LoadedMethod`."""
        return load_scorer, (self.identity.spec,)

    def record(self) -> dict[str, str]:
        return {**self.identity.record(), "name": self.scorer.name}


def load_method(spec: str) -> LoadedMethod:
    """The `CustomMethod` the factory `spec` names returns, checked; anything wrong is one line."""
    factory, identity = load_factory(spec)
    method = factory()
    if not isinstance(method, CustomMethod):
        raise ProjectGenError(f"method factory {spec!r} returned {type(method).__name__}, not a CustomMethod")
    if not ARM_NAME.fullmatch(method.name) or method.name in METHODS:
        raise ProjectGenError(f"method factory {spec!r}: its name {method.name!r} must be lower-case letters, digits, "
                              f"'-', '_' or '.', and not a built-in method ({', '.join(METHODS)})")
    if not callable(method.graph):
        raise ProjectGenError(f"method factory {spec!r}: its graph must be a callable (agents, settings, models)")
    if method.base not in METHODS or describe_method(method.base).graph != "project":
        raise ProjectGenError(f"method factory {spec!r}: base {method.base!r} must be projectgen or a livecoder method "
                              "(its inner graph is the one replaced)")
    return LoadedMethod(method, identity)


def load_scorer(spec: str, taken: frozenset[str] = frozenset()) -> LoadedScorer:
    """The scorer the factory `spec` names returns, checked; its name must not be one of `taken` (the built-in
    scorers' and the others given)."""
    factory, identity = load_factory(spec)
    scorer = factory()
    name = getattr(scorer, "name", None)
    if not isinstance(name, str) or not callable(getattr(scorer, "score", None)):
        raise ProjectGenError(f"scorer factory {spec!r} returned {type(scorer).__name__}, which has no name and "
                              "score(task, folder, runner, unit_report)")
    if not ARM_NAME.fullmatch(name) or name in taken:
        raise ProjectGenError(f"scorer factory {spec!r}: its name {name!r} must be lower-case letters, digits, '-', "
                              f"'_' or '.', and not one already used ({', '.join(sorted(taken))})")
    return LoadedScorer(scorer, identity)
