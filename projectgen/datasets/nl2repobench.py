"""NL2Repo-Bench in its published layout (github.com/Certropy-Technology/NL2RepoBench, `test_files/`), on which
LiveCoder's Table 2 is computed.

Each task is a folder `test_files/<task>/` of four files: `start.md` (the requirement document the agent
gets), `test_case_count.txt` (the task's #Tests: its pass rate is passed / this count), `test_commands.json`
(the commands the harness runs in the task's container, `pip install -e .` then pytest) and
`test_files.json` (the test paths of the upstream project the harness copies into the workspace).
`test_files/task_difficulty.csv` labels every task Easy, Medium or Hard (LiveCoder's buckets: <= 1.5k,
1.5k-4k, >= 4k LOC).

The tests themselves are not published (they live in each task's container image). A task whose folder
holds the paths `test_files.json` names (copied out of the image by the user) gets them as its `unit`
suite; otherwise it loads without one: it can be generated, not scored, and says so when asked to be.
It has no visible tests either: its tasks carry the `paper` profile, whose LiveCoder picks its best attempt by
the `unit` suite, so a plain run needs no `--selection`.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from projectgen.datasets.nl2repo_environment import listed_environment
from projectgen.datasets.task import PAPER_SETTINGS, Documents, EnvSpec, Task, TestSuite, package_install
from projectgen.errors import ProjectGenError, TaskFormatError
from projectgen.repository import safe_relpath

TEST_FILES_DIR = "test_files"
DOCUMENT = "start.md"
TEST_COUNT = "test_case_count.txt"
TEST_COMMANDS = "test_commands.json"
TEST_PATHS = "test_files.json"
DIFFICULTY_CSV = "task_difficulty.csv"


def is_nl2repo_task(folder: Path) -> bool:
    """Whether `folder` is one task folder of the published layout."""
    return (folder / DOCUMENT).is_file() and (folder / TEST_COUNT).is_file()


def nl2repo_tasks_folder(root: Path) -> Path | None:
    """The folder of task folders when `root` is the benchmark's checkout or its `test_files/`, else None."""
    for folder in (root / TEST_FILES_DIR, root):
        if folder.is_dir() and any(is_nl2repo_task(child) for child in folder.iterdir() if child.is_dir()):
            return folder
    return None


def difficulties(tasks_folder: Path) -> dict[str, str]:
    """task id in lower case -> easy / medium / hard, from the published `task_difficulty.csv` (none when it is
    absent)."""
    path = tasks_folder / DIFFICULTY_CSV
    if not path.is_file():
        return {}
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise TaskFormatError(path, f"unreadable: {error}") from None
    # keyed in lower case: the published csv spells some names otherwise than their folders (Autopep8, autopep8)
    return {row[0].strip().lower(): row[1].strip().lower() for row in rows[1:] if len(row) >= 2 and row[0].strip()}


def load_nl2repo_task(folder: Path, difficulty: str | None = None) -> Task:
    """One task folder; every problem is one TaskFormatError naming the file."""
    folder = folder.resolve()
    prd = _read(folder / DOCUMENT)
    count_text = _read(folder / TEST_COUNT).strip()
    if not count_text.isdigit():
        raise TaskFormatError(folder / TEST_COUNT, f"expected the number of test cases, got {count_text[:40]!r}")
    commands = _string_list(folder / TEST_COMMANDS)
    paths = _string_list(folder / TEST_PATHS)
    present = []
    for path in paths:
        try:
            clean = safe_relpath(path)
        except ProjectGenError:
            raise TaskFormatError(folder / TEST_PATHS, f"path {path!r} escapes the task folder") from None
        if (folder / clean).exists() and (folder / clean).resolve().is_relative_to(folder):
            present.append(clean)
    suites = {"unit": TestSuite(name="unit", paths=tuple(present))} if present and len(present) == len(paths) else {}
    return Task(id=folder.name, root=folder, format="nl2repobench", docs=Documents(prd=prd), suites=suites,
                env=_environment(folder.name, prd, commands), difficulty=difficulty, published_tests=int(count_text),
                settings_profile=dict(PAPER_SETTINGS["nl2repobench"]))


def load_nl2repo(root: Path) -> tuple[list[Task], list[TaskFormatError]]:
    """Every task of the benchmark that loads, and one error per task folder that does not."""
    tasks_folder = nl2repo_tasks_folder(root)
    if tasks_folder is None:
        raise ProjectGenError(f"{root}: not an NL2Repo-Bench layout (no test_files/<task>/{DOCUMENT})")
    labels = difficulties(tasks_folder)
    tasks, errors = [], []
    for child in sorted(c for c in tasks_folder.iterdir() if c.is_dir() and not c.name.startswith(".")):
        if not (child / DOCUMENT).is_file():
            continue
        try:
            tasks.append(load_nl2repo_task(child, labels.get(child.name.lower())))
        except TaskFormatError as error:
            errors.append(error)
    return tasks, errors


def _environment(task_id: str, document: str, commands: list[str]) -> EnvSpec:
    """The install step, and the packages `start.md` lists as the task's image's (its own project and the tools
    projectgen provides left out): the harness's tests run with them installed, so a candidate's tests that
    import one must find it here too. Pins that do not install on this Python are relaxed (`nearest_pins`)."""
    listed = listed_environment(task_id, document)
    return _install(commands).model_copy(update={"requirements": listed.requirements, "nearest_pins": True,
                                                 "listed_left_out": listed.left_out})


def _install(commands: list[str]) -> EnvSpec:
    """The harness's commands before pytest as the install step: a plain `pip install -e .` (or `.`) is that
    step; anything else (files written first, other installers) runs as the setup script, in the sandbox."""
    setup = [" ".join(c.split()) for c in commands if not _runs_pytest(c)]
    if not setup:
        return EnvSpec()
    if step := package_install(setup):
        return EnvSpec(install=step)
    return EnvSpec(install="script", setup_script="set -e\n" + "\n".join(setup) + "\n")


def _runs_pytest(command: str) -> bool:
    return "pytest" in command.split()


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise TaskFormatError(path, "file not found") from None
    except UnicodeDecodeError as error:
        raise TaskFormatError(path, f"not valid UTF-8 (byte {error.start})") from None
    except OSError as error:
        raise TaskFormatError(path, f"cannot read: {error.strerror}") from None


def _string_list(path: Path) -> list[str]:
    try:
        value = json.loads(_read(path))
    except json.JSONDecodeError as error:
        raise TaskFormatError(path, f"invalid JSON at line {error.lineno}: {error.msg}") from None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TaskFormatError(path, "expected a JSON list of strings")
    return value
