"""`projectgen datasets`: a benchmark fetched from a git repository or a folder the test builds (never the
network), pinned, checked against checksums, and then named like a folder."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.datasets import fetching, installing
from projectgen.datasets.catalog import PublishedDataset, published_dataset
from projectgen.datasets.fetching import fetch_dataset
from projectgen.datasets.integrity import blob_id, check_folder, manifest
from projectgen.errors import ProjectGenError

FILES = {"alpha/config.json": b'{"a": 1}\n', "alpha/src/mod.py": b"x = 1\n", "beta/data.txt": b"big data\n"}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True)
    return done.stdout.strip()


def repository(path: Path, folder: str, files: dict[str, bytes]) -> str:
    """A git repository holding `files` below `folder`, committed; returns the commit."""
    for relative, data in files.items():
        (path / folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (path / folder / relative).write_bytes(data)
    if not (path / ".git").exists():
        git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "data")
    return git(path, "rev-parse", "HEAD")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("PROJECTGEN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "datasets"


@pytest.fixture
def bench(monkeypatch) -> PublishedDataset:
    """A small benchmark whose manifest is FILES (the packaged manifests are of the real ones)."""
    monkeypatch.setattr(fetching, "manifest", lambda dataset: {path: blob_id(data) for path, data in FILES.items()})
    return PublishedDataset(name="bench", title="t", repository="unused://", commit="0" * 40, folder="data/Bench",
                            license="-")


def test_the_pinned_commit_is_fetched_though_the_mirror_has_moved_on(tmp_path: Path, cache: Path, bench) -> None:
    upstream = tmp_path / "upstream"
    pinned = repository(upstream, "data/Bench", FILES)
    repository(upstream, "data/Bench", {"alpha/src/mod.py": b"x = 2\n"})  # a later commit changes a file
    bench = PublishedDataset(**{**bench.__dict__, "commit": pinned})
    fetched = fetch_dataset(bench, source=str(upstream), cache=cache)
    assert fetched.pinned and fetched.commit == pinned and not fetched.check.missing
    assert (fetched.folder / "alpha/src/mod.py").read_bytes() == b"x = 1\n"
    assert fetched.folder == cache / "bench" / "Bench"
    assert json.loads((cache / "bench" / "fetched.json").read_text())["commit"] == pinned


def test_a_mirror_without_the_pinned_commit_gives_its_head_only_if_its_files_are_the_published(
        tmp_path: Path, cache: Path, bench) -> None:
    mirror = tmp_path / "mirror"
    head = repository(mirror, "data/Bench", FILES)
    fetched = fetch_dataset(bench, source=str(mirror), cache=cache)
    assert fetched.commit == head and not fetched.pinned
    repository(mirror, "data/Bench", {"alpha/src/mod.py": b"x = 'tampered'\n", "alpha/new.py": b""})
    with pytest.raises(ProjectGenError, match=r"not the published bench .*changed: alpha/src/mod.py.*"
                                              r"not in the published data: alpha/new.py"):
        fetch_dataset(bench, source=str(mirror), cache=cache)
    # the refused copy replaced nothing
    assert (fetched.folder / "alpha/src/mod.py").read_bytes() == b"x = 1\n"
    assert sorted(os.listdir(cache)) == [".bench.lock", ".bench.versions", "bench"]
    assert os.listdir(cache / ".bench.versions") == [(cache / "bench").resolve().name]


def test_a_folder_source_is_copied_and_what_it_lacks_makes_its_task_incomplete(tmp_path: Path, cache: Path,
                                                                                  bench) -> None:
    folder = tmp_path / "copy" / "Bench"
    for relative, data in FILES.items():
        if relative != "beta/data.txt":
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_bytes(data)
    (folder / "alpha" / "__pycache__").mkdir()
    (folder / "alpha" / "__pycache__" / "mod.pyc").write_bytes(b"\0")  # a test run's leftovers: not data
    fetched = fetch_dataset(bench, source=str(tmp_path / "copy"), cache=cache)
    assert fetched.commit is None and fetched.check.matching == 2
    assert dict(fetched.check.incomplete) == {"beta": ("data.txt",)}
    assert not (fetched.folder / "alpha" / "__pycache__").exists()


def test_a_link_in_the_data_is_installed_as_its_target_text_as_git_stores_it(tmp_path: Path, cache: Path,
                                                                           monkeypatch, bench) -> None:
    files = {**FILES, "alpha/python": b"/usr/bin/python3"}
    monkeypatch.setattr(fetching, "manifest", lambda dataset: {path: blob_id(data) for path, data in files.items()})
    upstream = tmp_path / "upstream"
    repository(upstream, "data/Bench", FILES)
    os.symlink("/usr/bin/python3", upstream / "data/Bench/alpha/python")
    repository(upstream, "data/Bench", {})
    for source in (upstream, upstream / "data"):  # from git, and from a folder
        installed = fetch_dataset(bench, source=str(source), cache=cache).folder / "alpha" / "python"
        assert not installed.is_symlink() and installed.read_bytes() == b"/usr/bin/python3"


BIG = b"large data file\n" * 200  # 3200 bytes: above the blob limit of the mirrors below


def big_bench(monkeypatch) -> dict[str, bytes]:
    """FILES with beta/data.txt too large for a blob-limited mirror (the manifest follows)."""
    files = {**FILES, "beta/data.txt": BIG}
    monkeypatch.setattr(fetching, "manifest", lambda dataset: {path: blob_id(data) for path, data in files.items()})
    return files


def present_objects(mirror: Path) -> set[str]:
    return set(git(mirror, "cat-file", "--batch-check=%(objectname)", "--batch-all-objects").split())


def test_a_blob_limited_mirror_is_read_in_place_and_its_absent_files_named_missing(tmp_path: Path, cache: Path,
                                                                                     monkeypatch, bench) -> None:
    files = big_bench(monkeypatch)
    upstream = tmp_path / "upstream"
    pinned = repository(upstream, "data/Bench", files)
    git(upstream, "config", "uploadpack.allowFilter", "true")
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", "--filter=blob:limit=1k", upstream.as_uri(), str(mirror))
    assert blob_id(BIG) not in present_objects(mirror)
    bench = PublishedDataset(**{**bench.__dict__, "commit": pinned})
    fetched = fetch_dataset(bench, source=str(mirror), cache=cache)
    assert fetched.pinned and fetched.check.matching == 2 and dict(fetched.check.incomplete) == {"beta": ("data.txt",)}
    assert (fetched.folder / "alpha/src/mod.py").read_bytes() == b"x = 1\n"
    assert not (fetched.folder / "beta/data.txt").exists()
    record = json.loads((cache / "bench" / "fetched.json").read_text())
    assert record["incomplete"] == {"beta": ["data.txt"]} and record["files"] == 2
    # the promisor remote (reachable here) was never asked for the absent blob
    assert blob_id(BIG) not in present_objects(mirror)


def test_a_less_complete_copy_never_replaces_the_installed_one_unless_forced(tmp_path: Path, cache: Path,
                                                                               bench) -> None:
    upstream = tmp_path / "upstream"
    repository(upstream, "data/Bench", FILES)
    complete = fetch_dataset(bench, source=str(upstream), cache=cache)
    assert complete.check.matching == 3
    smaller = tmp_path / "copy" / "Bench"
    for relative in ("alpha/config.json", "alpha/src/mod.py"):
        (smaller / relative).parent.mkdir(parents=True, exist_ok=True)
        (smaller / relative).write_bytes(FILES[relative])
    with pytest.raises(ProjectGenError, match=r"^bench: the installed copy has 3 of the 3 published files, .*copy "
                                              r"has 2; kept the installed copy \(--force replaces it"):
        fetch_dataset(bench, source=str(tmp_path / "copy"), cache=cache)
    assert (complete.folder / "beta/data.txt").read_bytes() == FILES["beta/data.txt"]
    assert json.loads((cache / "bench" / "fetched.json").read_text())["files"] == 3
    forced = fetch_dataset(bench, source=str(tmp_path / "copy"), cache=cache, force=True)
    assert not (forced.folder / "beta/data.txt").exists()
    assert json.loads((cache / "bench" / "fetched.json").read_text())["incomplete"] == {"beta": ["data.txt"]}
    # an equally complete copy replaces it without --force
    assert fetch_dataset(bench, source=str(tmp_path / "copy"), cache=cache).check.matching == 2


def test_fetches_at_once_leave_one_sound_copy_that_a_reader_never_finds_missing(tmp_path: Path, cache: Path,
                                                                                   bench) -> None:
    upstream = tmp_path / "upstream"
    repository(upstream, "data/Bench", FILES)
    fetch_dataset(bench, source=str(upstream), cache=cache)
    started_on = (cache / "bench").resolve()  # what a run resolved before the fetches
    done = threading.Event()
    misses: list[str] = []
    errors: list[str] = []

    def read() -> None:
        while not done.is_set():
            for path in (cache / "bench" / "fetched.json", cache / "bench" / "Bench" / "alpha" / "config.json"):
                if not path.is_file():
                    misses.append(str(path))

    def fetch(source: Path) -> None:
        for _ in range(6):
            try:
                fetch_dataset(bench, source=str(source), cache=cache)
            except (OSError, ProjectGenError) as error:  # a thread's exception would not fail the test
                errors.append(repr(error))

    reader = threading.Thread(target=read)
    reader.start()
    fetchers = [threading.Thread(target=fetch, args=(source,)) for source in (upstream, upstream / "data")]
    try:
        for thread in fetchers:
            thread.start()
        for thread in fetchers:
            thread.join()
    finally:
        done.set()
        reader.join()
    assert errors == [] and misses == []
    check = check_folder(cache / "bench" / "Bench", fetching.manifest(bench))
    assert check.sound and check.matching == 3 and not check.missing
    versions = cache / ".bench.versions"
    current = (cache / "bench").resolve()
    assert current.parent == versions and current != started_on
    # every other version is a replaced one, kept for the runs that started on it
    assert all((version / "Bench" / "alpha" / "config.json").is_file() and (version / ".replaced").is_file()
               for version in versions.iterdir() if version != current)
    assert (started_on / "Bench" / "beta" / "data.txt").read_bytes() == FILES["beta/data.txt"]


def test_replaced_versions_are_deleted_after_the_keeping_time(tmp_path: Path, cache: Path, bench) -> None:
    upstream = tmp_path / "upstream"
    repository(upstream, "data/Bench", FILES)
    first = fetch_dataset(bench, source=str(upstream), cache=cache).folder.resolve().parent
    second = fetch_dataset(bench, source=str(upstream), cache=cache).folder.resolve().parent
    assert (first / ".replaced").is_file() and not (second / ".replaced").exists()
    installing.prune_versions(cache / "bench")
    assert first.is_dir()  # replaced just now: kept
    later = time.time() + installing.KEEP_REPLACED.total_seconds() + 60
    installing.prune_versions(cache / "bench", now=later)
    assert not first.exists() and second.is_dir() and (cache / "bench" / "fetched.json").is_file()


def test_a_copy_installed_before_versions_is_swapped_for_the_new_one(tmp_path: Path, cache: Path, bench) -> None:
    upstream = tmp_path / "upstream"
    repository(upstream, "data/Bench", FILES)
    old = cache / "bench"  # the layout of earlier releases: a real folder with the record and the data
    (old / "Bench").mkdir(parents=True)
    (old / "fetched.json").write_text(json.dumps({"files": 0}))
    fetched = fetch_dataset(bench, source=str(upstream), cache=cache)
    assert (cache / "bench").is_symlink() and (fetched.folder / "beta/data.txt").is_file()
    kept = [version for version in (cache / ".bench.versions").iterdir() if version.name.startswith("unversioned-")]
    assert len(kept) == 1 and (kept[0] / "fetched.json").is_file() and (kept[0] / ".replaced").is_file()


def test_sources_that_cannot_be_used_are_one_line(tmp_path: Path, cache: Path, bench) -> None:
    with pytest.raises(ProjectGenError, match="no such folder or repository"):
        fetch_dataset(bench, source=str(tmp_path / "nowhere"), cache=cache)
    other = tmp_path / "other"
    repository(other, "elsewhere", {"x.txt": b"x"})
    with pytest.raises(ProjectGenError, match="has no folder data/Bench or Bench"):
        fetch_dataset(bench, source=str(other), cache=cache)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProjectGenError, match="holds none of bench's files"):
        fetch_dataset(bench, source=str(tmp_path / "empty"), cache=cache)


def test_names_are_one_line_when_unknown_or_not_fetched(cache: Path, capsys) -> None:
    assert main(["datasets", "fetch", "devbnch", "--from", "."]) == 2
    assert "did you mean devbench?" in capsys.readouterr().err
    assert main(["datasets", "verify", "devbench"]) == 2
    assert "devbench is not fetched yet: run `projectgen datasets fetch devbench`" in capsys.readouterr().err
    assert main(["run", "devbench/lice", "--model", "reference"]) == 2
    assert "not fetched yet" in capsys.readouterr().err
    assert main(["datasets", "list"]) == 0
    assert "not fetched" in capsys.readouterr().out


def test_the_packaged_manifests_name_every_task_the_paper_sizes() -> None:
    from projectgen.datasets.published import published_sizes

    for name in ("devbench", "codeprojecteval"):
        tasks = {path.split("/", 1)[0] for path in manifest(published_dataset(name))}
        assert set(published_sizes()[name]) <= tasks


@pytest.fixture(scope="module")
def devbench_mirror(shared_datasets: Path, tmp_path_factory) -> Path:
    """A git repository with the upstream layout (datasets/DevBench), made from the local copy of the data."""
    mirror = tmp_path_factory.mktemp("mirror")
    shutil.copytree(shared_datasets / "DevBench", mirror / "datasets" / "DevBench")
    git(mirror, "init", "-q")
    git(mirror, "add", "-A")
    git(mirror, "commit", "-qm", "mirror")
    return mirror


def test_devbench_fetched_from_a_mirror_scores_as_the_paper_by_name(devbench_mirror: Path, cache: Path,
                                                                     tmp_path: Path, env_cache: Path,
                                                                     monkeypatch, capsys) -> None:
    assert main(["datasets", "fetch", "devbench", "--from", str(devbench_mirror)]) == 0
    captured = capsys.readouterr()
    assert "checked against the published checksums" in captured.out
    assert "geotext: incomplete, the source lacks 1 file(s)" in captured.err  # the local copy lacks a data file
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    code = main(["experiment", "--dataset", "devbench", "--tasks", "lice,readtime", "--model", "reference",
                 "--method", "direct", "--cache-dir", str(env_cache)])
    out = capsys.readouterr().out
    assert code == 0
    assert "SUM of #Pass 33, AVG_weighted 17.68" in " ".join(out.split())
    assert (tmp_path / "runs" / "experiment-DevBench" / "results.json").is_file()
    # a changed file in the installed copy is found
    lice = cache / "devbench" / "DevBench" / "lice" / "lice" / "core.py"
    lice.write_text(lice.read_text() + "# edited\n")
    assert main(["datasets", "verify", "devbench"]) == 1
    assert "1 file(s) changed: lice/lice/core.py" in capsys.readouterr().err


GEOTEXT_DATA = "geotext/data_file/cities15000.txt"  # in task geotext: the large file the local copy lacks


def test_list_and_verify_name_the_incomplete_tasks_and_verify_fails_only_on_damage(devbench_mirror: Path,
                                                                                   cache: Path, tmp_path: Path,
                                                                                   monkeypatch, capsys) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hub"))  # this machine's models are not the test's
    assert main(["datasets", "fetch", "devbench", "--from", str(devbench_mirror)]) == 0
    capsys.readouterr()
    assert main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    listed = [line for line in out.splitlines() if line.startswith("devbench ")]
    assert len(listed) == 1 and f"10 tasks (1 incomplete: geotext lacks {GEOTEXT_DATA})" in listed[0]
    # the environment's gaps known without a run: TextCNN's model is in no Hugging Face cache here
    assert "  TextCNN: environment incomplete: model file not available offline: bert-base-uncased" in out
    # as fetched, the copy lacks what its source lacked: named, and no damage
    assert main(["datasets", "verify", "devbench"]) == 0
    captured = capsys.readouterr()
    assert (f"devbench: incomplete: geotext lacks {GEOTEXT_DATA} (not in the source it was fetched from)"
            in captured.err)
    assert "1 task(s) incomplete" in captured.err
    assert "TextCNN: environment incomplete: model file not available offline" in captured.out
    # a published file removed from the installed copy afterwards is damage
    (cache / "devbench" / "DevBench" / "lice" / "ChangeLog").unlink()
    assert main(["datasets", "verify", "devbench"]) == 1
    err = capsys.readouterr().err
    assert "devbench: incomplete: lice lacks ChangeLog (removed since the fetch)" in err
    assert "1 task(s) lost published files since the fetch (lice)" in err


def test_verify_passes_a_complete_copy_and_list_names_nothing_incomplete(devbench_mirror: Path, cache: Path,
                                                                         tmp_path: Path, monkeypatch, capsys) -> None:
    from projectgen.datasets import integrity

    # TextCNN's model and data set in the local Hugging Face cache: its environment is complete too
    from projectgen.datasets.assets import load_assets

    for repository in load_assets()["devbench/TextCNN"].models:
        snapshot = tmp_path / "hub" / repository.cache_folder / "snapshots" / "0123"
        for name in repository.files:
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            (snapshot / name).write_text("{}", encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))

    # published data as the local copy holds it (without the file it lacks): the copy is complete
    complete = {path: digest for path, digest in manifest(published_dataset("devbench")).items()
                if path != f"geotext/{GEOTEXT_DATA}"}
    monkeypatch.setattr(fetching, "manifest", lambda dataset: complete)
    monkeypatch.setattr(integrity, "manifest", lambda dataset: complete)
    assert main(["datasets", "fetch", "devbench", "--from", str(devbench_mirror)]) == 0
    capsys.readouterr()
    assert main(["datasets", "list"]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("devbench ")]
    assert " 10 tasks  " in listed[0] and "incomplete" not in listed[0]
    assert main(["datasets", "verify", "devbench"]) == 0
    captured = capsys.readouterr()
    assert f"devbench: {len(complete)} file(s) in " in captured.out and not captured.err


def test_the_local_copy_of_the_data_matches_the_manifests(shared_datasets: Path) -> None:
    for name in ("devbench", "codeprojecteval"):
        dataset = published_dataset(name)
        check = check_folder(shared_datasets / dataset.folder_name, manifest(dataset))
        assert check.sound, check.problems()
