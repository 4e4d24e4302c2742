"""projectgen: requirement documents in, a tested Python repository out.

Public names are re-exported lazily so that `import projectgen` (and the CLI's
start-up) stays fast; heavy libraries load only when a name that needs them is used.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "ProjectGenError": "projectgen.errors",
    "Task": "projectgen.datasets.task",
    "TestSuite": "projectgen.datasets.task",
    "EnvSpec": "projectgen.datasets.task",
    "Documents": "projectgen.datasets.task",
    "load_task": "projectgen.datasets.loaders",
    "load_dataset": "projectgen.datasets.loaders",
    "example_tasks_dir": "projectgen.datasets.examples",
    "Repository": "projectgen.repository",
    "load_repository": "projectgen.repository",
    "write_repository": "projectgen.repository",
    "SandboxRunner": "projectgen.evaluation.runner",
    "RunnerSettings": "projectgen.evaluation.runner",
    "TestReport": "projectgen.evaluation.report",
    "TestResult": "projectgen.evaluation.report",
    "Outcome": "projectgen.evaluation.report",
    "pass_rate": "projectgen.evaluation.metrics",
    "loc_weighted_average": "projectgen.evaluation.metrics",
    "repository_stats": "projectgen.evaluation.metrics",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    """Import the defining module on first use of a public name."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'projectgen' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
