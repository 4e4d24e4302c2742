"""Run these tests on this code in the sandbox, and say how each test went: every construction step that
checks a draft (a seed's reference on its tests, a turn's code on its own and the previous turn's tests)
goes through `run_tests`, so generated code and generated tests only ever run in the sandbox
(`projectgen.evaluation.SandboxRunner`)."""
from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from projectgen.datasets.task import Documents, EnvSpec, Task, TestSuite
from projectgen.repository import safe_relpath

if TYPE_CHECKING:
    from projectgen.evaluation import SandboxRunner, TestReport

SUITE = "check"  # the suite name the tests run as


def run_tests(runner: SandboxRunner, code: Mapping[str, str], tests: Mapping[str, str], *,
              env: EnvSpec | None = None, label: str = "construction") -> TestReport:
    """`tests` (path -> text, e.g. ``{"test_rle.py": ...}``) run against `code` (path -> text) in the sandbox;
    the report holds one outcome per test (`TestReport.tests`).

    The tests are written to a scratch task folder the sandbox copies them from; the task's id carries a hash
    of the tests, so the runner's memory of recent runs never answers for other tests.
    """
    if not tests:
        raise ValueError("run_tests needs at least one test file")
    paths = {safe_relpath(path): text for path, text in tests.items()}
    digest = hashlib.sha256(repr(sorted(paths.items())).encode("utf-8")).hexdigest()[:16]
    with tempfile.TemporaryDirectory(prefix="projectgen-construct-") as scratch:
        root = Path(scratch)
        for path, text in paths.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        task = Task(id=f"{label}-{digest}", root=root, format="taskdir", docs=Documents(prd=label),
                    suites={SUITE: TestSuite(name=SUITE, paths=tuple(sorted(paths)))}, env=env or EnvSpec())
        return runner.evaluate(task, dict(code), SUITE)
