"""The last few test runs of one runner, so the same tests are not run twice on the same code.

LiveCoder scores an attempt by its check tests right after the code judge ran exactly those
tests on exactly that repository (and self-reflection's last round did the same): the runner
answers such a repeat with the report it just made. Only whole runs are kept (no harness
error, no timeout), keyed by task, suite and the candidate's files (path and text hashed), so
any change of the repository runs the tests again.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from projectgen.evaluation.report import TestReport


class RecentRuns:
    """A small, thread-safe memory of reports by (task, suite, candidate files)."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self.reports: OrderedDict[str, TestReport] = OrderedDict()
        self.lock = threading.Lock()
        self.hits = 0

    @staticmethod
    def key(task_id: str, task_root: str, suite: str, candidate: Any) -> str | None:
        """The memory key of a run, or None for a candidate it cannot fingerprint (a folder, binary files)."""
        if not isinstance(candidate, Mapping) or not all(isinstance(v, str) for v in candidate.values()):
            return None
        digest = hashlib.sha256(f"{task_id}\0{task_root}\0{suite}".encode())
        for path in sorted(candidate):
            digest.update(f"\0{path}\0".encode())
            digest.update(candidate[path].encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def get(self, key: str) -> TestReport | None:
        """A copy of the report kept under `key` (callers may change theirs)."""
        with self.lock:
            report = self.reports.get(key)
            if report is None:
                return None
            self.reports.move_to_end(key)
            self.hits += 1
            return report.model_copy(deep=True)

    def put(self, key: str, report: TestReport) -> None:
        """Keep `report` if the run was whole; forget the oldest beyond `size`."""
        if report.error or report.timed_out:
            return
        with self.lock:
            self.reports[key] = report.model_copy(deep=True)
            self.reports.move_to_end(key)
            while len(self.reports) > self.size:
                self.reports.popitem(last=False)
