"""Evolve's dataset: one finished run folder (its manifest, task, output repository and architecture tree), the
base an evolve run changes. `read_base_run` checks it before anything of the evolve run is written."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from projectgen.datasets.loaders import load_task
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.repository import load_repository
from projectgen.runs.folder import read_manifest
from projectgen.runs.layout import RunLayout
from projectgen.runs.manifest import RunManifest
from projectgen.ssat import SSAT, ssat_from_repository


@dataclass(frozen=True)
class BaseRun:
    """A finished run folder as an evolve run sees it."""

    folder: Path
    manifest: RunManifest
    task: Task
    repository: dict[str, str]
    tree: SSAT
    tree_source: str

    @property
    def id(self) -> str:
        """The sample's id (`Protocol.load_dataset`'s samples each have one): the base run's task."""
        return self.task.id


def read_base_run(folder: Path) -> BaseRun:
    """The finished run in `folder`: its manifest, task, output repository and architecture tree."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ProjectGenError(f"{folder}: run folder not found")
    manifest = read_manifest(folder)
    if manifest.status != "finished":
        raise ProjectGenError(f"{folder}: the run is {manifest.status}, not finished; evolve starts from a finished "
                              "run (finish or resume it first)")
    if not Path(manifest.task_path).is_dir():
        raise ProjectGenError(f"{folder}: the run's task folder {manifest.task_path} is gone; put it back to evolve "
                              "the run")
    run = RunLayout(folder)
    repository = load_repository(run.repository) if run.repository.is_dir() else {}
    if not any(path.endswith(".py") for path in repository):
        raise ProjectGenError(f"{folder}: the run's {run.repository.name}/ holds no Python file to evolve")
    task = load_task(Path(manifest.task_path))
    tree_file = run.ssat
    if tree_file.is_file():
        tree, source = SSAT.model_validate_json(tree_file.read_text(encoding="utf-8")), f"{tree_file}"
    else:
        python = {path: text for path, text in repository.items() if path.endswith(".py")}
        tree = ssat_from_repository(python, task.id, description=f"Architecture of {task.id}, derived from its code.")
        source = "derived from the repository's code (the run kept no ssat.json)"
    return BaseRun(folder=folder, manifest=manifest, task=task, repository=repository, tree=tree, tree_source=source)


def load_dataset(dataset: Path) -> list[BaseRun]:
    """The one sample of evolve's dataset: the finished run in the folder."""
    return [read_base_run(dataset)]
