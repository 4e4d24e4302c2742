"""`evolve`: the bundled kvstore-counter turns change the demo's kvstore run four times, with scripted models.

One module fixture runs the demo (LiveCoder with the demo's replay) and four chained evolve runs, each
driven by its bundled script (``scripts/kvstore.evolveN.json``) with the turn's requirement and tests;
the second change's first code breaks an earlier requirement, which the regression tests catch.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from projectgen.llm import ModelRoles
from projectgen.runs import RunRequest
from projectgen.cli import main
from projectgen.datasets.examples import example_script_path, example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.datasets.multiturn import bundled_dataset_dir, load_multiturn_task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.runner import SandboxRunner
from projectgen.protocols.evolve.graph import evolve_replay
from projectgen.llm import ScriptExhaustedError
from projectgen.llm.scripted import scripted_chat_model_class
from projectgen.repository import load_repository
from projectgen.runs import Run, RunParts
from projectgen.protocols.evolve.unit import read_evolve_record, run_evolve
from projectgen.ssat import SSAT
from projectgen.runs.run_log import read_run_log

from test_support import strict_jsonl

COUNTER = load_multiturn_task(bundled_dataset_dir() / "kvstore-counter")
KVSTORE_FILES = ["kvstore/__init__.py", "kvstore/__main__.py", "kvstore/cli.py", "kvstore/codec.py",
                 "kvstore/errors.py", "kvstore/storage.py", "kvstore/store.py"]


def replay(path: Path) -> ModelRoles:
    return ModelRoles(scripted_chat_model_class().from_file(path))


def change(base: Path, out: Path, turn: int, *, script: Path | None = None, runner=None, **kwargs):
    script = script or example_script_path(f"kvstore.evolve{turn}")
    return run_evolve(base, out, requirement=COUNTER.turn(turn).requirement,
                      tests=COUNTER.root / COUNTER.turn(turn).tests, models=replay(script),
                      model_specs={"default": f"scripted:{script}"}, runner=runner, **kwargs)


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    root = tmp_path_factory.mktemp("evolve")
    runner = SandboxRunner()
    demo = example_script_path("kvstore.demo")
    Run.open(RunRequest.for_task(load_task(example_task_path("kvstore")), models={"default": f"scripted:{demo}"}), root / "base", RunParts(models=replay(demo), runner=runner)).run()
    outcomes, previous = [], root / "base"
    for turn in (1, 2, 3, 4):
        outcomes.append(change(previous, root / f"change{turn}", turn, runner=runner, evaluate_unit=turn == 1))
        previous = root / f"change{turn}"
    return root, runner, outcomes


def test_each_change_passes_its_tests_and_every_earlier_check_test(chain):
    root, _, outcomes = chain
    assert [o.check_report.status for o in outcomes] == ["passed"] * 4
    assert [(o.record.check_new.passed, o.record.check_new.total) for o in outcomes] == [(7, 7), (7, 7), (5, 5),
                                                                                          (4, 4)]
    # the base task's 5 check tests, then each earlier change's tests, run as regression tests
    assert [(o.record.check_regression.passed, o.record.check_regression.total) for o in outcomes] == [
        (5, 5), (12, 12), (19, 19), (24, 24)]
    assert outcomes[3].record.regression_tests == ["test_counter_turn1.py", "test_counter_turn2.py",
                                                   "test_counter_turn3.py", "test_kvstore_check.py"]
    assert outcomes[0].unit_report.passed == outcomes[0].unit_report.total == 29  # the base task's hidden tests
    assert [o.state.get("stopped") for o in outcomes] == [None] * 4


def test_files_the_diff_does_not_touch_are_byte_identical_and_cost_no_model_call(chain):
    root, _, outcomes = chain
    base = {p: (root / "base" / "repository" / p).read_bytes() for p in KVSTORE_FILES}
    for turn, outcome in enumerate(outcomes, start=1):
        plan = outcome.record.plan
        assert plan.redo == ["kvstore/counter.py"] and plan.kept == KVSTORE_FILES, turn
        assert plan.added == (["kvstore/counter.py"] if turn == 1 else [])
        assert plan.changed == ([] if turn == 1 else ["kvstore/counter.py"])
        folder = root / f"change{turn}"
        assert {p: (folder / "repository" / p).read_bytes() for p in KVSTORE_FILES} == base, turn
        assert outcome.record.kept_identical and outcome.record.calls_on_kept_files == []
        calls = strict_jsonl(folder / "usage.jsonl")
        writers = [(c["role"], c["target"]) for c in calls if c["role"] in ("skeleton", "coder")]
        assert writers and {target for _, target in writers} == {"kvstore/counter.py"}, turn
        roles = sorted(c["role"] for c in calls)
        expected = ["architect", "architecture_judge", "coder", "skeleton", "skeleton_judge"]
        if turn == 2:  # the repair round: the code judge names the file, the coder rewrites it
            expected = ["architect", "architecture_judge", "code_judge", "coder", "coder", "skeleton", "skeleton_judge"]
        assert roles == expected, turn
    assert (root / "change4" / "repository" / "kvstore" / "counter.py").read_text() == COUNTER.reference_code(4)


def test_the_earlier_requirements_tests_catch_a_change_that_breaks_them(chain):
    _, _, outcomes = chain
    verdicts = [v for v in outcomes[1].state["verdicts"] if v["stage"] == "code"]
    assert [v["accepted"] for v in verdicts] == [False, True]
    failing = verdicts[0]["check"]["failing"]
    assert failing and all(nodeid.startswith("check_tests/test_counter_turn1.py::test_amounts_must_be_ints")
                           for nodeid in failing)
    assert outcomes[1].summary["stages"]["code"]["iterations"] == 2


def test_the_tree_diff_is_recorded_and_the_trace_shows_it(chain, capsys):
    root, _, outcomes = chain
    assert "+ file kvstore/counter.py" in outcomes[0].record.plan.diff_text
    assert "Counter.incr signature" in outcomes[1].record.plan.diff_text
    record = read_evolve_record(root / "change2")
    assert record.plan == outcomes[1].record.plan and record.status == "finished"
    events = strict_jsonl(root / "change2" / "events.jsonl")
    plan_events = [e for e in events if e["event"] == "evolve_plan"]
    assert len(plan_events) == 1 and plan_events[0]["redo"] == ["kvstore/counter.py"] and plan_events[0]["kept"] == 7
    capsys.readouterr()
    assert main(["trace", str(root / "change2")]) == 0
    out = capsys.readouterr().out
    assert "evolve (a change to a finished run)" in out and f"evolved from: {root / 'change1'}" in out
    assert "tree diff (the base run's tree -> the revised tree):" in out and "Counter.incr signature" in out
    assert "redone: kvstore/counter.py (importers: none)" in out and "kept byte for byte: 7 file(s)" in out
    assert main(["trace", str(root / "change2"), "--diff"]) == 0
    assert "architecture tree" in capsys.readouterr().out


def test_an_evolve_run_is_a_run_folder_of_its_own_and_changes_chain(chain):
    root, _, outcomes = chain
    for turn in (1, 2, 3, 4):
        folder = root / f"change{turn}"
        manifest = json.loads((folder / "run.json").read_text())
        assert (manifest["method"], manifest["status"], manifest["task_id"]) == ("evolve", "finished",
                                                                                f"kvstore.change{turn}")
        assert manifest["task_path"] == str((folder / "task").resolve())
        assert (folder / "checkpoints.sqlite").is_file() and (folder / "summary.json").is_file()
        assert (read_run_log(folder).kind, read_run_log(folder).status) == ("evolve", "finished")
        tree = SSAT.model_validate_json((folder / "ssat.json").read_text())
        assert "kvstore/counter.py" in {f.path for f in tree.files()}
        prd = (folder / "task" / "docs" / "prd.md").read_text()
        assert prd.count("## Change request") == turn and f"## Change request {turn}\n" in prd
        assert load_repository(folder / "base" / "repository").keys() == set(KVSTORE_FILES) | (
            {"kvstore/counter.py"} if turn > 1 else set())
        assert read_evolve_record(folder).base_run == str((root / ("base" if turn == 1 else f"change{turn - 1}")))
    assert read_evolve_record(root / "change1").base_tree == str(root / "base" / "ssat.json")


def test_a_failed_evolve_run_resumes_without_repeating_a_finished_call(chain, tmp_path: Path):
    root, runner, _ = chain
    script = tmp_path / "partial.json"
    complete = json.loads(example_script_path("kvstore.evolve1").read_text())
    script.write_text(json.dumps({**complete, "responses": [r for r in complete["responses"] if r["role"] != "coder"]}))
    with pytest.raises(ScriptExhaustedError):
        change(root / "base", tmp_path / "out", 1, script=script, runner=runner, evaluate_unit=False)
    assert json.loads((tmp_path / "out" / "run.json").read_text())["status"] == "failed"
    script.write_text(json.dumps(complete))
    outcome = run_evolve(None, tmp_path / "out", resume=True, models=replay(script), runner=runner,
                         evaluate_unit=False)
    assert outcome.check_report.status == "passed" and outcome.record.status == "finished"
    calls = strict_jsonl(tmp_path / "out" / "usage.jsonl")
    done = [(c["role"], c["target"]) for c in calls if not c.get("error")]
    assert sorted(done) == sorted(set(done))  # every finished call made once
    assert [c["role"] for c in calls if c.get("error")] == ["coder"]


def test_a_change_to_an_imported_file_redoes_its_importers_and_keeps_the_rest(chain, tmp_path: Path):
    root, runner, _ = chain
    base_tree = SSAT.model_validate_json((root / "base" / "ssat.json").read_text())
    before = load_repository(root / "base" / "repository")
    after = {**before, "kvstore/errors.py": before["kvstore/errors.py"]
             + '\n\nclass ReadOnlyError(KVStoreError):\n    """A write to a read-only store."""\n'}
    script = tmp_path / "errors.json"
    script.write_text(json.dumps(evolve_replay(base_tree, before, after, changed=["kvstore/errors.py"],
                                               label="errors change (scripted)")))
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_read_only.py").write_text("from kvstore.errors import KVStoreError, ReadOnlyError\n\n\n"
                                              "def test_read_only_error():\n"
                                              "    assert issubclass(ReadOnlyError, KVStoreError)\n")
    outcome = run_evolve(root / "base", tmp_path / "out", requirement="Add ReadOnlyError to kvstore.errors.",
                         tests=tests, models=replay(script), runner=runner, evaluate_unit=False)
    plan = outcome.record.plan
    assert plan.changed == ["kvstore/errors.py"] and plan.kept == ["kvstore/__main__.py"]
    assert plan.importers == ["kvstore/__init__.py", "kvstore/cli.py", "kvstore/codec.py", "kvstore/storage.py",
                              "kvstore/store.py"]
    assert set(outcome.record.generator_calls) == set(plan.redo) and outcome.record.calls_on_kept_files == []
    assert outcome.record.kept_identical and outcome.check_report.status == "passed"
    assert outcome.record.check_new.total == 1 and outcome.record.check_regression.total == 5


def test_a_run_without_its_tree_evolves_from_a_tree_derived_from_its_code(chain, tmp_path: Path):
    root, runner, _ = chain
    shutil.copytree(root / "base", tmp_path / "base", ignore=shutil.ignore_patterns("checkpoints.sqlite*"))
    (tmp_path / "base" / "ssat.json").unlink()
    outcome = change(tmp_path / "base", tmp_path / "out", 1, runner=runner, evaluate_unit=False)
    assert outcome.record.base_tree.startswith("derived from the repository's code")
    assert outcome.record.plan.redo == ["kvstore/counter.py"] and outcome.check_report.status == "passed"


def test_what_cannot_be_evolved_is_refused_before_anything_is_written(chain, tmp_path: Path):
    root, _, _ = chain
    running = tmp_path / "running"
    shutil.copytree(root / "base", running, ignore=shutil.ignore_patterns("checkpoints.sqlite*"))
    manifest = json.loads((running / "run.json").read_text())
    (running / "run.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    tests = COUNTER.root / COUNTER.turn(1).tests
    cases = [
        (dict(base_run=running, requirement="x", tests=tests), "the run is interrupted, not finished"),
        (dict(base_run=root / "base", requirement="  ", tests=tests), "the change request is empty"),
        (dict(base_run=root / "base", requirement="x", tests=tmp_path), "holds no test_*.py file"),
        (dict(base_run=root / "base", requirement="x",
              tests=example_task_path("kvstore") / "check_tests"), "test_kvstore_check.py would replace"),
        (dict(base_run=tmp_path / "nowhere", requirement="x", tests=tests), "run folder not found"),
    ]
    for kwargs, message in cases:
        out = tmp_path / "out"
        with pytest.raises(ProjectGenError, match=re.escape(message)):
            run_evolve(kwargs.pop("base_run"), out, models=replay(example_script_path("kvstore.evolve1")), **kwargs)
        assert not out.exists(), message
    with pytest.raises(ProjectGenError, match="needs its own folder"):
        run_evolve(root / "base", root / "base", requirement="x", tests=tests,
                   models=replay(example_script_path("kvstore.evolve1")))


# ------------------------------------------------------------------ what the evolved task keeps of its base

ENVIRONMENT_CHECK = """\
import os


def test_the_tasks_workspace_and_environment_are_in_place():
    assert os.environ["KV_MODE"] == "test"
    assert os.path.isdir(os.path.join(os.environ["DATA_DIR"], "out"))  # {repo}/data and empty_dirs data/out
    assert os.path.basename(os.getcwd()) == "data"  # [env] workdir
    with open("../fixtures/seed.json", encoding="utf-8") as handle:
        assert handle.read() == '{"seed": 1}\\n'
"""

EVERY_KEY_TOML = """\
id = "kvlab"
package = "kvstore"
reference_root = "solution"
reference_target = "src"
starter = ["examples/usage.py"]
required_files = ["fixtures/seed.json"]
empty_dirs = ["data/out"]
timeout = 240
install_timeout = 600

[timeouts]
performance = 30

[docs]
prd = "docs/PRD.md"
uml_class = "docs/UML_class.md"
uml_sequence = "docs/UML_sequence.md"
architecture_design = "docs/architecture_design.md"

[tests]
check = "tests/check"
unit = ["tests/unit", "tests/test_extra.py"]
acceptance = "acceptance"
performance = "perf/test_speed.py"

[env]
requirements = ["iniconfig"]
constraints = ["iniconfig>=1"]
python = "3.11"
env_vars = { KV_MODE = "test", DATA_DIR = "{repo}/data" }
pytest_plugins = []
setup_script = "scripts/setup.sh"
source_root = "src"
install = "script"
workdir = "data"
pytest_config = "pytest.ini"
nearest_pins = true
listed_left_out = ["CUDA>=11.0: not a requirement"]

[settings_profile]
code_iterations = 7
gamma = 3

[expected_tests]
check = ["tests/check/test_kvstore_check.py::test_set_and_get"]
unit = ["tests/unit/test_open.py::test_open", "tests/test_extra.py::test_extra"]
performance = ["perf/test_speed.py::test_fast"]

[expected_total]
check = 3
unit = 4
"""

# Every Task field is carried, moved to the evolved task's suite folders, or dropped on purpose.
CARRIED = {"package", "docs", "env", "required_files", "empty_dirs", "timeout", "settings_profile",
           "install_timeout", "suite_timeouts"}
BY_NAME = {"scored_suite"}  # the suites keep their names; the every-key task scores `unit`, its default
MOVED = {"suites", "expected_tests", "expected_totals"}  # at the evolved task's NAME_tests/ folders; check's
# expectations dropped (the change's tests join it)
DROPPED = {"reference", "reference_root", "reference_sources"}  # the reference implements the requirement before
# the change
OWN = {"id", "root", "format", "language"}  # language: task.toml has no key for it yet (Python)
# what only a benchmark's own layout gives (RAL-Bench, NL2Repo-Bench): task.toml has no key for them, and a changed
# requirement is no longer the benchmark's task (its published #Tests and difficulty do not apply)
BENCHMARK_ONLY = {"folder", "candidate_copies", "difficulty", "published_tests"}


def every_key_task(folder: Path) -> Path:
    """A task.toml task over the bundled kvstore task with every key set to a value other than its default."""
    kvstore = example_task_path("kvstore")
    shutil.copytree(kvstore / "docs", folder / "docs")
    shutil.copytree(kvstore / "kvstore", folder / "solution" / "kvstore")
    shutil.copytree(kvstore / "check_tests", folder / "tests" / "check")
    files = {
        "task.toml": EVERY_KEY_TOML,
        "tests/check/test_environment.py": ENVIRONMENT_CHECK,
        "tests/unit/test_open.py": "from kvstore import KVStore\n\n\ndef test_open():\n    assert KVStore\n",
        "tests/test_extra.py": "def test_extra():\n    assert True\n",
        "acceptance/test_accept.py": "def test_accept():\n    assert True\n",
        "perf/test_speed.py": "def test_fast():\n    assert True\n",
        "examples/usage.py": "from kvstore import KVStore\n\nstore = KVStore()\n",
        "fixtures/seed.json": '{"seed": 1}\n',
        "scripts/setup.sh": "echo set up\n",
        "pytest.ini": "[pytest]\nmarkers =\n    slow: a slow test\n",
    }
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def suite_contents(task, name: str) -> dict[str, bytes]:
    from projectgen.protocols.evolve.task import suite_test_files

    return {rel: path.read_bytes() for rel, path in suite_test_files(task, name).items()}


def test_the_evolved_task_keeps_every_setting_of_its_base_that_still_applies(chain, tmp_path: Path):
    from projectgen.datasets.task import EnvSpec, Task

    root, runner, _ = chain
    base = load_task(every_key_task(tmp_path / "kvlab"))
    assert set(Task.model_fields) == CARRIED | MOVED | DROPPED | OWN | BY_NAME | BENCHMARK_ONLY  # a new field needs
    # a decision here
    for name in CARRIED | MOVED | DROPPED:
        assert getattr(base, name) != Task.model_fields[name].get_default(call_default_factory=True), name
    for name, field in EnvSpec.model_fields.items():
        assert getattr(base.env, name) != field.get_default(call_default_factory=True), name
    assert base.docs.starter and base.docs.uml_class and base.docs.uml_sequence and base.docs.architecture_design
    # the finished demo run, as if it had been run on this task
    shutil.copytree(root / "base", tmp_path / "base", ignore=shutil.ignore_patterns("checkpoints.sqlite*"))
    manifest = json.loads((tmp_path / "base" / "run.json").read_text())
    (tmp_path / "base" / "run.json").write_text(json.dumps({**manifest, "task_path": str(base.root)}))

    outcome = change(tmp_path / "base", tmp_path / "out", 1, runner=runner, evaluate_unit=False)
    evolved = load_task(tmp_path / "out" / "task")

    assert (evolved.id, evolved.format) == ("kvlab.change1", "taskdir")
    for name in (CARRIED | BY_NAME) - {"docs"}:
        assert getattr(evolved, name) == getattr(base, name), name
    assert evolved.env.setup_script == "echo set up\n" and evolved.env.constraints == ("iniconfig>=1",)
    assert evolved.docs.model_dump(exclude={"prd"}) == base.docs.model_dump(exclude={"prd"})
    assert evolved.docs.prd == (f"{base.docs.prd.rstrip()}\n\n## Change request 1\n\n"
                                f"{COUNTER.turn(1).requirement.strip()}\n")
    assert (tmp_path / "out" / "task" / "fixtures" / "seed.json").read_bytes() == b'{"seed": 1}\n'
    # every suite, its files as the base's below the suite's folder; check gains the change's tests
    assert {name: suite.paths for name, suite in evolved.suites.items()} == {
        "check": ("check_tests",), "unit": ("unit_tests",), "acceptance": ("acceptance_tests",),
        "performance": ("performance_tests",)}
    for name in ("unit", "acceptance", "performance"):
        assert suite_contents(evolved, name) == suite_contents(base, name), name
    change_tests = COUNTER.root / COUNTER.turn(1).tests
    assert suite_contents(evolved, "check") == {**suite_contents(base, "check"), **{
        path.name: path.read_bytes() for path in change_tests.glob("test_*.py")}}
    # expected tests follow their files; the check suite's no longer list what it runs
    assert evolved.expected_tests == {
        "unit": ("unit_tests/unit/test_open.py::test_open", "unit_tests/test_extra.py::test_extra"),
        "performance": ("performance_tests/test_speed.py::test_fast",)}
    assert evolved.expected_totals == {"unit": 4}  # the unit suite is the base's; check gained tests
    # the reference implements the requirement before the change: not part of the evolved task
    assert (evolved.reference, evolved.reference_root) == ((), "")
    assert not (tmp_path / "out" / "task" / "solution").exists()
    # and the run was tested in that workspace and environment, with the task's paper settings
    assert outcome.check_report.status == "passed"
    assert any(t.nodeid.startswith("check_tests/test_environment.py::") for t in outcome.check_report.tests)
    settings = json.loads((tmp_path / "out" / "run.json").read_text())["settings"]
    assert (settings["code_iterations"], settings["gamma"]) == (7, 3)


def test_a_base_task_whose_files_would_clash_is_refused_before_the_run_folder_exists(chain, tmp_path: Path):
    """A fixture at the path the evolved task gives the setup script: refused with one line, and the evolve
    run's folder is never made (the evolved task is planned, every file checked, before it)."""
    root, _, _ = chain
    task = every_key_task(tmp_path / "kvlab")
    toml = (task / "task.toml").read_text()
    clashing = toml.replace('required_files = ["fixtures/seed.json"]',
                            'required_files = ["fixtures/seed.json", "setup_script.sh"]')
    assert clashing != toml
    (task / "task.toml").write_text(clashing)
    (task / "setup_script.sh").write_text("echo another script\n")
    shutil.copytree(root / "base", tmp_path / "base", ignore=shutil.ignore_patterns("checkpoints.sqlite*"))
    manifest = json.loads((tmp_path / "base" / "run.json").read_text())
    (tmp_path / "base" / "run.json").write_text(json.dumps({**manifest, "task_path": str(task)}))
    out = tmp_path / "out"
    with pytest.raises(ProjectGenError, match=r"^setup_script\.sh: the evolved task would hold both"):
        run_evolve(tmp_path / "base", out, requirement="x", tests=COUNTER.root / COUNTER.turn(1).tests,
                   models=replay(example_script_path("kvstore.evolve1")))
    assert not out.exists()
