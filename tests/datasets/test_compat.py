"""Per-task environment fixes: applied from data, and they change the environment key."""
from __future__ import annotations

from pathlib import Path

from projectgen.datasets.compat import apply_compat, load_compat
from projectgen.datasets.task import Documents, EnvSpec, Task


def _task(task_id: str) -> Task:
    return Task(id=task_id, root=Path("/nonexistent"), format="codeprojecteval", docs=Documents(prd="p"),
                env=EnvSpec(requirements=("wrapt",)))


def test_entry_adds_requirements_and_constraints_and_a_new_cache_key() -> None:
    entries = {"codeprojecteval/demo": {"requirements": ["setuptools<81"], "constraints": ["pyjwt<2.10"], "reason": "r"}}
    task = _task("demo")
    fixed = apply_compat(task, entries)
    assert fixed.env.requirements == ("wrapt", "setuptools<81")
    assert fixed.env.constraints == ("pyjwt<2.10",)
    assert fixed.env.cache_key() != task.env.cache_key()
    assert apply_compat(_task("other"), entries) == _task("other")


def test_every_shipped_entry_says_why() -> None:
    for key, entry in load_compat().items():
        assert "/" in key and entry.get("reason"), key
        assert set(entry) <= {"requirements", "constraints", "reason"}, key
