"""`projectgen datasets fetch`: a published benchmark copied from git (the upstream, or a local mirror) or a
folder into the user's cache, checked against its manifest before it replaces anything.

The pinned commit is fetched when the source has it; a mirror that does not (a copy made elsewhere) gives
its HEAD, which is installed only if its files are the published ones. Changed or added files refuse the
copy; missing files (data the source does not carry) are installed and named as incomplete tasks.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from projectgen.datasets.catalog import FETCHED_RECORD, PublishedDataset, install_root
from projectgen.datasets.integrity import Check, check_folder, folder_files, manifest
from projectgen.errors import ProjectGenError

# Folders a test run leaves in a copy of the data: not part of it, so not copied from a folder source.
GENERATED_FOLDERS = frozenset({"__pycache__", ".pytest_cache"})


@dataclass(frozen=True)
class Fetched:
    """What `fetch_dataset` installed, and from where."""

    folder: Path
    source: str
    commit: str | None
    pinned: bool
    check: Check


def fetch_dataset(dataset: PublishedDataset, *, source: str | None = None, cache: Path | None = None,
                  log: Callable[[str], None] = lambda message: None) -> Fetched:
    """Copy `dataset` from `source` (default: its upstream repository) into the cache, checked, replacing an
    earlier copy only once the new one is complete and sound."""
    root = install_root(dataset, cache)
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dataset.name}-", dir=root.parent))
    try:
        target = staging / dataset.folder_name
        given = source or dataset.repository
        if source is None or is_git_source(source):
            commit = _copy_from_git(dataset, given, target, staging / "fetch.git", mirror=source is not None, log=log)
        else:
            _copy_from_folder(dataset, Path(source), target)
            commit = None
        check = check_folder(target, manifest(dataset))
        if not check.sound:
            raise ProjectGenError(f"{given}: not the published {dataset.name} ({check.problems()}); nothing was "
                                  "installed")
        if not check.matching:
            raise ProjectGenError(f"{given}: holds none of {dataset.name}'s files; nothing was installed")
        shutil.rmtree(staging / "fetch.git", ignore_errors=True)
        record = {"name": dataset.name, "title": dataset.title, "repository": dataset.repository,
                  "pinned_commit": dataset.commit, "source": given, "commit": commit,
                  "files": check.matching, "incomplete": {task: list(paths) for task, paths in check.incomplete.items()},
                  "fetched_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        (staging / FETCHED_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        _replace(root, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Fetched(folder=root / dataset.folder_name, source=given, commit=commit,
                   pinned=commit == dataset.commit, check=check)


def is_git_source(source: str) -> bool:
    """A URL, or a local git repository (a clone or a bare mirror); anything else is a plain folder."""
    if "://" in source or source.startswith("git@"):
        return True
    path = Path(source)
    if not path.exists():
        raise ProjectGenError(f"--from {source}: no such folder or repository")
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def _replace(root: Path, staging: Path) -> None:
    """Put `staging` at `root`: the old copy is moved aside first, so a reader never sees half of either."""
    old = None
    if root.exists():
        old = root.with_name(f".{root.name}-old-{os.getpid()}")
        root.rename(old)
    staging.rename(root)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never wait for a password nobody types
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=environment, check=False)
    except FileNotFoundError:
        raise ProjectGenError("git is not installed: it is needed to fetch a dataset from a repository "
                              "(or give --from a plain folder holding the data)") from None


def _last_line(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = [line for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"git exited with {done.returncode}"


def _copy_from_git(dataset: PublishedDataset, source: str, target: Path, repository: Path, *, mirror: bool,
                   log: Callable[[str], None]) -> str:
    """Fetch the pinned commit (a mirror without it: its HEAD) and write the benchmark's files to `target`."""
    if not ("://" in source or source.startswith("git@")):
        source = str(Path(source).resolve())
    _git("init", "-q", "--bare", str(repository))
    log(f"fetching {dataset.commit[:12]} from {source}")
    done = _git("-C", str(repository), "fetch", "-q", "--depth", "1", "--no-tags", source, dataset.commit)
    if done.returncode != 0:
        if not mirror:
            raise ProjectGenError(f"could not fetch {dataset.name} from {source}: {_last_line(done)} (offline: "
                                  "--from DIR, a local mirror of the repository or a copy of the folder)")
        log(f"{source} does not have the pinned commit; taking its HEAD, installed only if it holds the "
            "published files")
        done = _git("-C", str(repository), "fetch", "-q", "--depth", "1", "--no-tags", source, "HEAD")
        if done.returncode != 0:
            raise ProjectGenError(f"--from {source}: not a git repository git can fetch from: {_last_line(done)}")
    commit = _git("-C", str(repository), "rev-parse", "FETCH_HEAD").stdout.decode().strip()
    for folder in (dataset.folder, dataset.folder_name):
        listing = _git("-C", str(repository), "ls-tree", "-r", "-z", commit, "--", f"{folder}/")
        entries = [entry for entry in listing.stdout.split(b"\0") if entry]
        if entries:
            _write_blobs(repository, entries, prefix=f"{folder}/", target=target)
            return commit
    raise ProjectGenError(f"{source} (commit {commit[:12]}) has no folder {dataset.folder} or {dataset.folder_name}")


def _write_blobs(repository: Path, entries: list[bytes], *, prefix: str, target: Path) -> None:
    """Write each `git ls-tree -z` entry below `target` as a plain file (a symbolic link as its target's
    text, as git stores it: a link in the data must not point a sandbox at the machine's files)."""
    with subprocess.Popen(["git", "-C", str(repository), "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as batch:
        assert batch.stdin is not None and batch.stdout is not None
        for entry in entries:
            meta, _, raw_path = entry.partition(b"\t")
            mode, kind, digest = meta.decode().split()
            if kind != "blob":
                continue  # a submodule's commit: not data
            path = target / os.fsdecode(raw_path)[len(prefix):]
            batch.stdin.write(digest.encode() + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if len(header) != 3:
                raise ProjectGenError(f"{repository}: git cannot read blob {digest} ({b' '.join(header).decode()})")
            data = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if mode == "100755":
                path.chmod(0o755)
        batch.stdin.close()


def _copy_from_folder(dataset: PublishedDataset, source: Path, target: Path) -> None:
    """Copy the benchmark out of a folder: a checkout of the repository, its datasets/ folder, or the
    benchmark folder itself."""
    for candidate in (source / dataset.folder, source / dataset.folder_name, source):
        if candidate.is_dir():
            break
    for relative, file in folder_files(candidate).items():
        if GENERATED_FOLDERS & set(relative.split("/")[:-1]):
            continue
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if file.is_symlink():
            path.write_bytes(os.fsencode(os.readlink(file)))
        else:
            shutil.copyfile(file, path)
            if os.access(file, os.X_OK):
                path.chmod(0o755)
