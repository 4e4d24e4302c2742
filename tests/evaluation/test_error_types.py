"""Error types of failing tests (ProjectGen's and LiveCoder's Figure 5): the exception pytest names for each
failing test of a report, read from the report alone, and its category."""
from __future__ import annotations

from projectgen.evaluation.error_types import (NO_EXCEPTION, OTHER, by_category, category, collection_error_types,
                                               error_type, failing_error_types, merged)
from projectgen.evaluation.report import CollectionError, Outcome, TestReport, TestResult

ASSERTION = """    def test_counts():
>       assert count_words("don't stop") == {"don't": 1, "stop": 1}
E       AssertionError: assert {'don': 1, 't': 1, 'stop': 1} == {"don't": 1, 'stop': 1}
E         Left contains 2 more items

tests/test_wordfreq.py:12: AssertionError"""
RAISED = """    def get(self, key):
>       return self._data[key]
E       KeyError: 'missing'

kvstore/store.py:40: KeyError"""
DOTTED = """E   json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"""
IMPORT = """ImportError while importing test module '/ws/tests/test_store.py'.
tests/test_store.py:3: in <module>
    from kvstore.store import Store
E   ModuleNotFoundError: No module named 'kvstore.store'"""


def test_the_crash_line_names_the_type_else_the_last_e_line() -> None:
    assert error_type(ASSERTION) == "AssertionError"
    assert error_type(RAISED) == "KeyError"
    assert error_type(DOTTED) == "JSONDecodeError"  # the class, not its module
    assert error_type(IMPORT) == "ModuleNotFoundError"
    assert error_type("tests/test_x.py:3: Failed") == "Failed"  # pytest.fail, pytest-timeout


def test_a_message_naming_no_exception_is_said_so_not_guessed() -> None:
    assert error_type("") == NO_EXCEPTION
    assert error_type("the run timed out before this test finished") == NO_EXCEPTION
    # a crash-line shape whose last word is no exception class (a test printing `file.py:1: hello`)
    assert error_type("notes.py:1: hello") == NO_EXCEPTION


def test_an_overlong_name_from_the_code_under_test_is_cut() -> None:
    name = error_type("E   " + "A" * 500 + "Error: shaped by the code under test")
    assert len(name) == 80 and name.startswith("AAA")


def test_categories_group_the_types_and_keep_the_rest_apart() -> None:
    assert category("AssertionError") == "wrong result"
    assert category("ModuleNotFoundError") == "missing module or name"
    assert category("AttributeError") == category("TypeError") == "interface mismatch"
    assert category(NO_EXCEPTION) == "timeout or crash"
    assert category("JSONDecodeError") == OTHER
    assert by_category({"AttributeError": 2, "TypeError": 1, "AssertionError": 4, "JSONDecodeError": 1}) == {
        "wrong result": 4, "interface mismatch": 3, OTHER: 1}


def test_a_reports_failing_tests_and_uncollected_modules_are_counted_apart() -> None:
    report = TestReport(task_id="t", suite="unit", tests=[
        TestResult(nodeid="a", outcome=Outcome.FAILED, message=ASSERTION),
        TestResult(nodeid="b", outcome=Outcome.ERROR, message=RAISED),
        TestResult(nodeid="c", outcome=Outcome.FAILED, message=ASSERTION),
        TestResult(nodeid="d", outcome=Outcome.PASSED, message=RAISED),  # passed: not a failing test
        TestResult(nodeid="e", outcome=Outcome.SKIPPED, message=RAISED),
    ], collection_errors=[CollectionError(nodeid="tests/test_store.py", message=IMPORT)])
    assert failing_error_types(report) == {"AssertionError": 2, "KeyError": 1}
    assert collection_error_types(report) == {"ModuleNotFoundError": 1}
    assert merged([failing_error_types(report), None, {"KeyError": 2}]) == {"AssertionError": 2, "KeyError": 3}
