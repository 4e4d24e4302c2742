"""The task model: what a generator may see, what only the evaluator may see.

A task lives in a folder (its `root`). Every path it holds is relative to that
root and was checked, when the task was loaded, to stay inside it. The
candidate repository that a generator produces is laid out like the task root:
its test suites sit at the same paths in the test workspace, and the reference
implementation's repository paths (for example `tinydb/table.py`) are the paths a
generated repository is expected to use. The reference's files may live in a
subfolder of the root (`reference_root`), which is not part of their repository path.
"""
from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from projectgen.errors import ProjectGenError
from projectgen.repository import SKIPPED_DIRS
from projectgen.repository.lines import count_loc

SuiteName = str
"""A suite's name: `check` (the tests a generator may run while it works), `unit` (the final
evaluation, what runs and `eval` score by default) or any other name matching `SUITE_NAME`
(benchmarks report per category: `performance`, `security`, ...)."""
SUITE_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
STANDARD_SUITES: tuple[SuiteName, ...] = ("check", "unit", "acceptance")
SUPPORT_FILES = ("conftest.py", "__init__.py")  # what pytest reads in the folders above a test file
InstallStep = Literal["editable", "package", "script"]
INSTALL_STEPS: tuple[InstallStep, ...] = ("editable", "package", "script")
# Per published benchmark format, the pipeline settings of the paper that reports it, which its tasks carry as
# `settings_profile`: the `paper` profile (`projectgen.config.SETTINGS_PROFILES`; for LiveCoder's RAL-Bench and
# NL2Repo-Bench that is also selection by the functional score, as they publish no visible tests, and the
# execution feedback of every method from those tests, as LiveCoder gives it) and a code stage of up to 10
# rounds on CodeProjectEval, 5 on DevBench (ProjectGen's).
PAPER_SETTINGS: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "codeprojecteval": MappingProxyType({"profile": "paper", "code_iterations": 10}),
    "devbench": MappingProxyType({"profile": "paper", "code_iterations": 5}),
    "ralbench": MappingProxyType({"profile": "paper", "feedback_suite": "unit"}),
    "nl2repobench": MappingProxyType({"profile": "paper", "feedback_suite": "unit"}),
})


def package_install(commands: Sequence[str]) -> InstallStep | None:
    """The install step a benchmark's setup commands are when they are one plain pip install of the project
    itself (``pip install -e .``: editable; ``pip install .``: package), else None. Blank and comment lines
    do not count. CodeProjectEval flask's setup script is ``pip install -e .``: without it the package has no
    metadata and its version test fails on the reference too."""
    setup = [" ".join(line.split()) for line in commands if line.strip() and not line.lstrip().startswith("#")]
    if setup == ["pip install -e ."]:
        return "editable"
    if setup == ["pip install ."]:
        return "package"
    return None


class Documents(BaseModel):
    """Requirement documents given to the generator; only the PRD is mandatory."""

    model_config = ConfigDict(frozen=True)

    prd: str
    uml_class: str | None = None
    uml_sequence: str | None = None
    architecture_design: str | None = None
    starter: dict[str, str] = Field(
        default_factory=dict, description="starter files (stubs, signatures) given to the generators: "
        "repository path -> text; a generator starts those files from them")


class TestSuite(BaseModel):
    """A named set of pytest tests: folders and files inside the task root, run together.

    The paths are where the tests sit in the task folder and, the same, in the test workspace;
    globs were expanded by the loader. A suite that is one folder is the common case
    (`TestSuite(name="unit", paths=("unit_tests",))`); a single path may be given as a string.
    """

    model_config = ConfigDict(frozen=True)
    __test__ = False  # not a pytest test class

    name: SuiteName = Field(description="check, unit, acceptance or another name matching SUITE_NAME")
    paths: tuple[str, ...] = Field(description="folders and files relative to the task root, e.g. "
                                   "('tests/unit', 'tests/test_extra.py'); run in this order")

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not SUITE_NAME.match(value):
            raise ValueError(f"{value!r} is not a valid suite name (lowercase letters, digits, '_' and '-', "
                             f"starting with a letter)")
        return value

    @field_validator("paths", mode="before")
    @classmethod
    def _one_or_more(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @field_validator("paths")
    @classmethod
    def _not_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("a suite needs at least one folder or file")
        return value


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
        description="the task's setup script text; run (in the sandbox) only as the install step "
        "`install = 'script'` (the benchmarks' scripts pip-install the requirements, or the project itself: "
        "`package_install`)",
    )
    env_vars: dict[str, str] = Field(default_factory=dict)
    pytest_plugins: tuple[str, ...] | None = Field(
        default=None,
        description="pytest plugins (entry-point names) to load; None = those installed by the requirements "
        "that provide fixtures, detected after the environment is built",
    )
    source_root: str | None = Field(
        default=None, description="folder of the candidate (e.g. 'src'): put first on the tests' import path "
        "(Python); where the build and the tests run (other languages: the folder of go.mod, Cargo.toml, ...)")
    pytest_options: dict[str, str] = Field(
        default_factory=dict, description="ini options of the benchmark's own pytest configuration "
        "(`[env] pytest_config`), written to the pytest.ini the tests run with; default none")
    workdir: str | None = Field(
        default=None, description="folder of the workspace the tests run from (their working directory, for "
        "tests that open files by relative paths as the benchmark's harness ran them); default the workspace")
    nearest_pins: bool = Field(
        default=False, description="the requirements are a benchmark's listed environment (NL2Repo-Bench's "
        "start.md): an `==` pin that does not install on this Python is replaced by the nearest version that does "
        "(the environment's `relaxed` record), and a requirement that cannot be had at all makes the task "
        "'environment incomplete'")
    listed_left_out: tuple[str, ...] = Field(
        default=(), description="lines of the benchmark's listed environment not taken as requirements, each with "
        "why (the task's own project, a tool projectgen provides, not a requirement)")
    install: InstallStep | None = Field(
        default=None,
        description="how the candidate is installed in its workspace, in the sandbox, before its tests run: "
        "'editable' (pip install -e .), 'package' (pip install .) or 'script' (the setup script)",
    )

    def cache_key(self) -> str:
        """Hash of everything that changes what gets installed (env vars, plugins and the source root do not).

        An install step needs pip and setuptools in the environment, so it changes the key; which step
        does not (the install goes to the workspace, never to the environment). Keys stay as they were
        for specs without one, so existing cached environments remain valid.
        """
        fields: dict[str, Any] = {
            "requirements": list(self.requirements), "constraints": list(self.constraints), "python": self.python,
        }
        if self.install is not None:
            fields["build_tools"] = True
        if self.nearest_pins:
            fields["nearest_pins"] = True
        payload = json.dumps(fields, sort_keys=True)
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
    folder: Path | None = Field(
        default=None, description="the path `load_task` loads the task from again, when it is not `root` (a "
        "RAL-Bench task: tasks/<Name> of the benchmark, whose root is the benchmark's)")
    format: Literal["codeprojecteval", "devbench", "taskdir", "exercism", "ralbench", "nl2repobench"]
    language: str = Field(default="python", description="the language of the code and its tests: python (pytest), "
                          "go, rust, cpp, javascript or java (projectgen.evaluation.languages)")
    docs: Documents
    suites: dict[SuiteName, TestSuite] = Field(default_factory=dict, description="by name (= each suite's name)")
    env: EnvSpec = Field(default_factory=EnvSpec)
    required_files: tuple[str, ...] = Field(
        default=(), description="task fixtures (data files, templates) copied into every test workspace"
    )
    candidate_copies: tuple[str, ...] = Field(
        default=(), description="workspace folders that hold a second copy of the candidate, for benchmark tests "
        "that look for it there (RAL-Bench's `generated_repository`, generation/<Name>)")
    empty_dirs: tuple[str, ...] = Field(
        default=(), description="folders created, empty, in every test workspace (tests that write to them)")
    timeout: float | None = Field(
        default=None, description="seconds one test run may take; a runner's explicit timeout wins over it")
    suite_timeouts: dict[SuiteName, float] = Field(
        default_factory=dict, description="seconds a run of that suite may take, over `timeout` (a benchmark's "
        "slow suite); a runner's explicit timeout wins over them too")
    install_timeout: float | None = Field(
        default=None, description="seconds the install step may take (else the timeout of the suite it precedes)")
    scored_suite: SuiteName = Field(
        default="unit", description="the suite that is the final evaluation: what `run`, `experiment` and `eval` "
        "score (default 'unit')")
    reference: tuple[str, ...] = Field(
        default=(), description="repository paths of the reference implementation's files (on disk below "
        "`reference_root`); never shown to a generator"
    )
    reference_root: str = Field(
        default="", description="folder of the reference relative to root ('' = the task folder itself): "
        "'solution/pkg/pkg.py' is the repository path 'pkg/pkg.py' when it is 'solution'")
    reference_sources: dict[str, str] = Field(
        default_factory=dict, description="repository path -> its file relative to root, for reference files that "
        "do not sit at `reference_root`/path: a reference mapped onto a subfolder of the repository "
        "(`reference_target`), an Exercism example ('.meta/example.py' answers 'two_fer.py')")
    package: str | None = Field(default=None, description="top-level package or module under test, if known")
    settings_profile: dict[str, Any] = Field(
        default_factory=dict, description="pipeline settings of the paper that reports this task's benchmark "
        "(e.g. the code-stage cap), used where a run leaves them unset (`Settings.with_profile`)")
    difficulty: str | None = Field(
        default=None, description="the benchmark's own difficulty label (easy, medium, hard), when it publishes "
        "one (RAL-Bench, NL2Repo-Bench); LiveCoder's Table 2 buckets by it")
    published_tests: int | None = Field(
        default=None, description="the #Tests the benchmark itself publishes for the task (NL2Repo-Bench's "
        "test_case_count.txt), when no paper table gives one (projectgen.datasets.published)")
    expected_tests: dict[SuiteName, tuple[str, ...]] = Field(
        default_factory=dict,
        description="pytest node ids a suite is expected to run, declared by the dataset; when absent the "
        "expected tests are measured by running the reference (projectgen.evaluation.expectations)",
    )
    expected_totals: dict[SuiteName, int] = Field(
        default_factory=dict, description="a suite's frozen test count, declared by the benchmark: its #Pass is "
        "counted out of it, and tests the run lacks (uncollectable, deselected, crashed) count as failed")

    @model_validator(mode="after")
    def _suites_by_name(self) -> Task:
        for key, suite in self.suites.items():
            if key != suite.name:
                raise ValueError(f"suite {suite.name!r} is filed under the name {key!r}")
        if self.scored_suite != "unit" and self.scored_suite not in self.suites:
            raise ValueError(f"the scored suite {self.scored_suite!r} is not a suite of the task")
        if unknown := set(self.reference_sources) - set(self.reference):
            raise ValueError(f"reference_sources names files that are not reference files: {sorted(unknown)}")
        return self

    def load_path(self) -> Path:
        """What a run records to load the task again (`load_task`): its folder, else its root."""
        return Path(self.folder or self.root).resolve()

    def has_scored_suite(self) -> bool:
        """Whether the task has the suite its final evaluation runs (`scored_suite`)."""
        return self.scored_suite in self.suites

    def role_suite(self, name: SuiteName) -> SuiteName:
        """The suite that plays `name`'s part: the hidden final evaluation ``unit`` is `scored_suite`, any
        other name is itself."""
        return self.scored_suite if name == "unit" else name

    def suite(self, name: SuiteName) -> TestSuite:
        """The suite of that name, or a clear error naming the task."""
        if name not in self.suites:
            have = ", ".join(self.suites) or "none"
            raise ProjectGenError(f"task {self.id!r} has no {name} tests (it has: {have})")
        return self.suites[name]

    def suite_folder(self, name: SuiteName) -> str:
        """The innermost folder holding all of a suite's paths ('' = the task root): pytest reads
        conftest files from there down (`--confcutdir`)."""
        folders = [path if (self.root / path).is_dir() else posixpath.dirname(path) for path in self.suite(name).paths]
        return posixpath.commonpath(folders) if all(folders) else ""

    def suite_files(self, name: SuiteName) -> tuple[str, ...]:
        """The task's files a suite runs from, relative to root (= their workspace paths), sorted.

        A file path is itself; a folder stands for every file below it except the implementation
        (reference and starter files that live beside the tests, as Exercism puts `pkg/pkg.py`
        beside `pkg/pkg_test.py`). Each path also brings the `conftest.py` and `__init__.py` files
        of the folders between `suite_folder` and it, which plain pytest would read too.
        """
        implementation = set(self.reference_paths()) | set(self.docs.starter)
        top = self.suite_folder(name)
        found: set[str] = set()
        for path in self.suite(name).paths:
            full = self.root / path
            if full.is_dir():
                found.update(rel for rel in _files_below(self.root, path) if rel not in implementation)
                folder = posixpath.dirname(path)
            else:
                found.add(path)
                folder = posixpath.dirname(path)
            while _is_below(folder, top):
                found.update(support for support in (posixpath.join(folder, n) for n in SUPPORT_FILES)
                             if (self.root / support).is_file() and support not in implementation)
                if folder == top:
                    break
                folder = posixpath.dirname(folder)
        return tuple(sorted(found))

    @property
    def has_reference(self) -> bool:
        return bool(self.reference)

    def reference_paths(self) -> tuple[str, ...]:
        """Where the reference's files are, relative to root (its repository paths under `reference_root`)."""
        return tuple(self.reference_sources.get(rel)
                     or (posixpath.join(self.reference_root, rel) if self.reference_root else rel)
                     for rel in self.reference)

    def reference_repository(self) -> dict[str, str]:
        """The reference implementation as a repository path -> text mapping (evaluation only)."""
        return {rel: path.read_text(encoding="utf-8", errors="replace")
                for rel, path in self.reference_files().items()}

    def reference_files(self) -> dict[str, Path]:
        """The reference implementation as repository path -> file on disk (binary-safe)."""
        return {rel: self.root / on_disk for rel, on_disk in zip(self.reference, self.reference_paths())}

    def size(self) -> SizeFigures:
        """Python files and lines of the reference implementation."""
        sources = [path.read_text(encoding="utf-8", errors="replace")
                   for rel, path in self.reference_files().items() if rel.endswith(".py")]
        return SizeFigures(
            files=len(sources),
            loc=sum(len(text.splitlines()) for text in sources),
            code_lines=sum(count_loc(text) for text in sources),
        )


def _is_below(path: str, folder: str) -> bool:
    """Whether a relative path is `folder` or inside it ('' is the root, above everything)."""
    return not folder or path == folder or path.startswith(folder + "/")


def _files_below(root: Path, folder: str) -> list[str]:
    """Every file below a task folder, relative to `root`, caches and bytecode left out."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root / folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        found += [Path(dirpath, name).relative_to(root).as_posix() for name in filenames
                  if not name.endswith((".pyc", ".pyo"))]
    return found
