"""What a protocol is (`Protocol`) and what one call of `evaluate` hands it (`Evaluation`).

A protocol names its parts; it runs nothing itself. A protocol with only a solver and scorers is run one unit per
(model, sample) by `projectgen.protocols.samples`; one whose batch is richer than that (reflection's matrix of
edit formats, its environment-incomplete exercises, its results page) gives its own `batch`, still over the
engine and the driver.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from projectgen.experiments.concurrency import Concurrency
from projectgen.experiments.engine import Executor, ProgressFn
from projectgen.experiments.models import ExperimentModel
from projectgen.runs import layout

if TYPE_CHECKING:
    from langgraph.pregel import Pregel

    from projectgen.agents.base import ModelGateway
    from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

SampleT = TypeVar("SampleT")
SettingsT = TypeVar("SettingsT", bound=BaseModel)



@dataclass(frozen=True)
class Solver:
    """One sample's run of a protocol's graph: the compiled graph, the state it starts from, and the context it
    runs with, built around the run's model gateway (the one door: usage, call cache, budgets)."""

    graph: Pregel  # a compiled LangGraph graph
    start: Mapping[str, Any]
    context: Callable[[ModelGateway], Any]
    config: Mapping[str, Any] = field(default_factory=dict)  # LangGraph's run config, e.g. a recursion limit


SolverFactory = Callable[[SampleT, SettingsT, Any, "SandboxRunner | None"], Solver]
"""(sample, settings, chat model, sandbox runner or None) -> the sample's `Solver`."""

SampleScorer = Callable[[SampleT, Mapping[str, Any]], float]
"""(sample, the graph's final state) -> a score; a protocol's scorers run inside the unit, never after the run."""


@dataclass(frozen=True)
class Play:
    """One sample played by a protocol in a folder its caller chose, with one model: how another protocol builds on
    this one without importing it (exercise construction's difficulty judges play reflection)."""

    sample: Any  # the protocol's own sample type
    run_dir: Path  # the run's folder: run again, it resumes there, or reads back a finished run
    spec: str  # the model's spec, as run.json records it
    label: str  # the model's folder and report name
    model: Any  # the chat model
    runner: SandboxRunner | None
    settings: Mapping[str, Any]  # the protocol's settings for one run (checked by the protocol)
    scope: str  # keys the run's call cache


PlayFn = Callable[[Play], Awaitable[Mapping[str, Any]]]
"""(the play) -> the run's record, as its run log keeps it."""


@dataclass(frozen=True)
class Hooks:
    """What a caller hears while a batch runs (each optional): `on_loaded(dataset)` once the dataset is read,
    `on_missing(lines)` what this machine lacks (one line per toolchain), `on_check(check)` each sample whose
    references a protocol checks before it runs them, `on_start(pending, already)` once the
    plan is known, `on_row(row)` after each unit, `progress(key, message)` the units' progress lines."""

    on_start: Callable[[int, int], None] | None = None
    on_row: Callable[[Any], None] | None = None
    progress: ProgressFn | None = None
    on_loaded: Callable[[Any], None] | None = None
    on_missing: Callable[[dict[str, str]], None] | None = None
    on_check: Callable[[Any], None] | None = None  # each sample's references checked now (refinement's `TaskCheck`)


@dataclass(frozen=True)
class BatchOptions:
    """How a batch runs, whatever the protocol: which samples, on what executor, with which caps and sandbox."""

    tasks: Sequence[str] | None = None  # sample ids to run (None: all)
    fresh: bool = False  # empty the folder's ledger and unit folders first
    executor: Executor | None = None  # default: `concurrency.workers` threads here, or one
    concurrency: Concurrency | None = None  # caps on model calls and sandbox runs (None: none)
    base_url: str | None = None  # an OpenAI-compatible endpoint for served models
    sampling: Mapping[str, float | int] = field(default_factory=dict)  # temperature, top_p, max_tokens overrides
    runner_settings: RunnerSettings | None = None  # what the workers' sandbox runners are made from
    runner_factory: Callable[[], Any] | None = None  # or a factory of the runner (tests: a fake sandbox)
    checkpoint_url: str | None = None  # PostgreSQL for every unit's checkpoints (None: SQLite per unit)
    hooks: Hooks = field(default_factory=Hooks)


@dataclass(frozen=True)
class Evaluation(Generic[SettingsT]):
    """One call of `evaluate`: the dataset, the models, the protocol's typed settings and the output folder."""

    dataset: Path
    models: tuple[ExperimentModel, ...]
    settings: SettingsT
    out: Path
    options: BatchOptions


@dataclass(frozen=True)
class Protocol(Generic[SampleT, SettingsT]):
    """A protocol: its name (the folder's), one line for `--help`, its settings model, how it reads a dataset,
    its solver and scorers, and, for a protocol whose batch is its own, that batch."""

    name: str
    summary: str
    settings: type[SettingsT]
    load_dataset: Callable[[Path], Sequence[SampleT]]
    """The samples of a dataset folder; each has an ``id`` (its folder name in a batch)."""
    solver: SolverFactory[SampleT, Any] | None = None
    """One unit's solver, given the protocol's settings (or a unit's share of them, when the protocol's own batch
    splits them: reflection's units each take one edit format); None only for an adapter whose batch runs units
    that build their own graph (LiveCoder's runs; evolve's run, whose solver takes a model per role and the base
    as its folder keeps it: `protocols.evolve.unit.evolve_solver`)."""
    scorers: Mapping[str, SampleScorer[SampleT]] = field(default_factory=dict)
    batch: Callable[[Evaluation[SettingsT]], BaseModel] | None = None
    """The protocol's own batch (None: one unit per model and sample, `projectgen.protocols.samples`)."""
    failures: Callable[[Any], int] | None = None
    """How many units of its own batch's results ended in an error or did not load (`projectgen evaluate` exits 1
    then): a batch of its own must say, so that no failure passes as exit 0."""
    sandbox: bool = True  # whether each worker needs a sandbox runner (a solver that runs no tests does not)
    play: PlayFn | None = None
    """One sample in a folder of the caller's (`Play`), for a protocol that builds on this one (None: not offered)."""
    results_file: str = layout.RESULTS_JSON  # the file of the output folder its results are written to

    def __post_init__(self) -> None:
        if self.batch is None and (self.solver is None or not self.scorers):
            raise ValueError(f"protocol {self.name}: give a solver and scorers, or a batch of its own")
        if self.batch is not None and self.failures is None:
            raise ValueError(f"protocol {self.name}: a batch of its own needs `failures` (its results' error count)")
