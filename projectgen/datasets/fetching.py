"""`projectgen datasets fetch`: a published benchmark copied from git (the upstream, or a local mirror) or a
folder into the user's cache, checked against its manifest before it replaces anything.

The pinned commit is used when the source has it; a mirror that does not (a copy made elsewhere) gives
its HEAD, which is installed only if its files are the published ones. Changed or added files refuse the
copy; missing files (data the source does not carry: a folder without them, a partial or blob-limited
mirror) are installed missing and named as incomplete tasks. A local repository is read in place and
only for the objects it holds: asking git for an absent one would make a partial clone fetch it from
its promisor remote (the network). A less complete copy never replaces a more complete one unasked.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from projectgen.datasets.catalog import FETCHED_RECORD, PublishedDataset, fetched_record, install_root
from projectgen.datasets.installing import install_lock, mark_replaced, new_version, prune_versions, swap_in
from projectgen.datasets.integrity import Check, check_folder, folder_files, manifest
from projectgen.errors import ProjectGenError

# Folders a test run leaves in a copy of the data: not part of it, so not copied from a folder source.
GENERATED_FOLDERS = frozenset({"__pycache__", ".pytest_cache"})
# For a repository read in place: no transport is allowed, so git cannot fetch an absent object from a
# promisor remote (GIT_NO_LAZY_FETCH says the same to git >= 2.44).
NO_LAZY_FETCH = {"GIT_ALLOW_PROTOCOL": "none", "GIT_NO_LAZY_FETCH": "1"}


@dataclass(frozen=True)
class Fetched:
    """What `fetch_dataset` installed, and from where."""

    folder: Path
    source: str
    commit: str | None
    pinned: bool
    check: Check


def fetch_dataset(dataset: PublishedDataset, *, source: str | None = None, cache: Path | None = None,
                  force: bool = False, log: Callable[[str], None] = lambda message: None) -> Fetched:
    """Copy `dataset` from `source` (default: its upstream repository) into the cache, checked, replacing an
    earlier copy only once the new one is sound and (without `force`) no less complete."""
    root = install_root(dataset, cache)
    given = source or dataset.repository
    with install_lock(root, log):
        version = new_version(root)
        try:
            target = version / dataset.folder_name
            commit = _copy(dataset, given, target, from_upstream=source is None, log=log)
            check = check_folder(target, manifest(dataset))
            if not check.sound:
                raise ProjectGenError(f"{given}: not the published {dataset.name} ({check.problems()}); nothing "
                                      "was installed")
            if not check.matching:
                raise ProjectGenError(f"{given}: holds none of {dataset.name}'s files; nothing was installed")
            _refuse_less_complete(dataset, given, check, fetched_record(dataset, cache), force=force)
            (version / FETCHED_RECORD).write_text(json.dumps(_record(dataset, given, commit, check), indent=2) + "\n",
                                                  encoding="utf-8")
        except BaseException:
            shutil.rmtree(version, ignore_errors=True)
            raise
        previous = swap_in(root, version)
        if previous is not None:
            mark_replaced(previous)
        prune_versions(root)
    return Fetched(folder=root / dataset.folder_name, source=given, commit=commit,
                   pinned=commit == dataset.commit, check=check)


def is_git_source(source: str) -> bool:
    """A URL, or a local git repository (a clone or a bare mirror); anything else is a plain folder."""
    if _is_url(source):
        return True
    path = Path(source)
    if not path.exists():
        raise ProjectGenError(f"--from {source}: no such folder or repository")
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def _is_url(source: str) -> bool:
    return "://" in source or source.startswith("git@")


def _copy(dataset: PublishedDataset, source: str, target: Path, *, from_upstream: bool,
          log: Callable[[str], None]) -> str | None:
    """Write the benchmark's files from `source` to `target`; the commit they came from (None: a folder)."""
    if from_upstream or _is_url(source):
        with tempfile.TemporaryDirectory(prefix="fetch-", dir=target.parent) as scratch:
            repository = Path(scratch) / "fetch.git"
            commit = _fetch_remote(dataset, source, repository, mirror=not from_upstream, log=log)
            _write_folder(dataset, repository, commit, target, source=source, present=None, log=log)
        return commit
    if is_git_source(source):
        repository = Path(source).resolve()
        present = _present_objects(repository)
        commit = _local_commit(dataset, repository, present, log=log)
        _write_folder(dataset, repository, commit, target, source=str(repository), present=present, log=log)
        return commit
    _copy_from_folder(dataset, Path(source), target)
    return None


def _refuse_less_complete(dataset: PublishedDataset, source: str, check: Check, installed: dict[str, Any] | None,
                          *, force: bool) -> None:
    """One line, before anything is replaced, when the installed copy holds more of the published files."""
    if installed is None or force:
        return
    before = int(installed.get("files", 0))
    if before > check.matching:
        total = len(manifest(dataset))
        raise ProjectGenError(
            f"{dataset.name}: the installed copy has {before} of the {total} published files, {source} has "
            f"{check.matching}; kept the installed copy (--force replaces it with the less complete one)")


def _record(dataset: PublishedDataset, source: str, commit: str | None, check: Check) -> dict[str, Any]:
    """fetched.json: where the copy came from and which tasks it lacks files of."""
    return {"name": dataset.name, "title": dataset.title, "repository": dataset.repository,
            "pinned_commit": dataset.commit, "source": source, "commit": commit,
            "files": check.matching, "published_files": check.matching + len(check.missing),
            "incomplete": {task: list(paths) for task, paths in check.incomplete.items()},
            "fetched_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _git(*args: str, cwd: Path | None = None, in_place: bool = False) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0",  # never wait for a password nobody types
                   **(NO_LAZY_FETCH if in_place else {})}
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=environment, check=False)
    except FileNotFoundError:
        raise ProjectGenError("git is not installed: it is needed to fetch a dataset from a repository "
                              "(or give --from a plain folder holding the data)") from None


def _last_line(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = [line for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"git exited with {done.returncode}"


def _fetch_remote(dataset: PublishedDataset, source: str, repository: Path, *, mirror: bool,
                  log: Callable[[str], None]) -> str:
    """Fetch the pinned commit of a URL (a mirror without it: its HEAD) into the new bare `repository`."""
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
    return _git("-C", str(repository), "rev-parse", "FETCH_HEAD").stdout.decode().strip()


def _present_objects(repository: Path) -> dict[str, str]:
    """object id -> type of every object `repository` holds (a partial clone lacks some; listing them
    never fetches)."""
    done = _git("-C", str(repository), "cat-file", "--batch-check=%(objectname) %(objecttype)",
                "--batch-all-objects", in_place=True)
    if done.returncode != 0:
        raise ProjectGenError(f"--from {repository}: git cannot read it: {_last_line(done)}")
    return dict(line.split(" ", 1) for line in done.stdout.decode().splitlines() if " " in line)


def _local_commit(dataset: PublishedDataset, repository: Path, present: dict[str, str], *,
                  log: Callable[[str], None]) -> str:
    """The pinned commit when the local repository holds it, else its HEAD (checked like any copy)."""
    if present.get(dataset.commit) == "commit":
        log(f"reading {dataset.commit[:12]} in {repository}")
        return dataset.commit
    head = _git("-C", str(repository), "rev-parse", "-q", "--verify", "HEAD", in_place=True).stdout.decode().strip()
    if present.get(head) != "commit":
        raise ProjectGenError(f"--from {repository}: has neither the pinned commit {dataset.commit[:12]} nor a "
                              "HEAD commit to read")
    log(f"{repository} does not have the pinned commit; taking its HEAD {head[:12]}, installed only if it holds "
        "the published files")
    return head


def _write_folder(dataset: PublishedDataset, repository: Path, commit: str, target: Path, *, source: str,
                  present: Collection[str] | None, log: Callable[[str], None]) -> None:
    """Write the benchmark's folder at `commit` to `target`; with `present`, only the blobs it names (the
    rest are left missing and logged)."""
    in_place = present is not None
    for folder in (dataset.folder, dataset.folder_name):
        listing = _git("-C", str(repository), "ls-tree", "-r", "-z", commit, "--", f"{folder}/", in_place=in_place)
        if listing.returncode != 0:
            raise ProjectGenError(f"{source}: git cannot list commit {commit[:12]}: {_last_line(listing)}")
        entries = [entry for entry in listing.stdout.split(b"\0") if entry]
        if entries:
            absent = _write_blobs(repository, entries, prefix=f"{folder}/", target=target, present=present)
            if absent:
                shown = ", ".join(absent[:3]) + (f" and {len(absent) - 3} more" if len(absent) > 3 else "")
                log(f"{source} lacks {len(absent)} file(s) of {dataset.name} (their contents are not in this "
                    f"mirror): {shown}")
            return
    raise ProjectGenError(f"{source} (commit {commit[:12]}) has no folder {dataset.folder} or {dataset.folder_name}")


def _write_blobs(repository: Path, entries: list[bytes], *, prefix: str, target: Path,
                 present: Collection[str] | None) -> list[str]:
    """Write each `git ls-tree -z` entry below `target` as a plain file (a symbolic link as its target's
    text, as git stores it: a link in the data must not point a sandbox at the machine's files); returns
    the paths whose blobs are not in `present` (not written)."""
    absent = []
    environment = {**os.environ, **(NO_LAZY_FETCH if present is not None else {})}
    with subprocess.Popen(["git", "-C", str(repository), "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, env=environment) as batch:
        assert batch.stdin is not None and batch.stdout is not None
        for entry in entries:
            meta, _, raw_path = entry.partition(b"\t")
            mode, kind, digest = meta.decode().split()
            if kind != "blob":
                continue  # a submodule's commit: not data
            relative = os.fsdecode(raw_path)[len(prefix):]
            if present is not None and digest not in present:
                absent.append(relative)
                continue
            path = target / relative
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
    return absent


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
