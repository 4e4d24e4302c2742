"""The runtime contexts: per-run things that are not state (LangGraph's ``context_schema``).

State holds only JSON-ready values so that a checkpoint resumes in a new process; what is
not data (the task folder's `Task`, the sandbox runner, the gateway with its usage recorder
and budget, the stores, progress output) travels here, given again on every (re)start.
`RunContext` serves the project graph and its stages, `AttemptsContext` LiveCoder's
attempts graph, which derives each attempt's `RunContext` from it, and `ReflectionContext`
LiveRepoReflection's protocol on one exercise.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from projectgen.agents.base import ModelGateway
from projectgen.agents.protocols import LessonExtractor
from projectgen.datasets.exercism import Exercise, exercise_task
from projectgen.datasets.task import Task
from projectgen.evaluation.runner import SandboxRunner
from projectgen.llm import META_ATTEMPT
from projectgen.memory.best_repo import BestRepositoryStore

if TYPE_CHECKING:
    from projectgen.memory.knowledge_entries import KnowledgeEntry, KnowledgeKind
    from projectgen.memory.knowledge_store import RetrievedKnowledge

AttemptRecorder = Callable[[int, Mapping[str, str], Mapping[str, Any]], None]
"""(attempt number, its repository, its record) -> None: where a run keeps each attempt (`attempts/N`)."""


class Knowledge(Protocol):
    """What the attempts graph asks of LiveCoder's knowledge: `KnowledgeStore` (Chroma) in a run, a stand-in that
    keeps nothing in tests and ablations."""

    def add(self, task_id: str, entry: KnowledgeEntry, run_id: str | None = None) -> object: ...

    def retrieve(self, task_id: str, query: str, kind: KnowledgeKind, k: int = 3,
                 run_id: str | None = None) -> list[RetrievedKnowledge]: ...


@dataclass
class RunContext:
    """Per-run things that are not data: the task, the sandbox, how models are reached, progress.

    `task` may be given as a folder path or a bundled example name and `runner` left out
    (``RunContext(task="kvstore")``). LangGraph Studio gets a context of plain values instead
    (`projectgen.runs.studio`), from which one of these is built.
    """

    task: Task | str
    runner: SandboxRunner | None = None
    gateway: ModelGateway = field(default_factory=ModelGateway)
    progress: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.task, str):
            from projectgen.datasets.loaders import load_task_or_example

            self.task = load_task_or_example(self.task)
        if self.runner is None:
            self.runner = SandboxRunner()

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)


@dataclass
class AttemptsContext:
    """What the outer loop needs besides state: the task, sandbox, stores, extractor and gateway."""

    task: Task
    runner: SandboxRunner
    knowledge: Knowledge
    best: BestRepositoryStore
    extractor: LessonExtractor | None = None  # KnowledgeExtractor by default; None skips extraction
    gateway: ModelGateway = field(default_factory=ModelGateway)
    run_id: str = "run"
    progress: Callable[[str], None] | None = None
    record_attempt: AttemptRecorder | None = None  # keeps each attempt's repository and record (the run folder's)

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)

    def attempt_context(self, attempt: int) -> RunContext:
        """The inner graph's context: same task and sandbox, calls tagged with the attempt."""
        gateway = replace(self.gateway, metadata={**self.gateway.metadata, META_ATTEMPT: attempt})
        return RunContext(task=self.task, runner=self.runner, gateway=gateway, progress=self.progress)


@dataclass
class ReflectionContext:
    """LiveRepoReflection's protocol on one exercise: the exercise (and the `Task` the sandbox runs), the
    edit format ("whole" or "patch"), the sandbox, how the model is reached, progress."""

    exercise: Exercise
    edit_format: str = "whole"
    runner: SandboxRunner | None = None
    gateway: ModelGateway = field(default_factory=ModelGateway)
    progress: Callable[[str], None] | None = None
    task: Task = field(init=False)

    def __post_init__(self) -> None:
        if self.edit_format not in ("whole", "patch"):
            from projectgen.errors import ProjectGenError

            raise ProjectGenError(f"unknown edit format {self.edit_format!r} (formats: whole, patch)")
        self.task = exercise_task(self.exercise)
        if self.runner is None:
            self.runner = SandboxRunner()

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)
