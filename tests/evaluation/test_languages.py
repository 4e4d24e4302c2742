"""The test runners of the other languages: each tool's report read into per-test outcomes, a build that
fails counting every test of its file as failed, a missing toolchain said in one line, and the bundled
example of each language run in the sandbox (its reference passes every test, its stub none, and the
count is what the language's own runner, run directly on the same files, reports; a stub that forges an
all-pass report in the usual place still scores none). A language whose toolchain this machine lacks
skips, saying what to install."""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from projectgen.datasets.examples import example_exercises_dir
from projectgen.datasets.exercism import exercise_task, load_exercise
from projectgen.evaluation.expectations import (ReferenceEnvironmentError, expectation_key, from_reference_report,
                                                score_report)
from projectgen.evaluation.languages.dependencies import java_missing_packages
from projectgen.evaluation.languages.reports import (declares_tests, go_results, go_test_files, jest_results,
                                                       junit_results, rust_results)
from projectgen.evaluation.languages.toolchains import Toolchain, probe_toolchain
from projectgen.evaluation.report import Outcome
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.protocols.reflection.batch import without_toolchain
from forgers import forged_candidate
from own_runners import own_runner_passed

EXAMPLES = {"bracket_depth": "go", "digit_sum": "rust", "word_caps": "javascript", "stack_calc": "java",
            "clamp_range": "cpp"}  # exercise -> its language


def test_go_events_give_leaf_tests_and_a_test_that_never_ended_is_an_error() -> None:
    events = [{"Action": "run", "Test": "TestA"}, {"Action": "run", "Test": "TestA/one"},
              {"Action": "pass", "Test": "TestA/one", "Elapsed": 0.1},
              {"Action": "output", "Test": "TestA/two", "Output": "want 2\n"},
              {"Action": "run", "Test": "TestA/two"}, {"Action": "fail", "Test": "TestA/two"},
              {"Action": "fail", "Test": "TestA"}, {"Action": "run", "Test": "TestHang"}]
    text = "\n".join(json.dumps(e) for e in events) + "\nnot json\n"
    owner = go_test_files({"p/a_test.go": "func TestA(t *testing.T) {", "p/b_test.go": "func TestHang(t *testing.T) {"})
    tests, build_failed = go_results(text, owner)
    assert not build_failed
    assert {t.nodeid: t.outcome for t in tests} == {"p/a_test.go::TestA/one": Outcome.PASSED,
                                                   "p/a_test.go::TestA/two": Outcome.FAILED,
                                                   "p/b_test.go::TestHang": Outcome.ERROR}
    assert "want 2" in next(t.message for t in tests if t.nodeid.endswith("two"))


def test_a_go_parent_that_fails_after_its_subtests_passed_fails_them() -> None:
    """`go test` fails a test whose own assertion after its `t.Run`s fails, though every subtest passed (go 1.19's
    events below); counting leaves only, such a candidate scored all-pass and Pass@1 where `go test` says FAIL."""
    events = [{"Action": "run", "Test": "TestAdd"}, {"Action": "run", "Test": "TestAdd/one"},
              {"Action": "run", "Test": "TestAdd/two"}, {"Action": "cont", "Test": "TestAdd"},
              {"Action": "output", "Test": "TestAdd", "Output": "    sum_test.go:17: want 3 calls, got 2\n"},
              {"Action": "pass", "Test": "TestAdd/one"}, {"Action": "pass", "Test": "TestAdd/two"},
              {"Action": "fail", "Test": "TestAdd"}, {"Action": "run", "Test": "TestSub"},
              {"Action": "run", "Test": "TestSub/a"}, {"Action": "pass", "Test": "TestSub/a"},
              {"Action": "pass", "Test": "TestSub"}, {"Action": "fail"}]
    owner = go_test_files({"p/sum_test.go": "func TestAdd(t *testing.T) {\nfunc TestSub(t *testing.T) {"})
    tests, _ = go_results("\n".join(json.dumps(e) for e in events), owner)
    assert {t.nodeid: t.outcome for t in tests} == {"p/sum_test.go::TestAdd/one": Outcome.FAILED,
                                                   "p/sum_test.go::TestAdd/two": Outcome.FAILED,
                                                   "p/sum_test.go::TestSub/a": Outcome.PASSED}
    assert all("TestAdd failed outside its subtests" in t.message and "want 3 calls" in t.message
               for t in tests if t.outcome is Outcome.FAILED)


def test_junit_xml_gives_each_case_and_a_mangled_report_gives_none() -> None:
    xml = """<testsuite><testcase classname="CalcTest" name="adds()" time="0.01"/>
    <testcase classname="CalcTest$Inner" name="fails()"><failure message="expected 2">trace</failure></testcase>
    <testcase classname="CalcTest" name="off()"><skipped/></testcase></testsuite>"""
    tests = junit_results(xml, lambda classname, _name: f"src/test/java/{classname.split('$')[0]}.java")
    assert [(t.nodeid, t.outcome) for t in tests] == [
        ("src/test/java/CalcTest.java::adds", Outcome.PASSED), ("src/test/java/CalcTest.java::fails", Outcome.FAILED),
        ("src/test/java/CalcTest.java::off", Outcome.SKIPPED)]
    assert tests[1].message.startswith("expected 2")
    assert junit_results("<testsuite><testcase name='x'>", lambda c, n: "f") == []


def test_junit_4_tests_are_read_from_the_vintage_engines_report_beside_jupiters(tmp_path: Path) -> None:
    """The JUnit launcher writes one report per engine; a JUnit 4 class's tests are in Vintage's, which the report
    step prints after Jupiter's (a LiveRepoReflection exercise's tests read as never run without it)."""
    from projectgen.evaluation.languages.plans import NEXT_REPORT, PLANS, LanguageRun, report_names

    assert report_names("java") == ("TEST-junit-jupiter.xml", "TEST-junit-vintage.xml")
    jupiter = '<testsuite><testcase classname="CalcTest" name="adds()"/></testsuite>'
    vintage = ('<testsuite><testcase classname="RoutingTest" name="testAddLink"/>'
               '<testcase classname="RoutingTest" name="testCost"><failure message="2 != 3"/></testcase></testsuite>')
    ctx = LanguageRun(workspace=tmp_path, project="", test_files=("src/test/java/CalcTest.java",
                                                                 "src/test/java/RoutingTest.java"),
                     toolchain=Toolchain("java"), home=tmp_path, tmp=tmp_path, report="", timeout=10)
    parsed = PLANS["java"].results(ctx, f"{jupiter}\n{NEXT_REPORT}\n{vintage}")
    assert [(t.nodeid, t.outcome) for t in parsed.tests] == [
        ("src/test/java/CalcTest.java::adds", Outcome.PASSED), ("src/test/java/RoutingTest.java::testAddLink",
                                                                Outcome.PASSED),
        ("src/test/java/RoutingTest.java::testCost", Outcome.FAILED)]


def test_a_go_test_file_that_declares_no_test_owes_no_outcome() -> None:
    """Go exercises keep their cases in a ``cases_test.go`` without a test function, Java and Rust ones list helpers
    (an enum, a module) among their tests; only a file that declares a test must report one (else it counts as an
    error), and the other languages' files always must."""
    assert not declares_tests("go", "package router\n\nvar cases = []struct{ in string }{{\"a\"}}\n")
    assert declares_tests("go", "package router\n\nfunc TestRoute(t *testing.T) {}\n")
    assert not declares_tests("rust", "// placeholder\n#[cfg(test)]\nfn helper() {}")
    assert declares_tests("rust", "#[tokio::test]\nasync fn x() {}") and declares_tests("rust", "#[test]\nfn x() {}")
    assert not declares_tests("java", "public enum Status { OPEN }") and declares_tests("java", "@Test void x() {}")
    assert declares_tests("go", None) and declares_tests("javascript", "const helper = 1;")


def test_jest_and_libtest_reports() -> None:
    jest = {"testResults": [
        {"name": "/ws/p/a.spec.js", "status": "failed", "assertionResults": [
            {"fullName": "adds one", "status": "passed"},
            {"fullName": "adds two", "status": "failed", "failureMessages": ["Expected: 2"]}]},
        {"name": "/ws/p/b.spec.js", "status": "failed", "message": "SyntaxError: Unexpected token",
         "assertionResults": []}]}
    tests, broken = jest_results(json.dumps(jest), "/ws")
    assert [(t.nodeid, t.outcome) for t in tests] == [("p/a.spec.js::adds one", Outcome.PASSED),
                                                      ("p/a.spec.js::adds two", Outcome.FAILED)]
    assert broken == {"p/b.spec.js": "SyntaxError: Unexpected token"}
    rust = "\n".join(json.dumps(e) for e in [
        {"type": "projectgen-file", "file": "c/tests/t.rs"}, {"type": "test", "event": "started", "name": "ok_one"},
        {"type": "test", "event": "ok", "name": "ok_one"}, {"type": "test", "event": "started", "name": "hangs"}])
    by_file = rust_results(rust)
    assert [(t.nodeid, t.outcome) for t in by_file["c/tests/t.rs"]] == [("c/tests/t.rs::ok_one", Outcome.PASSED),
                                                                        ("c/tests/t.rs::hangs", Outcome.ERROR)]
    # libtest's notice that a test has run for over 60 s is no outcome: the test's own "ok" follows
    slow = "\n".join(json.dumps(e) for e in [
        {"type": "projectgen-file", "file": "c/tests/t.rs"}, {"type": "test", "event": "started", "name": "slow"},
        {"type": "test", "event": "timeout", "name": "slow"},
        {"type": "test", "event": "ok", "name": "slow", "exec_time": 65.0}])
    assert [(t.nodeid, t.outcome) for t in rust_results(slow)["c/tests/t.rs"]] == [("c/tests/t.rs::slow",
                                                                                      Outcome.PASSED)]


def test_a_missing_toolchain_is_one_line_naming_what_to_install(tmp_path: Path, monkeypatch) -> None:
    exercise = load_exercise(example_exercises_dir() / "bracket_depth")
    runner = SandboxRunner(RunnerSettings(cache_dir=tmp_path))
    missing = Toolchain("go", missing=("go",))
    monkeypatch.setattr(runner, "toolchain", lambda language: missing)
    report = runner.evaluate(exercise_task(exercise), exercise.candidate(exercise.reference()))
    assert report.error == "the Go toolchain is missing (go): install apt-get install golang-go"
    monkeypatch.setattr("projectgen.protocols.reflection.batch.probe_toolchain", lambda language: missing)
    ready, lines = without_toolchain([exercise])
    assert ready == [] and lines == {"Go": f"1 exercise(s) skipped: {missing.not_ready_reason()}"}


@pytest.fixture(scope="module")
def runner(env_cache: Path) -> SandboxRunner:
    """On the run's environment cache: the exercises' environments (jest, Go's and Rust's caches) are built once
    for this module and the reflect tests that run the same exercises."""
    return SandboxRunner(RunnerSettings(cache_dir=env_cache))


# C++'s and Java's builds are slow, and Go's toolchain start (~15 s here): the slow suite runs them. Go's runner stays
# in the default suite through its twins (test_language_twins.py: the reference and an attack on bracket_depth).
SLOW_EXAMPLES = ("clamp_range", "stack_calc", "bracket_depth")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_EXAMPLES else n
                                  for n in EXAMPLES])
def test_each_bundled_example_passes_with_its_reference_and_fails_with_its_stub(runner: SandboxRunner, name: str,
                                                                                 tmp_path: Path) -> None:
    language = EXAMPLES[name]
    toolchain = probe_toolchain(language)
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    if language == "cpp" and not Path("/usr/include/catch2/catch.hpp").is_file():
        pytest.skip("the C++ example takes Catch2 from Debian: install apt-get install catch2")
    exercise = load_exercise(example_exercises_dir() / name)
    task = exercise_task(exercise)
    assert task.language == language
    count = own_runner_passed(task, exercise.candidate(exercise.reference()), toolchain,
                              runner.environments.root / "languages", tmp_path)
    reference = runner.evaluate(task, exercise.candidate(exercise.reference()))
    assert reference.error is None and reference.status == "passed" and reference.tampered is None, \
        reference.output_tail
    assert reference.passed == count > 0 and not reference.collection_errors  # every test on (xtest, @Disabled, ...)
    expected = from_reference_report(reference, expectation_key(task, "unit"))
    assert expected.count == count
    stub = runner.evaluate(task, exercise.candidate(exercise.stubs()))
    score = score_report(stub, expected)
    assert score.passed == 0 and score.expected == count
    if stub.collection_errors:  # it did not build: the compiler's message is kept for every test of the file
        assert score.collection_failed == count and stub.collection_errors[0].message.strip()
    # the stub (C++: a solution exiting before its tests), writing an all-pass report where the tool's used to be
    forger = forged_candidate(task, exercise.candidate(exercise.stubs()), reference,
                              exercise.candidate(exercise.reference()))
    forged = score_report(runner.evaluate(task, forger), expected)
    assert forged.passed == 0 and forged.expected == count


HOP_ROUTER = (Path(__file__).parents[1] / "datasets" / "exercism_layouts" / "liverepo" / "go" / "exercises" / "practice"
              / "unit_test_7d3e9b21_4a6c_4f08_9b15_c2e8a0f4d6b3" / "hop_router")
REQUIRING = "module hoprouter\n\ngo 1.18\n\nrequire nothere.invalid/mod v1.0.0\n"  # a module no proxy serves


@pytest.mark.slow  # the reference's runs and its twins' (about 20 s under load)
def test_every_test_file_of_an_exercise_runs_and_counts_as_go_test_does(runner: SandboxRunner, tmp_path: Path) -> None:
    """An exercise with several test files (LiveRepoReflection's Go ones keep their cases in ``cases_test.go``):
    each file's tests run and count under that file, as many as `go test -v` passes. A candidate's own go.mod
    requiring a module (no Go proxy here), beside a reference that runs, is the candidate's failure."""
    toolchain = probe_toolchain("go")
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    exercise = load_exercise(HOP_ROUTER)
    task = exercise_task(exercise)
    reference = exercise.candidate(exercise.reference())
    count = own_runner_passed(task, reference, toolchain, runner.environments.root / "languages", tmp_path)
    report = runner.evaluate(task, reference)
    assert report.status == "passed" and report.passed == count == 8, report.output_tail
    per_file = Counter(test.nodeid.split("::", 1)[0] for test in report.tests)
    assert per_file == {"hop_router/hop_router_test.go": 5, "hop_router/limits_test.go": 3}
    assert runner.environment_incomplete(task) is None
    stub = score_report(runner.evaluate(task, exercise.candidate(exercise.stubs())), runner.expected_tests(task))
    assert stub.passed == 0 and stub.expected == 8
    requiring = exercise.candidate({**exercise.reference(), "go.mod": REQUIRING})
    report = runner.evaluate(task, requiring)
    assert report.install_error and "nothere.invalid/mod" in report.install_error and report.status != "passed"
    assert runner.environment_incomplete(task) is None


def test_a_reference_that_cannot_get_its_modules_is_environment_incomplete(runner: SandboxRunner,
                                                                           tmp_path: Path) -> None:
    """No Go proxy here: a reference whose go.mod requires a module is the machine's shortfall, named (a
    candidate's own require is its failure: the test above)."""
    toolchain = probe_toolchain("go")
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    needy = tmp_path / "needy" / "hop_router"
    shutil.copytree(HOP_ROUTER, needy)
    (needy / ".meta" / "go.mod").write_text(REQUIRING)
    task = exercise_task(load_exercise(needy))
    why = runner.environment_incomplete(task)
    assert why is not None and why.startswith("environment incomplete: ") and "nothere.invalid/mod" in why
    with pytest.raises(ReferenceEnvironmentError):
        runner.expected_tests(task)


def test_an_exercise_whose_test_files_declare_no_test_is_environment_incomplete(runner: SandboxRunner,
                                                                                tmp_path: Path) -> None:
    """A published Go exercise whose only test file is its ``cases_test.go`` (the file with the tests is missing
    from the benchmark's copy): nothing can pass or fail, so it is named, never scored as a 0/0 failure."""
    toolchain = probe_toolchain("go")
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    lacking = tmp_path / "lacking" / "hop_router"
    shutil.copytree(HOP_ROUTER, lacking)
    config = json.loads((lacking / ".meta" / "config.json").read_text())
    config["files"]["test"] = ["cases_test.go"]
    (lacking / ".meta" / "config.json").write_text(json.dumps(config))
    for name in ("hop_router_test.go", "limits_test.go"):
        (lacking / name).unlink()
    why = runner.environment_incomplete(exercise_task(load_exercise(lacking)))
    assert why == ("environment incomplete: no test to run: the reference's run of hop_router/cases_test.go found "
                   "none (this copy of the task lacks its tests)")


def test_java_tests_needing_a_library_from_maven_central_are_environment_incomplete(runner: SandboxRunner,
                                                                                    tmp_path: Path) -> None:
    """LiveRepoReflection's Java tests sometimes mock with Mockito, which only Maven Central serves: the
    exercise is named (before anything compiles), not scored as its reference's build failure."""
    toolchain = probe_toolchain("java")
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    folder = tmp_path / "stack_calc"
    shutil.copytree(example_exercises_dir() / "stack_calc", folder)
    test_file = folder / "src" / "test" / "java" / "StackCalcTest.java"
    test_file.write_text("import static org.mockito.Mockito.mock;\n// import com.google.gson.Gson;\n"
                         + test_file.read_text())
    why = runner.environment_incomplete(exercise_task(load_exercise(folder)))
    assert why is not None and why.startswith("environment incomplete: ")
    assert "Java package(s) org.mockito cannot be had offline" in why and "gson" not in why


@pytest.mark.slow  # two javac runs and the JVM
def test_a_java_test_file_may_declare_a_class_the_code_declares_too(runner: SandboxRunner, tmp_path: Path) -> None:
    """As Gradle compiles them (the code, then the tests against it), a test file's own stand-in for a class of
    the code builds, and is the one the tests use; javac over every file at once said "duplicate class"."""
    toolchain = probe_toolchain("java")
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    folder = tmp_path / "stack_calc"
    shutil.copytree(example_exercises_dir() / "stack_calc", folder)
    reference = folder / ".meta" / "src" / "main" / "java" / "StackCalc.java"
    reference.write_text(reference.read_text() + "\nclass Token {\n    static String kind() { return \"code\"; }\n}\n")
    test_file = folder / "src" / "test" / "java" / "StackCalcTest.java"
    test_file.write_text(test_file.read_text().replace(
        "public class StackCalcTest {",
        "class Token {\n    static String kind() { return \"test\"; }\n}\n\npublic class StackCalcTest {\n"
        "    @Test\n    public void theTestsOwnClassIsUsed() {\n        assertThat(Token.kind()).isEqualTo(\"test\");\n    }\n", 1))
    exercise = load_exercise(folder)
    report = runner.evaluate(exercise_task(exercise), exercise.candidate(exercise.reference()))
    assert report.status == "passed" and not report.collection_errors, report.output_tail
    assert "StackCalcTest.java::theTestsOwnClassIsUsed" in {test.nodeid.split("/")[-1] for test in report.tests}


def test_java_imports_of_the_code_own_packages_and_the_test_libraries_need_nothing() -> None:
    sources = ["package shop;\nimport java.util.List;\nimport org.junit.jupiter.api.Test;\n"
               "import static org.assertj.core.api.Assertions.*;\nimport shop.model.Item;\n"
               "import org.slf4j.Logger;\nclass A { String s = \"import org.nope.X;\"; }\n",
               "package shop.model;\npublic class Item {}\n"]
    assert java_missing_packages(sources) == ["org.slf4j"]


def test_doctor_lists_each_language_and_how_to_install_a_missing_one(capsys, monkeypatch) -> None:
    from projectgen.cli import main
    from projectgen.evaluation.languages import toolchains

    real = toolchains.probe_toolchain
    monkeypatch.setattr(toolchains, "probe_toolchain", lambda language: Toolchain("java", missing=("javac",))
                        if language == "java" else real(language))
    assert main(["doctor"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["Python", "Go", "Rust", "C++", "JavaScript", "Java"]
    assert lines[-1] == ("Java        missing  javac: install apt-get install default-jdk-headless junit5 "
                         "libassertj-core-java")


def test_node_packages_are_what_package_json_asks_for_and_jest_always(tmp_path: Path) -> None:
    from projectgen.evaluation.languages.dependencies import node_packages

    assert node_packages(tmp_path) == []  # no package.json: plain jest
    (tmp_path / "package.json").write_text(json.dumps({"devDependencies": {"jest": "^29.7.0"}}))
    assert node_packages(tmp_path) == []  # jest alone: the shared jest folder
    (tmp_path / "package.json").write_text(json.dumps({
        "devDependencies": {"babel-jest": "^29.6.4", "@exercism/babel-preset-javascript": "^0.2.1"},
        "dependencies": {"core-js": "~3.37.1"}}))
    assert node_packages(tmp_path) == ["@exercism/babel-preset-javascript@^0.2.1", "babel-jest@^29.6.4",
                                       "core-js@~3.37.1", "jest@29"]


@pytest.mark.slow
def test_a_javascript_exercise_whose_babel_config_needs_its_package_json_runs(tmp_path: Path) -> None:
    """Exercism's JavaScript track: ES modules turned into CommonJS by the babel preset package.json asks for
    (installed from npm outside the sandbox, linked in as node_modules)."""
    toolchain = probe_toolchain("javascript")
    if not toolchain.ready:
        pytest.skip(toolchain.missing)
    folder = tmp_path / "javascript" / "exercises" / "practice" / "double"
    (folder / ".meta").mkdir(parents=True)
    (folder / ".docs").mkdir()
    (folder / ".docs" / "instructions.md").write_text("Double a number.\n")
    (folder / ".meta" / "config.json").write_text(json.dumps({"files": {
        "solution": ["double.js"], "test": ["double.spec.js"], "example": [".meta/proof.ci.js"]}}))
    (folder / ".meta" / "proof.ci.js").write_text("export const double = (n) => n * 2;\n")
    (folder / "double.js").write_text("export const double = () => { throw new Error('Remove this line'); };\n")
    (folder / "double.spec.js").write_text("import { double } from './double';\n"
                                           "test('doubles', () => { expect(double(2)).toBe(4); });\n")
    (folder / "babel.config.js").write_text("module.exports = { presets: [['@babel/preset-env', "
                                            "{ targets: { node: 'current' } }]] };\n")
    (folder / "package.json").write_text(json.dumps({"devDependencies": {
        "@babel/core": "^7.25.2", "@babel/preset-env": "^7.25.3", "babel-jest": "^29.6.4", "jest": "^29.7.0"}}))
    exercise = load_exercise(folder)
    task = exercise_task(exercise)
    runner = SandboxRunner(RunnerSettings(cache_dir=tmp_path / "cache", timeout=300))
    reference = runner.evaluate(task, exercise.candidate(exercise.reference()), "unit")
    stub = runner.evaluate(task, exercise.candidate(exercise.stubs()), "unit")
    assert (reference.passed, reference.total) == (1, 1), reference.output_tail[-2000:]
    assert (stub.passed, stub.total) == (0, 1)


def test_a_canary_that_passes_or_is_missing_from_an_all_pass_report_marks_the_run_tampered() -> None:
    from projectgen.evaluation.languages.plans import Parsed
    from projectgen.evaluation.languages.session import without_canary
    from projectgen.evaluation.report import TestResult

    def parsed(*outcomes: tuple[str, Outcome]) -> Parsed:
        return Parsed([TestResult(nodeid=f"p/a_test.go::{name}", outcome=outcome) for name, outcome in outcomes])

    honest, tampered = without_canary(parsed(("TestA", Outcome.PASSED), ("TestZ3f9a", Outcome.FAILED)), "3f9a")
    assert tampered is None and [t.nodeid for t in honest.tests] == ["p/a_test.go::TestA"]  # taken out
    _, tampered = without_canary(parsed(("TestA", Outcome.PASSED), ("TestZ3f9a", Outcome.PASSED)), "3f9a")
    assert tampered and "must fail passed" in tampered
    _, tampered = without_canary(parsed(("TestA", Outcome.PASSED)), "3f9a")  # all-pass, written without it
    assert tampered and "canary test that runs with them is missing" in tampered
    _, tampered = without_canary(parsed(("TestA", Outcome.PASSED), ("TestB", Outcome.ERROR)), "3f9a")
    assert tampered is None  # a run that crashed before the canary ran is not a forgery
    assert without_canary(parsed(("TestA", Outcome.PASSED)), "") == (parsed(("TestA", Outcome.PASSED)), None)


VOTE_TALLY = (Path(__file__).parents[1] / "datasets" / "exercism_layouts" / "liverepo" / "java" / "exercises"
              / "practice" / "unit_test_6a2f8c14_9d3b_4e71_a5c0_b8e4f2d9c357" / "vote_tally")


@pytest.mark.slow  # two javac builds and JVM starts
def test_a_java_test_helper_class_listed_among_the_tests_owes_no_outcome(runner: SandboxRunner) -> None:
    """LiveRepoReflection's Java exercises list classes their tests use among the test files (an enum in
    `src/test/java`, declaring no test): each read as a test file that reported nothing, and the reference failed
    (`distributed_tx`, unit_test_44881f17: 6/7). It is put in place and compiled with the tests, and owes nothing."""
    toolchain = probe_toolchain("java")
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    exercise = load_exercise(VOTE_TALLY)
    task = exercise_task(exercise)
    assert "vote_tally/src/test/java/Ballot.java" in task.suite_files("unit")
    reference = runner.evaluate(task, exercise.candidate(exercise.reference()))
    assert reference.collection_errors == [], reference.output_tail
    assert (reference.status, reference.passed, reference.total) == ("passed", 3, 3)
    assert {test.nodeid.split("::", 1)[0] for test in reference.tests} == {"vote_tally/src/test/java/VoteTallyTest.java"}
    stub = runner.evaluate(task, exercise.candidate(exercise.stubs()))
    assert stub.status != "passed" and stub.passed == 0


SPAN_MERGE = (Path(__file__).parents[1] / "datasets" / "exercism_layouts" / "liverepo" / "rust" / "exercises"
              / "practice" / "unit_test_2e9d4b7a_c1f3_4a58_96b0_d7e3a5f18c42" / "span_merge")


def test_rust_files_listed_among_the_tests_that_are_no_test_target_owe_no_outcome(runner: SandboxRunner,
                                                                                  tmp_path: Path) -> None:
    """LiveRepoReflection's Rust exercises list, beside the test target, their Cargo.toml, a helper module
    (`tests/helpers/mod.rs`, no target of its own: it was run as `cargo test --test mod`) and a target holding no
    test (`tests/lib.rs`): the reference passes as many tests as `cargo test` does, and none of them is broken."""
    toolchain = probe_toolchain("rust")
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    exercise = load_exercise(SPAN_MERGE)
    task = exercise_task(exercise)
    reference = exercise.candidate(exercise.reference())
    count = own_runner_passed(task, reference, toolchain, runner.environments.root / "languages", tmp_path)
    report = runner.evaluate(task, reference)
    assert report.collection_errors == [] and report.tampered is None, report.output_tail
    assert (report.status, report.passed, report.total) == ("passed", count, 3)
    stub = runner.evaluate(task, exercise.candidate(exercise.stubs()))
    assert stub.passed == 0 and [e.nodeid for e in stub.collection_errors] == ["span_merge/tests/span_merge.rs"]
