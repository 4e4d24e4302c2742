"""An NL2Repo-Bench task gets the packages its start.md lists as its image's (texts written here in the
benchmark's two spellings: `pip list` columns and requirement lines)."""
from __future__ import annotations

import json
from pathlib import Path

from projectgen.datasets.assets import TaskAssets
from projectgen.datasets.loaders import load_task
from projectgen.datasets.nl2repo_environment import listed_environment
from projectgen.datasets.task import EnvSpec
from projectgen.evaluation.assets import PreparedAssets, environment_notes
from projectgen.evaluation.environments import EnvironmentCache
from test_support import make_task

PIP_LIST = """## Introduction
Please create a Python project named Tabkit to implement tables.

```python
import numpy  # an example, not the environment
```

## Environment Configuration

### Python Version

The Python version used in the current project is: Python 3.10.11

### Core Dependency Library Versions

```Plain
iniconfig          2.1.0
numpy              1.21.0
Pygments           2.19.2
pytest             8.4.1
tabkit             0.3.0
Typing_Extensions  4.14.1
setuptools         65.5.1
```

## Tabkit Project Architecture

```Plain
pandas   2.0.0
```
"""

REQUIREMENT_LINES = """## Environment Configuration、

### Core Dependency Library Versions

```python
python-tabkit>=25.0.0          # The main library
# Testing frameworks
pytest==8.4.0                  # Unit testing framework
coverage[toml]>=6.5            # Test coverage
coverage[yaml]>=6.5            # the same package again, for another extra
tomli; python_version < '3.11'
- requests
pre - commit == 4.1. *
Linux (Ubuntu 18.04+)
python >= 3.7
```
"""


def test_pip_list_rows_become_pins_without_the_own_project_or_provided_tools() -> None:
    listed = listed_environment("tabkit", PIP_LIST)
    assert listed.requirements == ("iniconfig==2.1.0", "numpy==1.21.0", "Pygments==2.19.2",
                                   "Typing_Extensions==4.14.1")
    assert listed.left_out == ("'pytest             8.4.1': provided by projectgen's test environment",
                               "'tabkit             0.3.0': the task's own project",
                               "'setuptools         65.5.1': provided by projectgen's test environment")


def test_requirement_lines_keep_bounds_extras_and_markers_and_name_what_they_skip() -> None:
    listed = listed_environment("tabkit", REQUIREMENT_LINES)
    # python-tabkit is the project itself, under the name PyPI knows it by
    assert listed.requirements == ("coverage[toml,yaml]>=6.5", "tomli; python_version < '3.11'", "requests",
                                   "pre-commit==4.1.*")
    assert listed.left_out == ("'python-tabkit>=25.0.0': the task's own project",
                               "'pytest==8.4.0': provided by projectgen's test environment",
                               "'coverage[yaml]>=6.5': listed twice, its extras added: coverage[toml,yaml]>=6.5",
                               "'Linux (Ubuntu 18.04+)': not a requirement",
                               "'python >= 3.7': the interpreter, not a package")


def test_a_document_without_an_environment_section_lists_nothing() -> None:
    listed = listed_environment("tabkit", "## Introduction\n```\nnumpy 1.0\n```\n")
    assert (listed.requirements, listed.left_out) == ((), ())


def test_a_loaded_task_carries_its_listed_environment(tmp_path: Path) -> None:
    folder = tmp_path / "tabkit"
    folder.mkdir()
    (folder / "start.md").write_text(PIP_LIST, encoding="utf-8")
    (folder / "test_case_count.txt").write_text("4\n", encoding="utf-8")
    (folder / "test_commands.json").write_text(json.dumps(["pip install -e .", "pytest tests"]), encoding="utf-8")
    (folder / "test_files.json").write_text(json.dumps(["tests"]), encoding="utf-8")
    task = load_task(folder)
    assert task.env.requirements == ("iniconfig==2.1.0", "numpy==1.21.0", "Pygments==2.19.2",
                                     "Typing_Extensions==4.14.1")
    assert (task.env.install, task.env.nearest_pins) == ("editable", True)
    assert "'tabkit             0.3.0': the task's own project" in task.env.listed_left_out


class FakeRegistry(EnvironmentCache):
    """An environment cache whose installer knows `numpy` 1.23.0 and 1.26.4 as wheels for this Python and
    `oldpkg` 2.0 as a source distribution only, instead of asking a registry: what the pin relaxation asks
    for, and what it records."""

    WHEELS = {"numpy>1.21.0": "1.23.0", "numpy<1.27.9": "1.26.4"}

    def __init__(self, root: Path) -> None:
        super().__init__(root, use_uv=True)
        self.uv = "uv"
        self.asked: list[list[str]] = []
        self.installed: str | None = None

    def _install(self, python: Path, requirements: list[str], log_file: Path, constraints: Path | None) -> bool:
        self.asked.append(list(requirements))
        wanted, wheels_only = requirements[-1], "--only-binary" in requirements
        self.installed = self.WHEELS.get(wanted) or ("2.0" if wanted == "oldpkg>1.0" and not wheels_only else None)
        return self.installed is not None

    def _installed_version(self, python: Path, name: str) -> str | None:
        return self.installed


def test_a_pin_that_does_not_install_here_is_relaxed_to_the_nearest_version_that_does(tmp_path: Path) -> None:
    registry = FakeRegistry(tmp_path)
    log = tmp_path / "build.log"
    # of the versions with a wheel here, the lowest above the pin first, re-resolved even when one is installed
    assert registry._nearest_pin(Path("python"), "numpy==1.21.0", log, None) == "numpy==1.23.0"
    assert registry.asked == [["--reinstall-package", "numpy", "--resolution", "lowest-direct",
                               "--only-binary", "numpy", "numpy>1.21.0"]]
    # else the highest below it
    assert registry._nearest_pin(Path("python"), "numpy==1.27.9", log, None) == "numpy==1.26.4"
    # a package without wheels: the lowest version above the pin, built
    assert registry._nearest_pin(Path("python"), "oldpkg==1.0", log, None) == "oldpkg==2.0"
    assert registry._nearest_pin(Path("python"), "nosuchpkg==1.0", log, None) is None


def test_a_listed_package_not_to_be_had_makes_the_task_environment_incomplete(tmp_path: Path) -> None:
    task = make_task(tmp_path / "task", {"test_ok.py": "def test_ok(): pass\n"})
    listed = task.model_copy(update={"env": EnvSpec(requirements=("numpy==1.21.0", "gmpy2==2.2.1"),
                                                    nearest_pins=True)})
    assert environment_notes(listed, TaskAssets(), PreparedAssets(), unsatisfied=["gmpy2==2.2.1"]) == [
        "environment incomplete: package not installed: gmpy2==2.2.1 (listed in the benchmark's environment; it "
        "installs here in no version: not on PyPI (CUDA), or no release for this Python; the environment build's "
        "log says which)"]
    # a task whose requirements are not a benchmark's listed environment keeps the old rule: recorded, not named
    plain = task.model_copy(update={"env": EnvSpec(requirements=("gmpy2==2.2.1",))})
    assert environment_notes(plain, TaskAssets(), PreparedAssets(), unsatisfied=["gmpy2==2.2.1"]) == []
