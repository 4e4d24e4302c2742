"""Build and install steps cannot swap the suite, and a fork bomb gets a CPU share, not the machine.

The attacks as they were found: a `setup.py` run by `install = "editable"`, and a Rust `build.rs` run by
`cargo test`, each renaming the suite's folder away and writing look-alikes with the same test ids and
empty bodies (the canary copied verbatim). Each must score no more than the stub it is added to, and the
report must say why. Cases skip, with the reason, where the sandbox has no namespaces or the toolchain
is missing.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from projectgen.datasets.examples import example_exercises_dir
from projectgen.datasets.exercism import exercise_task, load_exercise
from projectgen.datasets.task import Documents, EnvSpec, Task, TestSuite
from projectgen.evaluation.expectations import expectation_key, from_reference_report, score_report
from projectgen.evaluation.languages.toolchains import probe_toolchain
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.evaluation.sandbox import NAMESPACES, Limits, RunCgroup

TESTS = {"unit_tests/test_calc.py": """\
    from calc import add, sub, mul

    def test_add():
        assert add(2, 3) == 5

    def test_sub():
        assert sub(2, 3) == -1

    def test_mul():
        assert mul(2, 3) == 6
"""}
REFERENCE = {"calc.py": "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\n"
                        "def mul(a, b):\n    return a * b\n",
             "setup.py": "from setuptools import setup\nsetup(name='calc', version='1.0', py_modules=['calc'])\n"}
STUB = {**REFERENCE, "calc.py": "def add(a, b):\n    pass\n\ndef sub(a, b):\n    pass\n\ndef mul(a, b):\n    pass\n"}

# The attack: renames the suite's folder away (when it is there) and writes look-alikes of every test module,
# the canary's included, with the same test functions and empty bodies; and leaves a process behind that
# does it again once the install is over, for when the suite is put back.
SWAP_SUITE = '''
import os, re, time
from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "unit_tests")
KNOWN = {"test_calc.py": "def test_add():\\n    pass\\n\\ndef test_sub():\\n    pass\\n\\ndef test_mul():\\n    pass\\n"}


def swap():
    modules = dict(KNOWN)
    if os.path.isdir(SUITE):
        away = SUITE + "-%d" % time.time_ns()
        os.rename(SUITE, away)
        for name in os.listdir(away):
            if name.endswith(".py"):
                text = open(os.path.join(away, name)).read()
                modules[name] = text if name not in KNOWN else "".join(
                    "def %s():\\n    pass\\n\\n" % test for test in re.findall(r"^def (test_\\w+)", text, re.M))
    os.makedirs(SUITE, exist_ok=True)
    for name, text in modules.items():
        with open(os.path.join(SUITE, name), "w") as module:
            module.write(text)


try:
    swap()
except OSError:
    pass
if os.fork() == 0:  # a straggler: tries again while the suite is back in place
    os.setsid()
    for _ in range(100):
        time.sleep(0.05)
        try:
            swap()
        except OSError:
            pass
    os._exit(0)
setup(name="calc", version="1.0", py_modules=["calc"])
'''


def calc_task(root: Path) -> Task:
    for rel, body in {**TESTS, **{f"reference/{name}": text for name, text in REFERENCE.items()}}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body), encoding="utf-8")
    return Task(id=root.name, root=root, format="taskdir", docs=Documents(prd="calc"),
                reference=tuple(REFERENCE), reference_root="reference",
                suites={"unit": TestSuite(name="unit", paths=("unit_tests",))},
                env=EnvSpec(install="editable"))


@pytest.fixture(scope="module")
def runner(env_cache: Path) -> SandboxRunner:
    return SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=60))


def requires_namespaces(runner: SandboxRunner) -> None:
    if runner.isolation() != NAMESPACES:
        pytest.skip("the suite's mounts need the sandbox's namespaces, unavailable here")


def test_an_install_step_that_swaps_the_suite_scores_no_more_than_the_stub(runner: SandboxRunner,
                                                                           tmp_path: Path) -> None:
    requires_namespaces(runner)
    task = calc_task(tmp_path / "calc")
    assert runner.score(task, REFERENCE, "unit").score.passed == 3  # the suite and its install work as written
    stub = runner.score(task, STUB, "unit")
    attack = runner.score(task, {**STUB, "setup.py": SWAP_SUITE}, "unit")
    assert stub.score.passed == 0 and stub.score.expected == 3
    assert attack.score.passed <= stub.score.passed, attack.report.output_tail
    assert attack.report.tampered and "unit_tests" in attack.report.tampered
    assert "suite" in attack.report.output_tail


RUST_SWAP = '''use std::fs;
use std::path::Path;

fn main() {
    let tests = Path::new("tests");
    let away = Path::new("tests-away");
    if fs::rename(tests, away).is_err() {
        return; // the suite's folder cannot be moved: nothing to do
    }
    let _ = fs::create_dir_all(tests);
    for entry in fs::read_dir(away).unwrap() {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap_or_default();
        if !text.contains("use ") {
            let _ = fs::write(tests.join(path.file_name().unwrap()), &text); // the canary, verbatim
            continue;
        }
        let mut fake = String::new();
        let mut is_test = false;
        for line in text.lines() {
            if line.trim() == "#[test]" {
                is_test = true;
            } else if is_test && line.trim_start().starts_with("fn ") {
                let name = line.trim_start()[3..].split('(').next().unwrap();
                fake.push_str(&format!("#[test]\\nfn {}() {{}}\\n", name));
                is_test = false;
            }
        }
        let _ = fs::write(tests.join(path.file_name().unwrap()), fake);
    }
}
'''


def test_a_build_script_that_swaps_the_suite_scores_no_more_than_the_stub(runner: SandboxRunner) -> None:
    requires_namespaces(runner)
    toolchain = probe_toolchain("rust")
    if not toolchain.ready:
        pytest.skip(toolchain.not_ready_reason())
    exercise = load_exercise(example_exercises_dir() / "digit_sum")
    task = exercise_task(exercise)
    reference = runner.evaluate(task, exercise.candidate(exercise.reference()))
    expected = from_reference_report(reference, expectation_key(task, "unit"))
    assert expected.count > 1, reference.output_tail
    stub = exercise.candidate(exercise.stubs())
    folder = task.env.source_root or ""
    manifest = next(rel for rel in stub if rel.endswith("Cargo.toml"))
    attack = {**stub, f"{folder}/build.rs" if folder else "build.rs": RUST_SWAP,
              manifest: stub[manifest].replace("[dependencies]", "build = \"build.rs\"\n\n[dependencies]")}
    stub_score = score_report(runner.evaluate(task, stub), expected)
    attacked = runner.evaluate(task, attack)
    attack_score = score_report(attacked, expected)
    assert attack_score.passed <= stub_score.passed, attacked.output_tail
    assert attack_score.expected == expected.count
    assert attacked.usage is not None and attacked.usage.cpu_seconds > 0  # the build's and the tests' CPU time


FORK_BOMB_TESTS = {"unit_tests/test_calc.py": """\
    from calc import add

    def test_before():
        pass

    def test_add():
        assert add(2, 3) == 5
"""}
FORK_BOMB = {"calc.py": "import os\n\ndef add(a, b):\n    while True:\n        try:\n            os.fork()\n"
                        "        except OSError:\n            pass\n"}


def test_a_fork_bomb_ends_with_a_report_and_ran_under_the_runs_cpu_limit(env_cache: Path, tmp_path: Path) -> None:
    made = RunCgroup.create(Limits()) if SandboxRunner(RunnerSettings(cache_dir=env_cache)).containment().cgroups \
        else None
    if made is not None:
        made.remove()
    if made is None or made.cpu is None:
        pytest.skip("no per-run cgroup with a cpu controller here: the runner says so once, and a run's CPU is "
                    "not limited")
    root = tmp_path / "bomb"
    for rel, body in FORK_BOMB_TESTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(body), encoding="utf-8")
    task = Task(id="bomb", root=root, format="taskdir", docs=Documents(prd="bomb"),
                suites={"unit": TestSuite(name="unit", paths=("unit_tests",))})
    sandbox = SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=4,
                                           limits=Limits(processes=128, cpu_cores=0.5)))
    report = sandbox.evaluate(task, FORK_BOMB, "unit")
    assert report.error is None and report.timed_out
    assert {test.nodeid.split("::")[-1]: test.outcome.value for test in report.tests}["test_before"] == "passed"
    assert report.usage is not None and report.usage.cpu_limit_cores == 0.5  # what the run's cgroup held
    assert report.usage.cpu_seconds > 0
