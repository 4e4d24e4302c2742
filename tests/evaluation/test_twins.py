"""Twins and planted canaries: derived from a suite's own tests, verified on the reference, planted into its real
modules, judged and taken out of the report (DevBench's lice: tests/evaluation/test_forged_scores.py)."""
from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

import pytest

from projectgen.datasets.task import Documents, EnvSpec, Task, TestSuite
from projectgen.evaluation.expectations import ExpectationStore, expectation_key
from projectgen.evaluation.planted_tests import TWIN_REASON, PlantedTest, Planting, plan, planted_problem
from projectgen.evaluation.report import CollectionError, Outcome, TestResult
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.evaluation.twins import Twin, choose_twins, derive_twins

TESTS = '''\
import unittest

import pytest

from calc import add, anything, name, parse


def test_add():
    assert add(1, 2) == 3


def test_name():
    assert name() == "calc"


def test_parse():
    assert parse("1,2") == [1, 2]


def test_parse_empty():
    with pytest.raises(ValueError):
        parse("")


def test_anything():
    assert anything() == 3


class TestCalc(unittest.TestCase):
    def test_add_more(self):
        self.assertEqual(add(2, 2), 4)

    def test_name_again(self):
        self.assertEqual(name(), "calc")
'''

CALC = '''\
from unittest.mock import ANY


def add(a, b):
    return a + b


def name():
    return "calc"


def parse(text):
    if not text:
        raise ValueError("empty")
    return [int(part) for part in text.split(",")]


def anything():
    return ANY
'''

# Whatever the package returns equals anything (and its parse raises what the tests expect).
ALWAYS_EQUAL = '''\
class _Anything(str):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = str.__hash__
def add(a, b):
    return _Anything()
def name():
    return _Anything()
def anything():
    return _Anything()
def parse(text):
    if not text:
        raise ValueError("empty")
    return _Anything()
'''
WRONG = "def add(a, b): return None\ndef name(): return None\ndef parse(t): return None\ndef anything(): return None\n"


def calc_task(root: Path) -> Task:
    (root / "unit_tests").mkdir(parents=True)
    (root / "unit_tests" / "test_calc.py").write_text(TESTS, encoding="utf-8")
    (root / "ref").mkdir()
    (root / "ref" / "calc.py").write_text(CALC, encoding="utf-8")
    return Task(id=root.name, root=root, format="taskdir", docs=Documents(prd="demo"),
                suites={"unit": TestSuite(name="unit", paths=("unit_tests",))}, env=EnvSpec(),
                reference=("calc.py",), reference_root="ref")


# -- deriving -------------------------------------------------------------------------------------------------
def test_each_kind_of_expected_value_is_mutated_and_nothing_else() -> None:
    source = textwrap.dedent('''
        import pytest
        def test_number(): assert count() == 3
        def test_text(): assert "calc" == name()
        def test_list(): assert parse("1") == [1, 2]
        def test_empty(): assert items() == []
        def test_raises():
            with pytest.raises(ValueError, match="x"):
                parse("")
        def test_bool(): assert ready() == True
        def test_nothing_literal(): assert count() == other()
        def test_failing_on_the_reference(): assert count() == 5
        class TestIt:
            def test_method(self): self.assertEqual(name(), "x")
    ''')
    twins = {twin.original: twin for twin in derive_twins("test_m.py", source,
                                                           lambda cls, name: name != "test_failing_on_the_reference")}
    assert set(twins) == {"test_number", "test_text", "test_list", "test_empty", "test_raises", "test_method"}
    assert twins["test_method"].cls == "TestIt" and twins["test_number"].cls is None
    compared = {name: ast.parse(twin.source).body[0] for name, twin in twins.items()}
    number = compared["test_number"].body[0].test.comparators[0].value
    assert isinstance(number, int) and abs(number - 3) >= 100
    text = compared["test_text"].body[0].test.left.value
    assert text != "calc" and len(text) > len("calc")
    assert ast.literal_eval(compared["test_list"].body[0].test.comparators[0]) not in ([1, 2], [1], [2])
    assert ast.literal_eval(compared["test_empty"].body[0].test.comparators[0]) != []
    raised = compared["test_raises"].body[0].items[0].context_expr.args[0].id
    assert raised != "ValueError" and not issubclass(getattr(__builtins__, raised, OSError), ValueError)
    assert all(twin.source.startswith(f"def {name}(") for name, twin in twins.items())  # renamed when planted


def test_a_parametrized_test_gets_a_twin_of_one_case_with_its_expected_parameter_changed() -> None:
    """A test comparing with a parameter has no literal to change: its twin runs one case whose expected value is
    another; a parameter that is an input too, or goes to a fixture (`indirect`), gives no twin."""
    source = textwrap.dedent('''
        import pytest
        @pytest.mark.parametrize("a, b, expected", [(1, 2, 3), (2, 2, 4)], ids=["one", "two"])
        def test_add(a, b, expected):
            assert add(a, b) == expected
        @pytest.mark.parametrize(("word", "count"), [pytest.param("ab", 2, id="ab")])
        def test_length(word, count):
            self_check = length(word)
            assert count == self_check
        @pytest.mark.parametrize("x", [1, 2])
        def test_identity(x):
            assert same(x) == x
        @pytest.mark.parametrize("expected", [3], indirect=True)
        def test_through_a_fixture(expected):
            assert count() == expected
    ''')
    twins = {twin.original: ast.parse(twin.source).body[0] for twin in derive_twins("test_m.py", source,
                                                                                    lambda cls, name: True)}
    assert set(twins) == {"test_add", "test_length"}
    add = twins["test_add"].decorator_list[0]
    [case] = ast.literal_eval(add.args[1])
    assert case[:2] == (1, 2) and abs(case[2] - 3) >= 100 and not add.keywords
    length = twins["test_length"].decorator_list[0].args[1].elts[0]
    assert ast.literal_eval(length.args[0]) == "ab" and abs(ast.literal_eval(length.args[1]) - 2) >= 100
    assert not length.keywords  # its id named the real case


# -- planting -------------------------------------------------------------------------------------------------
def test_planted_tests_sit_after_real_tests_with_fresh_names_and_the_lines_of_real_tests_read_as_before() -> None:
    twins = derive_twins("unit_tests/test_calc.py", TESTS, lambda cls, name: True)
    method = next(twin for twin in twins if twin.cls == "TestCalc")
    planting = plan({"unit_tests/test_calc.py": TESTS}, [method], canaries=2)
    text = planting.modules["unit_tests/test_calc.py"]
    tree = ast.parse(text)
    calc = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    original = {node.name for node in ast.walk(ast.parse(TESTS)) if isinstance(node, ast.FunctionDef)}
    planted = {test.name for test in planting.tests}
    assert len(planting.tests) == 3 and not planted & original
    assert all(name.startswith("test_") for name in planted)
    twin = next(test for test in planting.tests if test.kind == "twin")
    assert twin.cls == "TestCalc" and twin.name in {member.name for member in calc.body}
    assert text.splitlines()[:8] == TESTS.splitlines()[:8]  # nothing planted before the first real test
    real_line = next(i for i, line in enumerate(text.splitlines(), 1) if line == "    def test_name_again(self):")
    assert planting.original_lines(f"unit_tests/test_calc.py:{real_line}: AssertionError") == \
        f"unit_tests/test_calc.py:{TESTS.splitlines().index('    def test_name_again(self):') + 1}: AssertionError"
    skipped = f"('/tmp/ws/repo/unit_tests/test_calc.py', {real_line}, 'Skipped: no')"
    assert planting.original_lines(skipped) == skipped.replace(
        str(real_line), str(TESTS.splitlines().index("    def test_name_again(self):") + 1))


STORE_TESTS = '''\
import unittest

from store import begin, commit, get, put


class StoreTest(unittest.TestCase):
    def test_abort_begin(self):
        self.assertTrue(begin())

    def test_put_commit(self):
        tx = begin()
        put(tx, "alpha", 1)
        self.assertIsNone(get("alpha"))
        commit(tx)
        self.assertEqual(get("alpha"), 1)

    def test_zero_value(self):
        self.assertEqual(get("zero"), None)
'''


def test_a_unittest_twin_is_named_to_run_after_its_original() -> None:
    """unittest runs a TestCase's methods by name: a twin of test_put_commit named test_abort_... would run
    first, commit "alpha", and fail the real test on a correct candidate (LiveRepoReflection's dist_tx_store)."""
    [twin] = [t for t in derive_twins("test_store.py", STORE_TESTS, lambda cls, name: True)
              if t.original == "test_put_commit"]
    names = [test.name for _ in range(40)
             for test in plan({"test_store.py": STORE_TESTS}, [twin], canaries=0).tests]
    assert names and all(name > "test_put_commit" for name in names)


def test_planted_tests_are_chosen_afresh_each_run() -> None:
    twins = derive_twins("unit_tests/test_calc.py", TESTS, lambda cls, name: True)
    first = plan({"unit_tests/test_calc.py": TESTS}, twins[:2], canaries=2)
    second = plan({"unit_tests/test_calc.py": TESTS}, twins[:2], canaries=2)
    assert {t.name for t in first.tests} != {t.name for t in second.tests}


def test_compared_value_twins_come_first_with_one_exception_twin_among_three_or_more() -> None:
    """A value that equals anything passes a compared-value twin and fails an exception twin: a run of
    exception twins alone would let it through."""
    twins = derive_twins("unit_tests/test_calc.py", TESTS, lambda cls, name: True)
    exceptions = [twin for twin in twins if twin.expects_exception]
    assert [twin.original for twin in exceptions] == ["test_parse_empty"]
    for _ in range(20):
        assert not any(twin.expects_exception for twin in choose_twins(twins, 2))
        three = choose_twins(twins, 3)
        assert len(three) == 3 == len(set(three)) and sum(twin.expects_exception for twin in three) == 1
    assert set(choose_twins(exceptions, 3)) == set(exceptions)  # no value twin: what there is


def test_canaries_go_first_to_modules_without_a_planted_test() -> None:
    """An attack that spares the test modules which do not import the candidate meets a planted test in every
    module it touches."""
    other = "from calc import add\n\n\ndef test_other():\n    assert add(1, 1) == 2\n"
    sources = {"unit_tests/test_calc.py": TESTS, "unit_tests/test_other.py": other}
    twin = derive_twins("unit_tests/test_calc.py", TESTS, lambda cls, name: True)[0]
    for _ in range(20):
        planting = plan(sources, [twin], canaries=1)
        assert {test.module for test in planting.tests} == set(sources)


# Modules whose layout a planted test must fit: tabs, a last method without a newline at the end, decorators and
# comments between tests, a statement on the `def` line, an assertion over several lines.
LAYOUTS = {
    "tabs": "import unittest\n\n\nclass TestT(unittest.TestCase):\n\tdef test_a(self):\n\t\tself.assertEqual(1, 1)\n"
            "\n\t@unittest.skipIf(False, 'no')\n\tdef test_b(self):\n\t\tself.assertEqual(2, 2)\n",
    "no newline at the end": "class TestL:\n    def test_a(self):\n        assert 1 == 1\n    def test_b(self):\n"
                             "        assert 2 == 2",
    "decorators and comments": "import pytest\n\n\n@pytest.mark.fast\n# why\n@pytest.mark.parametrize('x', [1])\n"
                               "def test_a(x):\n    assert x == 1\n# after a\n\ndef test_b():\n    assert (1 ==\n"
                               "            1)\n\n\n\nclass TestC:\n    def test_c(self): assert True\n",
}
# The assertion's line goes on into the comment below it: whatever is put after the test joins that line.
BROKEN_AFTER = "def test_a():\n    assert 1 == 1 \\\n        # the line above goes on here\n"


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_planted_modules_parse_whatever_the_layout_of_the_real_tests(layout: str) -> None:
    """Only the parts of a module where tests were planted are parsed again (`_parses_where_planted`): the whole
    planted module must parse whenever they do."""
    source = LAYOUTS[layout]
    for _ in range(30):
        planting = plan({"t.py": source}, [], canaries=3)
        assert len(planting.tests) == 3
        ast.parse(planting.modules["t.py"])


def test_a_module_that_would_not_parse_with_planted_tests_runs_as_the_task_wrote_it() -> None:
    ast.parse(BROKEN_AFTER)
    planting = plan({"t.py": BROKEN_AFTER}, [], canaries=2)
    assert planting.modules == {} and planting.tests == []


# -- judging --------------------------------------------------------------------------------------------------
def _planting(*names: str) -> Planting:
    return Planting(tests=[PlantedTest("t.py", None, name, "twin", "t.py::test_a") for name in names])


def test_a_planted_test_that_passes_or_never_reports_marks_the_run() -> None:
    planting = _planting("test_b_twin")
    ids = ["t.py::test_a", "t.py::test_b_twin", "t.py::test_c"]
    ran = [TestResult(nodeid="t.py::test_a", outcome=Outcome.PASSED),
           TestResult(nodeid="t.py::test_c", outcome=Outcome.FAILED)]
    passed = [*ran, TestResult(nodeid="t.py::test_b_twin", outcome=Outcome.PASSED)]
    failed = [*ran, TestResult(nodeid="t.py::test_b_twin", outcome=Outcome.FAILED)]
    assert TWIN_REASON in (planted_problem(planting, passed, [], ids, finished=True) or "")
    assert planted_problem(planting, failed, [], ids, finished=True) is None
    assert "never reported" in (planted_problem(planting, ran, [], ids, finished=True) or "")  # left out
    assert "not collected" in (planted_problem(planting, ran, [], ids[::2], finished=True) or "")
    # killed before it ran: nothing after it reported, and pytest did not finish
    assert planted_problem(planting, ran[:1], [], ids, finished=False) is None
    assert planted_problem(planting, [], [CollectionError(nodeid="t.py")], None, finished=True) is None
    assert planted_problem(planting, [], [], ["other.py::test_x"], finished=True) is None  # t.py not collected
    # deselected with the real test it follows, whose marks it carries (the task's `-m`): not a forgery
    assert planted_problem(planting, ran[1:], [], ids[2:], finished=True) is None


# -- in the sandbox -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sandbox(env_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> SandboxRunner:
    runner = SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=60, twins=100, keep_workspace=True,
                                          workdir=tmp_path_factory.mktemp("sessions"),
                                          expectations_dir=tmp_path_factory.mktemp("expected")))
    if runner.isolation() != "namespaces":
        pytest.skip("the namespace sandbox is not available here")
    return runner


@pytest.fixture(scope="module")
def calc(tmp_path_factory: pytest.TempPathFactory) -> Task:
    return calc_task(tmp_path_factory.mktemp("tasks") / "calc")


def planted_names(runner: SandboxRunner, task: Task) -> set[str]:
    """The names the latest kept session planted into the suite's module (kept workspaces only)."""
    latest = max(Path(runner.settings.workdir).iterdir(), key=lambda folder: folder.stat().st_mtime)
    module = next(latest.rglob("unit_tests/test_calc.py"))
    names = {node.name for node in ast.walk(ast.parse(module.read_text())) if isinstance(node, ast.FunctionDef)}
    return names - {node.name for node in ast.walk(ast.parse(TESTS)) if isinstance(node, ast.FunctionDef)}


def test_twins_are_verified_on_the_reference_and_one_that_passes_there_is_dropped(
        sandbox: SandboxRunner, calc: Task) -> None:
    expected = sandbox.expected_tests(calc, "unit")
    assert expected.count == 7 and not expected.reference_not_passed
    # test_anything's twin passes on the reference (mock.ANY equals anything): dropped
    assert {twin.original for twin in expected.twins or ()} == {
        "test_add", "test_name", "test_parse", "test_parse_empty", "test_add_more", "test_name_again"}
    assert (calc.root / "unit_tests" / "test_calc.py").read_text() == TESTS  # the task folder is never changed


def test_the_reference_scores_in_full_and_what_a_model_sees_names_no_planted_test(
        sandbox: SandboxRunner, calc: Task) -> None:
    scored = sandbox.score(calc, calc.reference_files(), "unit")
    assert (scored.score.passed, scored.score.expected, scored.report.tampered) == (7, 7, None)
    assert scored.report.exit_status == 0 and scored.report.output_tail.strip().endswith("7 passed")
    wrong = sandbox.score(calc, {"calc.py": WRONG}, "unit")
    planted = planted_names(sandbox, calc)
    assert len(planted) >= 2 and wrong.report.tampered is None
    assert wrong.score.passed == 0 and sorted(t.nodeid.split("::")[-1] for t in wrong.report.tests) == sorted(
        n.split("::")[-1] for n in wrong.expected.ids)
    shown = wrong.report.output_tail + "".join(t.message for t in wrong.report.tests)
    assert "FAILED unit_tests/test_calc.py::test_add" in shown
    assert wrong.report.output_tail.rstrip().endswith("7 failed")
    assert not [name for name in planted if name in shown], shown
    # line numbers as in the task's file: test_add's assertion is its line 9
    assert "test_calc.py:9: " in next(t.message for t in wrong.report.tests if t.nodeid.endswith("::test_add"))


def test_a_candidate_equal_to_anything_scores_nothing_with_the_twin_reason(sandbox: SandboxRunner,
                                                                            calc: Task) -> None:
    scored = sandbox.score(calc, {"calc.py": ALWAYS_EQUAL}, "unit")
    assert scored.score.passed == 0 and TWIN_REASON in (scored.report.tampered or ""), scored.report.output_tail


PARAMETRIZED = '''\
import pytest

from calc import add, name


@pytest.mark.parametrize("a, b, expected", [(1, 2, 3), (2, 2, 4), (5, 5, 10)])
def test_add(a, b, expected):
    assert add(a, b) == expected


@pytest.mark.parametrize("expected", ["calc"])
def test_name(expected):
    assert name() == expected
'''


def test_a_suite_of_parametrized_tests_only_catches_a_candidate_equal_to_anything(
        sandbox: SandboxRunner, tmp_path: Path) -> None:
    task = calc_task(tmp_path / "parametrized")
    (task.root / "unit_tests" / "test_calc.py").write_text(PARAMETRIZED, encoding="utf-8")
    assert sandbox.score(task, task.reference_files(), "unit").score.passed == 4
    assert sandbox.expected_tests(task, "unit").twins
    scored = sandbox.score(task, {"calc.py": ALWAYS_EQUAL}, "unit")
    assert scored.score.passed == 0 and TWIN_REASON in (scored.report.tampered or ""), scored.report.output_tail


def test_twins_differ_between_two_runs(sandbox: SandboxRunner, calc: Task) -> None:
    sandbox.evaluate(calc, {"calc.py": WRONG + "\n# one\n"}, "unit")
    first = planted_names(sandbox, calc)
    sandbox.evaluate(calc, {"calc.py": WRONG + "\n# two\n"}, "unit")
    assert first and planted_names(sandbox, calc) != first


def test_an_entry_cached_before_twins_loads_and_gets_them_without_measuring_again(
        env_cache: Path, tmp_path: Path) -> None:
    task = calc_task(tmp_path / "old")
    settings = RunnerSettings(cache_dir=env_cache, timeout=60, expectations_dir=tmp_path / "expected")
    first = SandboxRunner(settings)
    if first.isolation() != "namespaces":
        pytest.skip("the namespace sandbox is not available here")
    measured = first.expected_tests(task, "unit")
    store = ExpectationStore(tmp_path / "expected")
    path = store.path_for(expectation_key(task, "unit"))
    old = json.loads(path.read_text())
    del old["twins"]
    path.write_text(json.dumps(old))
    assert store.load(expectation_key(task, "unit")).twins is None  # an old entry still loads

    class Counting(SandboxRunner):
        measurements = 0

        def _reference_run(self, task, suite, planting):  # type: ignore[no-untyped-def]
            type(self).measurements += planting.checked
            return super()._reference_run(task, suite, planting)

    again = Counting(settings).expected_tests(task, "unit")
    assert Counting.measurements == 0 and again.ids == measured.ids and again.twins
    assert re.search(r"test_add", " ".join(twin.original for twin in again.twins))
    assert store.load(expectation_key(task, "unit")).twins == again.twins  # saved back


def test_twin_model_reads_its_cached_form() -> None:
    twin = Twin(module="m.py", original="test_a", source="def test_a():\n    assert f() == 4")
    assert Twin.model_validate_json(twin.model_dump_json()) == twin
