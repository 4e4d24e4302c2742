"""Task model and loaders for CodeProjectEval, DevBench and plain task folders, and Exercism-layout
exercises (LiveRepoReflection, Aider's polyglot benchmark: `exercism`) and multi-turn tasks (SR-Eval:
`multiturn`).

Names are re-exported lazily: the CLI's parser imports `installing` (what `datasets fetch --help` shows), and
an eager import here would load the task model's pydantic into `projectgen --help`.
"""
from __future__ import annotations

from projectgen.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Task": "projectgen.datasets.task",
    "TestSuite": "projectgen.datasets.task",
    "EnvSpec": "projectgen.datasets.task",
    "Documents": "projectgen.datasets.task",
    "load_task": "projectgen.datasets.loaders",
    "load_dataset": "projectgen.datasets.loaders",
    "example_tasks_dir": "projectgen.datasets.examples",
    "example_task_path": "projectgen.datasets.examples",
    "example_script_path": "projectgen.datasets.examples",
    "example_exercises_dir": "projectgen.datasets.examples",
    "Exercise": "projectgen.datasets.exercism",
    "load_exercise": "projectgen.datasets.exercism",
    "load_exercises": "projectgen.datasets.exercism",
    "exercise_task": "projectgen.datasets.exercism",
    "MultiTurnTask": "projectgen.datasets.multiturn",
    "load_multiturn_task": "projectgen.datasets.multiturn",
    "load_multiturn_dataset": "projectgen.datasets.multiturn",
    "check_multiturn_task": "projectgen.datasets.multiturn",
    "turn_task": "projectgen.datasets.multiturn",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
