"""The evolved task of an evolve run: the base task with a change request, written as a taskdir folder.

The base task may be in any format (a task.toml folder, a CodeProjectEval or DevBench config.json); the
evolved task is always a ``task.toml`` folder, so each of the base's settings is mapped to the key
`projectgen.datasets.loaders` reads, and loading the folder gives back the base task's settings. An
evolved run is then tested exactly as its base run was, except where the change makes a setting stale:

kept as they are
    the documents (the PRD gains a ``## Change request N`` section), the starter files, `package`,
    `required_files` (the fixtures, copied), `empty_dirs`, `timeout`, `install_timeout`, `[timeouts]`,
    `scored` (the suites keep their names), `settings_profile` (the paper
    settings of the base's benchmark, which `Settings.with_profile` applies to the next evolve run of
    a chain too), and the environment in full: every `EnvSpec` field (requirements, constraints,
    Python, the setup script, copied as ``setup_script.sh``, env vars, pytest plugins, source root,
    install step, working directory, pytest configuration, written as ``pytest.ini``).
moved
    every suite but ``check`` to ``NAME_tests/`` (``unit_tests/``, ``acceptance_tests/``,
    ``performance_tests/`` ...), its files at their paths below the suite's folder, and its declared
    expected tests with them (their node ids name the moved files).
changed
    the ``check`` suite (``check_tests/``) is the base's check tests plus the change's.
dropped on purpose
    the reference implementation (`reference`, `reference_root`, `reference_target`): it implements the
    requirement before the change, so it would neither pass the change's tests nor tell which tests the
    changed project should pass; and the declared expected tests and frozen total of the check suite,
    which the change's tests outgrow. Without a reference the evolved task's scores count the tests that ran.
"""
from __future__ import annotations

import posixpath
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from projectgen.datasets.loaders import TASK_TOML
from projectgen.datasets.pytest_config import pytest_ini_text
from projectgen.datasets.task import SuiteName, Task
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.repository import SKIPPED_DIRS

CHANGE_HEADING = "## Change request"
CHECK_DIR, DOCS_DIR, SETUP_SCRIPT = "check_tests", "docs", "setup_script.sh"
PYTEST_CONFIG = "pytest.ini"  # the base's `[env] pytest_config` options, written out
DOCUMENTS = ("uml_class", "uml_sequence", "architecture_design")  # besides the PRD


def change_number(prd: str) -> int:
    """The number the next change request of a PRD gets (1 for a PRD without any)."""
    return len(re.findall(rf"^{re.escape(CHANGE_HEADING)} \d+", prd, flags=re.M)) + 1


def suite_dir(name: SuiteName) -> str:
    """Where a suite's files go in the evolved task: ``check_tests``, ``unit_tests``, ``performance_tests``."""
    return f"{name}_tests"


def test_files(folder: Path) -> dict[str, Path]:
    """Every file of a test folder by its path below it (caches left out)."""
    return {path.relative_to(folder).as_posix(): path for path in sorted(folder.rglob("*"))
            if path.is_file() and not any(part in SKIPPED_DIRS for part in path.relative_to(folder).parts)}


def suite_test_files(task: Task, suite: SuiteName) -> dict[str, Path]:
    """The files a suite of `task` runs from, by their path below the suite's folder."""
    top = task.suite_folder(suite)
    return {posixpath.relpath(rel, top) if top else rel: task.root / rel for rel in task.suite_files(suite)}


def check_test_files(base: Task, tests: Path | None) -> tuple[dict[str, Path], dict[str, Path]]:
    """The base task's check test files and the change's; a change's file with an earlier file's name is refused
    (the earlier test would be lost)."""
    earlier = suite_test_files(base, "check") if "check" in base.suites else {}
    new = test_files(tests) if tests is not None else {}
    clash = sorted(set(earlier) & set(new))
    if clash:
        raise ProjectGenError(f"{tests}: {', '.join(clash)} would replace the earlier check test(s) of the same name; "
                              "rename the new test file(s)")
    return earlier, new


class TaskFiles:
    """The evolved task's files before any is written: path -> (what it is, a file to copy or a text)."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, Path | str]] = {}

    def add(self, rel: str, what: str, source: Path | str) -> None:
        """One file; the same path twice is refused unless both hold the same bytes (a fixture that is also
        a test file of the base, say), since one would silently replace the other."""
        if rel in self.entries:
            known, earlier = self.entries[rel]
            if _content(earlier) != _content(source):
                raise ProjectGenError(f"{rel}: the evolved task would hold both the base task's {known} and its "
                                      f"{what} at this path; rename one of them in the base task")
            return
        self.entries[rel] = (what, source)

    def check_layout(self) -> None:
        """Refuse a file where another file needs its folder."""
        parents = {parent for rel in self.entries for parent in _parents(rel)}
        for rel, (what, _) in self.entries.items():
            if rel in parents:
                raise ProjectGenError(f"{rel}: the base task's {what} would be a file where the evolved task needs "
                                      "a folder; rename it in the base task")

    def write(self, folder: Path) -> None:
        for rel, (_, source) in sorted(self.entries.items()):
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(source, Path):
                shutil.copy2(source, target)
            else:
                write_atomic(target, source)


def _content(source: Path | str) -> bytes:
    return source.read_bytes() if isinstance(source, Path) else source.encode("utf-8")


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:end]) for end in range(1, len(parts))]


def _moved_nodeid(nodeid: str, moved: dict[str, str]) -> str:
    """A pytest node id with its file part at the file's new path (unchanged when the file did not move)."""
    file, sep, rest = nodeid.partition("::")
    return moved.get(file, file) + sep + rest


@dataclass(frozen=True)
class EvolvedTask:
    """The evolved task before any of its files is written, every file checked: a base task that cannot be
    evolved is refused before the evolve run's folder exists, and `write` has nothing left to refuse."""

    number: int  # the change request's number
    new_tests: list[str]  # the change's check test files
    earlier_tests: list[str]  # the base task's check test files (regression tests now)
    files: TaskFiles

    def write(self, folder: Path) -> None:
        if folder.exists():
            shutil.rmtree(folder)
        self.files.write(folder)


def write_evolved_task(base: Task, requirement: str, tests: Path | None, folder: Path) -> tuple[int, list[str],
                                                                                                list[str]]:
    """`plan_evolved_task`, written to `folder`; (its change number, the new check test files, the earlier ones)."""
    planned = plan_evolved_task(base, requirement, tests)
    planned.write(folder)
    return planned.number, planned.new_tests, planned.earlier_tests


def plan_evolved_task(base: Task, requirement: str, tests: Path | None) -> EvolvedTask:
    """The evolved task of `base` for `requirement` and the change's check `tests` (see the module's docstring
    for what it keeps, moves and drops).

    A change's check test with the name of an earlier one is refused (the earlier test would be lost),
    and so is a base task whose files would land on the same path with different contents.
    """
    number = change_number(base.docs.prd)
    earlier, new = check_test_files(base, tests)
    files = TaskFiles()
    docs = {"prd": f"{base.docs.prd.rstrip()}\n\n{CHANGE_HEADING} {number}\n\n{requirement.strip()}\n"}
    docs.update({name: text for name in DOCUMENTS if (text := getattr(base.docs, name))})
    for name, text in docs.items():
        files.add(f"{DOCS_DIR}/{name}.md", f"{name} document", text)
    suites: dict[SuiteName, str] = {}
    if earlier or new:
        for rel, source in {**earlier, **new}.items():
            files.add(f"{CHECK_DIR}/{rel}", "check test file", source)
        suites["check"] = CHECK_DIR
    moved: dict[str, str] = {}  # a test file's path in the base task -> in the evolved one
    for name in base.suites:
        if name == "check":
            continue
        top = base.suite_folder(name)
        for rel, source in suite_test_files(base, name).items():
            files.add(f"{suite_dir(name)}/{rel}", f"{name} test file", source)
            moved[posixpath.join(top, rel) if top else rel] = f"{suite_dir(name)}/{rel}"
        suites[name] = suite_dir(name)
    for rel in base.required_files:
        source = base.root / rel
        below = test_files(source) if source.is_dir() else {"": source}
        for inner, path in below.items():
            files.add(posixpath.join(rel, inner) if inner else rel, "fixture (required_files)", path)
    for rel, text in base.docs.starter.items():
        files.add(rel, "starter file", text)
    if base.env.setup_script is not None:
        files.add(SETUP_SCRIPT, "setup script", base.env.setup_script)
    if base.env.pytest_options:
        files.add(PYTEST_CONFIG, "pytest configuration", pytest_ini_text(base.env.pytest_options))
    expected = {name: [_moved_nodeid(nodeid, moved) for nodeid in ids]
                for name, ids in base.expected_tests.items() if name != "check"}
    files.add(TASK_TOML, "task.toml",
              tomli_w.dumps(without_unset(evolved_task_table(base, number, docs, suites, expected))))
    files.check_layout()
    return EvolvedTask(number, sorted(new), sorted(earlier), files)


def without_unset(table: dict[str, Any]) -> dict[str, Any]:
    """`table` without its None values, at every depth: TOML has no null, and a key left out reads as not set."""
    return {key: without_unset(value) if isinstance(value, dict) else value
            for key, value in table.items() if value is not None}


def evolved_task_table(base: Task, number: int, docs: dict[str, str], suites: dict[SuiteName, str],
                       expected: dict[SuiteName, list[str]]) -> dict[str, Any]:
    """The evolved task.toml as data: each setting of `base` that still applies under its taskdir key
    (None: not set, left out), the documents, suites and setup script at their paths in the evolved folder.
    No `reference`, `reference_root` or `reference_target`: the base's reference predates the change."""
    env = base.env
    return {
        "id": f"{base.id.split('.change')[0]}.change{number}",
        "package": base.package,
        "starter": sorted(base.docs.starter) or None,
        "required_files": list(base.required_files) or None,
        "empty_dirs": list(base.empty_dirs) or None,
        "timeout": base.timeout,
        "install_timeout": base.install_timeout,
        "scored": base.scored_suite if base.scored_suite != "unit" else None,
        "timeouts": dict(base.suite_timeouts) or None,
        "docs": {name: f"{DOCS_DIR}/{name}.md" for name in docs},
        "tests": suites,
        "env": {
            "requirements": list(env.requirements),
            "constraints": list(env.constraints) or None,
            "python": env.python,
            "setup_script": SETUP_SCRIPT if env.setup_script is not None else None,
            "env_vars": dict(sorted(env.env_vars.items())) or None,
            "pytest_plugins": None if env.pytest_plugins is None else list(env.pytest_plugins),
            "source_root": env.source_root,
            "install": env.install,
            "workdir": env.workdir,
            "pytest_config": PYTEST_CONFIG if env.pytest_options else None,
            "nearest_pins": env.nearest_pins or None,
            "listed_left_out": list(env.listed_left_out) or None,
        },
        "settings_profile": dict(base.settings_profile) or None,
        "expected_tests": expected or None,
        "expected_total": {name: total for name, total in base.expected_totals.items() if name != "check"} or None,
    }
