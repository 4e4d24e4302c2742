"""The published benchmarks projectgen knows by name (`catalog.toml`), and where their fetched copies live.

`--dataset devbench` and `run devbench/lice` name a benchmark instead of a folder: the name is looked up
here and turned into the folder `projectgen datasets fetch` installed in the user's cache. A path that
exists always wins over a name, so a local copy of the data is used as it always was.
"""
from __future__ import annotations

import difflib
import functools
import json
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from projectgen.config import cache_root
from projectgen.errors import ProjectGenError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# The record `datasets fetch` writes beside an installed copy: its presence means "installed and checked".
FETCHED_RECORD = "fetched.json"


@dataclass(frozen=True)
class PublishedDataset:
    """A benchmark folder of a public git repository, pinned to a commit."""

    name: str
    title: str
    repository: str
    commit: str
    folder: str
    license: str

    @property
    def folder_name(self) -> str:
        """The benchmark's own folder name (DevBench): the installed copy keeps it."""
        return self.folder.rstrip("/").rsplit("/", 1)[-1]


@functools.cache
def published_datasets() -> dict[str, PublishedDataset]:
    """name -> benchmark, read once from the packaged catalog (immutable data)."""
    text = resources.files("projectgen.datasets").joinpath("catalog.toml").read_text(encoding="utf-8")
    table: dict[str, Any] = tomllib.loads(text)
    return {name: PublishedDataset(name=name, title=entry["title"], repository=entry["repository"],
                                   commit=entry["commit"], folder=entry["folder"], license=entry["license"])
            for name, entry in table.items()}


def find_published(name: str) -> PublishedDataset | None:
    """The benchmark called `name` (any case: DevBench and devbench are one), or None."""
    return published_datasets().get(name.strip().lower())


def published_dataset(name: str) -> PublishedDataset:
    """The benchmark called `name`; an unknown name is one line naming the known ones."""
    found = find_published(name)
    if found is not None:
        return found
    names = sorted(published_datasets())
    close = difflib.get_close_matches(name.lower(), names, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise ProjectGenError(f"{name}: no published dataset of that name ({hint}known: {', '.join(names)})")


def datasets_cache_dir() -> Path:
    """Where fetched benchmarks live: `datasets/` of the cache root (`$PROJECTGEN_CACHE_DIR`, else the XDG
    cache folder)."""
    return cache_root() / "datasets"


def install_root(dataset: PublishedDataset, cache: Path | None = None) -> Path:
    """The cache folder of one benchmark: its record and its data folder (DevBench/) below it."""
    return (cache or datasets_cache_dir()) / dataset.name


def fetched_record(dataset: PublishedDataset, cache: Path | None = None) -> dict[str, Any] | None:
    """What `datasets fetch` recorded about the installed copy (source, commit, incomplete tasks), or None."""
    path = install_root(dataset, cache) / FETCHED_RECORD
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ProjectGenError(f"{path}: unreadable ({error}); fetch the dataset again with "
                              f"`projectgen datasets fetch {dataset.name}`") from None


def installed_folder(dataset: PublishedDataset, cache: Path | None = None) -> Path:
    """The folder of task folders of a fetched benchmark, in the installed version (the link resolved: a run
    keeps reading the copy it started on when a fetch installs another); one line saying how to fetch it
    when it is not."""
    if fetched_record(dataset, cache) is None:
        raise ProjectGenError(f"{dataset.name} is not fetched yet: run `projectgen datasets fetch {dataset.name}` "
                              "(offline: add --from DIR, a local mirror of the repository or a copy of the folder)")
    return install_root(dataset, cache).resolve() / dataset.folder_name


def incomplete_tasks(record: dict[str, Any]) -> dict[str, list[str]]:
    """task -> the published files (relative to the task) a fetched copy lacks, as its record says."""
    return {task: list(paths) for task, paths in sorted(record.get("incomplete", {}).items())}


def published_folder(spec: str) -> Path | None:
    """The installed folder `spec` names when it is a benchmark's name and no such path exists, else None."""
    if Path(spec).exists():
        return None
    dataset = find_published(spec)
    return installed_folder(dataset) if dataset is not None else None


def published_task_folder(spec: str) -> Path | None:
    """The task folder of ``NAME/TASK`` (devbench/lice) when NAME is a benchmark and no such path exists."""
    head, sep, task = spec.partition("/")
    if not sep or not task or "/" in task.strip("/") or Path(spec).exists():
        return None
    dataset = find_published(head)
    if dataset is None:
        return None
    folder = installed_folder(dataset)
    path = folder / task.strip("/")
    if not path.is_dir():
        tasks = sorted(child.name for child in folder.iterdir() if child.is_dir())
        close = difflib.get_close_matches(task, tasks, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise ProjectGenError(f"{spec}: {dataset.name} has no task {task!r} ({hint}tasks: {', '.join(tasks)})")
    return path
