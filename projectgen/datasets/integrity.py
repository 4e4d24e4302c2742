"""Checksums of a benchmark's files: the git blob id of each, against the pinned commit's manifest.

Git blob ids are what `git ls-tree -r COMMIT FOLDER` prints, so a manifest is reproducible from the
upstream repository with one command, and the same ids check a copy however it was obtained (a clone,
a mirror at another commit, a plain folder). A symbolic link is hashed as git stores it: its target.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from projectgen.datasets.catalog import PublishedDataset


def blob_id(data: bytes) -> str:
    """The git blob id of `data` (SHA-1 of git's ``blob <size>\\0`` header and the bytes)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def file_blob_id(path: Path) -> str:
    """The git blob id of a file as git would store it (a symbolic link: its target's text)."""
    if path.is_symlink():
        return blob_id(os.fsencode(os.readlink(path)))
    return blob_id(path.read_bytes())


def manifest(dataset: PublishedDataset) -> dict[str, str]:
    """path below the benchmark folder -> git blob id at the pinned commit (the packaged manifest)."""
    text = resources.files("projectgen.datasets").joinpath("manifests", f"{dataset.name}.txt").read_text(
        encoding="utf-8")
    entries = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            digest, path = line.split(" ", 1)
            entries[path] = digest
    return entries


def folder_files(root: Path) -> dict[str, Path]:
    """Every file below `root` (links included, not followed) by its path relative to `root`, with ``/``."""
    found = {}
    for directory, subdirs, files in os.walk(root):
        here = Path(directory)
        # a symbolic link to a folder is a file to git
        for name in [*files, *(d for d in subdirs if (here / d).is_symlink())]:
            found[(here / name).relative_to(root).as_posix()] = here / name
    return found


@dataclass(frozen=True)
class Check:
    """How a copy of a benchmark compares with its manifest."""

    matching: int
    changed: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    incomplete: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def sound(self) -> bool:
        """Every file present is the published one and nothing was added (some may be missing)."""
        return not self.changed and not self.extra

    def problems(self) -> str:
        """One line naming what differs (the first few paths of each kind)."""
        parts = []
        for what, paths in (("changed", self.changed), ("not in the published data", self.extra)):
            if paths:
                shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
                parts.append(f"{len(paths)} file(s) {what}: {shown}")
        return "; ".join(parts)

    def incomplete_lines(self) -> list[str]:
        """One line per task with files missing (published files the copied source did not have)."""
        return [f"{task}: incomplete, the source lacks {len(paths)} file(s) ({', '.join(paths[:3])}"
                f"{' ...' if len(paths) > 3 else ''})" for task, paths in sorted(self.incomplete.items())]


def check_folder(folder: Path, expected: Mapping[str, str]) -> Check:
    """Compare every file below `folder` with the manifest `expected`."""
    present = folder_files(folder)
    changed = sorted(path for path, file in present.items() if path in expected and file_blob_id(file) != expected[path])
    extra = sorted(path for path in present if path not in expected)
    missing = sorted(path for path in expected if path not in present)
    incomplete: dict[str, list[str]] = {}
    for path in missing:
        task, _, rest = path.partition("/")
        incomplete.setdefault(task, []).append(rest or task)
    return Check(matching=len(present) - len(changed) - len(extra), changed=tuple(changed), extra=tuple(extra),
                 missing=tuple(missing), incomplete={task: tuple(paths) for task, paths in incomplete.items()})


def missing_from_copy(task_root: Path, expected: Mapping[str, str], task_id: str) -> list[str]:
    """Files a benchmark's manifest (`expected`) lists for task `task_id` that the folder `task_root` lacks,
    relative to it and sorted: a copy made without its large files (CodeProjectEval xmnlp's ONNX models) cannot
    pass its own tests, and that is the copy's defect, not the harness's. Empty for a task the manifest does not
    list, and for a folder that holds none of its files (not a copy of it: another layout of the same name)."""
    prefix = f"{task_id}/"
    published = [path[len(prefix):] for path in expected if path.startswith(prefix)]
    present = folder_files(task_root) if published else {}
    missing = sorted(path for path in published if path not in present)
    return missing if len(missing) < len(published) else []
