"""Defects of a task itself, read from its reference's own test run: files the reference reads that the
dataset does not ship.

A reference that fails because a file it opens is missing (DevBench geotext: ``data_file/cities15000.txt``)
is not a harness fault and not a model's: no generated repository could pass either, and reports must say so
rather than show a plain 0. Pure functions over a test report.
"""
from __future__ import annotations

import re

from projectgen.evaluation.report import TestReport

# "No such file or directory: '/tmp/projectgen-ws-.../repo/geotext/data_file/cities15000.txt'"
MISSING_FILE = re.compile(r"(?:FileNotFoundError|No such file or directory)[^'\"\n]*['\"]([^'\"\n]+)['\"]")
WORKSPACE_REPO = re.compile(r"/repo/(.+)$")


def missing_files(report: TestReport) -> list[str]:
    """Repository paths the run tried to open and did not find (inside the workspace's repository), sorted."""
    messages = [error.message for error in report.collection_errors] + [test.message for test in report.tests]
    found = set()
    for message in messages:
        for path in MISSING_FILE.findall(message):
            inside = WORKSPACE_REPO.search(path)
            if inside:
                found.add(inside.group(1))
    return sorted(found)


def dataset_defects(report: TestReport, shipped: set[str]) -> list[str]:
    """One line per file the reference reads that the task does not ship (`shipped`: its reference and test
    files, as repository paths): a defect of the dataset, not of the harness or a candidate."""
    return [f"dataset defect: the reference reads {path}, which the dataset does not ship"
            for path in missing_files(report) if path not in shipped]
