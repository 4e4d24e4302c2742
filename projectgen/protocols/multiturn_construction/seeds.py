"""Seed tasks of SR-Eval's construction: a complete requirement with its reference code and tests.

A seed is a folder::

    rle/
      seed.toml        id, level ("function" or "repository"), target (the module file, a repository path at
                       repository level), function (the target function), description (optional), repository
                       (repository level: the folder holding the repository, default "repository")
      requirement.md   the complete requirement
      reference.py     the reference implementation of the target file
      tests/test_*.py  the reference tests (pytest), which import the target module
      repository/      repository level: the repository around the target (a target file there is ignored)

A seed set is a folder of seed folders (`load_seeds`); ``--seeds examples`` is the bundled one
(`bundled_seeds_dir`). The format is documented in docs/construction.md.
"""
from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from projectgen.datasets.multiturn import REFERENCE_FILE, REQUIREMENT_FILE, TESTS_DIR, read_config
from projectgen.datasets.task import Documents, Task
from projectgen.errors import ProjectGenError, TaskFormatError
from projectgen.repository import SKIPPED_DIRS, safe_relpath
from projectgen.repository.syntax import function_lines, parse_python

SEED_TOML = "seed.toml"  # requirement.md, reference.py and tests/ are named as a multi-turn task's turn has them
_SEED_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # as a multi-turn task id
_KEYS = frozenset({"id", "level", "target", "function", "description", "repository"})
LEVELS = ("function", "repository")
DEFAULT_REPOSITORY = "repository"


class TaskSeed(BaseModel):
    """One seed task (see the module docstring); paths are read from `root`."""

    model_config = ConfigDict(frozen=True)

    id: str
    root: Path
    level: Literal["function", "repository"]
    target: str = Field(description="the module file the reference is, as the tests import it, e.g. 'rle.py'")
    repository: str | None = Field(default=None, description="repository level: the folder holding the repository "
                                   "around the target, relative to root")
    function: str = Field(description="the target function, whose length the filter measures")
    requirement: str
    description: str = ""

    def reference(self) -> str:
        return (self.root / REFERENCE_FILE).read_text(encoding="utf-8")

    def snapshot(self) -> dict[str, str]:
        """The repository around the target (repository path -> text), without the target; {} at function level."""
        if self.repository is None:
            return {}
        base = self.root / self.repository
        files = (path for path in sorted(base.rglob("*")) if path.is_file() and path.suffix not in (".pyc", ".pyo")
                 and not set(path.relative_to(base).parts) & set(SKIPPED_DIRS))
        return {rel: path.read_text(encoding="utf-8") for path in files
                if (rel := path.relative_to(base).as_posix()) != self.target}

    def task(self) -> Task:
        """The seed as the task its checks run in (`projectgen.construction.execution.execute`): its environment
        and folder; the tests are always given."""
        return Task(id=self.id, root=self.root, format="taskdir", docs=Documents(prd=self.requirement))

    def candidate(self, code: str) -> dict[str, str]:
        """What tests run against: the repository (if any) with `code` as the target file."""
        return {**self.snapshot(), self.target: code}

    def tests(self) -> dict[str, str]:
        """The reference tests, path below tests/ -> text."""
        folder = self.root / TESTS_DIR
        return {path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
                for path in sorted(folder.rglob("*.py")) if not set(path.parts) & set(SKIPPED_DIRS)}

    def signature(self) -> str:
        """The target function's signature and docstring only (what the contamination probe is shown)."""
        node = target_function(self.reference(), self.function)
        if node is None:
            raise ProjectGenError(f"seed {self.id!r}: {self.target} defines no function {self.function!r}")
        first = node.body[0]
        end = first.end_lineno if ast.get_docstring(node) is not None else first.lineno - 1
        head = self.reference().splitlines()[node.lineno - 1:end]
        return "\n".join([*head, "    ..."]) + "\n"


def target_function(code: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The top-level function `name` of `code`, or None."""
    for node in parse_python(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


_NOT_CODE = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                       tokenize.ENDMARKER})


def body_lines(code: str, name: str) -> int:
    """Code lines of the body of the top-level function `name` in `code` (0 when absent): SR-Eval keeps seeds whose
    target function's body has at least 10. The signature and docstring are not body, and blank and comment-only
    lines are not code (a function cannot pass the filter by its layout); a line inside a multi-line string is."""
    node = target_function(code, name)
    if node is None:
        return 0
    body = node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body
    if not body:
        return 0
    first, last = body[0].lineno, node.end_lineno or body[-1].lineno
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type not in _NOT_CODE:
            lines.update(range(token.start[0], token.end[0] + 1))
    return sum(1 for line in lines if first <= line <= last)


def defines_function(code: str, name: str) -> bool | None:
    """Whether `code` defines the top-level function `name`; None when it does not parse (the tests' run says why)."""
    try:
        return target_function(code, name) is not None
    except SyntaxError:
        return None


def with_function_of(code: str, previous: str, name: str) -> str:
    """`code` with its top-level function `name` replaced by `previous`'s: what refine runs a repository-level
    turn's tests on when the answer is that function (`MultiTurnTask.target_file`); `previous` itself when either
    file lacks the function or does not parse."""
    try:
        start, end = function_lines(code, name)
        before, after = function_lines(previous, name)
    except (ValueError, SyntaxError):
        return previous
    lines, old = code.splitlines(keepends=True), previous.splitlines(keepends=True)
    function = "".join(old[before:after])
    return "".join(lines[:start]) + function + ("" if function.endswith("\n") else "\n") + "".join(lines[end:])


def load_seed(path: str | os.PathLike[str]) -> TaskSeed:
    """One seed folder; every problem is one `TaskFormatError` line."""
    root = Path(path).resolve()
    config_path, config = read_config(root, SEED_TOML)
    unknown = sorted(set(config) - _KEYS)
    if unknown:
        raise TaskFormatError(config_path, f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})")
    level = config.get("level", "function")
    if level not in LEVELS:
        raise TaskFormatError(config_path, f"level: expected one of {', '.join(LEVELS)}, got {level!r}")
    target, function = config.get("target"), config.get("function")
    try:
        target = safe_relpath(target) if isinstance(target, str) else None
    except ProjectGenError:
        target = None
    if target is None or not target.endswith(".py") or (level == "function" and "/" in target):
        raise TaskFormatError(config_path, f"target: expected a module file such as 'rle.py' (a repository path "
                                           f"such as 'pkg/mod.py' at repository level), got {config.get('target')!r}")
    if not isinstance(function, str) or not function.isidentifier():
        raise TaskFormatError(config_path, f"function: expected the target function's name, got {function!r}")
    repository = config.get("repository", DEFAULT_REPOSITORY if level == "repository" else None)
    if level == "function" and repository is not None:
        raise TaskFormatError(config_path, "repository: only for level = \"repository\"")
    if repository is not None and (not isinstance(repository, str) or not (root / repository).is_dir()
                                   or not (root / repository).resolve().is_relative_to(root)):
        raise TaskFormatError(config_path, f"repository: {repository!r} is not a folder of the seed")
    for name in (REQUIREMENT_FILE, REFERENCE_FILE):
        if not (root / name).is_file():
            raise TaskFormatError(root, f"{name}: missing")
    if not any((root / TESTS_DIR).glob("test_*.py")):
        raise TaskFormatError(root, f"{TESTS_DIR}/: missing, or holds no test_*.py file")
    requirement = (root / REQUIREMENT_FILE).read_text(encoding="utf-8").strip()
    if not requirement:
        raise TaskFormatError(root, f"{REQUIREMENT_FILE}: empty")
    seed_id = str(config.get("id", root.name))
    if not _SEED_ID.match(seed_id):
        raise TaskFormatError(config_path, f"id: expected letters, digits, '.', '_' or '-', got {seed_id!r}")
    try:
        return TaskSeed(id=seed_id, root=root, level=level, target=target, function=function, requirement=requirement,
                    repository=repository, description=str(config.get("description", "")))
    except ValueError as error:
        raise TaskFormatError(config_path, str(error).splitlines()[0]) from None


def load_seeds(path: str | os.PathLike[str]) -> list[TaskSeed]:
    """Every seed in the subfolders of `path`, sorted by id; a folder that holds none is an error."""
    root = Path(path)
    if not root.is_dir():
        raise ProjectGenError(f"{root}: seed folder not found (or `examples` for the bundled seeds)")
    seeds = [load_seed(folder) for folder in sorted(root.iterdir())
             if folder.is_dir() and (folder / SEED_TOML).is_file()]
    if not seeds:
        raise ProjectGenError(f"{root}: no seed folders (folders holding {SEED_TOML})")
    ids = [seed.id for seed in seeds]
    repeated = sorted({seed_id for seed_id in ids if ids.count(seed_id) > 1})
    if repeated:
        raise ProjectGenError(f"{root}: two seeds share the id(s) {', '.join(repeated)}")
    return sorted(seeds, key=lambda seed: seed.id)


def bundled_seeds_dir() -> Path:
    """The seeds bundled with projectgen (`--seeds examples`)."""
    from projectgen.datasets.examples import example_tasks_dir

    return example_tasks_dir() / "seeds" / "multiturn"
