"""Defects of a task itself, read from its reference's own test run: files the reference reads that the
dataset does not ship.

A reference that fails because a file it opens is missing (DevBench geotext: ``data_file/cities15000.txt``)
is not a harness fault and not a model's: no generated repository could pass either, and reports must say so
rather than show a plain 0. Three shapes are read: a missing file inside the workspace's repository, a path
mypy cannot read (CodeProjectEval rsa: its mypy test checks ``tests``, a folder the dataset renamed), and a
file missing from a test's temporary folder whose name no shipped file has (cookiecutter: the template's
``.DS_Store`` never made it into the dataset, so its copy is never made). A file outside these (a model
download, a home folder) is not the dataset's. Tests that import another suite's folder, which is kept from
their run, are a defect too (trailscraper's check tests import the hidden ``unit_tests``). Pure functions
over a test report.
"""
from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from pathlib import PurePosixPath

from projectgen.evaluation.report import TestReport
from projectgen.evaluation.stable_output import WORKSPACE

# "No such file or directory: '/workspace/geotext/data_file/cities15000.txt'"
MISSING_FILE = re.compile(r"(?:FileNotFoundError|No such file or directory)[^'\"\n]*['\"]([^'\"\n]+)['\"]")
# a path in the workspace: shown as WORKSPACE (`stable_output`), by its session folder in older reports
WORKSPACE_REPO = re.compile(rf"^(?:{re.escape(WORKSPACE)}|.*/repo)/(.+)$")
# mypy, relative to the repository (the tests' working folder): "E   tests: error: Cannot read file: No such ..."
MYPY_UNREADABLE = re.compile(r"(?m)^(?:E\s+)?(\S+): error: Cannot read file: No such file or directory")
NOT_A_MODULE = re.compile(r"No module named '([\w.]+)'")
# a test's own temporary folder: ".../pytest-of-sandbox/pytest-0/test_generate_files_binaries0/out/.DS_Store"
PYTEST_TEMPORARY = re.compile(r"/pytest-of-[^/]+/pytest-\d+/[^/]+/(.+)$")


def _messages(report: TestReport) -> list[str]:
    return [error.message for error in report.collection_errors] + [test.message for test in report.tests]


def missing_files(report: TestReport) -> list[str]:
    """Repository paths the run tried to open and did not find (inside the workspace's repository, or named
    relative to it by mypy), sorted."""
    found = set()
    for message in _messages(report):
        for path in MISSING_FILE.findall(message):
            inside = WORKSPACE_REPO.search(path)
            if inside:
                found.add(inside.group(1))
        for path in MYPY_UNREADABLE.findall(message):
            inside = WORKSPACE_REPO.search(path)
            if inside or not path.startswith("/"):
                found.add(inside.group(1) if inside else path)
    return sorted(found)


def missing_temporary_files(report: TestReport) -> list[str]:
    """Paths below a test's temporary folder the run tried to open and did not find, sorted."""
    found = set()
    for message in _messages(report):
        for path in MISSING_FILE.findall(message):
            inside = PYTEST_TEMPORARY.search(path)
            if inside and not WORKSPACE_REPO.search(path):
                found.add(inside.group(1))
    return sorted(found)


def hidden_suite_imports(report: TestReport, hidden: AbstractSet[str]) -> list[str]:
    """The modules of `hidden` (another suite's top folders, kept from this suite's run) that this run's tests
    failed to import, sorted: CodeProjectEval trailscraper's check tests import ``unit_tests``' test data."""
    found = set()
    for message in _messages(report):
        found |= {name for name in NOT_A_MODULE.findall(message) if name.split(".")[0] in hidden}
    return sorted({name.split(".")[0] for name in found})


def dataset_defects(report: TestReport, shipped: set[str], hidden: AbstractSet[str] = frozenset()) -> list[str]:
    """One line per file the reference reads that the task does not ship (`shipped`: its reference, test and
    support files, as repository paths): a defect of the dataset, not of the harness or a candidate. A file
    missing from a test's temporary folder counts when no shipped file has its name (there was nothing to
    copy or render it from). Tests that import a suite kept from them (`hidden`: the hidden unit tests, while
    the check tests run) cannot run in any generator's loop."""
    defects = [f"dataset defect: the reference reads {path}, which the dataset does not ship"
               for path in missing_files(report)
               if path not in shipped and not any(name.startswith(path.rstrip("/") + "/") for name in shipped)]
    names = {PurePosixPath(path).name for path in shipped}
    defects += [f"dataset defect: a test expects {PurePosixPath(path).name} in its temporary folder ({path}), "
                "and the dataset ships no file of that name"
                for path in missing_temporary_files(report) if PurePosixPath(path).name not in names]
    defects += [f"dataset defect: the {report.suite} tests import {name}, another suite's folder, which their run "
                "does not have (hidden from it)" for name in hidden_suite_imports(report, hidden)]
    return defects
