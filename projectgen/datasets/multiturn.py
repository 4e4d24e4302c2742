"""Multi-turn tasks (SR-Eval's stepwise requirement refinement): a file refined turn by turn.

A multi-turn task is a folder holding ``multiturn.toml`` and one folder per turn::

    slugify/
      multiturn.toml          id, level ("function" | "repository"), target (the file the model writes),
                              language (python, the default, or java: SR-Eval's two)
      turns/1/requirement.md  what turn 1 asks
      turns/1/reference.py    the target file after turn 1 (the reference; never shown to a model);
                              reference.java in Java
      turns/1/tests/          turn 1's tests (pytest; JUnit 5 in Java), run against the code after turn 1
      turns/2/...             turns 2, 3, ... numbered from 1 without gaps (at least two turns)

At function level the candidate is the target file alone. At repository level the target lives
in a repository (``[repository] root`` and ``include``, read into a snapshot without the target):
a turn is evaluated by putting the candidate target into the snapshot, running the turn's tests,
and leaving the snapshot as it was (SR-Eval's UnifiedCheck; the snapshot is never changed, each
evaluation gets its own copy in the sandbox). ``context`` names the repository files whose
signatures a repository-level prompt shows around the target. ``function`` (repository level)
makes a turn's answer one function of the target file, as SR-Eval's repository level does after
DevEval: the model is shown the code above it in the turn's file as local context, and its answer
replaces that function in the turn's reference file. The format is documented in docs/refinement.md.

`check_multiturn_task` validates a task as SR-Eval's construction does: every turn's reference
must pass its own tests, and a turn's tests should fail on the previous turn's reference
(discriminative tests); the turns whose tests do not are named.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from projectgen.datasets.examples import example_tasks_dir
from projectgen.datasets.task import Documents, EnvSpec, Task, TestSuite
from projectgen.errors import ProjectGenError, TaskFormatError
from projectgen.repository import SKIPPED_DIRS, safe_relpath
from projectgen.repository.syntax import function_lines

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

MULTITURN_TOML = "multiturn.toml"
TURNS_DIR = "turns"
REQUIREMENT_FILE = "requirement.md"
REFERENCE_FILE = "reference.py"  # a Python task's turn reference (in another language: LANGUAGE_FILES' suffix)
LANGUAGE_FILES: dict[str, tuple[str, str]] = {"python": (".py", "test_*.py"), "java": (".java", "*Test.java")}
"""A multi-turn task's language -> its target's suffix (the reference file is `reference` + it) and the
pattern its tests' files match."""
TESTS_DIR = "tests"
TURN_SUITE = "check"  # the suite kind a turn's tests run as (`turn_task`)
CONSTRUCTION_RECORD = "construction.json"  # beside multiturn.toml in a task `projectgen construct multiturn` built
Level = Literal["function", "repository"]
LEVELS: tuple[Level, ...] = ("function", "repository")

_TOP_KEYS = frozenset({"id", "level", "target", "function", "description", "start", "repository", "env",
                       "language"})
_REPOSITORY_KEYS = frozenset({"root", "include", "context"})
_ENV_KEYS = frozenset({"requirements", "python", "env_vars"})
_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class Turn(BaseModel):
    """One turn: what it asks, its reference (the target file after it) and its tests (paths in the task folder)."""

    model_config = ConfigDict(frozen=True)

    number: int = Field(ge=1)
    requirement: str
    reference: str = Field(description="the reference file, relative to the task folder")
    tests: str = Field(description="the folder of the turn's tests, relative to the task folder")


class MultiTurnTask(BaseModel):
    """A task refined over turns; every path is relative to `root` unless said otherwise."""

    model_config = ConfigDict(frozen=True)

    id: str
    root: Path
    level: Level
    target: str = Field(description="repository path of the file the model writes every turn, e.g. 'kvstore/cli.py'")
    language: str = Field(default="python", description="python (pytest) or java (JUnit 5)")
    turns: tuple[Turn, ...]
    description: str = ""
    start: str | None = Field(default=None, description="the target file before turn 1, if it exists then")
    repository_root: Path | None = Field(default=None, description="absolute folder the snapshot is read from")
    repository_files: tuple[str, ...] = Field(default=(), description="snapshot files, relative to repository_root")
    context: tuple[str, ...] = Field(default=(), description="repository files whose signatures the prompt shows")
    function: str | None = Field(default=None, description="repository level: the function of the target file the "
                                 "model writes each turn (a top-level function or Class.method; DevEval's setting); "
                                 "None: the whole file")
    env: EnvSpec = Field(default_factory=EnvSpec)

    def turn(self, number: int) -> Turn:
        if not 1 <= number <= len(self.turns):
            raise ProjectGenError(f"task {self.id!r} has turns 1 to {len(self.turns)}, not {number}")
        return self.turns[number - 1]

    def reference_code(self, number: int) -> str:
        """The target file after turn `number`; turn 0 is the start (empty when the file does not exist yet)."""
        if number == 0:
            return (self.root / self.start).read_text(encoding="utf-8") if self.start else ""
        return (self.root / self.turn(number).reference).read_text(encoding="utf-8")

    @property
    def answer_name(self) -> str:
        """What the model writes each turn, as prompts name it: the target file, or its one function."""
        return self.target if self.function is None else f"{self.function} in {self.target}"

    def answer(self, number: int) -> str:
        """A correct answer to turn `number` (turn 0: before turn 1): the target file after it, or with
        `function` that function's source in it ("" where it does not exist yet)."""
        code = self.reference_code(number)
        if self.function is None or not code:
            return code
        try:
            start, end = function_lines(code, self.function)
        except ValueError:  # the start file may not define it yet
            return ""
        return "".join(code.splitlines(keepends=True)[start:end])

    def local_context(self, number: int) -> str:
        """With `function`: the code above it in the target file after turn `number` (the local context
        DevEval and SR-Eval give); "" for a whole-file task."""
        if self.function is None:
            return ""
        code = self.reference_code(number)
        start, _ = function_lines(code, self.function)
        return "".join(code.splitlines(keepends=True)[:start])

    def snapshot(self) -> dict[str, str]:
        """The repository around the target (repository path -> text), without the target; {} at function level."""
        if self.repository_root is None:
            return {}
        return {rel: (self.repository_root / rel).read_text(encoding="utf-8") for rel in self.repository_files}

    def candidate(self, code: str, number: int | None = None) -> dict[str, str]:
        """What turn `number`'s tests run against: the snapshot with the target file (UnifiedCheck): `code`
        itself, or with `function`, turn `number`'s reference file with that function replaced by `code`."""
        return {**self.snapshot(), self.target: self.target_file(code, number)}

    def target_file(self, code: str, number: int | None = None) -> str:
        """The target file an answer `code` to turn `number` makes (see `candidate`)."""
        if self.function is None:
            return code
        if number is None:
            raise ValueError(f"task {self.id!r} answers one function a turn: name the turn the answer is for")
        reference = self.reference_code(number)
        start, end = function_lines(reference, self.function)
        lines = reference.splitlines(keepends=True)
        answer = code if code.endswith("\n") or not code else code + "\n"
        return "".join(lines[:start]) + answer + "".join(lines[end:])


def turn_task(task: MultiTurnTask, number: int) -> Task:
    """The sandbox `Task` that runs turn `number`'s tests (as its check suite) in `task`'s environment.

    The one place a turn becomes a `Task`: its id names the turn, its PRD is the turn's requirement,
    and it holds no reference (the candidate is always passed in: `MultiTurnTask.candidate`).
    """
    turn = task.turn(number)
    return Task(id=f"{task.id}.turn{number}", root=task.root, format="taskdir", language=task.language,
                docs=Documents(prd=turn.requirement), suites={TURN_SUITE: TestSuite(name=TURN_SUITE, paths=(turn.tests,))},
                env=task.env)


# --------------------------------------------------------------------------- loading

def is_multiturn_task(folder: Path) -> bool:
    return (Path(folder) / MULTITURN_TOML).is_file()


def load_multiturn_task(path: str | os.PathLike[str]) -> MultiTurnTask:
    """One multi-turn task folder (or its multiturn.toml); every problem is one `TaskFormatError` line."""
    given = Path(path)
    if given.is_file() and given.name == MULTITURN_TOML:
        given = given.parent
    if not given.is_dir():
        raise TaskFormatError(given, "multi-turn task folder not found")
    root = given.resolve()
    config_path, config = read_config(root, MULTITURN_TOML)
    return _task_from_config(root, config_path, config)


def read_config(root: Path, name: str) -> tuple[Path, dict[str, Any]]:
    """The TOML file `name` of the folder `root`, parsed (also a construction seed's seed.toml); a missing or
    invalid file is one `TaskFormatError` line."""
    config_path = root / name
    if not config_path.is_file():
        raise TaskFormatError(root, f"no {name} found")
    try:
        return config_path, tomllib.loads(config_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise TaskFormatError(config_path, f"invalid TOML: {error}") from None


def load_multiturn_dataset(path: str | os.PathLike[str]) -> tuple[list[MultiTurnTask], dict[str, str]]:
    """Every multi-turn task in the subfolders of `path` (sorted by id), and folder name -> reason for those
    that do not load. A folder without any multi-turn task is an error."""
    root = Path(path)
    if not root.is_dir():
        raise ProjectGenError(f"{root}: dataset folder not found")
    tasks: list[MultiTurnTask] = []
    errors: dict[str, str] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in SKIPPED_DIRS):
        if not is_multiturn_task(folder):
            continue
        try:
            tasks.append(load_multiturn_task(folder))
        except ProjectGenError as error:
            errors[folder.name] = str(error)
    if not tasks and not errors:
        raise ProjectGenError(f"{root}: no multi-turn task folders (folders holding {MULTITURN_TOML})")
    ids = [task.id for task in tasks]
    duplicated = sorted({task_id for task_id in ids if ids.count(task_id) > 1})
    if duplicated:
        raise ProjectGenError(f"{root}: two tasks share the id(s) {', '.join(duplicated)}")
    return sorted(tasks, key=lambda task: task.id), errors


def bundled_dataset_dir() -> Path:
    """The multi-turn tasks bundled with projectgen (`--dataset examples`)."""
    return example_tasks_dir() / "multiturn"


def _task_from_config(root: Path, config_path: Path, config: dict[str, Any]) -> MultiTurnTask:
    def fail(problem: str) -> TaskFormatError:
        return TaskFormatError(config_path, problem)

    _known(fail, "", config, _TOP_KEYS)
    task_id = config.get("id", root.name)
    if not isinstance(task_id, str) or not _TASK_ID.match(task_id):
        raise fail(f"id: expected letters, digits, '.', '_' or '-', got {task_id!r}")
    level = config.get("level")
    if level not in LEVELS:
        raise fail(f"level: expected one of {', '.join(LEVELS)}, got {level!r}")
    language = config.get("language", "python")
    if language not in LANGUAGE_FILES:
        raise fail(f"language: expected one of {', '.join(LANGUAGE_FILES)}, got {language!r}")
    target = _relpath(fail, "target", config.get("target"))
    suffix = LANGUAGE_FILES[language][0]
    if not target.endswith(suffix):
        raise fail(f"target: expected a {language.capitalize()} file ({suffix}), got {target!r}")
    if language != "python" and level != "function":
        raise fail(f"level: a {language} task is function level (repository level reads Python signatures)")
    start = None
    if config.get("start") is not None:
        start = _inside(fail, root, "start", config["start"])
        if not (root / start).is_file():
            raise fail(f"start: {start} not found")
    repository = config.get("repository")
    repo_root, files, context = None, (), ()
    if level == "repository":
        if not isinstance(repository, dict):
            raise fail("[repository] is required at repository level (root, include, context)")
        repo_root, files, context = _repository(fail, root, target, repository)
    elif repository is not None:
        raise fail("[repository] is only for level = \"repository\"")
    description = config.get("description", "")
    if not isinstance(description, str):
        raise fail("description: expected a string")
    turns = _turns(fail, root, language)
    function = _function(fail, root, level, config.get("function"), turns)
    return MultiTurnTask(id=task_id, root=root, level=level, target=target, language=language, turns=turns,
                         description=description.strip(), start=start, repository_root=repo_root,
                         repository_files=files, context=context, function=function,
                         env=_env(fail, config.get("env", {})))


def _function(fail: Callable[[str], TaskFormatError], root: Path, level: str, value: Any,
              turns: tuple[Turn, ...]) -> str | None:
    """`function`: repository level only, a dotted name every turn's reference defines. A repository-level task
    `construct multiturn` built must name it: its turns answer one function (SR-Eval's repository level), and
    without it (a task built before the key was written, or the key deleted) refine would score whole modules."""
    if value is None:
        if level == "repository" and (root / CONSTRUCTION_RECORD).is_file():
            raise fail(f"function: missing in a repository-level task built by `projectgen construct multiturn` "
                       f"({CONSTRUCTION_RECORD}); its turns answer one function, so without the key it would be "
                       f"scored as whole modules: build it again (construct multiturn --fresh) or add function = NAME")
        return None
    if level != "repository":
        raise fail('function: only for level = "repository" (a function-level task writes its whole file)')
    if not isinstance(value, str) or not all(part.isidentifier() for part in value.split(".")):
        raise fail(f"function: expected a function name such as 'main' or 'Class.method', got {value!r}")
    for turn in turns:
        try:
            function_lines((root / turn.reference).read_text(encoding="utf-8"), value)
        except (ValueError, SyntaxError) as error:
            raise fail(f"function: {turn.reference} does not define {value} ({error})") from None
    return value


def _known(fail: Callable[[str], TaskFormatError], where: str, table: Mapping[str, Any],
           allowed: frozenset[str]) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise fail(f"{where}unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(allowed))})")


def _relpath(fail: Callable[[str], TaskFormatError], key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise fail(f"{key}: expected a relative path, got {value!r}")
    try:
        return safe_relpath(value)
    except ProjectGenError as error:
        raise fail(f"{key}: {error}") from None


def _inside(fail: Callable[[str], TaskFormatError], root: Path, key: str, value: Any) -> str:
    rel = _relpath(fail, key, value)
    if not (root / rel).resolve().is_relative_to(root):
        raise fail(f"{key}: {rel} leads outside the task folder")
    return rel


def _repository(fail: Callable[[str], TaskFormatError], root: Path, target: str,
                table: dict[str, Any]) -> tuple[Path, tuple[str, ...], tuple[str, ...]]:
    _known(fail, "[repository] ", table, _REPOSITORY_KEYS)
    given = table.get("root")
    if not isinstance(given, str) or not given.strip():
        raise fail("[repository] root: expected the folder holding the repository, relative to the task folder")
    repo_root = (root / given).resolve()
    if not repo_root.is_dir():
        raise fail(f"[repository] root: {repo_root} is not a folder")
    include = table.get("include", ["."])
    if not isinstance(include, list) or not all(isinstance(item, str) for item in include):
        raise fail("[repository] include: expected a list of files or folders below root")
    files: set[str] = set()
    for item in include:
        rel = "." if item.strip() in (".", "./") else _relpath(fail, "[repository] include", item)
        path = repo_root / rel
        if path.is_file():
            files.add(safe_relpath(rel))
        elif path.is_dir():
            files.update(_files_below(repo_root, path))
        else:
            raise fail(f"[repository] include: {rel} not found below {repo_root}")
    files.discard(target)
    context = table.get("context")
    if context is None:
        chosen = tuple(sorted(f for f in files if f.endswith(".py")))
    elif isinstance(context, list) and all(isinstance(item, str) for item in context):
        chosen = tuple(_relpath(fail, "[repository] context", item) for item in context)
        missing = [item for item in chosen if item not in files]
        if missing:
            raise fail(f"[repository] context: {', '.join(missing)} not in the repository snapshot")
    else:
        raise fail("[repository] context: expected a list of repository files")
    return repo_root, tuple(sorted(files)), chosen


def _files_below(repo_root: Path, folder: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in filenames:
            if not name.endswith((".pyc", ".pyo")):
                found.append((Path(dirpath) / name).relative_to(repo_root).as_posix())
    return found


def _turns(fail: Callable[[str], TaskFormatError], root: Path, language: str) -> tuple[Turn, ...]:
    folder = root / TURNS_DIR
    numbers = sorted(int(p.name) for p in folder.iterdir() if p.is_dir() and p.name.isdigit()) if folder.is_dir() else []
    if len(numbers) < 2:
        raise fail(f"expected at least two turn folders {TURNS_DIR}/1, {TURNS_DIR}/2, ... (found {len(numbers)})")
    if numbers != list(range(1, len(numbers) + 1)):
        raise fail(f"turn folders must be numbered 1 to {len(numbers)} without gaps (found {numbers})")
    suffix, tests_pattern = LANGUAGE_FILES[language]
    reference_file = f"reference{suffix}"
    turns = []
    for number in numbers:
        base = f"{TURNS_DIR}/{number}"
        requirement_path = root / base / REQUIREMENT_FILE
        if not requirement_path.is_file():
            raise fail(f"{base}/{REQUIREMENT_FILE}: missing or empty")
        try:
            requirement = requirement_path.read_bytes().decode("utf-8").strip()
        except UnicodeDecodeError as error:  # one line, not a traceback: a document in Latin-1, say
            raise fail(f"{base}/{REQUIREMENT_FILE}: not valid UTF-8 (byte {error.start}); save it as UTF-8") from None
        if not requirement:
            raise fail(f"{base}/{REQUIREMENT_FILE}: missing or empty")
        if not (root / base / reference_file).is_file():
            raise fail(f"{base}/{reference_file}: missing (the target file after turn {number})")
        tests = root / base / TESTS_DIR
        if not tests.is_dir() or not any(tests.glob(tests_pattern)):
            raise fail(f"{base}/{TESTS_DIR}/: missing, or holds no {tests_pattern} file")
        turns.append(Turn(number=number, requirement=requirement,
                          reference=f"{base}/{reference_file}", tests=f"{base}/{TESTS_DIR}"))
    return tuple(turns)


def _env(fail: Callable[[str], TaskFormatError], table: Any) -> EnvSpec:
    if not isinstance(table, dict):
        raise fail("[env]: expected a table")
    _known(fail, "[env] ", table, _ENV_KEYS)
    requirements = table.get("requirements", [])
    if not isinstance(requirements, list) or not all(isinstance(r, str) for r in requirements):
        raise fail("[env] requirements: expected a list of requirement strings")
    python = table.get("python")
    if python is not None and not isinstance(python, str):
        raise fail("[env] python: expected a version string such as '3.11'")
    env_vars = table.get("env_vars", {})
    if not isinstance(env_vars, dict) or not all(isinstance(v, str) for v in env_vars.values()):
        raise fail("[env] env_vars: expected a table of strings")
    return EnvSpec(requirements=tuple(requirements), python=python, env_vars=dict(env_vars))


# --------------------------------------------------------------------------- validation

class TurnCheck(BaseModel):
    """What validation found for one turn: its reference on its own tests, and the previous reference on them."""

    turn: int
    reference_passed: int
    reference_total: int
    reference_status: str
    previous_passed: int | None = Field(default=None, description="the previous turn's reference on this turn's "
                                                                   "tests (None for turn 1)")
    previous_total: int | None = None
    note: str = ""

    @property
    def reference_ok(self) -> bool:
        return self.reference_status == "passed"

    @property
    def discriminative(self) -> bool | None:
        """Whether this turn's tests fail on the previous turn's reference (None for turn 1)."""
        if self.previous_passed is None:
            return None
        return self.previous_passed < (self.previous_total or 0) or not self.previous_total


class TaskCheck(BaseModel):
    """A multi-turn task's validation: one `TurnCheck` per turn."""

    task_id: str
    turns: list[TurnCheck] = Field(default_factory=list)
    error: str | None = Field(default=None, description="why the validation itself could not run")

    @property
    def valid(self) -> bool:
        """Every turn's reference passes its own tests (and the validation ran)."""
        return self.error is None and bool(self.turns) and all(turn.reference_ok for turn in self.turns)

    @property
    def failing_references(self) -> list[int]:
        return [turn.turn for turn in self.turns if not turn.reference_ok]

    @property
    def not_discriminative(self) -> list[int]:
        """The turns whose tests pass on the previous turn's reference too."""
        return [turn.turn for turn in self.turns if turn.discriminative is False]

    def expected_passes(self) -> dict[int, int]:
        """turn -> how many tests its reference passes (a candidate must pass as many)."""
        return {turn.turn: turn.reference_passed for turn in self.turns}

    def problems(self) -> list[str]:
        """One line per problem: references failing their tests, then non-discriminative turns."""
        lines = [f"{self.task_id}: could not be validated: {self.error}"] if self.error else []
        for turn in self.turns:
            if not turn.reference_ok:
                lines.append(f"{self.task_id}: turn {turn.turn}'s reference does not pass its own tests "
                             f"({turn.reference_passed}/{turn.reference_total}, {turn.reference_status})"
                             + (f": {turn.note}" if turn.note else ""))
        if self.not_discriminative:
            lines.append(f"{self.task_id}: the tests of turn(s) {', '.join(map(str, self.not_discriminative))} also "
                         "pass on the previous turn's reference (not discriminative)")
        return lines


class TurnOutcome(Protocol):
    """What a check reads of a test run (`projectgen.evaluation.TestReport` has it): datasets sits below
    the evaluation package, so it names the fields instead of importing the report."""

    @property
    def passed(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def error(self) -> str | None: ...


Evaluate = Callable[[Task, Mapping[str, str]], TurnOutcome]
"""Runs a turn task's tests against a candidate (`SandboxRunner.evaluate` with the suite `TURN_SUITE`)."""


def check_multiturn_task(task: MultiTurnTask, evaluate: Evaluate) -> TaskCheck:
    """Run every turn's tests on its own reference and on the previous turn's reference, in the sandbox (with
    `function`: the previous turn's function in this turn's file, so the tests must tell the function apart)."""
    checks = []
    for turn in task.turns:
        sandbox_task = turn_task(task, turn.number)
        own = evaluate(sandbox_task, task.candidate(task.answer(turn.number), turn.number))
        check = TurnCheck(turn=turn.number, reference_passed=own.passed, reference_total=own.total,
                          reference_status=own.status, note=own.error or "")
        if turn.number > 1:
            previous = evaluate(sandbox_task, task.candidate(task.answer(turn.number - 1), turn.number))
            check = check.model_copy(update={"previous_passed": previous.passed, "previous_total": previous.total})
        checks.append(check)
    return TaskCheck(task_id=task.id, turns=checks)
