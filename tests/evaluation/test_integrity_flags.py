"""Integrity flags: each known gaming move is found where it is, references stay quiet, hostile files never
raise, and a flagged candidate's flag reaches its test report and the results files."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from projectgen.evaluation import integrity_flags
from projectgen.evaluation.integrity_flags import (FLAG_KINDS, MAX_FILE_BYTES, MAX_FLAGS, IntegrityFlag,
                                                   ScannedFiles, candidate_flags, describe_counts, scan_candidate)
from projectgen.evaluation.report import TestReport
from test_support import make_task


def found(files: dict[str, str]) -> list[tuple[str, str, int | None]]:
    return [(f.kind, f.path, f.line) for f in scan_candidate({rel: textwrap.dedent(text) for rel, text in files.items()})]


# One small candidate per kind: (files, the flag it must raise).
ONE_PER_KIND = {
    "getframe": ({"pkg/spy.py": "import sys\n\ndef caller():\n    return sys._getframe(1)\n"},
                 ("frame-introspection", "pkg/spy.py", 4)),
    "getframe-aliased": ({"spy.py": "from sys import _getframe as g\nx = g()\n"}, ("frame-introspection", "spy.py", 2)),
    "inspect-stack": ({"spy.py": "import inspect as i\n\nframes = i.stack()\n"}, ("frame-introspection", "spy.py", 3)),
    "f_back": ({"spy.py": "def up(frame):\n    return frame.f_back.f_locals\n"}, ("frame-introspection", "spy.py", 2)),
    "getattr-f_globals": ({"spy.py": "def g(f):\n    return getattr(f, 'f_globals')\n"},
                          ("frame-introspection", "spy.py", 2)),
    "gc": ({"spy.py": "import gc\nfor o in gc.get_objects():\n    pass\n"}, ("frame-introspection", "spy.py", 2)),
    "settrace": ({"t.py": "import sys\nsys.settrace(lambda *a: None)\n"}, ("tracing", "t.py", 2)),
    "threading-setprofile": ({"t.py": "import threading\nthreading.setprofile(print)\n"}, ("tracing", "t.py", 2)),
    "monitoring": ({"t.py": "import sys\nsys.monitoring.use_tool_id(3, 'x')\n"}, ("tracing", "t.py", 2)),
    "ctypes": ({"lib/mem.py": "import ctypes\n"}, ("ctypes", "lib/mem.py", 1)),
    "ctypes-dynamic": ({"mem.py": "m = __import__('ctypes')\n"}, ("ctypes", "mem.py", 1)),
    "pytest": ({"lib.py": "import pytest\n"}, ("pytest-internals", "lib.py", 1)),
    "_pytest": ({"lib.py": "from _pytest.reports import TestReport\n"}, ("pytest-internals", "lib.py", 1)),
    "pluggy": ({"lib.py": "import importlib\nimportlib.import_module('pluggy')\n"}, ("pytest-internals", "lib.py", 2)),
    "os-exit": ({"lib.py": "import os\n\ndef main():\n    os._exit(0)\n"}, ("process-exit", "lib.py", 4)),
    "sys-exit": ({"lib.py": "import sys\n\ndef helper():\n    sys.exit(0)\n"}, ("process-exit", "lib.py", 4)),
    "eq-true": ({"m.py": "class A:\n    def __eq__(self, other):\n        '''any'''\n        return True\n"},
                ("always-equal", "m.py", 2)),
    "ne-false": ({"m.py": "class A:\n    def __ne__(self, other):\n        return False\n"}, ("always-equal", "m.py", 2)),
    "eq-lambda": ({"m.py": "class A:\n    __eq__ = lambda self, other: True\n"}, ("always-equal", "m.py", 2)),
    "open-tests": ({"w.py": "open('tests/test_calc.py', 'w').write('')\n"}, ("test-path-write", "w.py", 1)),
    "rmtree-tests": ({"w.py": "import shutil\nshutil.rmtree('unit_tests')\n"}, ("test-path-write", "w.py", 2)),
    "rename-join": ({"w.py": "import os\nos.rename(os.path.join('tests', 'a.py'), 'b')\n"},
                    ("test-path-write", "w.py", 2)),
    "path-write": ({"w.py": "from pathlib import Path\nPath('tests/conftest.py').write_text('')\n"},
                   ("test-path-write", "w.py", 2)),
    "setup.py": ({"setup.py": "from setuptools import setup\nsetup()\n"}, ("build-script", "setup.py", None)),
    "build.rs": ({"build.rs": "fn main() {}\n"}, ("build-script", "build.rs", None)),
    "cmake": ({"CMakeLists.txt": "project(x)\nexecute_process(COMMAND sh -c true)\n"},
              ("build-script", "CMakeLists.txt", 2)),
    "npm": ({"package.json": '{\n  "name": "x",\n  "scripts": {\n    "postinstall": "node evil.js"\n  }\n}\n'},
            ("build-script", "package.json", 4)),
    "gradle": ({"build.gradle": "task x(type: Exec) {\n  commandLine 'sh'\n}\n"}, ("build-script", "build.gradle", 2)),
    "maven": ({"pom.xml": "<plugin>\n<artifactId>exec-maven-plugin</artifactId>\n</plugin>\n"},
              ("build-script", "pom.xml", 2)),
    "cgo": ({"main.go": 'package main\n\nimport "C"\n'}, ("build-script", "main.go", 3)),
    "conftest": ({"pkg/conftest.py": "def pytest_configure(config): pass\n"}, ("conftest", "pkg/conftest.py", None)),
    "pytest11": ({"pyproject.toml": '[project.entry-points.pytest11]\nx = "pkg.plugin"\n'},
                 ("pytest-plugin", "pyproject.toml", 1)),
    "sitecustomize": ({"sitecustomize.py": "x = 1\n"}, ("startup-hook", "sitecustomize.py", None)),
    "pth": ({"evil.pth": "import os\n"}, ("startup-hook", "evil.pth", None)),
    "unparsable": ({"broken.py": "def f(:\n"}, ("unscanned", "broken.py", None)),
}


@pytest.mark.parametrize("case", sorted(ONE_PER_KIND))
def test_each_known_move_is_flagged_where_it_is(case: str) -> None:
    files, expected = ONE_PER_KIND[case]
    assert expected in found(files)


def test_every_kind_has_a_case_and_a_flag_names_its_line() -> None:
    assert {expected[0] for _, expected in ONE_PER_KIND.values()} == set(FLAG_KINDS)
    flag = scan_candidate({"m.py": "import ctypes  # poke memory\n"})[0]
    assert flag.excerpt == "import ctypes # poke memory" and flag.where() == "m.py:1"


CLEAN = {
    "calc/__init__.py": "from calc.core import add\n",
    "calc/core.py": """\
        import inspect, gc, sys

        class Money:
            def __eq__(self, other):
                return isinstance(other, Money) and self.cents == other.cents

            def __ne__(self, other):
                return not self == other

        def add(a, b):
            '''A signature read, a gc switch, an exit code: none is a gaming move.'''
            inspect.signature(add)
            gc.collect()
            with open('out/report.txt', 'w') as out:
                out.write(str(a + b))
            return a + b
        """,
    "calc/cli.py": """\
        import argparse, sys

        def run(argv):
            args = argparse.ArgumentParser().parse_args(argv)
            sys.exit(2)
        """,
    "calc/__main__.py": "import sys\nsys.exit(0)\n",
    "tool.py": "import sys\n\ndef main():\n    sys.exit(1)\n\nif __name__ == '__main__':\n    sys.exit(main())\n",
    "tests/test_calc.py": "import pytest, sys\nsys.settrace(None)\n",
    "tests/helpers.py": "import pytest\n",
    "calc/core_test.py": "import ctypes\n",
    "data.bin": "\x00\x01 import ctypes",
    "README.md": "We never call sys._getframe or import ctypes.\n",
    "package.json": '{"scripts": {"test": "jest", "build": "tsc"}}',
}


def test_ordinary_code_and_the_candidates_own_tests_raise_no_flag() -> None:
    assert found(CLEAN) == []


def test_a_module_level_exit_is_flagged_even_in_a_command_line_module() -> None:
    assert found({"cli.py": "import argparse, sys\nsys.exit(0)\n"}) == [("process-exit", "cli.py", 2)]


@pytest.mark.parametrize("reference", ["lice", "readtime"])
def test_a_devbench_reference_raises_no_flag(shared_datasets: Path, reference: str) -> None:
    from projectgen.datasets.loaders import load_task

    task = load_task(shared_datasets / "DevBench" / reference)
    assert candidate_flags(task, task.reference_files()) == []


def test_the_tasks_own_files_are_not_the_candidates(tmp_path: Path) -> None:
    task = make_task(tmp_path / "t", {"test_calc.py": "import ctypes\ndef test_x(): pass\n"})
    candidate = {"unit_tests/test_calc.py": "import ctypes\n", "unit_tests/conftest.py": "x = 1\n", "calc.py": "x = 1\n"}
    assert [(f.kind, f.path) for f in candidate_flags(task, candidate)] == [("conftest", "unit_tests/conftest.py")]


def test_a_folder_is_scanned_as_the_runner_copies_it_without_following_links(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mem.py").write_text("import ctypes\n", encoding="utf-8")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.py").write_text("import ctypes\n", encoding="utf-8")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text("import ctypes\n", encoding="utf-8")
    (tmp_path / "linked.py").symlink_to(outside)
    assert [(f.kind, f.path) for f in scan_candidate(tmp_path)] == [("ctypes", "pkg/mem.py")]
    assert scan_candidate(tmp_path / "missing") == []


# --------------------------------------------------------------------------- hostile input


@pytest.mark.parametrize("source", [
    "x = " + "1 + " * 100_000 + "1\n",
    "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n",
    "x = " + "-" * 100_000 + "1\n",
    "x = 1\0\n",
], ids=["deep-binop", "deep-parens", "deep-unary", "null-byte"])
def test_a_file_python_cannot_parse_is_unscanned_not_an_error(source: str) -> None:
    assert [f.kind for f in scan_candidate({"deep.py": source})] == ["unscanned"]


def test_a_candidate_parses_at_most_its_budget_of_python_and_reports_at_most_max_flags(monkeypatch) -> None:
    monkeypatch.setattr(integrity_flags, "MAX_PYTHON_BYTES", 3000)  # the rule, on a budget quick to spend
    module = "import ctypes\n" + "x = 1\n" * (1000 // 6)  # a third of the budget, and a line
    flags = scan_candidate({f"m{i}.py": module for i in range(3)})
    assert [(f.kind, f.path) for f in flags] == [("ctypes", "m0.py"), ("ctypes", "m1.py"), ("unscanned", "m2.py")]
    assert "not scanned" in flags[-1].excerpt
    many = scan_candidate({f"m{i:03}.py": "import sys\n" + "sys._getframe()\n" * 30 for i in range(100)})
    assert len(many) == MAX_FLAGS


def test_files_scanned_before_give_the_same_flags_and_a_changed_file_is_scanned_again(monkeypatch) -> None:
    """A runner keeps each file's flags by its content (`ScannedFiles`): the same candidate again gets the same
    flags, an edit to one file gets that file's new flags, and a file past the budget is never answered from
    what was kept of it."""
    scanned = ScannedFiles()
    candidate = {"pkg/mem.py": "import ctypes\n", "pkg/exit.py": "import os\nos._exit(0)\n", "pkg/ok.py": "x = 1\n"}
    first = scan_candidate(candidate, scanned=scanned)
    assert first == scan_candidate(candidate) and len(first) == 2
    first[0].excerpt = "changed by whoever holds the report"
    assert scan_candidate(candidate, scanned=scanned) == scan_candidate(candidate)
    edited = dict(candidate, **{"pkg/ok.py": "import sys\nsys.settrace(None)\n", "pkg/mem.py": "x = 2\n"})
    assert [(f.kind, f.path) for f in scan_candidate(edited, scanned=scanned)] == [
        ("process-exit", "pkg/exit.py"), ("tracing", "pkg/ok.py")]
    monkeypatch.setattr(integrity_flags, "MAX_PYTHON_BYTES", 20)  # the budget is the candidate's, not the file's
    assert [f.kind for f in scan_candidate({"a.py": "x = 1  # a line\n", "pkg/mem.py": "import ctypes\n"},
                                           scanned=scanned)] == ["unscanned"]  # pkg/mem.py's flag was kept


def test_a_50_mb_file_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    huge = "import ctypes\n" + "x = 1\n" * (50_000_000 // 6)
    big = tmp_path / "big.py"
    big.write_text(huge, encoding="utf-8")
    flags = scan_candidate({"big.py": huge, "on_disk.py": big, "big.json": huge, "CMakeLists.txt": big})
    assert [(f.kind, f.path) for f in flags] == [("unscanned", "big.py"), ("unscanned", "on_disk.py")]
    assert f"{MAX_FILE_BYTES:,}" in flags[0].excerpt


def test_invalid_utf8_and_binary_files_do_not_raise(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_bytes(b"x = '\xff\xfe'\nimport ctypes\n")
    (tmp_path / "package.json").write_bytes(b"\x00\xff" * 1000)
    (tmp_path / "CMakeLists.txt").write_bytes(b"\xffexecute_process(\n")
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\nimport ctypes\n")
    assert [(f.kind, f.path, f.line) for f in scan_candidate(tmp_path)] == [
        ("build-script", "CMakeLists.txt", 1), ("unscanned", "bad.py", None), ("ctypes", "latin.py", 3)]


def test_deep_json_and_a_flood_of_moves_stay_bounded() -> None:
    assert scan_candidate({"package.json": "[" * 100_000 + "]" * 100_000}) == []
    flood = scan_candidate({"m.py": "import sys\n" + "sys._getframe()\n" * 10_000})
    assert 0 < len(flood) <= 20


# --------------------------------------------------------------------------- reports


def test_a_report_written_before_flags_existed_still_loads() -> None:
    old = TestReport(task_id="t", suite="unit").model_dump(mode="json")
    del old["integrity_flags"]
    assert TestReport.model_validate(old).integrity_flags == []


def test_counts_read_as_a_short_cell() -> None:
    flags = [IntegrityFlag(kind="process-exit", path="a.py", line=1), IntegrityFlag(kind="ctypes", path="b.py"),
             IntegrityFlag(kind="process-exit", path="a.py", line=9)]
    assert describe_counts(flags) == "ctypes 1, process-exit 2" and describe_counts([]) == ""


def test_a_flagged_candidate_run_by_the_runner_has_its_flag_in_the_report(tmp_path: Path, env_cache: Path) -> None:
    from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

    task = make_task(tmp_path / "flagged", {"test_calc.py": "from calc import add\ndef test_add(): assert add(2, 2) == 4\n"})
    candidate = {"calc.py": "import sys\n\ndef add(a, b):\n    return a + b\n\ndef never_called():\n"
                            "    return sys._getframe(1).f_locals\n",
                 "conftest.py": "def pytest_configure(config): pass\n"}
    report = SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=60)).evaluate(task, candidate)
    assert report.passed == 1 and report.tampered is None  # a flag never changes the score
    assert [(f.kind, f.path, f.line) for f in report.integrity_flags] == [("frame-introspection", "calc.py", 7),
                                                                          ("conftest", "conftest.py", None)]
    out = tmp_path / "report.json"
    report.write_json(out)
    assert json.loads(out.read_text())["integrity_flags"][0]["excerpt"] == "return sys._getframe(1).f_locals"


def test_another_languages_report_carries_the_candidates_flags_too(tmp_path: Path, monkeypatch) -> None:
    from projectgen.datasets.examples import example_exercises_dir
    from projectgen.datasets.exercism import exercise_task, load_exercise
    from projectgen.evaluation.languages.toolchains import Toolchain
    from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

    exercise = load_exercise(example_exercises_dir() / "bracket_depth")
    runner = SandboxRunner(RunnerSettings(cache_dir=tmp_path))
    monkeypatch.setattr(runner, "toolchain", lambda language: Toolchain("go", missing=("go",)))  # no run needed
    candidate = {**exercise.candidate(exercise.reference()), "native.go": 'package bracket\n\nimport "C"\n'}
    report = runner.evaluate(exercise_task(exercise), candidate)
    assert report.error and [(f.kind, f.path, f.line) for f in report.integrity_flags] == [
        ("build-script", "native.go", 3)]


def test_the_cli_table_of_a_report_counts_its_flags_by_kind() -> None:
    from rich.console import Console

    from projectgen.cli.tables import print_test_report

    console = Console(record=True, width=200)
    flags = [IntegrityFlag(kind="ctypes", path="m.py", line=1, excerpt="[red]x[/red]")]
    print_test_report(console, TestReport(task_id="t", suite="unit", integrity_flags=flags))
    assert "integrity flags (known gaming moves; they do not change the score): ctypes 1" in console.export_text()
    print_test_report(console, TestReport(task_id="t", suite="unit"))
    assert console.export_text().count("integrity flags") == 0  # export_text clears what it returned
