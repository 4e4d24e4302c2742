"""Declared reference defects read against a reflect batch's rows: named on the rows whose declared tests did
not pass, stale (and not applied) once the reference replay passes them."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from projectgen.datasets.known_defects import KnownDefect, exercise_defect_key
from projectgen.protocols.reflection.defects import read_defects, unpassed_tests
from projectgen.protocols.reflection.results import ReflectRow

DEFECT = KnownDefect(tests=("p/p_test.cpp",), defect="the reference uses std::string without <string>")


def row(model: str, task: str, failed: list[str] | None, status: str = "failed") -> ReflectRow:
    attempt: dict[str, Any] = {"try": 1, "tests_passed": 0, "tests_total": 1}
    if failed is not None:
        attempt["failed_tests"] = failed
    return ReflectRow(key=f"{model}/whole/{task}", model=model, edit_format="whole", task_id=task, language="Cpp",
                      status=status, result={"status": status, "tries": [attempt]})


def test_a_declaration_is_named_on_every_row_whose_declared_tests_did_not_pass() -> None:
    rows = [row("reference", "p", ["p/p_test.cpp"]), row("m", "p", ["p/p_test.cpp"]), row("n", "p", [], "passed")]
    reading = read_defects(rows, {"p": DEFECT}, {"reference"})
    line = "dataset defect: the reference uses std::string without <string> (1 test(s): p/p_test.cpp)"
    assert reading.notes == {"reference/whole/p": line, "m/whole/p": line}  # the model that passed has none
    assert reading.stale == {} and reading.declared == {"p"}


def test_a_declaration_the_reference_now_passes_is_stale_and_not_applied() -> None:
    for failed, status in (([], "passed"), (["p/other_test.cpp::x"], "failed")):
        rows = [row("reference", "p", failed, status), row("m", "p", ["p/p_test.cpp"])]
        reading = read_defects(rows, {"p": DEFECT}, {"reference"})
        assert list(reading.stale) == ["p"] and "the reference now passes p/p_test.cpp" in reading.stale["p"]
        assert reading.notes == {} and reading.declared == frozenset()


def test_without_a_reference_replay_or_its_failing_tests_a_declaration_is_never_called_stale() -> None:
    reading = read_defects([row("m", "p", [], "passed")], {"p": DEFECT}, {"reference"})
    assert reading.stale == {} and reading.declared == {"p"}
    older = row("reference", "p", None)  # a result written before tries named their failing tests
    assert unpassed_tests(older.result) is None
    reading = read_defects([older], {"p": DEFECT}, {"reference"})
    assert reading.stale == {} and "does not name the tests it failed" in reading.notes[older.key]


def test_an_exercise_is_keyed_by_its_language_and_folders_not_its_id() -> None:
    folder = Path("/data/cpp/exercises/practice/unit_test_5b95942d/cloud_optimize")
    assert exercise_defect_key("Cpp", folder) == "exercism/cpp/unit_test_5b95942d/cloud_optimize"


def test_an_intermittent_declaration_is_never_stale() -> None:
    """A race in the published code fails its test only under load: a run that passes it shows no fix."""
    racy = KnownDefect(tests=("p/p_test.cpp",), defect="a race", intermittent=True)
    reading = read_defects([row("reference", "p", [], "passed")], {"p": racy}, {"reference"})
    assert reading.stale == {} and reading.notes == {} and reading.declared == {"p"}
    failed = read_defects([row("reference", "p", ["p/p_test.cpp"])], {"p": racy}, {"reference"})
    assert failed.notes == {"reference/whole/p": "dataset defect: a race (1 intermittent test(s): p/p_test.cpp)"}
