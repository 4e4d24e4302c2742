"""The two folders ProjectGen's SketchBLEU script scores: the file set of SketchBLEU's codes mode.

ProjectGen's ``datasets/evaluation/calc_sketchbleu.py`` calls CodeS's ``calc_repobleu`` with the
whole dataset task folder as the reference (reference code, ``unit_tests/``, ``check_tests/``,
examples, ``setup.py``: every ``.py`` file below it) and, as the candidate, the output folder
after ``calc_passrate.py``'s ``Test.setup_implementation`` copied into it, from the task folder,
what config.json names: ``unit_tests``, ``check_tests``, ``usage_examples`` (a path or a list),
every ``required_files`` entry, and ``setup_shell_script`` when it is not empty. The tests are
on both sides, so stubs score high: on CodeProjectEval deprecated with every function body
``pass``, CodeS gives 91.39 on these folders, 23.37 with nothing copied and 41.29 on the
reference's source files against the output alone. `script_folders` builds both sides as those
folders hold them, so that the codes mode scores what ProjectGen's script scored.

Each copy is what the script's steps do: remove the target, create its parent folder, then
``cp -r`` the task's path to it. Three consequences kept here:
- an entry with a trailing slash (cookiecutter's ``tests/``): creating "its parent" creates the
  target itself, so ``cp`` copies the folder into it (``tests/tests/...``), and the output's own
  ``tests/`` is gone;
- a glob (lice's ``templates/*``): no shell expands it, so nothing is copied and an empty
  ``templates/`` folder is left when the output had none;
- a path the task does not ship (portalocker's ``pyproject``): nothing is copied.

A folder becomes a path -> text mapping (`folder_files`): a ``.py`` file's text (read as UTF-8 in text
mode, as CodeS opens it: ``\r\n`` and ``\r`` become ``\n``; undecodable bytes replaced: CodeS would stop
with an error), ``""`` for any other file (codes
mode reads only ``.py`` files; their paths give its structure tree its directories), and
``"dir/"`` for a folder without files, which CodeS's tree counts as a directory too. Symbolic
links are not followed.

Not reproduced: what running the tests leaves in the output folder before the script scores it
(``__pycache__`` folders, coverage files) and what the setup script does (it is copied, not run:
every DevBench and CodeProjectEval one installs requirements). Neither adds a ``.py`` file; a
folder they add changes only the structure tree's one Root expression.

Other task formats have no such script: for them the codes mode scores the reference's source
files against the output repository, recorded as `SOURCE_FILES`.
"""
from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.repository import load_repository

# What `sketchbleu_codes` was computed on, recorded with it (results written before have no record:
# their codes figure took the source files).
SCRIPT_FOLDERS = "projectgen-script"
SOURCE_FILES = "reference-sources"

# The benchmarks ProjectGen's scripts were written for (their config.json names what to copy).
SCRIPT_FORMATS = frozenset({"devbench", "codeprojecteval"})


@dataclass(frozen=True)
class ScoredFiles:
    """The two sides codes mode compares, and which file set they are (`SCRIPT_FOLDERS` or `SOURCE_FILES`)."""

    reference: dict[str, str]
    candidate: dict[str, str]
    file_set: str


def codes_files(task: Task, output: Path) -> ScoredFiles:
    """The file set of the codes mode for a run's output folder: ProjectGen's script's folders for a
    DevBench or CodeProjectEval task, else the reference's source files and the output repository."""
    if task.format in SCRIPT_FORMATS:
        return script_folders(task, output)
    return ScoredFiles(reference=task.reference_repository(), candidate=load_repository(output),
                       file_set=SOURCE_FILES)


def script_folders(task: Task, output: Path) -> ScoredFiles:
    """The task folder as the dataset ships it, and the output folder with the task's files copied in as
    ``calc_passrate.py`` copies them (see the module docstring)."""
    candidate = folder_files(output)
    for entry in copied_entries(task.root):
        candidate = copied_into(candidate, task.root, entry)
    return ScoredFiles(reference=folder_files(task.root), candidate=candidate, file_set=SCRIPT_FOLDERS)


def copied_entries(task_root: Path) -> list[str]:
    """What ``Test.setup_implementation`` copies from the task folder, in its order; a config.json the
    script could not read is a `ProjectGenError`."""
    config_path = task_root / "config.json"
    try:
        config: dict[str, Any] = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ProjectGenError(f"{config_path}: not readable as ProjectGen's script reads it ({error})") from None
    for key in ("unit_tests", "check_tests", "usage_examples", "required_files"):
        if key not in config:
            raise ProjectGenError(f"{config_path}: no {key!r}, which ProjectGen's calc_passrate.py reads")
    examples = config["usage_examples"]
    entries = [config["unit_tests"], config["check_tests"],
               *(examples if isinstance(examples, list) else [examples] if examples != "" else []),
               *_listed(config_path, config["required_files"])]
    if config.get("setup_shell_script", "") != "":
        entries.append(config["setup_shell_script"])
    for entry in entries:
        if not isinstance(entry, str) or not posixpath.normpath(entry).strip("./") or _escapes(entry):
            raise ProjectGenError(f"{config_path}: {entry!r} is not a path inside the task folder to copy")
    return entries


def _listed(config_path: Path, value: object) -> list[object]:
    if not isinstance(value, list):
        raise ProjectGenError(f"{config_path}: 'required_files' must be a list of paths, got {type(value).__name__}")
    return value


def _escapes(entry: str) -> bool:
    return posixpath.isabs(entry) or ".." in PurePosixPath(entry).parts


def folder_files(root: Path) -> dict[str, str]:
    """Every file below `root` as codes mode reads a folder: ``.py`` text, other files ``""``, an empty
    folder ``"dir/"`` (see the module docstring)."""
    files: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        folder = Path(dirpath)
        dirnames[:] = sorted(name for name in dirnames if not (folder / name).is_symlink())
        names = sorted(name for name in filenames if (folder / name).is_file() and not (folder / name).is_symlink())
        relative = folder.relative_to(root).as_posix()
        for name in names:
            rel = name if relative == "." else f"{relative}/{name}"
            files[rel] = _file_text(folder / name)
        if not names and not dirnames and relative != ".":  # an empty folder: CodeS's tree has it
            files[relative + "/"] = ""
    return files


def _file_text(path: Path) -> str:
    """A ``.py`` file's text as CodeS's ``open(file, "r", encoding="utf-8")`` reads it: universal newlines, so a
    CRLF file gives the same tokens as its LF copy (undecodable bytes replaced); ``""`` for any other file, whose
    path is all that counts."""
    return path.read_text(encoding="utf-8", errors="replace") if path.name.endswith(".py") else ""


def copied_into(candidate: dict[str, str], task_root: Path, entry: str) -> dict[str, str]:
    """`candidate` after the script's ``copy_files(entry)``: the target removed, its parent created, then
    ``cp -r`` of the task's path onto it (into it when it is a folder by then)."""
    target = posixpath.normpath(entry)
    files = {path: text for path, text in candidate.items() if not _is_below(path, target)}
    parent = target if entry.endswith("/") else posixpath.dirname(target)  # os.path.dirname of "out/tests/"
    source = task_root / entry
    if not source.exists() or source.is_symlink():  # cp fails: only the created parent is left
        return _with_folder(files, parent)
    destination = posixpath.join(target, posixpath.basename(target)) if entry.endswith("/") else target
    if source.is_dir():
        copied = {posixpath.join(destination, path): text for path, text in folder_files(source).items()}
        if not copied:
            copied = {destination + "/": ""}
    else:
        copied = {destination: _file_text(source)}
    return _without_filled_markers({**files, **copied})


def _is_below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


def _with_folder(files: dict[str, str], folder: str) -> dict[str, str]:
    """`files` with `folder` present: a marker when nothing is below it yet (the root is always there)."""
    if not folder or any(path.startswith(folder + "/") for path in files):
        return files
    return _without_filled_markers({**files, folder + "/": ""})


def _without_filled_markers(files: dict[str, str]) -> dict[str, str]:
    """Empty-folder markers dropped where something is below them."""
    filled = {path[:index + 1] for path in files for index, char in enumerate(path[:-1]) if char == "/"}
    return {path: text for path, text in files.items() if not path.endswith("/") or path not in filled}
