"""The per-task asset declarations: a typed file, read strictly, whose packages join the task's environment."""
from __future__ import annotations

from pathlib import Path

import pytest

from projectgen.datasets.assets import ASSETS_FILE, load_assets, task_assets, with_asset_packages
from projectgen.datasets.catalog import find_published
from projectgen.datasets.loaders import load_task
from projectgen.datasets.task import EnvSpec, Task
from projectgen.errors import ProjectGenError

SHA = "3027ca1d39020bf52b28143d080b85096408ca4dc3b2952df040945461d0e15f"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "assets.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_entry_reads_into_typed_assets(tmp_path: Path) -> None:
    entries = load_assets(write(tmp_path, f"""
["devbench/t"]
packages = ["onnxruntime"]
data = [{{ path = "pkg/data/cities.txt", pypi = "geotext==0.4.0", member = "geotext/data/cities15000.txt", sha256 = "{SHA}" }}]
models = [{{ repo = "org/model", files = ["vocab.txt"] }}]
shortfalls = [{{ kind = "platform-only test", tests = 3, reason = "Windows-only" }}]
"""))
    assets = entries["devbench/t"]
    assert assets.packages == ("onnxruntime",)
    assert assets.data[0].path == "pkg/data/cities.txt" and assets.data[0].sha256 == SHA
    assert assets.models[0].cache_folder == "models--org--model"
    assert assets.unreachable == 3
    assert assets.shortfalls[0].line() == ("environment incomplete: platform-only test: 3 test(s) cannot pass here "
                                           "(Windows-only)")


@pytest.mark.parametrize("entry, why", [
    ('packges = ["x"]', "Extra inputs"),  # a misspelt key is not silently 'no assets'
    ('data = [{ path = "/etc/passwd", pypi = "a==1", member = "m", sha256 = "' + SHA + '" }]', "relative path"),
    ('data = [{ path = "d/../../x", pypi = "a==1", member = "m", sha256 = "' + SHA + '" }]', "relative path"),
    ('data = [{ path = "d", pypi = "geotext", member = "m", sha256 = "' + SHA + '" }]', "not pinned"),
    ('data = [{ path = "d", pypi = "a==1", member = "m", sha256 = "abc" }]', "pattern"),
    ('shortfalls = [{ kind = "flaky", tests = 1, reason = "r" }]', "Input should be"),
    ('shortfalls = [{ kind = "platform-only test", tests = 0, reason = "r" }]', "greater than or equal"),
    ('models = [{ repo = "m", files = [] }]', "at least 1"),
])
def test_a_malformed_entry_is_an_error_naming_it(tmp_path: Path, entry: str, why: str) -> None:
    with pytest.raises(ProjectGenError, match=rf"entry 'devbench/t' is not valid: .*{why}"):
        load_assets(write(tmp_path, f'["devbench/t"]\n{entry}\n'))


def test_declared_packages_join_the_environment_requirements(tmp_path: Path) -> None:
    entries = load_assets(write(tmp_path, '["codeprojecteval/t"]\npackages = ["cryptography"]\n'))
    task = Task.model_construct(id="t", format="codeprojecteval", env=EnvSpec(requirements=("pyjwt",)))
    assert with_asset_packages(task, entries).env.requirements == ("pyjwt", "cryptography")
    other = Task.model_construct(id="t", format="devbench", env=EnvSpec(requirements=("pyjwt",)))
    assert with_asset_packages(other, entries) is other
    assert task_assets(other, entries).packages == ()
    # the environment is another one: the cache builds it with the package
    assert with_asset_packages(task, entries).env.cache_key() != task.env.cache_key()


def test_the_packaged_declarations_load_and_name_published_tasks() -> None:
    entries = load_assets(ASSETS_FILE)
    assert entries, "the packaged file declares the published tasks' assets"
    for key in entries:
        fmt, _, task_id = key.partition("/")
        assert find_published(fmt) is not None and task_id


def test_a_published_task_loads_with_its_declared_packages(shared_datasets: Path) -> None:
    """CodeProjectEval xmnlp pins an onnxruntime with no wheel for this Python: the declared one is added."""
    task = load_task(shared_datasets / "CodeProjectEval" / "xmnlp")
    assert "onnxruntime" in task.env.requirements
    assert "onnxruntime==1.12.0" in task.env.requirements  # its own pin stays: the build records it unsatisfied
