"""What an external system is given: the documents its entry lists, and the check tests only when it asks for them."""
from __future__ import annotations

import dataclasses

from projectgen import load_task
from projectgen.datasets.examples import example_task_path
from projectgen.external.runner import system_documents
from projectgen.external.systems import load_systems


def test_a_system_asking_for_the_check_tests_gets_the_check_suite_and_never_the_unit_tests() -> None:
    task = load_task(example_task_path("kvstore"))
    openevolve = load_systems()["openevolve"]
    given = system_documents(openevolve, task)
    check = {path for path in given if path.startswith("check_tests/")}
    assert check == {"check_tests/test_kvstore_check.py"}
    assert given["check_tests/test_kvstore_check.py"] == (task.root / "check_tests/test_kvstore_check.py").read_text()
    assert not any("unit" in path for path in given)
    assert {"PRD.md", "UML_class.md"} <= set(given)
    without = dataclasses.replace(openevolve, documents=("PRD.md",))
    assert set(system_documents(without, task)) == {"PRD.md"}
