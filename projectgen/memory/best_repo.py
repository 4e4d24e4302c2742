"""The historical-best repository of each task, on disk (LiveCoder).

Across attempts at a task, LiveCoder keeps the best repository seen so far and never lets
it regress: an attempt replaces it only with a *strictly* higher score, and when the best
already has a full score later attempts reuse it instead of generating again.

Layout under the store's root, one folder per task::

    ROOT/<task>/best.json               which snapshot is the best, its score, attempt, run, time, meta
    ROOT/<task>/snapshots/<name>/...    the repository's files

A new best is written completely into a temporary folder, flushed, renamed into
``snapshots/``, and only then made current by atomically replacing ``best.json`` (write a
temp file, fsync, `os.replace`). A crash at any point leaves the previous ``best.json``
and the snapshot it names untouched; leftovers are removed by the next successful `offer`. Offers
for one task are serialised by a lock file, so concurrent attempts cannot regress it.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from projectgen.durable_files import fsync_folder, write_atomic, write_synced
from projectgen.errors import ProjectGenError
from projectgen.repository import Repository, safe_relpath

__all__ = ["BestRepository", "BestRepositoryInfo", "BestRepositoryStore"]

_SCHEMA_VERSION = 1
_POINTER = "best.json"
_SNAPSHOTS = "snapshots"
_TMP_PREFIX = ".tmp-"


class BestRepositoryInfo(BaseModel):
    """The contents of ``best.json``: everything about the best snapshot but its files."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    schema_version: int = _SCHEMA_VERSION
    task_id: str
    score: float = Field(allow_inf_nan=False)
    attempt: int = Field(ge=0)
    run_id: str | None = None
    created_at: datetime
    snapshot: str = Field(description="folder name under snapshots/")
    files: list[str] = Field(default_factory=list, description="the snapshot's files, sorted")
    meta: dict[str, Any] = Field(default_factory=dict, description="extra metadata given to offer()")


class BestRepository(BaseModel):
    """The best repository of a task and what is known about it."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    repository: dict[str, str]
    score: float
    attempt: int
    run_id: str | None = None
    created_at: datetime
    meta: dict[str, Any] = Field(default_factory=dict)


class BestRepositoryStore:
    """Per-task historical-best repositories below `root` (created when missing)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise ProjectGenError(f"best-repository store {self.root}: not a folder")

    def __repr__(self) -> str:
        return f"BestRepositoryStore({str(self.root)!r})"

    # Reading ---------------------------------------------------------------------------
    def info(self, task_id: str) -> BestRepositoryInfo | None:
        """The best snapshot's metadata (no files read), or None when there is none."""
        pointer = self._task_dir(task_id) / _POINTER
        try:
            text = pointer.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ProjectGenError(f"{pointer}: cannot read ({exc.strerror or exc})") from None
        try:
            info = BestRepositoryInfo.model_validate_json(text)
        except ValidationError as exc:
            raise ProjectGenError(f"{pointer}: corrupt ({exc.errors()[0]['msg']})") from None
        if info.task_id != task_id:
            raise ProjectGenError(f"{pointer}: belongs to task {info.task_id!r}, not {task_id!r}")
        return info

    def best(self, task_id: str) -> BestRepository | None:
        """The task's best repository, or None when nothing was offered yet."""
        info = self.info(task_id)
        if info is None:
            return None
        folder = self._task_dir(task_id) / _SNAPSHOTS / info.snapshot
        repository: Repository = {}
        for rel in info.files:
            path = folder / safe_relpath(rel)
            try:
                repository[rel] = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ProjectGenError(f"best repository of {task_id!r}: cannot read {path} ({exc})") from None
        return BestRepository(task_id=task_id, repository=repository, score=info.score, attempt=info.attempt,
                              run_id=info.run_id, created_at=info.created_at, meta=info.meta)

    def best_score(self, task_id: str) -> float | None:
        info = self.info(task_id)
        return None if info is None else info.score

    def is_full_score(self, task_id: str, full: float = 1.0) -> bool:
        """True when the task's best has reached `full` (reuse it instead of a new attempt)."""
        score = self.best_score(task_id)
        return score is not None and score >= full - 1e-9

    def tasks(self) -> list[str]:
        """The ids of the tasks that have a best repository."""
        found = []
        if self.root.is_dir():
            for pointer in sorted(self.root.glob(f"*/{_POINTER}")):
                try:
                    found.append(BestRepositoryInfo.model_validate_json(pointer.read_text(encoding="utf-8")).task_id)
                except (OSError, ValidationError):
                    continue
        return found

    # Writing ---------------------------------------------------------------------------
    def offer(self, task_id: str, repository: Mapping[str, str], score: float, attempt: int, *,
              run_id: str | None = None, **meta: Any) -> bool:
        """Make `repository` the task's best if `score` is strictly higher than the current
        best's (or there is none). Returns True when it was stored. Paths are validated
        (relative, inside the repository) before anything is written; `meta` must be
        JSON-serialisable and is kept in ``best.json``.
        """
        if not task_id:
            raise ProjectGenError("a best repository needs a task id")
        score = float(score)
        if math.isnan(score) or math.isinf(score):
            raise ProjectGenError(f"best repository of {task_id!r}: score must be a finite number, got {score}")
        files = _validated(repository)
        try:
            json.dumps(meta)
        except (TypeError, ValueError) as exc:
            raise ProjectGenError(f"best repository of {task_id!r}: metadata is not JSON-serialisable ({exc})") from None

        task_dir = self._task_dir(task_id)
        try:
            (task_dir / _SNAPSHOTS).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ProjectGenError(f"best-repository store {self.root}: cannot create {task_dir} ({exc})") from None
        with _locked(task_dir / ".lock"):
            current = self.info(task_id)
            if current is not None and not score > current.score:
                return False
            name = f"attempt{attempt}-{uuid.uuid4().hex[:12]}"
            try:
                info = BestRepositoryInfo(task_id=task_id, score=score, attempt=attempt, run_id=run_id,
                                          created_at=datetime.now(timezone.utc), snapshot=name,
                                          files=sorted(files), meta=meta)
            except ValidationError as exc:
                error = exc.errors()[0]
                field = ".".join(str(p) for p in error["loc"])
                raise ProjectGenError(f"best repository of {task_id!r}: {field}: {error['msg']}") from None
            tmp = task_dir / f"{_TMP_PREFIX}{name}"
            try:
                _write_snapshot(tmp, files)
                os.rename(tmp, task_dir / _SNAPSHOTS / name)
                fsync_folder(task_dir / _SNAPSHOTS)
                write_atomic(task_dir / _POINTER, info.model_dump_json(indent=2) + "\n")
            except OSError as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                raise ProjectGenError(f"best repository of {task_id!r}: cannot write ({exc})") from None
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            self._clean(task_dir, keep=name)
        return True

    # Internals -------------------------------------------------------------------------
    def _task_dir(self, task_id: str) -> Path:
        """A folder name for the task: its id when that is a safe name, else a slug + hash."""
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id).strip("._")[:80]
        if slug != task_id or not slug:
            digest = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:10]
            slug = f"{slug or 'task'}-{digest}"
        return self.root / slug

    @staticmethod
    def _clean(task_dir: Path, keep: str) -> None:
        """Remove older snapshots and leftovers of interrupted writes (best effort)."""
        for path in task_dir.iterdir():
            if path.name.startswith(_TMP_PREFIX) or path.name.startswith(f"{_POINTER}.tmp"):
                _remove(path)
        for path in (task_dir / _SNAPSHOTS).iterdir():
            if path.name != keep:
                _remove(path)


def _validated(repository: Mapping[str, str]) -> dict[str, str]:
    files: dict[str, str] = {}
    for rel, text in repository.items():
        if not isinstance(text, str):
            raise ProjectGenError(f"repository file {rel!r}: content must be text, got {type(text).__name__}")
        norm = safe_relpath(rel)
        if norm in files:
            raise ProjectGenError(f"repository path {rel!r}: given twice")
        files[norm] = text
    for rel in files:  # "a" as a file and "a/b.py" need "a" to be both file and folder
        parent = rel.rsplit("/", 1)[0] if "/" in rel else None
        while parent:
            if parent in files:
                raise ProjectGenError(f"repository path {rel!r}: {parent!r} is a file")
            parent = parent.rsplit("/", 1)[0] if "/" in parent else None
    return files


def _write_snapshot(folder: Path, files: Mapping[str, str]) -> None:
    folder.mkdir(parents=True)
    for rel, text in files.items():
        write_synced(folder / rel, text)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except OSError:
            pass


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (POSIX `flock`; no lock where that is unavailable)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
