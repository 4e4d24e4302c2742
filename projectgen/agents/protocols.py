"""What the graphs call on an agent, as `typing.Protocol`s, so a user's agent is type-checked.

One Protocol per role, each naming exactly the methods and arguments the stage (or the
attempts graph) calls: the architecture, skeleton and code stages each have a generator
and a judge (`...Reviewer`, since judges answer ``review``), and LiveCoder's learn step
has the knowledge extractor. The default agents (`Architect`, `ArchitectureJudge`, ...)
satisfy them; so does any class with the same async methods, no base class needed.

The stages pass the gateway and the reviewed values positionally (the ``/``), so their
names are free; everything after the ``*`` is passed by keyword. Every Protocol is
`runtime_checkable`: ``isinstance(agent, CodeGenerator)`` checks that the methods exist
(not their signatures; a type checker does that).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from projectgen.agents.base import ModelGateway, Verdict
from projectgen.agents.observations import ExecutionFeedback, RepositoryObservation
from projectgen.config import EditFormat
from projectgen.datasets.exercism import Exercise
from projectgen.datasets.task import Documents, Task
from projectgen.evaluation.runner import SandboxRunner
from projectgen.memory import MemoryEntry
from projectgen.memory.knowledge_entries import ExtractedKnowledge
from projectgen.repository.edits import EditOutcome
from projectgen.ssat import SSAT


@runtime_checkable
class ArchitectureGenerator(Protocol):
    """The architecture stage's generator (default `Architect`): documents -> architecture tree.

    It may raise `StructuredOutputError` or `SSATValidationError` on an unusable reply; the stage
    turns that into feedback for the next iteration."""

    async def design(self, gateway: ModelGateway, documents: Documents, /, *, iteration: int,
                     previous: SSAT | None, feedback: str, memory: str, guidance: str) -> SSAT: ...


@runtime_checkable
class ArchitectureReviewer(Protocol):
    """The architecture stage's judge (default `ArchitectureJudge`)."""

    async def review(self, gateway: ModelGateway, documents: Documents, ssat: SSAT, /, *, iteration: int,
                     threshold: float) -> Verdict: ...


@runtime_checkable
class SkeletonGenerator(Protocol):
    """The skeleton stage's generator (default `SkeletonWriter`): one file's skeleton from the tree.
    For a file the task gives a starter file for (`Documents.starter`), the stage also passes
    `starter=` its text; a writer for tasks without starter files may leave that keyword out. It may raise
    `IncompleteFileError` when the reply stopped at the output cap inside the file: the stage refuses
    the file as it refuses one that does not parse."""

    async def write(self, gateway: ModelGateway, ssat: SSAT, path: str, /, *, iteration: int,
                    previous: str | None, feedback: str, memory: str, guidance: str,
                    starter: str | None = None) -> str: ...


@runtime_checkable
class SkeletonReviewer(Protocol):
    """The skeleton stage's judge (default `SkeletonJudge`): all skeleton files at once."""

    async def review(self, gateway: ModelGateway, ssat: SSAT, files: Mapping[str, str], /, *, iteration: int,
                     threshold: float) -> Verdict: ...


@runtime_checkable
class CodeGenerator(Protocol):
    """The code stage's generator, the coder (default `Coder`): fills a file in round 1, then
    repairs the files the judges name. `ssat` is None when a graph has no architecture stage. `fill`
    may raise `IncompleteFileError` (see `SkeletonGenerator`)."""

    async def fill(self, gateway: ModelGateway, ssat: SSAT | None, path: str, skeleton: str, /, *,
                   dependencies: Mapping[str, str], iteration: int, guidance: str) -> str: ...

    async def repair(self, gateway: ModelGateway, path: str, content: str, /, *, suggestion: str, error_log: str,
                     memory: str, iteration: int, edit_format: EditFormat, guidance: str) -> EditOutcome: ...


@runtime_checkable
class CodeReviewer(Protocol):
    """A code stage judge (default `CodeJudge`, which runs the feedback suite's tests in `runner`: the check
    tests, or the unit tests with `Settings.feedback_suite` "unit")."""

    async def review(self, gateway: ModelGateway, task: Task, repository: Mapping[str, str], /, *,
                     runner: SandboxRunner, iteration: int) -> Verdict: ...


@runtime_checkable
class LessonExtractor(Protocol):
    """LiveCoder's knowledge extractor (default `KnowledgeExtractor`): one attempt -> success and
    failure knowledge for later attempts."""

    async def extract(self, gateway: ModelGateway, /, *, task_summary_source: str, attempt: int, score: float,
                      observation: RepositoryObservation | str, feedback: ExecutionFeedback | str
                      ) -> ExtractedKnowledge: ...


@runtime_checkable
class RevisionSummarizer(Protocol):
    """The stage-memory summariser of distilled memory (default `MemorySummarizer`): one revision's feedback
    and diff -> the entry with its `summary`."""

    async def summarize(self, gateway: ModelGateway, entry: MemoryEntry, /) -> MemoryEntry: ...


@runtime_checkable
class RepositoryGenerator(Protocol):
    """The baselines' generator (default `DirectGenerator`): the whole repository in one reply from the
    documents (`direct`), then, for `self-reflection`, the files to change given the test errors
    (and, with carried reflections, first a verbal reflection on them: `reflect_verbally`)."""

    async def generate(self, gateway: ModelGateway, documents: Documents, /, *, guidance: str) -> EditOutcome: ...

    async def reflect(self, gateway: ModelGateway, documents: Documents, repository: Mapping[str, str], /, *,
                      error_log: str, passed: int, total: int, iteration: int, guidance: str,
                      reflections: Sequence[str] = ()) -> EditOutcome: ...

    async def reflect_verbally(self, gateway: ModelGateway, documents: Documents, repository: Mapping[str, str],
                               /, *, error_log: str, passed: int, total: int, iteration: int,
                               reflections: Sequence[str]) -> str: ...


@runtime_checkable
class ReflectionGenerator(Protocol):
    """LiveRepoReflection's coder (default `ReflectionCoder`): an exercise's solution files in an edit format
    ("whole" or "patch"), written at try 1 and repaired from the cleaned test output at try 2, 3, ..."""

    async def write(self, gateway: ModelGateway, exercise: Exercise, repository: Mapping[str, str],
                    edit_format: str, /) -> EditOutcome: ...

    async def repair(self, gateway: ModelGateway, exercise: Exercise, repository: Mapping[str, str],
                     edit_format: str, /, *, test_log: str, edit_feedback: str, attempt: int) -> EditOutcome: ...
