"""Expected tests: the per-task denominator measured from the reference, and scores against it."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from projectgen.datasets.loaders import load_dataset
from projectgen.datasets.task import Task
from projectgen.evaluation.expectations import ExpectationError, ExpectedTests, covers, group_by_file, score_report
from projectgen.evaluation.report import CollectionError, Outcome, TestReport, TestResult
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from test_support import make_task

CALC = "def add(a, b):\n    return a + b\n"
TEXT = "def shout(s):\n    return s.upper() + '!'\n"


class CountingRunner(SandboxRunner):
    """A sandbox runner that counts its measurements: runs of the reference, less a run that only verifies twins
    (a measurement is one run when every real test passes with the twin candidates planted beside them, else
    two)."""

    def __init__(self, settings: RunnerSettings) -> None:
        super().__init__(settings)
        self.runs = 0
        self.sandbox_runs = 0

    def _reference_run(self, task, suite, planting) -> TestReport:
        self.sandbox_runs += 1
        # a run of twins alone (unchecked, no canary) verifies them; a measuring run plants canaries
        self.runs += planting.checked or any(test.kind == "canary" for test in planting.tests)
        return super()._reference_run(task, suite, planting)


def runner(env_cache: Path, expectations: Path) -> CountingRunner:
    return CountingRunner(RunnerSettings(cache_dir=env_cache, expectations_dir=expectations, timeout=60))


def task_with_reference(root: Path, tests: dict[str, str], reference: dict[str, str]) -> Task:
    task = make_task(root, tests)
    for rel, text in reference.items():
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    return task.model_copy(update={"reference": tuple(sorted(reference))})


TWO_MODULES = {
    "test_calc.py": """
        from calc import add
        def test_small(): assert add(1, 2) == 3
        def test_zero(): assert add(0, 0) == 0
        def test_negative(): assert add(-1, 1) == 0
    """,
    "test_text.py": """
        from text import shout
        def test_shout(): assert shout("hi") == "HI!"
        def test_empty(): assert shout("") == "!"
    """,
}


def test_a_collection_error_counts_for_every_test_of_its_module(tmp_path: Path, env_cache: Path) -> None:
    task = task_with_reference(tmp_path / "two", TWO_MODULES, {"calc.py": CALC, "text.py": TEXT})
    scored = runner(env_cache, tmp_path / "expected").score(task, {"calc.py": CALC, "text.py": "import nowhere\n"})
    assert [e.nodeid for e in scored.report.collection_errors] == ["unit_tests/test_text.py"]
    assert scored.report.total == 4  # the run alone sees 3 tests and 1 error, not 5 tests
    assert scored.expected.modules["unit_tests/test_text.py"] == (
        "unit_tests/test_text.py::test_shout", "unit_tests/test_text.py::test_empty")
    score = scored.score
    assert (score.passed, score.expected, score.collection_failed) == (3, 5, 2)
    assert score.pass_rate == pytest.approx(0.6) and not score.full_score


def test_skipped_and_xfail_tests_of_the_reference_are_left_out(tmp_path: Path, env_cache: Path) -> None:
    task = task_with_reference(tmp_path / "skips", {
        "test_calc.py": """
            import pytest
            from calc import add
            def test_add(): assert add(2, 2) == 4
            def test_more(): assert add(2, 3) == 5
            @pytest.mark.skip(reason="not today")
            def test_skipped(): pass
            def test_skips_itself(): pytest.skip("needs a network")
            @pytest.mark.xfail
            def test_xfail(): assert False
            @pytest.mark.xfail
            def test_xpass(): pass
        """,
    }, {"calc.py": CALC})
    run = runner(env_cache, tmp_path / "expected")
    expected = run.expected_tests(task)
    assert sorted(expected.ids) == ["unit_tests/test_calc.py::test_add", "unit_tests/test_calc.py::test_more"]
    assert {n.split("::")[1]: kind for n, kind in expected.left_out.items()} == {
        "test_skipped": "skipped", "test_skips_itself": "skipped", "test_xfail": "xfail", "test_xpass": "xfail"}
    assert expected.reference_not_passed == {} and expected.complete
    good = run.score(task, {"calc.py": CALC})
    assert good.report.passed == 2 and good.report.total == 6  # the old denominator could never be met
    assert (good.score.passed, good.score.expected, good.score.left_out) == (2, 2, 4) and good.score.full_score
    bad = run.score(task, {"calc.py": "def add(a, b):\n    return 4\n"})
    assert (bad.score.passed, bad.score.failed) == (1, 1) and not bad.score.full_score


def test_a_test_the_reference_fails_stays_expected(tmp_path: Path, env_cache: Path) -> None:
    task = task_with_reference(tmp_path / "fails", {
        "test_calc.py": "from calc import add\ndef test_ok(): assert add(1, 1) == 2\n"
                        "def test_wrong(): assert add(1, 1) == 3\n",
    }, {"calc.py": CALC})
    expected = runner(env_cache, tmp_path / "expected").expected_tests(task)
    assert expected.count == 2
    assert expected.reference_not_passed == {"unit_tests/test_calc.py::test_wrong": "failed"}
    assert any("no candidate can reach a full score" in note for note in expected.notes())


def test_a_reference_passing_every_test_gives_its_tests_and_twins_in_one_run(tmp_path: Path,
                                                                            env_cache: Path) -> None:
    """The run that measures the expected tests tries the twin candidates too: a second run of the reference only
    to verify them doubled the first evaluation of every task."""
    task = task_with_reference(tmp_path / "once", TWO_MODULES, {"calc.py": CALC, "text.py": TEXT})
    counting = runner(env_cache, tmp_path / "expected")
    expected = counting.expected_tests(task)
    assert counting.sandbox_runs == 1 and expected.count == 5 and not expected.reference_not_passed
    assert {twin.original for twin in expected.twins or ()} == {
        "test_small", "test_zero", "test_negative", "test_shout", "test_empty"}
    assert counting.score(task, task.reference_files()).score.full_score


def test_a_reference_failing_a_test_is_measured_again_without_twins(tmp_path: Path, env_cache: Path) -> None:
    """With twins planted, a real test that fails might have been changed by one (state it left behind): the
    reference is measured again alone, and the twins tried in a run of their own, as before."""
    tests = dict(TWO_MODULES, **{"test_more.py": "from calc import add\ndef test_wrong(): assert add(2, 2) == 5\n"})
    task = task_with_reference(tmp_path / "fails", tests, {"calc.py": CALC, "text.py": TEXT})
    counting = runner(env_cache, tmp_path / "expected")
    expected = counting.expected_tests(task)
    assert counting.sandbox_runs == 3 and counting.runs == 2
    assert expected.reference_not_passed == {"unit_tests/test_more.py::test_wrong": "failed"}
    assert "test_wrong" not in {twin.original for twin in expected.twins or ()} and expected.twins


def test_the_measurement_is_cached_and_measured_again_when_a_test_file_changes(tmp_path: Path,
                                                                               env_cache: Path) -> None:
    task = task_with_reference(tmp_path / "cached", TWO_MODULES, {"calc.py": CALC, "text.py": TEXT})
    first = runner(env_cache, tmp_path / "expected")
    assert first.expected_tests(task).count == 5 and first.runs == 1
    again = runner(env_cache, tmp_path / "expected")  # a new runner: the cache is on disk
    assert again.expected_tests(task) == first.expected_tests(task)
    assert again.runs == 0 and first.runs == 1
    (task.root / "unit_tests" / "test_text.py").write_text(
        "from text import shout\ndef test_shout(): assert shout('a') == 'A!'\n", encoding="utf-8")
    assert again.expected_tests(task).count == 4 and again.runs == 1
    assert again.expected_tests(task, refresh=True).count == 4 and again.runs == 2


def test_tests_the_candidate_adds_are_ignored(tmp_path: Path, env_cache: Path) -> None:
    task = task_with_reference(tmp_path / "extra", {
        "test_cases.py": """
            import pytest
            from calc import CASES, add
            @pytest.mark.parametrize("n", CASES)
            def test_case(n): assert add(n, 0) == n
        """,
    }, {"calc.py": CALC + "CASES = [1, 2]\n"})
    scored = runner(env_cache, tmp_path / "expected").score(task, {"calc.py": CALC + "CASES = [1, 2, 3, 4]\n"})
    assert scored.report.passed == 4
    assert (scored.score.passed, scored.score.expected, scored.score.extra) == (2, 2, 2) and scored.score.full_score


def test_declared_expected_tests_need_no_reference_run(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "declared", TWO_MODULES)
    run = runner(env_cache, tmp_path / "expected")
    with pytest.raises(ExpectationError, match="no reference and declares no expected unit tests"):
        run.expected_tests(task)
    declared = task.model_copy(update={"expected_tests": {"unit": ("unit_tests/test_calc.py::test_small",)}})
    expected = run.expected_tests(declared)
    assert expected.source == "dataset" and expected.count == 1 and run.runs == 0


def test_scores_without_a_sandbox() -> None:
    """Missing results (a killed run) fail; an error in a class covers its tests only."""
    module = "unit_tests/test_m.py"
    ids = [f"{module}::TestA::test_1", f"{module}::TestA::test_2", f"{module}::test_free", f"{module}::test_late"]
    expected = ExpectedTests(task_id="t", suite="unit", source="dataset", modules=group_by_file(ids))
    report = TestReport(task_id="t", suite="unit", tests=[TestResult(nodeid=ids[2], outcome=Outcome.PASSED)],
                        collection_errors=[CollectionError(nodeid=f"{module}::TestA")])
    score = score_report(report, expected)
    assert (score.passed, score.collection_failed, score.missing, score.expected) == (1, 2, 1, 4)
    assert covers("unit_tests", f"{module}::test_free") and covers("unit_tests/conftest.py", f"{module}::x")
    assert not covers("unit_tests/test_m", f"{module}::x") and not covers(f"{module}::TestAB", ids[0])
    assert not score_report(TestReport(task_id="t", suite="unit"),
                            ExpectedTests(task_id="t", suite="unit", source="dataset")).full_score


@pytest.mark.datasets
def test_devbench_references_score_full_on_their_expected_tests(shared_datasets: Path, tmp_path: Path) -> None:
    """ProjectGen's DevBench #Pass for lice and readtime (issue 12: 25 and 8) as our denominators."""
    tasks = {task.id: task for task in load_dataset(shared_datasets / "DevBench")}
    run = SandboxRunner(RunnerSettings(expectations_dir=tmp_path / "expected"))  # the machine's env cache
    for name, count in (("lice", 25), ("readtime", 8)):
        task = tasks[name]
        assert run.expected_tests(task, "unit").count == count
        score = run.score(task, task.reference_files(), "unit").score
        assert (score.passed, score.expected, score.full_score) == (count, count, True)


def test_a_declared_test_the_reference_does_not_collect_is_refused_not_scored_zero(tmp_path: Path,
                                                                                   env_cache: Path) -> None:
    task = task_with_reference(tmp_path / "checked", TWO_MODULES, {"calc.py": CALC, "text.py": TEXT})
    run = runner(env_cache, tmp_path / "expected")
    real = task.model_copy(update={"expected_tests": {"unit": ("unit_tests/test_calc.py::test_small",)}})
    assert run.expected_tests(real).count == 1
    assert run.score(real, {"calc.py": CALC, "text.py": TEXT}).score.full_score
    typo = task.model_copy(update={"expected_tests": {"unit": ("unit_tests/test_calc.py::test_smal",
                                                               "unit_tests/test_calc.py::test_zero")}})
    with pytest.raises(ExpectationError, match=r"names 1 test\(s\) its reference does not collect: "
                                               r"unit_tests/test_calc.py::test_smal$"):
        run.expected_tests(typo)


def test_a_reference_run_read_as_tampered_is_never_cached() -> None:
    """CodeProjectEval cookiecutter froze the clock once and its reference run was read as forged: that
    measurement, cached, counted every test as one the reference does not pass for every later candidate."""
    from projectgen.evaluation.expectations import ExpectationKey, from_reference_report

    key = ExpectationKey(task_id="t", suite="unit", env_key="e", inputs_digest="d")
    tests = [TestResult(nodeid="unit_tests/test_a.py::test_a", outcome=Outcome.PASSED)]
    clean = TestReport(task_id="t", suite="unit", tests=tests, exit_status=0)
    assert from_reference_report(clean, key).complete
    forged = clean.model_copy(update={"tampered": "a negative duration"})
    assert not from_reference_report(forged, key).complete
