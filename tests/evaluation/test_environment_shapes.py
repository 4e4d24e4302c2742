"""Task shapes that benchmarks need, each a small task folder written here: it loads, runs in the sandbox
runner and scores its reference as plain pytest does.

Shapes: a pinned Python whose name on PATH is a broken pyenv shim; tests that find the candidate through an
environment variable (`{repo}`) and need an empty output folder; a `src/` layout on the import path; a
package that must be installed (editable, or by the task's setup script) without leaking into the shared
environment; a per-task timeout; and runs whose tests cannot start, which must say why.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from projectgen.datasets.loaders import load_task
from projectgen.datasets.task import Task
from projectgen.evaluation.environments import find_uv
from projectgen.evaluation.interpreters import find_python
from projectgen.evaluation.report import Outcome
from projectgen.evaluation.runner import DEFAULT_TIMEOUT, RunnerSettings, SandboxRunner

RUNNING = "%d.%d" % sys.version_info[:2]
PRD = {"docs/PRD.md": "# PRD\n"}


def make_runner(env_cache: Path, log: list[str] | None = None, **overrides) -> SandboxRunner:
    settings = RunnerSettings(cache_dir=env_cache, timeout=overrides.pop("timeout", 120), **overrides)
    return SandboxRunner(settings, log=log.append if log is not None else None)


def write_task(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {**PRD, **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def outcomes(report) -> dict[str, str]:
    return {t.nodeid: t.outcome.value for t in report.tests}


def plain_pytest(python: str | Path, folder: Path, env: dict[str, str] | None = None,
                 suite: str = "unit_tests") -> dict[str, str]:
    """Per-test outcomes of plain `python -m pytest SUITE` in `folder` (no sandbox, no plugin of ours)."""
    variables = {"PATH": os.environ["PATH"], "HOME": str(folder), "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", suite], cwd=folder,
                          capture_output=True, text=True, env=variables, timeout=300)
    found = {m.group(2): m.group(1).lower()
             for m in re.finditer(r"^(PASSED|FAILED|ERROR|XPASS|XFAIL) (\S+)", done.stdout, re.MULTILINE)}
    assert found, done.stdout + done.stderr
    return found


def scores_like_plain_pytest(runner: SandboxRunner, task: Task, plain: dict[str, str]) -> None:
    """The reference's run matches plain pytest test by test, and its score counts every test as expected."""
    scored = runner.score(task, task.reference_files(), "unit")
    assert outcomes(scored.report) == plain
    assert set(plain.values()) == {"passed"}
    assert scored.score.passed == scored.score.expected == len(plain)


def env_python(runner: SandboxRunner, task: Task) -> Path:
    return runner.environments.ensure(task.env).python


# --------------------------------------------------------------------------- 1. a pinned Python


def fake_program(folder: Path, name: str, script: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + textwrap.dedent(script))
    path.chmod(0o755)
    return path


def pyenv_shim(folder: Path, name: str) -> Path:
    """What pyenv puts on PATH for a version that is installed but not selected."""
    return fake_program(folder, name, f"""\
        echo "pyenv: {name}: command not found" >&2
        exit 127
    """)


def test_every_python_on_path_is_probed_and_a_broken_shim_is_skipped(tmp_path: Path) -> None:
    shim = pyenv_shim(tmp_path / "shims", f"python{RUNNING}")
    real = tmp_path / "bin" / f"python{RUNNING}"
    real.parent.mkdir()
    real.symlink_to(sys.executable)
    search = find_python(RUNNING, uv=None, search_path=f"{shim.parent}{os.pathsep}{real.parent}",
                         pyenv_root=tmp_path / "no-pyenv")
    assert search.found is not None and search.found.path == str(real)
    assert search.found.version.startswith(RUNNING + ".")
    assert search.skipped == [(str(shim), f"exit status 127: pyenv: python{RUNNING}: command not found")]


def test_a_python_of_another_version_is_skipped_and_pyenv_installs_are_tried(tmp_path: Path) -> None:
    liar = fake_program(tmp_path / "bin", "python3.4", "echo 3.9.1\n")
    install = fake_program(tmp_path / "pyenv" / "versions" / "3.4.10" / "bin", "python3.4", "echo 3.4.10\n")
    older = fake_program(tmp_path / "pyenv" / "versions" / "3.4.2" / "bin", "python3.4", "echo 3.4.2\n")
    search = find_python("3.4", uv=None, search_path=str(liar.parent), pyenv_root=tmp_path / "pyenv")
    assert search.found is not None and (search.found.path, search.found.version) == (str(install), "3.4.10")
    assert search.skipped == [(str(liar), "it is Python 3.9.1")]
    assert find_python("3.4.2", uv=None, search_path="", pyenv_root=tmp_path / "pyenv").found.path == str(older)


PINNED = {
    "task.toml": """\
        reference = ["calc.py"]
        [docs]
        prd = "docs/PRD.md"
        [tests]
        unit = "unit_tests"
        [env]
        python = "3.4"
    """,
    "calc.py": "def add(a, b):\n    return a + b\n",
    "unit_tests/test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def test_a_pinned_python_that_is_only_a_broken_shim_falls_back_to_the_running_python(
        tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shims = tmp_path / "shims"
    pyenv_shim(shims, "python3.4")
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    task = load_task(write_task(tmp_path / "pinned", PINNED))
    assert task.env.python == "3.4"
    log: list[str] = []
    runner = make_runner(env_cache, log)
    report = runner.evaluate(task, task.reference_files(), "unit")
    assert report.error is None and outcomes(report) == {"unit_tests/test_calc.py::test_add": "passed"}
    said = [line for line in log if "Python 3.4 not found" in line]
    assert len(said) == 1 and str(shims / "python3.4") in said[0] and "exit status 127" in said[0]
    assert f"running Python {sys.version_info.major}.{sys.version_info.minor}" in said[0]
    env = report.environment
    assert env is not None and env.python_requested == "3.4" and env.python.startswith(RUNNING + ".")
    assert env.python_fallback
    manifest = runner.environments.lookup(task.env)
    assert manifest is not None and manifest.interpreter == sys.executable and manifest.python_requested == "3.4"


def test_an_environment_that_does_not_build_is_one_clear_error(
        tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An interpreter that answers the probe but cannot make a venv: the report says so, with the reason."""
    broken = fake_program(tmp_path / "bin", "python3.4", """\
        case "$*" in *version_info*) echo 3.4.0; exit 0;; esac
        echo "this python cannot create environments" >&2
        exit 1
    """)
    monkeypatch.setenv("PATH", f"{broken.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    task = load_task(write_task(tmp_path / "pinned", PINNED))
    report = make_runner(tmp_path / "cache").evaluate(task, task.reference_files(), "unit")
    assert report.error is not None and report.tests == []
    assert report.error.startswith(f"the test environment could not be built: could not create a virtual "
                                   f"environment with {broken}: ")
    assert "log: " in report.error
    assert report.not_run_reason() == report.error


# --------------------------------------------------------------------------- 2. {repo} and empty folders

LOCATED = {
    "task.toml": """\
        reference = ["reporter.py"]
        empty_dirs = ["data/out", "data/cache"]
        [docs]
        prd = "docs/PRD.md"
        [tests]
        unit = "unit_tests"
        [env]
        env_vars = { APP_HOME = "{repo}", APP_OUT = "{repo}/data/out", PLAIN = "no {placeholder} here" }
    """,
    "reporter.py": """\
        import os

        def write_report(text):
            with open(os.path.join(os.environ["APP_OUT"], "report.txt"), "w") as out:
                out.write(text)
    """,
    "unit_tests/test_reporter.py": """\
        import os
        import reporter

        def test_home_is_the_candidate_repository():
            assert os.path.samefile(os.environ["APP_HOME"], os.path.dirname(reporter.__file__))

        def test_output_folders_exist_and_are_empty():
            assert os.listdir(os.environ["APP_OUT"]) == []
            assert os.listdir(os.path.join(os.environ["APP_HOME"], "data", "cache")) == []

        def test_report_is_written_where_the_variable_points():
            reporter.write_report("done")
            with open(os.path.join(os.environ["APP_HOME"], "data", "out", "report.txt")) as written:
                assert written.read() == "done"

        def test_other_braces_are_left_alone():
            assert os.environ["PLAIN"] == "no {placeholder} here"
    """,
}


def test_repo_placeholder_and_empty_folders(tmp_path: Path, env_cache: Path) -> None:
    task = load_task(write_task(tmp_path / "located", LOCATED))
    assert task.empty_dirs == ("data/out", "data/cache")
    runner = make_runner(env_cache)
    plain_folder = shutil.copytree(task.root, tmp_path / "plain")
    for rel in task.empty_dirs:
        (plain_folder / rel).mkdir(parents=True)
    plain = plain_pytest(env_python(runner, task), plain_folder, {
        "APP_HOME": str(plain_folder), "APP_OUT": str(plain_folder / "data" / "out"),
        "PLAIN": "no {placeholder} here"})
    scores_like_plain_pytest(runner, task, plain)
    assert not (task.root / "data").exists()  # made in the workspace, not in the task folder


# --------------------------------------------------------------------------- 4. src layout and install steps

SRC_LAYOUT = {
    "task.toml": """\
        reference = ["src"]
        [docs]
        prd = "docs/PRD.md"
        [tests]
        unit = "unit_tests"
        [env]
        source_root = "src"
    """,
    "src/shapes/__init__.py": "from shapes.area import square\n",
    "src/shapes/area.py": "def square(side):\n    return side * side\n",
    "unit_tests/test_area.py": """\
        import shapes
        from shapes.area import square

        def test_square():
            assert square(3) == 9

        def test_package_comes_from_the_source_root():
            assert shapes.__file__.replace("\\\\", "/").endswith("src/shapes/__init__.py")
    """,
}


def test_src_layout_on_the_import_path(tmp_path: Path, env_cache: Path) -> None:
    task = load_task(write_task(tmp_path / "srclayout", SRC_LAYOUT))
    assert task.env.source_root == "src" and task.env.install is None
    runner = make_runner(env_cache)
    plain = plain_pytest(env_python(runner, task), task.root, {"PYTHONPATH": "src"})
    scores_like_plain_pytest(runner, task, plain)
    no_root = task.model_copy(update={"env": task.env.model_copy(update={"source_root": None})})
    report = make_runner(env_cache).evaluate(no_root, task.reference_files(), "unit")
    assert report.passed == 0 and report.collection_errors  # without it the package is not found


PYPROJECT = """\
    [build-system]
    requires = ["setuptools>=64"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "greeter"
    version = "{version}"

    [project.scripts]
    greet = "greeter.cli:main"
"""

INSTALLED = {
    "task.toml": """\
        reference = ["pyproject.toml", "src"]
        [docs]
        prd = "docs/PRD.md"
        [tests]
        unit = "unit_tests"
        [env]
        install = "editable"
    """,
    "pyproject.toml": PYPROJECT.format(version="1.2.3"),
    "src/greeter/__init__.py": "def greeting(name):\n    return f'Hello, {name}'\n",
    "src/greeter/cli.py": "import sys\nfrom greeter import greeting\n\ndef main():\n    print(greeting(sys.argv[1]))\n",
    "unit_tests/test_greeter.py": """\
        import subprocess
        from importlib.metadata import version

        import greeter

        def test_greeting():
            assert greeter.greeting("Ada") == "Hello, Ada"

        def test_installed_metadata():
            assert version("greeter") == "1.2.3"

        def test_console_script():
            done = subprocess.run(["greet", "Bob"], capture_output=True, text=True, check=True)
            assert done.stdout == "Hello, Bob\\n"
    """,
}


def uv_venv_with(folder: Path, *requirements: str) -> Path:
    """A throwaway venv holding pytest and `requirements` (pip's way, as a user would set one up)."""
    uv = find_uv()
    if uv is None:
        pytest.skip("uv is needed to set up the plain-pytest venv")
    venv = folder / ".plain-venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), "pytest",
                    *requirements], check=True, cwd=folder)
    return venv / "bin" / "python"


def test_editable_install_runs_in_the_sandbox_and_never_leaks(tmp_path: Path, env_cache: Path) -> None:
    task = load_task(write_task(tmp_path / "installed", INSTALLED))
    assert task.env.install == "editable"
    runner = make_runner(env_cache)
    plain_folder = shutil.copytree(task.root, tmp_path / "plain")
    plain_python = uv_venv_with(plain_folder, "-e", ".")
    plain = plain_pytest(plain_python, plain_folder, {"PATH": f"{plain_python.parent}:{os.environ['PATH']}"})
    scores_like_plain_pytest(runner, task, plain)

    # Another candidate in the same shared environment sees its own install, never the previous one's.
    other = dict(task.reference_repository())
    other["pyproject.toml"] = textwrap.dedent(PYPROJECT.format(version="2.0.0"))
    report = runner.evaluate(task, other, "unit")
    assert outcomes(report)["unit_tests/test_greeter.py::test_installed_metadata"] == "failed"
    assert "2.0.0" in next(t.message for t in report.tests if t.nodeid.endswith("test_installed_metadata"))
    env = runner.environments.ensure(task.env)
    leaked = subprocess.run([str(env.python), "-c", "import greeter"], capture_output=True, text=True)
    assert leaked.returncode != 0 and "No module named 'greeter'" in leaked.stderr
    assert not list(env.path.glob("lib/python*/site-packages/*greeter*"))
    assert task.env.cache_key() != task.env.model_copy(update={"install": None}).cache_key()
    assert task.env.cache_key() == task.env.model_copy(update={"install": "package"}).cache_key()


def test_without_the_install_the_tests_cannot_import_the_package(tmp_path: Path, env_cache: Path) -> None:
    task = load_task(write_task(tmp_path / "installed", INSTALLED))
    plain = task.model_copy(update={"env": task.env.model_copy(update={"install": None})})
    report = make_runner(env_cache).evaluate(plain, task.reference_files(), "unit")
    assert report.passed == 0 and "No module named 'greeter'" in report.collection_errors[0].message


def test_a_candidate_that_does_not_install_fails_with_the_reason(tmp_path: Path, env_cache: Path) -> None:
    task = load_task(write_task(tmp_path / "installed", INSTALLED))
    broken = dict(task.reference_repository(), **{"pyproject.toml": "[project\nname = 'greeter'\n"})
    report = make_runner(env_cache).evaluate(task, broken, "unit")
    assert report.error is None and report.tests == [] and report.status == "error"
    assert re.fullmatch(r"the install step \(pip install -e \.\) failed with exit status [12]", report.install_error)
    reason = report.not_run_reason()
    assert reason.startswith(report.install_error + ": ")
    assert reason.endswith("TOMLDecodeError: Expected ']' at the end of a table declaration (at line 1, column 9)")


SCRIPTED = {
    **INSTALLED,
    "task.toml": """\
        reference = ["pyproject.toml", "src"]
        [docs]
        prd = "docs/PRD.md"
        [tests]
        unit = "unit_tests"
        [env]
        install = "script"
        setup_script = "setup.sh"
    """,
    "setup.sh": """\
        set -e
        echo 'GENERATED = "by the setup script"' > src/greeter/generated.py
        pip install --no-deps -e .
    """,
    "unit_tests/test_generated.py": """\
        from greeter.generated import GENERATED

        def test_generated_module():
            assert GENERATED == "by the setup script"
    """,
}


@pytest.mark.slow  # the editable install step stays in the default suite
def test_the_setup_script_runs_in_the_sandbox_into_the_workspace(tmp_path: Path, env_cache: Path) -> None:
    task = load_task(write_task(tmp_path / "scripted", SCRIPTED))
    runner = make_runner(env_cache)
    plain_folder = shutil.copytree(task.root, tmp_path / "plain")
    plain_python = uv_venv_with(plain_folder, "pip", "setuptools")
    path = f"{plain_python.parent}:{os.environ['PATH']}"
    subprocess.run(["sh", "setup.sh"], cwd=plain_folder, check=True, env={**os.environ, "PATH": path},
                   capture_output=True)
    plain = plain_pytest(plain_python, plain_folder, {"PATH": path})
    scores_like_plain_pytest(runner, task, plain)
    env = runner.environments.ensure(task.env)
    assert not list(env.path.glob("lib/python*/site-packages/*greeter*"))
    assert not (task.root / "src" / "greeter" / "generated.py").exists()


# --------------------------------------------------------------------------- 6. a per-task timeout

SLOW = {
    "task.toml": """\
        timeout = 3
        [docs]
        prd = "docs/PRD.md"
        [tests]
        unit = "unit_tests"
    """,
    "unit_tests/test_slow.py": "import time\n\ndef test_quick():\n    pass\n\ndef test_slow():\n    time.sleep(60)\n",
}


def test_the_task_timeout_is_used_unless_the_runner_is_given_one(tmp_path: Path, env_cache: Path) -> None:
    task = load_task(write_task(tmp_path / "slow", SLOW))
    assert task.timeout == 3.0
    assert make_runner(env_cache, timeout=None).timeout_for(task) == 3.0
    assert make_runner(env_cache, timeout=7).timeout_for(task) == 7  # an explicit timeout wins
    assert make_runner(env_cache, timeout=None).timeout_for(task.model_copy(update={"timeout": None})) \
        == DEFAULT_TIMEOUT
    report = make_runner(env_cache, timeout=None).evaluate(task, {}, "unit")
    assert report.timed_out and report.duration < 30
    assert {t.nodeid.split("::")[1]: t.outcome for t in report.tests} == {
        "test_quick": Outcome.PASSED, "test_slow": Outcome.ERROR}


# --------------------------------------------------------------------------- 8. tests that cannot start


def test_a_conftest_that_does_not_import_is_named(tmp_path: Path, env_cache: Path) -> None:
    task = load_task(write_task(tmp_path / "conf", {
        "task.toml": '[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "unit_tests"\n',
        "unit_tests/conftest.py": "import helper_the_candidate_forgot\n",
        "unit_tests/test_a.py": "def test_a():\n    pass\n",
    }))
    report = make_runner(env_cache).evaluate(task, {}, "unit")
    assert report.exit_status == 4 and report.tests == [] and report.error is None
    assert report.not_run_reason() == ("unit_tests/conftest.py does not import (pytest exit status 4): "
                                       "ModuleNotFoundError: No module named 'helper_the_candidate_forgot'")


def test_an_empty_suite_and_modules_that_do_not_collect_are_named(tmp_path: Path, env_cache: Path) -> None:
    empty = load_task(write_task(tmp_path / "empty", {
        "task.toml": '[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "unit_tests"\n',
        "unit_tests/test_nothing.py": "VALUE = 1\n",
    }))
    report = make_runner(env_cache).evaluate(empty, {}, "unit")
    assert report.not_run_reason() == "pytest collected no tests (exit status 5)"
    broken = load_task(write_task(tmp_path / "broken", {
        "task.toml": '[docs]\nprd = "docs/PRD.md"\n[tests]\nunit = "unit_tests"\n',
        "unit_tests/test_a.py": "from missing_module import thing\n\ndef test_a():\n    pass\n",
    }))
    report = make_runner(env_cache).evaluate(broken, {}, "unit")
    assert report.not_run_reason() == ("1 test module(s) could not be collected, none ran; unit_tests/test_a.py: "
                                       "ModuleNotFoundError: No module named 'missing_module'")
    ran = make_runner(env_cache).evaluate(load_task(write_task(tmp_path / "ok", SRC_LAYOUT)),
                                          load_task(tmp_path / "ok").reference_files(), "unit")
    assert ran.passed == 2 and ran.not_run_reason() is None
