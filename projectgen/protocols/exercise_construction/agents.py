"""The model roles of exercise construction (LiveRepoReflection): what each is asked and what it returns.

- the *designer* (a "creative" model): a seed's code -> a topic and an exercise definition (project name,
  language, instructions, the solution files and their stubs, build files);
- the *test writer* and the *solution writer* (the "reasoning" models): a definition -> a test suite, or a
  reference solution, each written without seeing the other.

Each role is a `typing.Protocol`, so a caller can put any object in its place; the default implementations
ask a chat model through the one door (`ModelGateway`) with a prompt file of `projectgen/prompts/`, and read
the reply as a pydantic model with the tolerant parser (`projectgen.llm.parsing.parse_model`). A reply that
does not parse raises `StructuredOutputError`: the pipeline records it as the draft's failure.
Calls are labelled role, stage ``construct_exercises``, target ``<seed>/<k>`` (k: the drafter's place in
its list), so a scripted replay answers each drafter of each seed, and a resumed run replays a finished call
from the call cache.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, Field, field_validator

from projectgen.agents.base import ModelGateway
from projectgen.construction.drafts import FilesDraft, safe_path, safe_paths
from projectgen.datasets.exercism import LANGUAGES
from projectgen.llm.parsing import parse_model
from projectgen.prompts import Prompt, load_prompt

STAGE = "construct_exercises"
DESIGNER_ROLE = "exercise_designer"
TEST_WRITER_ROLE = "exercise_test_writer"
SOLUTION_WRITER_ROLE = "exercise_solution_writer"
_PROJECT = re.compile(r"^[a-z][a-z0-9_]{1,48}$")


class ExerciseSeed(BaseModel):
    """Seed code an exercise is made from: a file of some language."""

    id: str
    language: str
    path: str
    code: str


class ExerciseDefinition(BaseModel):
    """What the designer returns: the exercise a model will be asked to solve."""

    topic: str = Field(min_length=1)
    project: str = Field(description="the folder and package name the tests import: lower_snake_case")
    language: str = "python"
    instructions: str = Field(min_length=20, description="Markdown: what to build, file by file")
    solution_files: list[str] = Field(min_length=1, description="the files a solver writes (paths in the project)")
    stubs: dict[str, str] = Field(default_factory=dict, description="starting code of some solution files")
    support_files: dict[str, str] = Field(default_factory=dict,
                                          description="build files the tests need (go.mod, package.json, ...)")

    @field_validator("project")
    @classmethod
    def _project_name(cls, value: str) -> str:
        if not _PROJECT.match(value):
            raise ValueError("a lower_snake_case name of 2-49 letters, digits and '_', starting with a letter")
        return value

    @field_validator("language")
    @classmethod
    def _runnable(cls, value: str) -> str:
        value = value.strip().lower()
        if value not in LANGUAGES:
            raise ValueError(f"one of {', '.join(LANGUAGES)}")
        return value

    @field_validator("solution_files")
    @classmethod
    def _safe_list(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(safe_path(path) for path in value))

    @field_validator("stubs", "support_files")
    @classmethod
    def _safe_paths(cls, value: dict[str, str]) -> dict[str, str]:
        return safe_paths(value)


class ExerciseDesigner(Protocol):
    """Turns seed code into an exercise definition."""

    async def design(self, seed: ExerciseSeed, gateway: ModelGateway, *, target: str) -> ExerciseDefinition: ...


class TestWriter(Protocol):
    """Writes a test suite for a definition (never shown a solution)."""

    async def write_tests(self, definition: ExerciseDefinition, gateway: ModelGateway, *,
                          target: str) -> FilesDraft: ...


class SolutionWriter(Protocol):
    """Writes a reference solution for a definition (never shown the tests)."""

    async def write_solution(self, definition: ExerciseDefinition, gateway: ModelGateway, *,
                             target: str) -> FilesDraft: ...


def _listing(files: dict[str, str]) -> str:
    return "\n\n".join(f"{path}\n```\n{text}\n```" for path, text in files.items()) or "(none)"


@dataclass(frozen=True)
class ModelDesigner:
    """The default designer: one call to a chat model with ``exercise_designer.md``."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("exercise_designer"))

    async def design(self, seed: ExerciseSeed, gateway: ModelGateway, *, target: str) -> ExerciseDefinition:
        messages = self.prompt.messages(language=LANGUAGES.get(seed.language, seed.language), seed_path=seed.path,
                                        seed_code=seed.code, languages=", ".join(LANGUAGES))
        reply = await gateway.ask(self.model, messages, role=DESIGNER_ROLE, stage=STAGE, target=target, iteration=1)
        return parse_model(reply, ExerciseDefinition)


@dataclass(frozen=True)
class ModelTestWriter:
    """The default test writer: one call with ``exercise_tests.md``."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("exercise_tests"))

    async def write_tests(self, definition: ExerciseDefinition, gateway: ModelGateway, *,
                          target: str) -> FilesDraft:
        return await ask_files(self.model, self.prompt, definition, gateway, role=TEST_WRITER_ROLE, target=target)


@dataclass(frozen=True)
class ModelSolutionWriter:
    """The default solution writer: one call with ``exercise_solution.md``."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("exercise_solution"))

    async def write_solution(self, definition: ExerciseDefinition, gateway: ModelGateway, *,
                             target: str) -> FilesDraft:
        return await ask_files(self.model, self.prompt, definition, gateway, role=SOLUTION_WRITER_ROLE, target=target)


async def ask_files(model: Any, prompt: Prompt, definition: ExerciseDefinition, gateway: ModelGateway, *, role: str,
                    target: str) -> FilesDraft:
    """One drafter's call: the definition in `prompt`, the reply read as files."""
    reply = await gateway.ask(model, prompt.messages(**definition_values(definition)), role=role, stage=STAGE,
                              target=target, iteration=1)
    return parse_model(reply, FilesDraft)


def definition_values(definition: ExerciseDefinition) -> dict[str, str]:
    """The placeholders the test and solution prompts fill from a definition."""
    return {"language": LANGUAGES[definition.language], "project": definition.project,
            "instructions": definition.instructions, "solution_files": ", ".join(definition.solution_files),
            "stubs": _listing(definition.stubs), "support_files": _listing(definition.support_files)}
