"""Task loaders: synthetic tasks for every format and error, plus the real benchmark data."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from projectgen.datasets.loaders import load_dataset, load_dataset_report, load_task, parse_requirements
from projectgen.errors import ProjectGenError, TaskFormatError

# --------------------------------------------------------------------------- builders


def write(root: Path, files: dict[str, str]) -> Path:
    """Create files (parents included) below root and return root."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def toml_task(root: Path, toml: str, files: dict[str, str] | None = None) -> Path:
    """A task.toml task with a PRD at docs/PRD.md unless `files` says otherwise."""
    base = {"docs/PRD.md": "# PRD\n"}
    return write(root, {**base, **(files or {}), "task.toml": textwrap.dedent(toml)})


CPE_FILES = {
    "docs/PRD.md": "# tinydb PRD\n",
    "docs/UML.md": "classDiagram A\n",
    "docs/UML_pyreverse.md": "classDiagram B\n",
    "docs/architecture_design.md": "layers\n",
    "mypkg/__init__.py": "from .core import f\n",
    "mypkg/core.py": "def f():\n    return 1\n",
    "mypkg/sub/__init__.py": "",
    "mypkg/py.typed": "",
    "mypkg/__pycache__/core.cpython-311.pyc": "junk",
    "mypkg/stale.pyc": "junk",
    "check_tests/test_a.py": "def test_a(): pass\n",
    "unit_tests/test_b.py": "def test_b(): pass\n",
    "requirements.txt": textwrap.dedent(
        """\
        # Core dependencies
        rwlock
        cachetools>=5  # trailing comment
        setuptools; python_version >= '3.12'
        pywin32>=226; platform_system == "Windows"
        -e .
        -r other.txt
        --index-url https://example.invalid/simple
        mypkg[tests]
        MyPkg
        pkg @ git+https://example.invalid/pkg.git#egg=pkg

        rwlock
        """
    ),
    "setup_shell_script.sh": "pip install -r requirements.txt\n",
    "templates/a.txt": "A",
    "templates/b.txt": "B",
}


def cpe_config(**overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "PRD": "docs/PRD.md",
        "UML": ["docs/UML.md", "docs/UML_missing.md", "docs/UML_pyreverse.md"],
        "dependencies": "requirements.txt",
        "architecture_design": "docs/architecture_design.md",
        "language": "python",
        "source_code": "mypkg",
        "unit_tests": "unit_tests",
        "check_tests": "check_tests",
        "required_files": ["requirements.txt", "templates/*", "data/missing.bin"],
        "setup_shell_script": "setup_shell_script.sh",
        "env_vars": {"MODEL": "./models", "LEVEL": 3},
        "unit_test_script": "pytest unit_test",  # wrong folder, as in voluptuous: ignored
        "check_test_script": "pytest check_tests",
    }
    config.update(overrides)
    return {k: v for k, v in config.items() if v is not None}


def cpe_task(root: Path, **overrides: Any) -> Path:
    write(root, CPE_FILES)
    (root / "config.json").write_text(json.dumps(cpe_config(**overrides)), encoding="utf-8")
    return root


DEVBENCH_FILES = {
    "PRD.md": "# lice PRD\n",
    "UML_class.md": "classDiagram\n",
    "UML_sequence.md": "sequenceDiagram\n",
    "architecture_design.md": "arch\n",
    "requirements.txt": "",
    "lice/__init__.py": "",
    "lice/core.py": "import os\n",
    "lice/helpers/__init__.py": "",
    "lice/helpers/util.py": "X = 1\n",
    "lice/data.csv": "a,b\n",
    "lice/tests/fixture.json": "{}",
    "lice/tests/test_inner.py": "def test(): pass\n",
    "templates/template-mit.txt": "MIT",
    "templates/template-bsd.txt": "BSD",
    "unit_tests/test_lice.py": "def test(): pass\n",
    "check_tests/test_lice.py": "def test(): pass\n",
    "setup_shell_script.sh": "pip install -r requirements.txt\n",
}


def devbench_config(**overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "PRD": "PRD.md",
        "UML_class": "UML_class.md",
        "UML_sequence": "UML_sequence.md",
        "dependencies": "requirements.txt",
        "architecture_design": "architecture_design.md",
        "language": "python",
        "unit_tests": "unit_tests",
        "acceptance_tests": "acceptance_tests",  # folder absent: no acceptance suite
        "check_tests": "check_tests",
        "required_files": ["requirements.txt", "templates/*"],
        "setup_shell_script": "setup_shell_script.sh",
        "code_file_DAG": {"lice/core.py": []},
    }
    config.update(overrides)
    return {k: v for k, v in config.items() if v is not None}


def devbench_task(root: Path, files: dict[str, str] | None = None, **overrides: Any) -> Path:
    write(root, DEVBENCH_FILES if files is None else files)
    (root / "config.json").write_text(json.dumps(devbench_config(**overrides)), encoding="utf-8")
    return root


def expect_error(root: Path, config_name: str, *fragments: str) -> TaskFormatError:
    """load_task fails with one line naming the config file and containing every fragment."""
    with pytest.raises(TaskFormatError) as info:
        load_task(root)
    message = str(info.value)
    assert message.startswith(f"{(root / config_name).resolve()}: "), message
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    return info.value


# --------------------------------------------------------------------------- task.toml

FULL_TOML = """\
id = "textstats"
package = "textstats"
reference = ["textstats", "cli.py"]
required_files = ["data/*.txt", "fixtures", "absent/*"]

[docs]
prd = "docs/PRD.md"
uml_class = "docs/UML_class.md"
uml_sequence = "docs/UML_sequence.md"
architecture_design = "docs/architecture_design.md"

[tests]
check = "check_tests"
unit = "unit_tests"
acceptance = "acceptance_tests"

[env]
requirements = "requirements.txt"
python = "3.11"
env_vars = { LANG = "C.UTF-8" }
pytest_plugins = ["mock"]
setup_script = "setup.sh"
"""

FULL_TOML_FILES = {
    "docs/UML_class.md": "classes\n",
    "docs/UML_sequence.md": "sequence\n",
    "docs/architecture_design.md": "arch\n",
    "textstats/__init__.py": "",
    "textstats/count.py": "def words(s):\n    return len(s.split())\n",
    "textstats/__pycache__/count.cpython-311.pyc": "junk",
    "cli.py": "import textstats\n",
    "data/a.txt": "a",
    "data/b.txt": "b",
    "data/c.csv": "c",
    "fixtures/deep/x.json": "{}",
    "check_tests/test_c.py": "",
    "unit_tests/test_u.py": "",
    "acceptance_tests/test_a.py": "",
    "requirements.txt": "pytest-mock\ntextstats==1.0\n",
    "setup.sh": "pip install -r requirements.txt\n",
}


def test_taskdir_full(tmp_path: Path) -> None:
    root = toml_task(tmp_path / "folder-name", FULL_TOML, FULL_TOML_FILES)
    task = load_task(root)
    assert task.id == "textstats"
    assert task.format == "taskdir"
    assert task.root == root.resolve()
    assert task.package == "textstats"
    assert task.docs.prd == "# PRD\n"
    assert task.docs.uml_class == "classes\n"
    assert task.docs.uml_sequence == "sequence\n"
    assert task.docs.architecture_design == "arch\n"
    assert {k: s.paths for k, s in task.suites.items()} == {
        "check": ("check_tests",),
        "unit": ("unit_tests",),
        "acceptance": ("acceptance_tests",),
    }
    assert task.reference == ("cli.py", "textstats/__init__.py", "textstats/count.py")
    assert task.required_files == ("data/a.txt", "data/b.txt", "fixtures/deep/x.json")
    assert task.env.requirements == ("pytest-mock",)  # the task's own package is dropped
    assert task.env.python == "3.11"
    assert task.env.env_vars == {"LANG": "C.UTF-8"}
    assert task.env.pytest_plugins == ("mock",)
    assert task.env.setup_script == "pip install -r requirements.txt\n"


def test_taskdir_minimal_defaults(tmp_path: Path) -> None:
    root = toml_task(tmp_path / "tiny", '[docs]\nprd = "docs/PRD.md"\n')
    task = load_task(root)
    assert task.id == "tiny"
    assert task.package is None
    assert task.suites == {}
    assert task.reference == ()
    assert task.env.requirements == ()
    assert task.env.python is None
    assert task.env.pytest_plugins is None
    assert task.docs.uml_class is None


def test_taskdir_workspace_and_install_keys(tmp_path: Path) -> None:
    toml = """\
        timeout = 90
        empty_dirs = ["data/out", "logs", "data/out"]
        [docs]
        prd = "docs/PRD.md"
        [env]
        python = "3.12.1"
        source_root = "src"
        install = "script"
        setup_script = "setup.sh"
        env_vars = { HOME_OF_CODE = "{repo}/src" }
    """
    task = load_task(toml_task(tmp_path / "t", toml, {"docs/PRD.md": "p", "setup.sh": "pip install -e .\n"}))
    assert task.timeout == 90.0
    assert task.empty_dirs == ("data/out", "logs")  # need not exist in the task folder; duplicates dropped
    assert (task.env.python, task.env.source_root, task.env.install) == ("3.12.1", "src", "script")
    assert task.env.env_vars == {"HOME_OF_CODE": "{repo}/src"}  # expanded per workspace by the runner
    assert load_task(toml_task(tmp_path / "u", '[docs]\nprd = "docs/PRD.md"\n')).timeout is None


def test_taskdir_constraints_and_settings_profile(tmp_path: Path) -> None:
    """What the benchmark formats get from compat.toml and their paper (version bounds, pipeline settings),
    a task.toml states itself; an evolved task carries its base's this way."""
    toml = """\
        [docs]
        prd = "docs/PRD.md"
        [env]
        constraints = ["pyjwt<2.10", "setuptools<81"]
        [settings_profile]
        code_iterations = 10
        threshold = 7.5
    """
    task = load_task(toml_task(tmp_path / "t", toml))
    assert task.env.constraints == ("pyjwt<2.10", "setuptools<81")
    assert task.settings_profile == {"code_iterations": 10, "threshold": 7.5}
    from_file = '[docs]\nprd = "docs/PRD.md"\n[env]\nconstraints = "constraints.txt"\n'
    task = load_task(toml_task(tmp_path / "u", from_file, {"constraints.txt": "# bounds\npyjwt<2.10\n\n"}))
    assert task.env.constraints == ("pyjwt<2.10",) and task.settings_profile == {}
    assert task.env.cache_key() != task.env.model_copy(update={"constraints": ()}).cache_key()


def test_cache_key_changes_only_with_what_is_installed() -> None:
    from projectgen.datasets.task import EnvSpec

    plain = EnvSpec(requirements=("requests",))
    # the key of a spec without the new fields is the one earlier versions computed: cached envs stay valid
    assert plain.cache_key() == _old_cache_key(plain)
    assert plain.model_copy(update={"source_root": "src", "env_vars": {"A": "{repo}"}}).cache_key() == plain.cache_key()
    editable = plain.model_copy(update={"install": "editable"})
    assert editable.cache_key() != plain.cache_key()
    assert editable.cache_key() == plain.model_copy(update={"install": "script"}).cache_key()


def _old_cache_key(spec) -> str:
    import hashlib

    payload = json.dumps({"requirements": list(spec.requirements), "constraints": list(spec.constraints),
                          "python": spec.python}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def test_taskdir_inline_requirements_and_file_argument(tmp_path: Path) -> None:
    root = toml_task(
        tmp_path / "t",
        '[docs]\nprd = "docs/PRD.md"\n[env]\nrequirements = ["requests>=2", "# note", "t", "-e ."]\n',
    )
    task = load_task(root / "task.toml")  # the config file itself is accepted too
    assert task.env.requirements == ("requests>=2",)


def test_taskdir_declares_expected_tests(tmp_path: Path) -> None:
    toml = '[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "ut"\n[expected_tests]\nunit = ["ut/test_a.py::test_x"]\n'
    root = toml_task(tmp_path / "t", toml, {"docs/PRD.md": "p", "ut/test_a.py": "def test_x(): pass\n"})
    assert load_task(root).expected_tests == {"unit": ("ut/test_a.py::test_x",)}
    bad = toml_task(tmp_path / "u", toml.replace("[expected_tests]\nunit", "[expected_tests]\ncheck"),
                    {"docs/PRD.md": "p", "ut/test_a.py": ""})
    expect_error(bad, "task.toml", "[expected_tests]", "'check' is not a suite of this task")


def test_taskdir_suites_are_named_lists_of_folders_files_and_globs(tmp_path: Path) -> None:
    toml = ('[docs]\nprd = "docs/PRD.md"\n[tests]\ncheck = "t/unit/test_a.py"\n'
            'unit = ["t/unit", "t/unit/test_a.py", "t/test_b.py", "t/**/test_api_*.py", "t/unit"]\n'
            'performance = "t/perf"\nsecurity-2 = ["t/**/test_api_*.py"]\n')
    root = toml_task(tmp_path / "t", toml, {"docs/PRD.md": "p", "t/unit/test_a.py": "", "t/test_b.py": "",
                                             "t/api/test_api_x.py": "", "t/test_api_y.py": "", "t/perf/test_p.py": "",
                                             "t/api/__pycache__/test_api_z.py": ""})
    task = load_task(root)
    assert {name: suite.paths for name, suite in task.suites.items()} == {
        "check": ("t/unit/test_a.py",),
        # in order, each once, a path inside another left out, caches never matched
        "unit": ("t/unit", "t/test_b.py", "t/api/test_api_x.py", "t/test_api_y.py"),
        "performance": ("t/perf",),
        "security-2": ("t/api/test_api_x.py", "t/test_api_y.py"),
    }
    assert all(name == suite.name for name, suite in task.suites.items())
    assert (task.suite_folder("unit"), task.suite_folder("check"), task.suite_folder("security-2")) == ("t", "t/unit", "t")


def test_taskdir_reference_root_and_starter_files(tmp_path: Path) -> None:
    files = {"docs/PRD.md": "p", "solution/pkg/pkg.py": "X = 1\n", "solution/pkg/data.csv": "a\n",
             "solution/extra.py": "", "pkg/pkg.py": "X = None\n", "pkg/pkg_test.py": "", "stubs/b.py": "B\n"}
    root = toml_task(tmp_path / "t", 'reference_root = "solution"\nreference = ["pkg"]\nstarter = ["pkg/pkg.py", "stubs"]\n'
                                     '[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "pkg"\n', files)
    task = load_task(root)
    assert task.reference == ("pkg/data.csv", "pkg/pkg.py") and task.reference_root == "solution"
    assert task.reference_files()["pkg/pkg.py"] == root.resolve() / "solution" / "pkg" / "pkg.py"
    assert task.reference_repository() == {"pkg/data.csv": "a\n", "pkg/pkg.py": "X = 1\n"}
    assert task.docs.starter == {"pkg/pkg.py": "X = None\n", "stubs/b.py": "B\n"}
    assert task.suite_files("unit") == ("pkg/pkg_test.py",)  # the starter stub beside the test is no test file
    whole = toml_task(tmp_path / "w", 'reference_root = "solution"\n[docs]\nprd = "docs/PRD.md"\n', files)
    assert load_task(whole).reference == ("extra.py", "pkg/data.csv", "pkg/pkg.py")  # the whole folder


def test_reference_target_maps_the_reference_onto_a_subfolder_of_the_repository(tmp_path: Path) -> None:
    """A benchmark that keeps its reference at the root (or in `reference_root`) for a src-layout repository."""
    files = {"docs/PRD.md": "p", "pkg/pkg.py": "X = 1\n", "solution/pkg/pkg.py": "X = 2\n"}
    at_root = load_task(toml_task(tmp_path / "r", 'reference = ["pkg"]\nreference_target = "src"\n'
                                                  '[docs]\nprd = "docs/PRD.md"\n', files))
    assert at_root.reference_files() == {"src/pkg/pkg.py": at_root.root / "pkg" / "pkg.py"}
    assert at_root.reference_repository() == {"src/pkg/pkg.py": "X = 1\n"} and at_root.size().loc == 1
    moved = load_task(toml_task(tmp_path / "m", 'reference_root = "solution"\nreference_target = "lib/src"\n'
                                                '[docs]\nprd = "docs/PRD.md"\n', files))
    assert moved.reference_repository() == {"lib/src/pkg/pkg.py": "X = 2\n"}
    same = load_task(toml_task(tmp_path / "s", 'reference = ["pkg"]\nreference_target = "."\n'
                                               '[docs]\nprd = "docs/PRD.md"\n', files))
    assert same.reference_files() == {"pkg/pkg.py": same.root / "pkg" / "pkg.py"}
    expect_error(toml_task(tmp_path / "e", 'reference = ["pkg"]\nreference_target = "../up"\n'
                                           '[docs]\nprd = "docs/PRD.md"\n', files), "task.toml", "reference_target", "escapes")


@pytest.mark.parametrize(
    ("toml", "files", "fragments"),
    [
        ('reference_root = "nope"\n', {}, ["reference_root: folder 'nope' not found"]),
        ('reference_root = "docs/PRD.md"\n', {}, ["reference_root: 'docs/PRD.md' is a file, expected a folder"]),
        ('reference_root = "s"\nreference = ["nope.py"]\n', {"s/a.py": ""}, ["reference[0]: 's/nope.py' not found"]),
        ('reference_root = "s"\nreference = ["../x.py"]\n', {"s/a.py": "", "x.py": ""}, ["reference[0]", "escapes"]),
        ('starter = ["nope.py"]\n', {}, ["starter[0]: 'nope.py' not found"]),
        ('starter = ["a.py"]\nreference = ["a.py"]\n', {"a.py": ""}, ["starter: 'a.py' is also a reference file"]),
        ('starter = ["t/test_a.py"]\n', {"t/test_a.py": ""}, ["starter: 't/test_a.py' is also a test file of the unit"]),
        ('reference = ["t"]\n', {"t/test_a.py": ""}, ["[tests].unit: 't/test_a.py' is a reference file"]),
    ],
)
def test_taskdir_reference_root_and_starter_errors(tmp_path: Path, toml: str, files: dict, fragments: list[str]) -> None:
    extra = '[tests]\nunit = ["t/test_a.py"]\n' if "t/test_a.py" in files else ""
    root = toml_task(tmp_path / "t", toml + '[docs]\nprd = "docs/PRD.md"\n' + extra, {"docs/PRD.md": "p", **files})
    expect_error(root, "task.toml", *fragments)


def test_a_starter_file_must_be_utf8(tmp_path: Path) -> None:
    root = toml_task(tmp_path / "t", 'starter = ["a.py"]\n[docs]\nprd = "docs/PRD.md"\n', {"docs/PRD.md": "p"})
    (root / "a.py").write_bytes("caf\u00e9 = 1\n".encode("latin-1"))
    expect_error(root, "task.toml", "starter: 'a.py' is not valid UTF-8")


def test_a_test_suite_value_checks_its_name_and_paths() -> None:
    from pydantic import ValidationError

    from projectgen.datasets.task import Documents, Task, TestSuite

    assert TestSuite(name="unit", paths="unit_tests").paths == ("unit_tests",)
    for bad in ({"name": "Unit", "paths": ("t",)}, {"name": "unit", "paths": ()}):
        with pytest.raises(ValidationError):
            TestSuite(**bad)
    with pytest.raises(ValidationError, match="filed under the name 'check'"):
        Task(id="t", root=Path("."), format="taskdir", docs=Documents(prd="p"),
             suites={"check": TestSuite(name="unit", paths=("t",))})


def test_task_toml_wins_over_config_json(tmp_path: Path) -> None:
    root = cpe_task(tmp_path / "both")
    write(root, {"task.toml": '[docs]\nprd = "docs/PRD.md"\n'})
    assert load_task(root).format == "taskdir"


@pytest.mark.parametrize(
    ("toml", "fragments"),
    [
        ('prd = "docs/PRD.md"\n', ["unknown key 'prd'"]),
        ('[docs]\nprd = "docs/PRD.md"\n[documents]\n', ["unknown key 'documents'", "did you mean 'docs'"]),
        ('[docs]\nprd = "docs/PRD.md"\numl_clas = "x.md"\n', ["[docs]: unknown key 'uml_clas'", "'uml_class'"]),
        ('[docs]\nprd = "docs/PRD.md"\n[tests]\nunits = "unit_tests"\n',
         ["[tests]: suite 'units' looks like a misspelt 'unit'", "did you mean 'unit'"]),
        ('[docs]\nprd = "docs/PRD.md"\n[tests]\nUnit = "unit_tests"\n',
         ["[tests]: 'Unit' is not a valid suite name", "did you mean 'unit'"]),
        ('[docs]\nprd = "docs/PRD.md"\n[tests]\n"per f" = "unit_tests"\n', ["[tests]: 'per f' is not a valid suite name"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\npythn = "3.11"\n', ["[env]: unknown key 'pythn'"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nzzz = 1\n', ["[env]: unknown key 'zzz'", "allowed: constraints, env_vars"]),
    ],
)
def test_taskdir_unknown_keys(tmp_path: Path, toml: str, fragments: list[str]) -> None:
    expect_error(toml_task(tmp_path / "t", toml), "task.toml", *fragments)


def test_taskdir_invalid_toml_reports_position(tmp_path: Path) -> None:
    root = toml_task(tmp_path / "t", '[docs]\nprd = "docs/PRD.md"\nbroken = [1,,]\nmore = 2\n')
    expect_error(root, "task.toml", "invalid TOML", "line 3")


@pytest.mark.parametrize(
    ("toml", "fragments"),
    [
        ("[docs]\n", ["[docs].prd: missing", "PRD"]),
        ("", ["[docs].prd: missing"]),
        ('[docs]\nprd = "docs/NOPE.md"\n', ["[docs].prd: file 'docs/NOPE.md' not found"]),
        ('[docs]\nprd = "docs"\n', ["[docs].prd: 'docs' is a folder, expected a file"]),
        ('[docs]\nprd = "docs/PRD.md"\numl_class = "nope.md"\n', ["[docs].uml_class: file 'nope.md' not found"]),
        ('[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "nope"\n', ["[tests].unit: 'nope' not found"]),
        ('[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = ["docs", "nope.py"]\n', ["[tests].unit[1]: 'nope.py' not found"]),
        ('[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = ["docs/*_test.py"]\n',
         ["[tests].unit[0]: 'docs/*_test.py' matches no files or folders"]),
        ('[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = []\n', ["[tests].unit: empty"]),
        ('[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = 3\n', ["[tests].unit", "list of strings"]),
        ('reference = ["nope"]\n[docs]\nprd = "docs/PRD.md"\n', ["reference[0]: 'nope' not found"]),
        ('reference = ["*.nope"]\n[docs]\nprd = "docs/PRD.md"\n', ["reference[0]", "matches no files"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nrequirements = "nope.txt"\n', ["[env].requirements: file"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nsetup_script = "nope.sh"\n', ["[env].setup_script: file"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\npython = 3.11\n', ["[env].python", "'3.11'", "a number"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nenv_vars = ["A=1"]\n', ["[env].env_vars", "mapping", "a list"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nenv_vars = {A = [1]}\n', ["[env].env_vars.A", "expected a string"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\npytest_plugins = 3\n', ["[env].pytest_plugins", "list of strings"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nrequirements = 3\n', ["[env].requirements", "list of strings"]),
        ('docs = "docs/PRD.md"\n', ["[docs]: expected a table, got a string"]),
        ('[docs]\nprd = 1\n', ["[docs].prd", "expected a path"]),
        ('id = "bad id!"\n[docs]\nprd = "docs/PRD.md"\n', ["id: 'bad id!' is not a valid task id"]),
        ('package = 1\n[docs]\nprd = "docs/PRD.md"\n', ["package: expected a non-empty string"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\npython = "3,11"\n', ["[env].python", "such as '3.11'", "'3,11'"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\npython = "latest"\n', ["[env].python", "'latest'"]),
        ('timeout = 0\n[docs]\nprd = "docs/PRD.md"\n', ["timeout: expected a positive number of seconds"]),
        ('timeout = "60"\n[docs]\nprd = "docs/PRD.md"\n', ["timeout: expected a positive number", "a string"]),
        ('timeout = true\n[docs]\nprd = "docs/PRD.md"\n', ["timeout: expected a positive number", "a boolean"]),
        ('empty_dirs = [3]\n[docs]\nprd = "docs/PRD.md"\n', ["empty_dirs[0]: expected a string"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\ninstall = "pip"\n',
         ["[env].install: expected one of 'editable', 'package', 'script', got 'pip'"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\ninstall = "script"\n',
         ["[env].install: 'script' runs the setup script, but [env].setup_script is not set"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nsource_root = 1\n', ["[env].source_root: expected a path string"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nnearest_pins = "yes"\n',
         ["[env].nearest_pins: expected true or false, got a string"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nlisted_left_out = 3\n', ["[env].listed_left_out", "list of strings"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nconstraints = "nope.txt"\n', ["[env].constraints: file"]),
        ('[docs]\nprd = "docs/PRD.md"\n[env]\nconstraints = 3\n', ["[env].constraints", "list of strings"]),
        ('settings_profile = 5\n[docs]\nprd = "docs/PRD.md"\n', ["[settings_profile]: expected a table"]),
        ('[docs]\nprd = "docs/PRD.md"\n[settings_profile]\ncode_iteration = 5\n',
         ["[settings_profile]: unknown key 'code_iteration'; did you mean 'code_iterations'?"]),
        ('[docs]\nprd = "docs/PRD.md"\n[settings_profile]\ncode_iterations = 0\n',
         ["[settings_profile].code_iterations: Input should be greater than or equal to 1, got 0"]),
        ('[docs]\nprd = "docs/PRD.md"\n[settings_profile]\nthreshold_rule = "maybe"\n',
         ["[settings_profile].threshold_rule", "'exceeds' or 'at_least'", "got 'maybe'"]),
    ],
)
def test_taskdir_errors(tmp_path: Path, toml: str, fragments: list[str]) -> None:
    expect_error(toml_task(tmp_path / "t", toml), "task.toml", *fragments)


ESCAPING_TOML_FIELDS = {
    "[docs].prd": '[docs]\nprd = "{p}"\n',
    "[docs].uml_class": '[docs]\nprd = "docs/PRD.md"\numl_class = "{p}"\n',
    "[tests].unit": '[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "{p}"\n',
    "reference[0]": 'reference = ["{p}"]\n[docs]\nprd = "docs/PRD.md"\n',
    "required_files[0]": 'required_files = ["{p}"]\n[docs]\nprd = "docs/PRD.md"\n',
    "[env].requirements": '[docs]\nprd = "docs/PRD.md"\n[env]\nrequirements = "{p}"\n',
    "[env].setup_script": '[docs]\nprd = "docs/PRD.md"\n[env]\nsetup_script = "{p}"\n',
    "empty_dirs[0]": 'empty_dirs = ["{p}"]\n[docs]\nprd = "docs/PRD.md"\n',
    "[env].source_root": '[docs]\nprd = "docs/PRD.md"\n[env]\nsource_root = "{p}"\n',
    "[tests].perf[1]": '[docs]\nprd = "docs/PRD.md"\n[tests]\nperf = ["docs", "{p}"]\n',
    "reference_root": 'reference_root = "{p}"\n[docs]\nprd = "docs/PRD.md"\n',
    "starter[0]": 'starter = ["{p}"]\n[docs]\nprd = "docs/PRD.md"\n',
}


@pytest.mark.parametrize("field", sorted(ESCAPING_TOML_FIELDS))
@pytest.mark.parametrize("kind", ["absolute", "dotdot", "symlink"])
def test_taskdir_paths_must_stay_inside(tmp_path: Path, field: str, kind: str) -> None:
    outside = write(tmp_path / "outside", {"secret.md": "secret", "dir/x.py": ""})
    root = tmp_path / "t"
    write(root, {"docs/PRD.md": "# PRD\n"})
    if kind == "absolute":
        target = str(outside / "secret.md")
    elif kind == "dotdot":
        target = "../outside/secret.md"
    else:
        (root / "link").symlink_to(outside / ("dir" if "tests" in field else "secret.md"))
        target = "link"
    toml_task(root, ESCAPING_TOML_FIELDS[field].format(p=target))
    problem = "resolves outside the task folder" if kind == "symlink" else "escapes the task folder"
    expect_error(root, "task.toml", f"{field}: ", problem)


def test_symlinked_file_inside_reference_folder_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"secret.py": "KEY = 1\n"})
    root = toml_task(tmp_path / "t", 'reference = ["pkg"]\n[docs]\nprd = "docs/PRD.md"\n', {"pkg/a.py": ""})
    (root / "pkg" / "b.py").symlink_to(outside / "secret.py")
    expect_error(root, "task.toml", "reference[0]", "'pkg/b.py' is a symlink to a file outside")


def test_symlink_inside_the_root_is_fine(tmp_path: Path) -> None:
    root = toml_task(tmp_path / "t", '[docs]\nprd = "PRD_link.md"\n')
    (root / "PRD_link.md").symlink_to(root / "docs" / "PRD.md")
    assert load_task(root).docs.prd == "# PRD\n"


def test_documents_must_be_utf8(tmp_path: Path) -> None:
    root = toml_task(tmp_path / "t", '[docs]\nprd = "docs/PRD.md"\n')
    (root / "docs" / "PRD.md").write_bytes("caf\u00e9 ".encode() + b"\xff\n")
    expect_error(root, "task.toml", "[docs].prd: 'docs/PRD.md' is not valid UTF-8 (byte 6)")
    (root / "docs" / "PRD.md").write_text("caf\u00e9\n", encoding="utf-8")
    assert load_task(root).docs.prd == "caf\u00e9\n"


# --------------------------------------------------------------------------- CodeProjectEval


def test_codeprojecteval_mapping(tmp_path: Path) -> None:
    task = load_task(cpe_task(tmp_path / "mypkg-task"))
    assert task.format == "codeprojecteval"
    assert task.id == "mypkg-task"
    assert task.package == "mypkg"
    assert task.reference == ("mypkg/__init__.py", "mypkg/core.py", "mypkg/py.typed", "mypkg/sub/__init__.py")
    assert task.docs.prd == "# tinydb PRD\n"
    assert task.docs.uml_class == (
        "<!-- file: docs/UML.md -->\nclassDiagram A\n\n<!-- file: docs/UML_pyreverse.md -->\nclassDiagram B\n"
    )
    assert task.docs.uml_sequence is None
    assert task.docs.architecture_design == "layers\n"
    assert {k: s.paths for k, s in task.suites.items()} == {"check": ("check_tests",), "unit": ("unit_tests",)}
    assert task.env.requirements == (
        "rwlock",
        "cachetools>=5",
        "setuptools; python_version >= '3.12'",
        'pywin32>=226; platform_system == "Windows"',
        "pkg @ git+https://example.invalid/pkg.git#egg=pkg",
    )
    assert task.env.setup_script == "pip install -r requirements.txt\n"
    assert task.env.env_vars == {"MODEL": "./models", "LEVEL": "3"}
    assert task.env.python is None
    # fixtures: every task file the tests may read, never reference code, tests, config or documents
    assert {"requirements.txt", "templates/a.txt", "templates/b.txt"} <= set(task.required_files)
    assert not set(task.required_files) & (set(task.reference) | {"config.json", "docs/PRD.md"})
    assert not any(f.startswith(("unit_tests/", "check_tests/")) for f in task.required_files)


def test_codeprojecteval_uml_as_single_string_and_optional_keys_absent(tmp_path: Path) -> None:
    root = cpe_task(
        tmp_path / "t",
        UML="docs/UML.md",
        architecture_design=None,
        dependencies="",
        setup_shell_script="",
        env_vars=None,
        required_files=None,
        check_tests="missing_folder",
    )
    task = load_task(root)
    assert task.docs.uml_class == "classDiagram A\n"
    assert task.docs.architecture_design is None
    assert task.env.requirements == ()
    assert task.env.setup_script is None
    assert task.env.env_vars == {}
    assert "docs/UML.md" not in task.required_files  # a document named by the config
    assert list(task.suites) == ["unit"]  # an absent test folder is skipped


def test_codeprojecteval_source_folder_absent_gives_no_reference(tmp_path: Path) -> None:
    task = load_task(cpe_task(tmp_path / "t", source_code="notthere"))
    assert task.package == "notthere"
    assert task.reference == ()


@pytest.mark.parametrize(
    ("overrides", "fragments"),
    [
        ({"PRD": None}, ["PRD: missing"]),
        ({"PRD": "docs/NOPE.md"}, ["PRD: file 'docs/NOPE.md' not found"]),
        ({"UML": {"a": "b"}}, ["UML: expected a path or a list of paths, got a mapping"]),
        ({"UML": ["docs/UML.md", 3]}, ["UML[1]: expected a path string, got a number"]),
        ({"env_vars": ["A"]}, ["env_vars: expected a mapping", "got a list"]),
        ({"unit_tests": "requirements.txt"}, ["unit_tests: 'requirements.txt' is a file, expected a folder"]),
        ({"dependencies": "nope.txt"}, ["dependencies: file 'nope.txt' not found"]),
        ({"dependencies": 5}, ["dependencies: expected a list of strings, got a number"]),
        ({"required_files": {"a": 1}}, ["required_files: expected a list of strings"]),
        ({"setup_shell_script": "templates"}, ["setup_shell_script: 'templates' is a folder"]),
    ],
)
def test_codeprojecteval_errors(tmp_path: Path, overrides: dict[str, Any], fragments: list[str]) -> None:
    expect_error(cpe_task(tmp_path / "t", **overrides), "config.json", *fragments)


@pytest.mark.parametrize(
    "key", ["PRD", "UML", "architecture_design", "source_code", "check_tests", "dependencies",
            "setup_shell_script", "required_files"],
)
@pytest.mark.parametrize("target", ["/etc/passwd", "../outside/secret.md", "docs/../../outside/secret.md"])
def test_codeprojecteval_paths_must_stay_inside(tmp_path: Path, key: str, target: str) -> None:
    write(tmp_path / "outside", {"secret.md": "secret"})
    value: Any = [target] if key in ("UML", "required_files") else target
    root = cpe_task(tmp_path / "t", **{key: value})
    expect_error(root, "config.json", key, "escapes the task folder")


def test_codeprojecteval_symlinked_source_folder_outside_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "outside" / "pkg", {"__init__.py": ""})
    root = cpe_task(tmp_path / "t", source_code="linked")
    (root / "linked").symlink_to(tmp_path / "outside" / "pkg")
    expect_error(root, "config.json", "source_code: path 'linked' resolves outside the task folder")


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    root = write(tmp_path / "t", {"config.json": '{\n  "PRD": "docs/PRD.md",\n  "UML": [,]\n}\n'})
    expect_error(root, "config.json", "invalid JSON at line 3, column 11")


def test_json_must_be_an_object(tmp_path: Path) -> None:
    root = write(tmp_path / "t", {"config.json": "[1, 2]"})
    expect_error(root, "config.json", "expected a JSON object at the top level, got a list")


def test_config_json_of_unknown_format(tmp_path: Path) -> None:
    root = write(tmp_path / "t", {"config.json": '{"PRD": "PRD.md"}'})
    expect_error(root, "config.json", "cannot tell the task format")


def test_config_json_not_utf8(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    (root / "config.json").write_bytes(b'{"PRD": "\xff"}')
    expect_error(root, "config.json", "not valid UTF-8")


# --------------------------------------------------------------------------- DevBench


def test_devbench_root_docs_package_and_templates(tmp_path: Path) -> None:
    task = load_task(devbench_task(tmp_path / "lice"))
    assert task.format == "devbench"
    assert task.docs.prd == "# lice PRD\n"
    assert task.docs.uml_class == "classDiagram\n"
    assert task.docs.uml_sequence == "sequenceDiagram\n"
    assert task.docs.architecture_design == "arch\n"
    assert task.package == "lice"
    # every .py of the package (also the __init__ files the DAG omits), and its data outside test folders
    assert task.reference == (
        "lice/__init__.py",
        "lice/core.py",
        "lice/data.csv",
        "lice/helpers/__init__.py",
        "lice/helpers/util.py",
        "lice/tests/test_inner.py",
    )
    assert sorted(task.suites) == ["check", "unit"]  # acceptance_tests folder is absent
    assert {"requirements.txt", "templates/template-bsd.txt", "templates/template-mit.txt"} <= set(task.required_files)
    assert "lice/tests/fixture.json" in task.required_files  # test data inside the package is a fixture
    assert not set(task.required_files) & (set(task.reference) | {"PRD.md", "config.json"})
    assert task.env.requirements == ()


def test_devbench_docs_folder_and_single_root_module(tmp_path: Path) -> None:
    files = {
        "docs/PRD.md": "# arxiv\n",
        "docs/UML_class.md": "c\n",
        "docs/requirements.txt": "pandas\npytest\n",
        "query_arxiv.py": "def main(): ...\n",
        "__init__.py": "",
        "unit_tests/test_q.py": "",
        "acceptance_tests/test_q.py": "",
    }
    root = devbench_task(
        tmp_path / "ArXiv",
        files,
        PRD="docs/PRD.md",
        UML_class="docs/UML_class.md",
        UML_sequence="docs/UML_sequence.md",  # absent: skipped
        architecture_design=None,
        dependencies="docs/requirements.txt",
        check_tests="check_tests",  # absent folder
        required_files=["docs/requirements.txt"],
        setup_shell_script="",
        code_file_DAG={"query_arxiv.py": []},
    )
    task = load_task(root)
    assert task.docs.prd == "# arxiv\n"
    assert task.docs.uml_sequence is None
    assert task.package == "query_arxiv"
    assert task.reference == ("query_arxiv.py",)
    assert sorted(task.suites) == ["acceptance", "unit"]
    assert task.env.requirements == ("pandas", "pytest")
    assert task.env.setup_script is None


def test_devbench_src_files_at_root_have_no_package(tmp_path: Path) -> None:
    files = {"PRD.md": "p", "main.py": "", "model.py": "", "train.py": "", "unit_tests/test_m.py": ""}
    root = devbench_task(
        tmp_path / "cnn",
        files,
        UML_class=None,
        UML_sequence=None,
        architecture_design=None,
        dependencies="",
        setup_shell_script=None,
        required_files=None,
        code_file_DAG={"main.py": ["model.py", "train.py"]},
        src_files=["model.py", "train.py", "main.py", "gone.py"],
    )
    task = load_task(root)
    assert task.package is None
    assert task.reference == ("main.py", "model.py", "train.py")  # a listed file that is absent is skipped


@pytest.mark.parametrize(
    ("overrides", "fragments"),
    [
        ({"PRD": None}, ["PRD: missing"]),
        ({"PRD": "docs/PRD.md"}, ["PRD: file 'docs/PRD.md' not found"]),
        ({"code_file_DAG": ["lice/core.py"]}, ["code_file_DAG: expected a mapping"]),
        ({"code_file_DAG": {"lice/core.py": 3}}, ["code_file_DAG['lice/core.py']: expected a list of strings"]),
        ({"code_file_DAG": {"../x.py": []}}, ["code_file_DAG['../x.py']", "escapes the task folder"]),
        ({"code_file_DAG": {"lice/core.py": ["/abs.py"]}}, ["code_file_DAG['lice/core.py'][0]", "escapes"]),
        ({"src_files": ["../up.py"]}, ["src_files[0]", "escapes the task folder"]),
        ({"acceptance_tests": "PRD.md"}, ["acceptance_tests: 'PRD.md' is a file, expected a folder"]),
        ({"UML_sequence": "../UML.md"}, ["UML_sequence", "escapes the task folder"]),
        ({"required_files": ["../*"]}, ["required_files[0]", "escapes the task folder"]),
        ({"env_vars": "A=1"}, ["env_vars: expected a mapping", "a string"]),
    ],
)
def test_devbench_errors(tmp_path: Path, overrides: dict[str, Any], fragments: list[str]) -> None:
    expect_error(devbench_task(tmp_path / "t", **overrides), "config.json", *fragments)


# --------------------------------------------------------------------------- load_task / load_dataset


def test_load_task_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="nope: task folder not found"):
        load_task(tmp_path / "nope")


def test_load_task_not_a_folder(tmp_path: Path) -> None:
    write(tmp_path, {"file.txt": "x"})
    with pytest.raises(TaskFormatError, match="file.txt: not a task folder"):
        load_task(tmp_path / "file.txt")


def test_load_task_without_config(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(TaskFormatError) as info:
        load_task(tmp_path / "empty")
    assert str(info.value) == f"{(tmp_path / 'empty').resolve()}: no task.toml or config.json found"


def make_dataset(root: Path) -> Path:
    toml_task(root / "b-folder", 'id = "a-first"\n[docs]\nprd = "docs/PRD.md"\n')
    cpe_task(root / "c-cpe")
    devbench_task(root / "d-devbench")
    write(root, {"notes/readme.md": "not a task", "top.txt": "x"})
    return root


def test_load_dataset_sorted_by_id(tmp_path: Path) -> None:
    tasks = load_dataset(make_dataset(tmp_path / "ds"))
    assert [t.id for t in tasks] == ["a-first", "c-cpe", "d-devbench"]
    assert [t.format for t in tasks] == ["taskdir", "codeprojecteval", "devbench"]


def test_load_dataset_malformed_raise_skip_and_report(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "ds")
    write(root, {"a-broken/config.json": "{oops", "z-broken/task.toml": "[docs]\n"})
    with pytest.raises(TaskFormatError, match=r"a-broken/config.json: invalid JSON"):
        load_dataset(root)
    assert [t.id for t in load_dataset(root, on_error="skip")] == ["a-first", "c-cpe", "d-devbench"]
    tasks, errors = load_dataset_report(root)
    assert len(tasks) == 3
    assert [e.path.parent.name for e in errors] == ["a-broken", "z-broken"]
    assert "[docs].prd: missing" in str(errors[1])


def test_load_dataset_duplicate_ids(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    toml_task(root / "one", 'id = "same"\n[docs]\nprd = "docs/PRD.md"\n')
    toml_task(root / "two", 'id = "same"\n[docs]\nprd = "docs/PRD.md"\n')
    with pytest.raises(TaskFormatError, match="two: duplicate task id 'same'"):
        load_dataset(root)


def test_load_dataset_bad_folders(tmp_path: Path) -> None:
    with pytest.raises(ProjectGenError, match="nope: dataset folder not found"):
        load_dataset(tmp_path / "nope")
    write(tmp_path, {"f.txt": ""})
    with pytest.raises(ProjectGenError, match="f.txt: not a folder"):
        load_dataset(tmp_path / "f.txt")
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(ProjectGenError, match="empty: no tasks found"):
        load_dataset(tmp_path / "empty")
    single = cpe_task(tmp_path / "single")
    with pytest.raises(ProjectGenError, match="it is itself a task folder"):
        load_dataset_report(single)
    with pytest.raises(ValueError, match="on_error"):
        load_dataset(single, on_error="ignore")  # type: ignore[arg-type]


def test_parse_requirements() -> None:
    text = "# c\nA_b[x]>=1 ; python_version<'3.12' # why\n\n-c constraints.txt\nself-pkg\nSelf_Pkg==2\nc\n"
    assert parse_requirements(text, exclude=["self.pkg"]) == ("A_b[x]>=1 ; python_version<'3.12'", "c")


# --------------------------------------------------------------------------- the real benchmark data


@pytest.mark.datasets
def test_real_codeprojecteval_loads(shared_datasets: Path) -> None:
    tasks = load_dataset(shared_datasets / "CodeProjectEval")
    assert len(tasks) == 18
    assert all(t.format == "codeprojecteval" and t.reference and t.package for t in tasks)
    by_id = {t.id: t for t in tasks}
    tinydb = by_id["tinydb"]
    assert tinydb.package == "tinydb"
    assert "tinydb/table.py" in tinydb.reference
    assert sorted(tinydb.suites) == ["check", "unit"]
    assert tinydb.docs.uml_class and "<!-- file: docs/UML.md -->" in tinydb.docs.uml_class
    assert by_id["voluptuous"].suite("unit").paths == ("unit_tests",)
    portalocker = by_id["portalocker"].env.requirements
    assert portalocker and not any(r.lower().startswith("portalocker") for r in portalocker)
    assert by_id["xmnlp"].env.env_vars == {"XMNLP_MODEL": "./xmnlp-onnx-models"}
    assert by_id["djangorestframework-simplejwt"].package == "rest_framework_simplejwt"


@pytest.mark.datasets
def test_real_devbench_loads(shared_datasets: Path) -> None:
    tasks = load_dataset(shared_datasets / "DevBench")
    assert len(tasks) == 10
    by_id = {t.id: t for t in tasks}
    assert all(t.format == "devbench" and t.reference and sorted(t.suites) == ["acceptance", "check", "unit"]
               for t in tasks)
    lice = by_id["lice"]
    assert lice.docs.prd == (lice.root / "PRD.md").read_text(encoding="utf-8")
    assert lice.reference == ("lice/__init__.py", "lice/core.py")
    assert "templates/template-mit.txt" in lice.required_files
    arxiv = by_id["ArXiv_digest"]
    assert arxiv.docs.prd == (arxiv.root / "docs" / "PRD.md").read_text(encoding="utf-8")
    assert arxiv.reference == ("query_arxiv.py",)
    hone = by_id["hone"]
    assert hone.package == "hone"
    assert {"hone/utils/__init__.py", "hone/utils/test_utils.py"} <= set(hone.reference)
    assert hone.env.requirements == ()
    assert by_id["particle-swarm-optimization"].package == "pso"
    assert "chakin/datasets.csv" in by_id["chakin"].reference
    assert by_id["TextCNN"].package is None


@pytest.mark.datasets
def test_usage_examples_become_fixtures_but_never_reference_code(shared_datasets: Path) -> None:
    """cookiecutter's tests read templates from `tests/`; reference files must never be fixtures."""
    task = load_task(shared_datasets / "CodeProjectEval" / "cookiecutter")
    assert "tests/fake-repo-pre/cookiecutter.json" in task.required_files
    assert not set(task.required_files) & set(task.reference)
    assert not any(f.startswith(("unit_tests/", "check_tests/")) for f in task.required_files)


def test_a_setup_script_that_pip_installs_the_project_is_its_install_step(tmp_path: Path) -> None:
    """The benchmark's harness ran the script (CodeProjectEval flask: `pip install -e .`); without that step the
    project has no package metadata and a test reading its version fails on the reference too."""
    root = cpe_task(tmp_path / "editable")
    write(root, {"setup_shell_script.sh": "#!/bin/sh\n\npip   install -e .\n",
                 "pyproject.toml": '[build-system]\nrequires = ["flit_core<4"]\nbuild-backend = "flit_core.buildapi"\n'})
    task = load_task(root)
    # the step builds without isolation or an index: the build backend is a requirement of the environment
    assert task.env.install == "editable" and task.env.requirements[-1] == "flit_core<4"
    plain = load_task(cpe_task(tmp_path / "plain"))  # `pip install -r requirements.txt`: the environment's job
    assert plain.env.install is None and "flit_core<4" not in plain.env.requirements
    write(root, {"setup_shell_script.sh": "pip install .\n", "pyproject.toml": "[project]\nname = 'mypkg'\n"})
    assert (load_task(root).env.install, load_task(root).env.requirements) == ("package", plain.env.requirements)
