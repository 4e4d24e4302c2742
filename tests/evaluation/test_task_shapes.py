"""Task shapes beyond one folder per suite, each a small task folder in tests/task_shapes: it loads, runs
in the sandbox runner, and scores its reference test by test as plain pytest does on the same files."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from projectgen.datasets.loaders import load_task
from projectgen.datasets.task import Task
from projectgen.evaluation.expectations import expectation_key
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

SHAPES = Path(__file__).resolve().parents[1] / "task_shapes"
VERBOSE_LINE = re.compile(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")


@pytest.fixture(scope="module")
def sandbox(env_cache: Path) -> SandboxRunner:
    return SandboxRunner(RunnerSettings(cache_dir=env_cache, expectations_dir=env_cache / "expected", timeout=120))


def outcomes(report) -> dict[str, str]:
    return {t.nodeid: t.outcome.value for t in report.tests}


def plain_pytest(task: Task, suite: str, files: Mapping[str, Path], work: Path, cwd: str = "",
                 ini: str = "", source_root: str = "") -> dict[str, str]:
    """Per-test outcomes of a plain `pytest -v <the suite's paths>` in a copy of the task folder with
    `files` put at their repository paths (over any stub there), run from its folder `cwd`, with the
    configuration file `ini` of the copy (default an empty one) and `PYTHONPATH=source_root` when given."""
    shutil.copytree(task.root, work)
    for rel, source in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, work / rel)
    (work / "plain-pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "--color=no", f"--rootdir={work}",
         "-c", str(work / (ini or "plain-pytest.ini")), "--continue-on-collection-errors",  # as the sandbox runs
         *(str(work / path) for path in task.suite(suite).paths)],
        cwd=work / cwd, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1",
             **({"PYTHONPATH": str(work)} if cwd else {}),  # the repository importable from elsewhere too
             **({"PYTHONPATH": os.pathsep.join([str(work / source_root), str(work)])} if source_root else {})},
    )
    found: dict[str, str] = {}
    for line in done.stdout.splitlines():
        if match := VERBOSE_LINE.match(line):
            # -v shows node ids from where pytest runs; the node ids themselves are the rootdir's
            found.setdefault(f"{cwd}/{match.group(1)}" if cwd else match.group(1), match.group(2).lower())
    assert found, done.stdout + done.stderr
    return found


# --------------------------------------------------------------------------- item 3: lists, files, globs, names

def test_suites_of_folders_files_and_globs_under_any_name_score_the_reference_as_plain_pytest(
        sandbox: SandboxRunner, tmp_path: Path) -> None:
    task = load_task(SHAPES / "suites")
    assert sorted(task.suites) == ["check", "performance", "robustness", "security", "unit"]
    assert task.suite("unit").paths == ("tests/unit", "tests/test_extra.py", "tests/api/test_api_counts.py",
                                        "tests/test_api_top.py")  # the glob, expanded in path order
    assert task.suite_folder("unit") == "tests" and task.suite_folder("check") == "tests/unit"
    assert "tests/conftest.py" in task.suite_files("unit")  # its fixture serves tests/unit and test_extra.py
    assert "tests/api/test_other.py" not in task.suite_files("unit")  # the glob does not match it

    seen: set[str] = set()
    for name in task.suites:
        report = sandbox.evaluate(task, task.reference_files(), name)
        assert report.suite == name and not report.error and not report.collection_errors, report.output_tail
        got = outcomes(report)
        assert got == plain_pytest(task, name, task.reference_files(), tmp_path / name), name
        seen |= set(got.values())
        assert not any("test_other" in n or "test_not_listed" in n for n in got)
    assert seen == {"passed", "failed", "skipped", "xfail"}  # the comparison covers more than passes

    unit = outcomes(sandbox.evaluate(task, task.reference_files(), "unit"))
    assert {n.split("::")[0] for n in unit} == {"tests/unit/test_basic.py", "tests/unit/test_remove.py",
                                                "tests/test_extra.py", "tests/api/test_api_counts.py",
                                                "tests/test_api_top.py"}
    # each named suite has its own expected tests, kept under its name
    performance = sandbox.expected_tests(task, "performance")
    assert performance.suite == "performance" and performance.count == 2
    assert performance.reference_not_passed == {"tests/performance/test_speed.py::test_total_is_cached": "failed"}
    scored = sandbox.score(task, task.reference_files(), "robustness").score
    assert (scored.suite, scored.passed, scored.expected) == ("robustness", 5, 5)


def test_the_expected_tests_key_covers_every_path_of_a_suite(tmp_path: Path) -> None:
    root = tmp_path / "suites"
    shutil.copytree(SHAPES / "suites", root)
    task = load_task(root)
    before = expectation_key(task, "unit")

    def changed(rel: str) -> bool:
        path = root / rel
        original = path.read_text()
        path.write_text(original + "\n# changed\n")
        try:
            return expectation_key(load_task(root), "unit") != before
        finally:
            path.write_text(original)

    assert changed("tests/unit/test_basic.py")       # inside a folder of the suite
    assert changed("tests/test_extra.py")            # a file of the suite
    assert changed("tests/api/test_api_counts.py")   # matched by its glob
    assert changed("tests/conftest.py")              # read by pytest above its paths
    assert changed("tally/core.py")                  # the reference
    assert not changed("tests/api/test_other.py")    # not part of it
    assert not changed("tests/performance/test_speed.py")  # another suite's
    assert expectation_key(task, "performance") != before


# --------------------------------------------------------------------------- item 5: tests inside the package

def test_tests_inside_the_package_run_the_candidates_code_beside_them(sandbox: SandboxRunner, tmp_path: Path) -> None:
    task = load_task(SHAPES / "inside")
    # what runs is the candidate's code in that folder (not dropped, and not the reference's either)
    wrong = {"wordcount/wordcount.py": "def count_words(text):\n    return {}\n"}
    assert outcomes(sandbox.evaluate(task, wrong, "unit")) == {
        "wordcount/wordcount_test.py::test_one_word": "failed", "wordcount/wordcount_test.py::test_case_insensitive":
        "failed", "wordcount/wordcount_test.py::test_apostrophes_and_punctuation": "failed",
        "wordcount/wordcount_test.py::test_sample_file": "failed", "wordcount/wordcount_test.py::test_empty": "passed"}
    # laid out its own way: a helper module of its own beside the tests is kept too
    own = {"wordcount/wordcount.py": textwrap.dedent("""\
               from splitter import split
               def count_words(text):
                   counts = {}
                   for word in split(text):
                       counts[word] = counts.get(word, 0) + 1
                   return counts
           """),
           "wordcount/splitter.py": textwrap.dedent("""\
               import re
               def split(text):
                   return [w.strip("'") for w in re.findall(r"[a-z0-9']+", text.lower()) if w.strip("'")]
           """)}
    assert set(outcomes(sandbox.evaluate(task, own, "unit")).values()) == {"passed"}

    # but never its tests, conftest files or the tests' data there
    cheat = {**wrong,
             "wordcount/wordcount_test.py": "def test_one_word(): pass\n",
             "wordcount/free_test.py": "def test_free(): pass\n",
             "wordcount/test_free.py": "def test_free(): pass\n",
             "wordcount/data/sample.txt": "cat\n",
             "wordcount/conftest.py": textwrap.dedent("""\
                 import pytest
                 @pytest.hookimpl(hookwrapper=True)
                 def pytest_runtest_makereport(item, call):
                     outcome = yield
                     outcome.get_result().outcome = "passed"
             """)}
    assert outcomes(sandbox.evaluate(task, cheat, "unit")) == outcomes(sandbox.evaluate(task, wrong, "unit"))

    got = outcomes(sandbox.evaluate(task, task.reference_files(), "unit"))
    assert got == plain_pytest(task, "unit", task.reference_files(), tmp_path / "plain")
    assert len(got) == 5 and set(got.values()) == {"passed"}


def test_a_dedicated_test_folder_still_refuses_everything_but_python_modules() -> None:
    from projectgen.evaluation.protected_paths import ProtectedPaths

    task = load_task(SHAPES / "suites")
    protected = ProtectedPaths.of(task)
    assert protected.refuses("tests/unit/test_basic.py")      # the task's own test file
    assert protected.refuses("tests/unit/test_new.py")        # a test module it does not have
    assert protected.refuses("tests/api/helper_test.py")      # beside a file of a suite
    assert protected.refuses("tally/conftest.py")             # conftest files, anywhere
    assert protected.refuses("tests/performance/data.json")   # fixtures of a dedicated test folder
    assert protected.refuses("tests/security/__init__.py")    # and its package marker
    assert not protected.refuses("tally/core.py") and not protected.refuses("tally/test_helpers_data.json")
    assert not protected.refuses("tests/unit/helpers.py")     # a module is not a test


# --------------------------------------------------------------------------- item 7: starter files, reference root

def test_a_reference_in_a_subfolder_scores_as_plain_pytest_and_the_starter_stub_does_not(
        sandbox: SandboxRunner, tmp_path: Path) -> None:
    task = load_task(SHAPES / "starter")
    stub = (task.root / "two_fer" / "two_fer.py").read_text()
    assert (task.reference, task.reference_root) == (("two_fer/two_fer.py",), "solution")
    assert task.reference_files() == {"two_fer/two_fer.py": task.root / "solution" / "two_fer" / "two_fer.py"}
    assert task.reference_repository()["two_fer/two_fer.py"] != stub and task.size().files == 1
    assert task.docs.starter == {"two_fer/two_fer.py": stub}
    assert task.suite_files("unit") == ("two_fer/two_fer_test.py",)  # the stub beside it is no test file

    reference = sandbox.evaluate(task, task.reference_files(), "unit")
    got = outcomes(reference)
    assert got == plain_pytest(task, "unit", task.reference_files(), tmp_path / "plain")
    assert len(got) == 3 and set(got.values()) == {"passed"}
    stub_score = sandbox.score(task, {"two_fer/two_fer.py": stub}, "unit").score
    assert (stub_score.passed, stub_score.expected, stub_score.failed) == (0, 3, 3)


# --------------------------------------------------------------------------- issue 25 item 8: scored suite, timeouts

def test_the_scored_suite_is_what_eval_scores_and_runs_as_plain_pytest(sandbox: SandboxRunner, tmp_path: Path) -> None:
    """`scored = "integration"`: the final evaluation is a suite not named unit; evaluate, score and the
    expected tests default to it, and the hidden-unit-test role ("unit") maps onto it."""
    task = load_task(SHAPES / "scored")
    assert (task.scored_suite, sorted(task.suites)) == ("integration", ["check", "integration"])
    assert task.role_suite("unit") == "integration" and task.role_suite("check") == "check"
    report = sandbox.evaluate(task, task.reference_files())
    assert report.suite == "integration" and not report.error, report.output_tail
    assert outcomes(report) == plain_pytest(task, "integration", task.reference_files(), tmp_path / "plain")
    assert set(outcomes(report).values()) == {"passed", "skipped", "xfail"}
    scored = sandbox.score(task, task.reference_files()).score
    assert (scored.suite, scored.passed, scored.expected) == ("integration", 9, 9)


def test_each_suite_has_its_own_timeout_and_the_install_step_its_own(env_cache: Path) -> None:
    task = load_task(SHAPES / "scored")
    assert (task.timeout, task.suite_timeouts, task.install_timeout) == (30, {"integration": 120}, 90)
    runner = SandboxRunner(RunnerSettings(cache_dir=env_cache))
    assert (runner.timeout_for(task, "integration"), runner.timeout_for(task, "check")) == (120, 30)
    assert runner.install_timeout_for(task, "check") == 90
    explicit = SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=7))  # the user's --timeout wins
    assert (explicit.timeout_for(task, "integration"), explicit.install_timeout_for(task, "check")) == (7, 7)
    plain = task.model_copy(update={"install_timeout": None})
    assert runner.install_timeout_for(plain, "integration") == 120


@pytest.mark.parametrize("extra, message", [
    ('scored = "acceptance"\n', "scored: 'acceptance' is not a suite of this task (it has: check, integration)"),
    ('scored = "integration"\n', "the task declares a 'unit' suite too"),
    ('[timeouts]\nunit = 5\n', "[timeouts]: 'unit' is not a suite of this task"),
    ('[timeouts]\nintegration = "slow"\n', "[timeouts].integration: expected a positive number of seconds"),
    ('install_timeout = 0\n', "install_timeout: expected a positive number of seconds"),
])
def test_scored_suite_and_timeouts_are_checked_when_the_task_loads(extra: str, message: str, tmp_path: Path) -> None:
    from projectgen.errors import TaskFormatError

    root = tmp_path / "scored"
    shutil.copytree(SHAPES / "scored", root)
    text = (root / "task.toml").read_text()
    text = text.replace('scored = "integration"\n', "").replace("[timeouts]\nintegration = 120\n", "")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("install_timeout")) + "\n"
    if "unit' suite too" in message:
        text = text.replace('check = "tests/test_quick.py"', 'check = "tests/test_quick.py"\nunit = "tests/integration"')
    if extra.startswith("["):
        text += "\n" + extra
    else:
        text = extra + text
    (root / "task.toml").write_text(text)
    with pytest.raises(TaskFormatError) as raised:
        load_task(root)
    assert message in str(raised.value)


def test_run_scores_the_named_suite_as_its_hidden_unit_tests(env_cache: Path, tmp_path: Path, capsys) -> None:
    """Before `scored`, `run` measured nothing on a task without a suite named unit."""
    from projectgen.cli import main

    assert main(["run", str(SHAPES / "scored"), "--model", "reference", "--attempts", "1",
                 "--out", str(tmp_path / "run"), "--cache-dir", str(env_cache)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "shape-scored - integration tests" in out and "passed │ 9" in out, out


def test_the_tests_run_from_their_working_directory_as_plain_pytest(sandbox: SandboxRunner, tmp_path: Path) -> None:
    """`[env] workdir = "tests"`: tests that open `fixtures/words.txt` from where the harness ran them."""
    task = load_task(SHAPES / "workdir")
    assert task.env.workdir == "tests"
    report = sandbox.evaluate(task, task.reference_files())
    assert not report.error and report.passed == 4, report.output_tail
    assert outcomes(report) == plain_pytest(task, "unit", task.reference_files(), tmp_path / "plain", cwd="tests")
    assert sorted(outcomes(report)) == sorted(f"tests/test_words.py::{name}" for name in (
        "test_runs_from_the_tests_folder", "test_load_by_a_relative_path", "test_longest_of_the_file",
        "test_longest_of_nothing"))  # node ids stay relative to the workspace
    moved = task.model_copy(update={"env": task.env.model_copy(update={"workdir": None})})
    assert sandbox.evaluate(moved, task.reference_files()).passed == 1  # from the workspace, only the pure test


def test_the_benchmarks_pytest_configuration_applies_as_plain_pytest_with_it(sandbox: SandboxRunner,
                                                                             tmp_path: Path) -> None:
    """`[env] pytest_config = "pytest.ini"`: warnings as errors, strict xfail and addopts' deselection, as the
    benchmark's harness ran them; without the key the same reference scores differently."""
    task = load_task(SHAPES / "pytestconfig")
    assert task.env.pytest_options["xfail_strict"] == "true"
    report = sandbox.evaluate(task, task.reference_files())
    assert not report.error, report.output_tail
    got = outcomes(report)
    assert got == plain_pytest(task, "unit", task.reference_files(), tmp_path / "plain", ini="pytest.ini")
    assert {name.split("::")[1]: outcome for name, outcome in got.items()} == {
        "test_minutes": "passed", "test_round_trip": "passed", "test_bad_time": "passed",
        "test_the_deprecated_name_warns": "failed", "test_an_ignored_warning": "passed", "test_seconds": "failed"}
    unconfigured = task.model_copy(update={"env": task.env.model_copy(update={"pytest_options": {}})})
    assert sandbox.evaluate(unconfigured, task.reference_files()).passed == 5  # its own empty pytest.ini


@pytest.mark.parametrize("name, text, message", [
    ("pytest.ini", "[pytest]\npython_files = check_*.py\n", "option 'python_files' cannot apply"),
    ("pytest.ini", "[tool:pytest]\naddopts = -x\n", "no [pytest] section"),
    ("setup.cfg", "[pytest]\naddopts = -x\n", "no [tool:pytest] section"),
    ("pyproject.toml", "[tool.black]\nline-length = 99\n", "no [tool.pytest.ini_options] table"),
    ("nope.ini", None, "nope.ini"),
])
def test_a_pytest_config_it_cannot_honour_is_refused_when_the_task_loads(name: str, text: str | None, message: str,
                                                                         tmp_path: Path) -> None:
    from projectgen.errors import TaskFormatError

    root = tmp_path / "pytestconfig"
    shutil.copytree(SHAPES / "pytestconfig", root)
    if text is not None:
        (root / name).write_text(text)
    (root / "task.toml").write_text((root / "task.toml").read_text().replace('"pytest.ini"', f'"{name}"'))
    with pytest.raises(TaskFormatError, match=re.escape(message)):
        load_task(root)


def test_pyproject_and_setup_cfg_give_the_same_options(tmp_path: Path) -> None:
    from projectgen.datasets.pytest_config import pytest_ini_text, pytest_options

    toml = pytest_options("pyproject.toml", '[tool.pytest.ini_options]\nfilterwarnings = ["error", "ignore::UserWarning"]'
                                            '\nxfail_strict = true\naddopts = "-m \'not slow\'"\n')
    cfg = pytest_options("setup.cfg", "[tool:pytest]\nfilterwarnings =\n    error\n    ignore::UserWarning\n"
                                      "xfail_strict = true\naddopts = -m 'not slow'\n")
    assert toml == cfg
    assert pytest_ini_text(toml) == ("[pytest]\nfilterwarnings = error\n    ignore::UserWarning\nxfail_strict = true\n"
                                     "addopts = -m 'not slow'\n")


def test_an_exercism_exercise_loads_through_load_task_and_scores_as_plain_pytest(sandbox: SandboxRunner,
                                                                                 tmp_path: Path) -> None:
    """`load_task` reads an exercise folder (or its .meta/config.json) as `reflect` does: the tests run in a
    folder named like the project, the candidate's files inside it."""
    from projectgen.datasets.examples import example_exercises_dir

    folder = tmp_path / "exercises" / "unit_convert"
    shutil.copytree(example_exercises_dir() / "unit_convert", folder)
    task = load_task(folder)
    assert (task.id, task.format, task.root) == ("unit_convert", "exercism", folder.parent)
    assert load_task(folder / ".meta" / "config.json") == task
    assert task.suite("unit").paths == ("unit_convert/unit_convert_test.py",)
    from projectgen.datasets.exercism import load_exercise

    exercise = load_exercise(folder)
    # the reference is .meta's example, at the path of the solution file it answers
    reference = {exercise.workspace_path(rel): folder / example for rel, example in exercise.examples.items()}
    assert task.reference_files() == reference and len(task.reference) == 3
    assert task.reference_repository()["unit_convert/convert.py"] == (folder / ".meta/convert.py").read_text()
    report = sandbox.evaluate(task, task.reference_files())
    assert not report.error and report.passed == report.total > 0, report.output_tail
    assert outcomes(report) == plain_pytest(task, "unit", reference, tmp_path / "plain")
    scored = sandbox.score(task, task.docs.starter).score  # measured from the reference: the stub fails them all
    assert (scored.passed, scored.expected, scored.source) == (0, report.total, "reference")


def test_eval_bench_reference_and_run_work_on_an_exercism_folder(env_cache: Path, tmp_path: Path, capsys) -> None:
    """With its reference set from .meta, an exercise is a task like any other for the commands that score one;
    a folder of exercises is a dataset (each subfolder's .meta/config.json)."""
    from projectgen.cli import main
    from projectgen.datasets.examples import example_exercises_dir

    dataset = tmp_path / "exercises"
    shutil.copytree(example_exercises_dir() / "unit_convert", dataset / "unit_convert")
    (dataset / "unit_convert" / ".meta" / "config.json").write_text(  # the path as LiveRepoReflection writes it
        (dataset / "unit_convert" / ".meta" / "config.json").read_text().replace('".meta/', '".meta//'))
    cache = ["--cache-dir", str(env_cache)]
    assert main(["bench-reference", str(dataset), "--out", str(tmp_path / "bench"), *cache]) == 0
    bench = " ".join(capsys.readouterr().out.split())
    assert "unit_convert: passed" in bench, bench
    assert main(["run", str(dataset / "unit_convert"), "--model", "reference", "--attempts", "1",
                 "--selection", "unit", "--out", str(tmp_path / "run"), *cache]) == 0  # an exercise has no check tests
    run = " ".join(capsys.readouterr().out.split())
    passed = re.search(r"unit_convert: passed (\d+)/(\d+)", bench)
    assert passed and passed[1] == passed[2] and f"passed │ {passed[1]}" in run, run


# --------------------------------------------------------------------------- issue 25 item 8: frozen total, reference target

def test_a_frozen_total_counts_the_tests_the_run_lacks_as_failed(sandbox: SandboxRunner, tmp_path: Path) -> None:
    """`[expected_total] unit = 6`: the harness counted 6 tests; a deselected one and an uncollectable module's two
    never run, so the reference scores 3/6 as the benchmark's harness does (passed / frozen count), and runs,
    experiments and their results say the denominator was "declared"."""
    from projectgen.evaluation.denominators import nothing_produced
    from projectgen.evaluation.expectations import expected_counts

    task = load_task(SHAPES / "frozen")
    assert task.expected_totals == {"unit": 6}
    report = sandbox.evaluate(task, task.reference_files())
    assert outcomes(report) == plain_pytest(task, "unit", task.reference_files(), tmp_path / "plain", ini="pytest.ini")
    assert report.passed == 3 and [e.nodeid for e in report.collection_errors] == ["tests/test_plotting.py"]
    scored = sandbox.score(task, task.reference_files()).score
    assert (scored.passed, scored.expected, scored.missing) == (3, 6, 3)
    assert expected_counts(sandbox, task, report) == (3, 6, "declared")
    assert "counted out of the declared total 6" in " ".join(sandbox.expected_tests(task).notes())
    wrong = {"temps/__init__.py": (task.root / "temps/__init__.py").read_text().replace('"hot"', '"warm"')}
    assert sandbox.score(task, wrong).score.passed == 2
    assert nothing_produced(task, "published").total == 6  # an error row keeps the frozen count in SUM

    # without the key, the measured denominator; without a reference either, the run's passes out of the total
    assert sandbox.score(task.model_copy(update={"expected_totals": {}}), task.reference_files()).score.expected == 3
    assert "tests/test_temps.py::test_against_a_weather_service" not in report.collected_ids  # deselected: not counted
    bare = task.model_copy(update={"reference": ()})
    assert (sandbox.score(bare, task.reference_files()).score.passed, expected_counts(None, bare, report)) \
        == (3, (3, 6, "declared"))
    # more tests than declared: refused in one line, never a pass rate above 1
    from projectgen.errors import ProjectGenError

    with pytest.raises(ProjectGenError, match=re.escape("collects 3 unit test(s), more than [expected_total].unit = 2")):
        sandbox.expected_tests(task.model_copy(update={"expected_totals": {"unit": 2}}))


@pytest.mark.parametrize("extra, message", [
    ("[expected_total]\nunit = 0\n", "[expected_total].unit: expected a positive whole number of tests such as 250, got 0"),
    ("[expected_total]\nunit = 6.5\n", "got 6.5"),
    ("[expected_total]\ncheck = 3\n", "[expected_total]: 'check' is not a suite of this task (it has: unit)"),
    ('[expected_total]\nunit = 1\n[expected_tests]\nunit = ["tests/test_temps.py::test_boiling", '
     '"tests/test_temps.py::test_describe"]\n', "names 2 tests, more than the declared total 1"),
])
def test_a_frozen_total_is_checked_when_the_task_loads(extra: str, message: str, tmp_path: Path) -> None:
    from projectgen.errors import TaskFormatError

    root = tmp_path / "frozen"
    shutil.copytree(SHAPES / "frozen", root)
    text = (root / "task.toml").read_text().replace("[expected_total]\nunit = 6\n", "")
    (root / "task.toml").write_text(text + "\n" + extra)
    with pytest.raises(TaskFormatError, match=re.escape(message)):
        load_task(root)


def test_bench_rows_count_out_of_the_declared_total() -> None:
    from projectgen.evaluation.report import Outcome, TestReport, TestResult
    from projectgen.experiments.reference_bench import row_from_report

    report = TestReport(task_id="t", suite="unit", tests=[TestResult(nodeid=f"t.py::test_{i}", outcome=Outcome.PASSED)
                                                          for i in range(4)])
    assert (row_from_report(report, None).total, row_from_report(report, None, declared_total=5).total) == (4, 5)
    over = row_from_report(report, None, declared_total=3)
    assert (over.passed, over.total) == (3, 3) and "4 test(s) ran, more than the declared total 3" in over.note


def test_a_reference_mapped_onto_a_subfolder_of_the_repository_scores_as_plain_pytest(
        sandbox: SandboxRunner, tmp_path: Path) -> None:
    """`reference_target = "src"`: the reference kept in `solution/wordy/` is the src layout's `src/wordy/`
    (the other direction, a benchmark's `src/` imported as the root, is `reference_root` alone: `starter`)."""
    task = load_task(SHAPES / "reftarget")
    assert task.reference == ("src/wordy/__init__.py", "src/wordy/core.py")
    assert task.reference_files() == {f"src/wordy/{name}": task.root / "solution" / "wordy" / name
                                      for name in ("__init__.py", "core.py")}
    report = sandbox.evaluate(task, task.reference_files())
    assert not report.error and report.passed == 4, report.output_tail
    assert outcomes(report) == plain_pytest(task, "unit", task.reference_files(), tmp_path / "plain", source_root="src")
    at_the_root = {rel.removeprefix("src/"): path for rel, path in task.reference_files().items()}
    moved = outcomes(sandbox.evaluate(task, at_the_root))  # the same code outside the src layout is not the package
    assert moved["tests/test_wordy.py::test_the_package_is_the_src_layouts"] == "failed"


# --------------------------------------------------------------------------- issue 37 item 8: a teardown error

def test_a_teardown_error_after_a_passing_call_counts_as_nl2repo_benchs_harness_counts_it(
        sandbox: SandboxRunner, tmp_path: Path) -> None:
    """NL2Repo-Bench's harness (openhands/post_processor.py, `analyze_pytest_results`) adds up every
    `(\\d+) passed` of pytest's output and scores that / test_case_count.txt. pytest counts a test whose call
    passed as passed even when its teardown then errs, and counts the error besides. With the task's
    filterwarnings = error, plain pytest says "1 failed, 3 passed, 1 skipped, 2 errors": the harness's score is
    3 / 5 (read off its code, not from ours), and the reference must score 3 / 5 here too."""
    task = load_task(SHAPES / "teardown")
    assert task.env.pytest_options["filterwarnings"] == "error"
    work = tmp_path / "plain"
    shutil.copytree(task.root, work)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--color=no", "-c",
                           str(work / "pyproject.toml"), f"--rootdir={work}", "tests"],
                          cwd=work, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1",
                               "PYTHONPATH": str(work)})
    assert re.search(r"=+ 1 failed, 3 passed, 1 skipped, 2 errors in ", done.stdout), done.stdout[-2000:]
    report = sandbox.evaluate(task, task.reference_files())
    assert not report.error, report.output_tail
    assert {name.split("::")[1]: outcome for name, outcome in outcomes(report).items()} == {
        "test_total_passes_then_its_teardown_errs": "passed", "test_mean_fails_then_its_teardown_errs": "failed",
        "test_mean_passes": "passed", "test_empty_mean_raises": "passed", "test_skipped": "skipped"}
    scored = sandbox.score(task, task.reference_files()).score
    assert (scored.passed, scored.expected) == (3, 5)


# --------------------------------------------------------------------------- a root conftest the tests import

def test_a_root_conftest_named_in_the_suite_scores_as_the_benchmarks_command_does(
        sandbox: SandboxRunner, tmp_path: Path) -> None:
    """NL2Repo-Bench's deepdiff: its tests `from conftest import FIXTURES_DIR`, and the root conftest skips the
    tests marked slow. The harness runs `pytest tests` in the repository, so that conftest is loaded; a
    candidate's conftest is dropped here, so the task names it in its suite (`unit = ["tests", "conftest.py"]`).
    The reference must then score what `pytest tests` gives: the module collects, the slow test is skipped."""
    task = load_task(SHAPES / "rootconftest")
    work = tmp_path / "plain"
    shutil.copytree(task.root, work)
    done = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "--color=no",
                           f"--rootdir={work}", "tests"],
                          cwd=work, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1",
                               "PYTHONPATH": str(work)})
    assert re.search(r"=+ 2 passed, 1 skipped in ", done.stdout), done.stdout[-2000:]
    plain = {m.group(1): m.group(2).lower() for line in done.stdout.splitlines()
             if (m := VERBOSE_LINE.match(line))}
    report = sandbox.evaluate(task, task.reference_files())
    assert not report.error, report.output_tail
    assert outcomes(report) == plain == {
        "tests/test_gauge.py::test_counts_the_fixture": "passed", "tests/test_gauge.py::test_counts_nothing": "passed",
        "tests/test_gauge.py::test_slow_runs_only_with_runslow": "skipped"}
    scored = sandbox.score(task, task.reference_files()).score
    assert (scored.passed, scored.expected) == (2, 3)
