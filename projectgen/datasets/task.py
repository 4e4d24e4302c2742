"""The task model: what a generator may see, what only the evaluator may see.

A task lives in a folder (its `root`). Every path it holds is relative to that
root and was checked, when the task was loaded, to stay inside it. The
candidate repository that a generator produces is laid out like the task root:
the reference implementation's paths (for example `tinydb/table.py`) are the
paths a generated repository is expected to use.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SuiteKind = Literal["check", "unit", "acceptance"]
SUITE_KINDS: tuple[SuiteKind, ...] = ("check", "unit", "acceptance")


class Documents(BaseModel):
    """Requirement documents given to the generator; only the PRD is mandatory."""

    model_config = ConfigDict(frozen=True)

    prd: str
    uml_class: str | None = None
    uml_sequence: str | None = None
    architecture_design: str | None = None


class TestSuite(BaseModel):
    """A folder of pytest tests inside the task root (check, unit or acceptance)."""

    model_config = ConfigDict(frozen=True)
    __test__ = False  # not a pytest test class

    kind: SuiteKind
    path: str = Field(description="folder relative to the task root, e.g. 'unit_tests'")


class EnvSpec(BaseModel):
    """What the test environment needs; tasks with equal specs share one cached venv."""

    model_config = ConfigDict(frozen=True)

    requirements: tuple[str, ...] = ()
    constraints: tuple[str, ...] = Field(
        default=(), description="version bounds applied while installing (pip/uv constraints), e.g. 'pyjwt<2.10'"
    )
    python: str | None = Field(default=None, description="e.g. '3.11'; None = the running interpreter's")
    setup_script: str | None = Field(
        default=None,
        description="the task's setup script text; recorded, not executed (it only pip-installs the requirements)",
    )
    env_vars: dict[str, str] = Field(default_factory=dict)
    pytest_plugins: tuple[str, ...] | None = Field(
        default=None,
        description="pytest plugins (entry-point names) to load; None = those installed by the requirements "
        "that provide fixtures, detected after the environment is built",
    )

    def cache_key(self) -> str:
        """Hash of everything that changes what gets installed (env vars and plugins do not)."""
        payload = json.dumps(
            {"requirements": list(self.requirements), "constraints": list(self.constraints), "python": self.python},
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class SizeFigures(BaseModel):
    """Size of the reference implementation (ProjectGen weights scores by LOC).

    `loc` counts physical lines of the Python files, as the CodeProjectEval table
    does (its #LOC is reproduced exactly this way); `code_lines` leaves out blank
    and comment-only lines.
    """

    files: int
    loc: int
    code_lines: int


class Task(BaseModel):
    """One project-generation task: documents, tests, environment, optional reference."""

    model_config = ConfigDict(frozen=True)

    id: str
    root: Path
    format: Literal["codeprojecteval", "devbench", "taskdir", "exercism"]
    docs: Documents
    suites: dict[SuiteKind, TestSuite] = Field(default_factory=dict)
    env: EnvSpec = Field(default_factory=EnvSpec)
    required_files: tuple[str, ...] = Field(
        default=(), description="task fixtures (data files, templates) copied into every test workspace"
    )
    reference: tuple[str, ...] = Field(
        default=(), description="files of the reference implementation, relative to root; never shown to a generator"
    )
    package: str | None = Field(default=None, description="top-level package or module under test, if known")
    settings_profile: dict[str, Any] = Field(
        default_factory=dict, description="pipeline settings of the paper that reports this task's benchmark "
        "(e.g. the code-stage cap), used where a run leaves them unset (`Settings.with_profile`)")
    expected_tests: dict[SuiteKind, tuple[str, ...]] = Field(
        default_factory=dict,
        description="pytest node ids a suite is expected to run, declared by the dataset; when absent the "
        "expected tests are measured by running the reference (projectgen.evaluation.expectations)",
    )

    def suite(self, kind: SuiteKind) -> TestSuite:
        """The suite of that kind, or a clear error naming the task."""
        from projectgen.errors import ProjectGenError

        if kind not in self.suites:
            have = ", ".join(self.suites) or "none"
            raise ProjectGenError(f"task {self.id!r} has no {kind} tests (it has: {have})")
        return self.suites[kind]

    @property
    def has_reference(self) -> bool:
        return bool(self.reference)

    def reference_repository(self) -> dict[str, str]:
        """The reference implementation as a path -> text mapping (evaluation only)."""
        return {rel: (self.root / rel).read_text(encoding="utf-8", errors="replace") for rel in self.reference}

    def reference_files(self) -> dict[str, Path]:
        """The reference implementation as repository path -> file on disk (binary-safe)."""
        return {rel: self.root / rel for rel in self.reference}

    def size(self) -> SizeFigures:
        """Python files and lines of the reference implementation."""
        from projectgen.evaluation.metrics import count_loc

        sources = [
            (self.root / rel).read_text(encoding="utf-8", errors="replace")
            for rel in self.reference
            if rel.endswith(".py")
        ]
        return SizeFigures(
            files=len(sources),
            loc=sum(len(text.splitlines()) for text in sources),
            code_lines=sum(count_loc(text) for text in sources),
        )
