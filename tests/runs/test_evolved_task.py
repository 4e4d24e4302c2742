"""The evolved task of a base task in a benchmark's config.json format, as a task.toml folder (no sandbox).

The full round trip of a task.toml base through an evolve run is in test_evolve.py; here the settings
only a benchmark format sets (the paper's settings profile, setup scripts from `setup_shell_script`,
constraints from compat.toml) and the refusal of clashing files.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.datasets.loaders import load_task
from projectgen.errors import ProjectGenError
from projectgen.protocols.evolve.task import write_evolved_task

DEVBENCH = {
    "PRD.md": "# lice PRD\n",
    "UML_class.md": "classDiagram\n",
    "requirements.txt": "requests\n",
    "lice/__init__.py": "",
    "lice/core.py": "import os\n",
    "templates/template-mit.txt": "MIT",
    "unit_tests/test_lice.py": "def test(): pass\n",
    "acceptance_tests/test_cli.py": "def test(): pass\n",
    "check_tests/test_lice.py": "def test(): pass\n",
    "setup_shell_script.sh": "pip install -r requirements.txt\n",
}
CONFIG = {"PRD": "PRD.md", "UML_class": "UML_class.md", "dependencies": "requirements.txt",
          "unit_tests": "unit_tests", "acceptance_tests": "acceptance_tests", "check_tests": "check_tests",
          "required_files": ["templates/*"], "setup_shell_script": "setup_shell_script.sh",
          "env_vars": {"LANG": "C.UTF-8"}, "code_file_DAG": {"lice/core.py": []}}


def devbench_task(folder: Path, files: dict[str, str] = DEVBENCH) -> Path:
    for rel, text in {**files, "config.json": json.dumps(CONFIG)}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def test_a_devbench_base_keeps_its_paper_settings_setup_script_and_constraints(tmp_path: Path):
    base = load_task(devbench_task(tmp_path / "lice"))
    assert base.format == "devbench" and base.settings_profile == {"profile": "paper", "code_iterations": 5}
    base = base.model_copy(update={"env": base.env.model_copy(update={"constraints": ("requests<3",)})})  # compat
    number, new, earlier = write_evolved_task(base, "Add a --year option.", None, tmp_path / "evolved")
    evolved = load_task(tmp_path / "evolved")
    assert (number, new, earlier) == (1, [], ["test_lice.py"])
    assert (evolved.format, evolved.id) == ("taskdir", "lice.change1")
    assert evolved.env == base.env and evolved.env.setup_script == "pip install -r requirements.txt\n"
    assert evolved.settings_profile == {"profile": "paper", "code_iterations": 5}  # the next evolve gets it too
    assert (evolved.package, evolved.required_files) == (base.package, base.required_files)
    assert evolved.docs.uml_class == "classDiagram\n" and evolved.docs.prd.endswith("Add a --year option.\n")
    assert {name: suite.paths for name, suite in evolved.suites.items()} == {
        "check": ("check_tests",), "unit": ("unit_tests",), "acceptance": ("acceptance_tests",)}
    assert base.reference and not evolved.reference and not (tmp_path / "evolved" / "lice").exists()


def test_base_files_that_would_land_on_one_path_are_refused(tmp_path: Path):
    # a fixture at the path the evolved task gives the setup script, holding something else
    files = {**DEVBENCH, "setup_script.sh": "echo another script\n"}
    base = load_task(devbench_task(tmp_path / "lice", files))
    assert "setup_script.sh" in base.required_files
    with pytest.raises(ProjectGenError, match=r"^setup_script\.sh: the evolved task would hold both the base task's "
                                              r"fixture \(required_files\) and its setup script"):
        write_evolved_task(base, "x", None, tmp_path / "evolved")
    assert not (tmp_path / "evolved").exists()
    same = {**DEVBENCH, "setup_script.sh": DEVBENCH["setup_shell_script.sh"]}  # the same bytes: one file
    base = load_task(devbench_task(tmp_path / "lice2", same))
    write_evolved_task(base, "x", None, tmp_path / "evolved2")
    assert load_task(tmp_path / "evolved2").env.setup_script == same["setup_script.sh"]
