"""Filling a test workspace: the candidate's files first, then the task's files over them.

One place for both test runners (pytest's in `runner`, the other languages' in `languages.session`):
a candidate is a folder or a mapping of repository paths to text (or to a file on disk, copied
binary-safe); the task's files it may not provide (`ProtectedPaths`) are dropped, links are never
followed, and the task's own files are copied last so no candidate can replace them.
"""
from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from projectgen.errors import ProjectGenError
from projectgen.evaluation.protected_paths import ProtectedPaths
from projectgen.repository import SKIPPED_DIRS, safe_relpath

Candidate = Path | Mapping[str, str] | Mapping[str, Path]


def copy_candidate(workspace: Path, candidate: Candidate, protected: ProtectedPaths) -> None:
    """Write the candidate's files into `workspace`, leaving out what `protected` refuses."""
    if isinstance(candidate, Mapping):
        for rel, content in candidate.items():
            rel = safe_relpath(rel)
            if protected.refuses(rel):
                continue
            target = workspace / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                shutil.copy2(content, target)
            else:
                target.write_text(content, encoding="utf-8")
        return
    source = Path(candidate)
    if not source.is_dir():
        raise ProjectGenError(f"{source}: candidate repository folder not found")
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source).as_posix()
        if any(part in SKIPPED_DIRS for part in path.relative_to(source).parts):
            continue
        if path.is_symlink():
            continue  # a link could point anywhere on the host
        target = workspace / rel
        if path.is_dir():
            if not protected.refuses(rel + "/"):
                target.mkdir(parents=True, exist_ok=True)
        elif path.is_file() and not protected.refuses(rel):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def copy_task_files(root: Path, workspace: Path, rels: Iterable[str]) -> None:
    """The task's files (and folders) at the same paths in the workspace, over whatever is there."""
    for rel in rels:
        source, target = root / rel, workspace / rel
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def copy_prepared_files(workspace: Path, files: Mapping[str, Path]) -> None:
    """Files prepared for the task outside its folder (`evaluation.assets`: data files its copy lacks) at their
    workspace paths, over whatever the candidate put there."""
    for rel, source in files.items():
        target = workspace / safe_relpath(rel)
        if target.is_dir():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
