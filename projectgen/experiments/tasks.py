"""A dataset's tasks for a batch: those that load, and one reason per task folder that does not."""
from __future__ import annotations

from pathlib import Path

from projectgen.datasets.loaders import load_dataset_report
from projectgen.datasets.task import Task


def load_tasks(dataset: Path) -> tuple[list[Task], dict[str, str]]:
    """The tasks of `dataset` that load, and for each one that does not, its id (folder name) -> the error."""
    tasks, load_errors = load_dataset_report(dataset)
    errors = {}
    for error in load_errors:
        # the error names the folder's config file, or the folder itself
        # a task folder's config or other file (NL2Repo-Bench's start.md ...), a RAL-Bench yaml, or the folder itself
        if error.path.suffix == ".yaml":
            task_id = error.path.stem
        elif error.path.is_file() or error.path.name in ("config.json", "task.toml"):
            task_id = error.path.parent.name
        else:
            task_id = error.path.name
        errors[task_id] = str(error)
    return tasks, errors
