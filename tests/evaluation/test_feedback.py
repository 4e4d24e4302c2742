"""A test run told back to a model: failures with their messages, without what changes from run to run."""
from __future__ import annotations

from projectgen.evaluation.feedback import clean_output, failure_log
from projectgen.evaluation.report import CollectionError, Outcome, TestReport, TestResult

RAW = """\
/tmp/projectgen-word_index-k2j_x9ab/word_index/index.py:12: in search
    return sorted(found)
/root/.cache/projectgen/envs/8d84acc9bf0500de/lib/python3.11/site-packages/_pytest/python.py:100: in f
/usr/lib/python3.11/unittest/case.py:873: in assertEqual
E   AssertionError: <word_index.Index object at 0x7f3a2b1c9d10> != [1]
/opt/tools/data/file.txt beside word_index/index.py
1 failed, 5 passed in 0.05s
Ran 3 tests in 0.001s
"""


def test_paths_become_relative_or_short_and_timings_and_addresses_go() -> None:
    assert clean_output(RAW) == """\
word_index/index.py:12: in search
    return sorted(found)
<site-packages>/_pytest/python.py:100: in f
<python>/unittest/case.py:873: in assertEqual
E   AssertionError: <word_index.Index object at 0x...> != [1]
.../file.txt beside word_index/index.py
1 failed, 5 passed
Ran 3 tests
"""


def test_two_runs_of_the_same_failure_in_other_workspaces_read_the_same() -> None:
    other = RAW.replace("projectgen-word_index-k2j_x9ab", "projectgen-word_index-0qq1zz9_").replace(
        "0x7f3a2b1c9d10", "0x55d0c0ffee00").replace("0.05s", "1.93s")
    assert clean_output(other) == clean_output(RAW)


def report(**fields) -> TestReport:
    return TestReport(task_id="t", suite="unit", **fields)


def test_the_log_names_every_failure_with_its_message_and_says_when_the_run_timed_out() -> None:
    log = failure_log(report(
        tests=[TestResult(nodeid="p/p_test.py::T::test_a", outcome=Outcome.PASSED),
               TestResult(nodeid="p/p_test.py::T::test_b", outcome=Outcome.FAILED,
                          message="/tmp/projectgen-p-abcdefgh/p/m.py:3: AssertionError"),
               TestResult(nodeid="p/p_test.py::T::test_c", outcome=Outcome.ERROR, message="timed out while running")],
        collection_errors=[CollectionError(nodeid="p/q_test.py", message="ImportError: cannot import name 'x'")],
        timed_out=True, output_tail="ignored: failures explain"))
    assert log.splitlines()[0] == ("1 of 4 tests passed. The test run timed out: tests that had not finished count "
                                   "as failed.")
    assert "ERROR collecting p/q_test.py\nImportError: cannot import name 'x'" in log
    assert "FAILED p/p_test.py::T::test_b\np/m.py:3: AssertionError" in log
    assert "ERROR p/p_test.py::T::test_c\ntimed out while running" in log
    assert "ignored" not in log and "/tmp" not in log


def test_without_failures_to_show_the_end_of_the_output_explains_and_a_long_log_is_cut() -> None:
    log = failure_log(report(collected=0, output_tail="ERROR: file or directory not found: /tmp/projectgen-x-12345678/t"))
    assert "pytest output (end):\nERROR: file or directory not found: t" in log
    long = failure_log(report(tests=[TestResult(nodeid="t", outcome=Outcome.FAILED, message="x" * 500)]), limit=100)
    assert len(long) < 160 and long.endswith("more characters ...]")
