"""A user's own method and scorer as experiment arms (examples/custom_method.py), from the CLI.

The model is ``replay=scripted:FILE``, the reference replay of the bundled wordfreq task (one file, one
attempt: the method's base is ``projectgen``). The example runs once by its module name
(``examples.custom_method:design_then_code``, from the repository's root) and once by the path of a copy of
it, whose first run is cut short (the script lacks the coder's reply, so the run raises after the
architecture stage) and then resumed; the copy is then edited, and continuing the folder is refused.
"""
from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from projectgen.cli import main
from projectgen.cli.exit_codes import EXIT_USAGE
from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.errors import ProjectGenError
from projectgen.experiments import ExperimentResults, ExperimentSpec
from projectgen.experiments.custom_arms import check_run_method
from projectgen.experiments.tables import custom_scores_table, pair_table, pass_table
from projectgen.oracles.reference_replay import reference_script
from projectgen.runs.custom_methods import load_method
from test_support import experiment_cli as cli
from test_support import strict_jsonl

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "custom_method.py"
METHOD = "examples.custom_method:design_then_code"
SCORER = "examples.custom_method:docstring_coverage"
KEY = "design-then-code/replay/wordfreq"


@pytest.fixture(autouse=True)
def at_the_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The module form imports from the working folder, as `python -m` does."""
    monkeypatch.chdir(REPO)


def write_script(path: Path, *, complete: bool) -> None:
    """wordfreq's reference replay; without the coder's reply when not `complete` (the run then raises)."""
    data = reference_script(load_task(example_task_path("wordfreq"))).model_dump(mode="json", exclude_none=True)
    if not complete:
        data["responses"] = [entry for entry in data["responses"] if entry["role"] != "coder"]
    path.write_text(json.dumps(data))


def experiment(out: Path, script: Path, method: str, scorer: str) -> tuple[int, str]:
    return cli("--dataset", "examples", "--tasks", "wordfreq", "--model", f"replay=scripted:{script}",
               "--method", method, "--scorer", scorer, "--embedding", "hashing", "--out", str(out))


def results(out: Path) -> ExperimentResults:
    return ExperimentResults.model_validate_json((out / "results.json").read_text())


def tables(out: Path) -> list[Any]:
    """The #Pass, custom-score and per-task tables: what a resumed experiment must give as an uninterrupted one."""
    found = results(out)
    return [pass_table(found), custom_scores_table(found), [pair_table(report) for report in found.models]]


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The example by its module name, run once without interruption."""
    root = tmp_path_factory.mktemp("custom-method")
    write_script(root / "replay.json", complete=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        code, output = experiment(root / "out", root / "replay.json", METHOD, SCORER)
    yield {"code": code, "output": output, "out": root / "out"}


def test_the_example_method_and_scorer_run_through_experiment_from_the_cli(whole: dict[str, Any]) -> None:
    assert whole["code"] == 0, whole["output"]
    run_dir = whole["out"] / KEY
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["custom_graph"] == ["architecture", "code"]  # the method's graph ran: no skeleton stage
    assert (manifest["method"], manifest["custom_method"]["spec"]) == ("projectgen", METHOD)
    log = json.loads((run_dir / "log.json").read_text())
    docstrings = log["samples"][0]["scores"]["docstrings"]
    assert (docstrings["passed"], docstrings["total"]) == (4, 4)  # wordfreq's four public functions
    found = results(whole["out"])
    assert [(r.method, r.final.passed, r.final.total, r.final.scores) for r in found.models] == [
        ("design-then-code", 11, 11, {"docstrings": 100.0})]
    assert found.summary[0].scores == {"docstrings": 100.0}
    assert found.custom_methods["design-then-code"]["spec"] == METHOD and set(found.scorers) == {"docstrings"}
    page = (whole["out"] / "results.md").read_text()
    assert "| task | design-then-code / replay (docstrings) |" in page and "| MEAN | 100.00 |" in page
    assert "| tokens | cost | docstrings | note |" in page  # beside the built-in columns of the per-task table


def test_an_interrupted_run_resumes_and_gives_the_same_tables_and_a_changed_method_is_refused(
        whole: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "my_method.py"
    shutil.copy(EXAMPLE, copy)
    script, out = tmp_path / "replay.json", tmp_path / "out"
    method, scorer = f"{copy}:design_then_code", f"{copy}:docstring_coverage"
    write_script(script, complete=False)
    code, output = experiment(out, script, method, scorer)
    assert code == 1, output
    assert [(e["key"], e["status"]) for e in strict_jsonl(out / "ledger.jsonl")] == [(KEY, "error")]
    assert (out / KEY / "checkpoints.sqlite").is_file()

    write_script(script, complete=True)
    code, output = experiment(out, script, method, scorer)
    assert code == 0, output
    assert results(out).models[0].pairs[0].how == "resumed"
    assert tables(out) == tables(whole["out"])

    copy.write_text(copy.read_text() + "\n# changed\n")
    before = (out / "ledger.jsonl").read_text()
    argv = ["experiment", "--dataset", "examples", "--tasks", "wordfreq", "--model", f"replay=scripted:{script}",
            "--method", method, "--scorer", scorer, "--out", str(out)]
    capsys.readouterr()
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "method 'design-then-code' ran from" in err and "--fresh" in err, err
    assert (out / "ledger.jsonl").read_text() == before  # nothing ran


def test_a_run_begun_by_other_method_code_is_not_resumed_by_this_one(tmp_path: Path) -> None:
    """The run.json check behind the experiment's: a run folder names the code that began it."""
    loaded = load_method(METHOD)
    check_run_method(tmp_path, loaded.record(), loaded)
    with pytest.raises(ProjectGenError, match="began with .* not "):
        check_run_method(tmp_path, {**loaded.record(), "sha256": "0" * 64}, loaded)
    with pytest.raises(ProjectGenError, match="began with a built-in method"):
        check_run_method(tmp_path, None, loaded)


@pytest.mark.parametrize(("option", "spec", "says"), [
    ("--method", "no_such_module_xyz:factory", "no module named 'no_such_module_xyz'"),
    ("--method", "examples.custom_method:no_such_factory", "has no callable 'no_such_factory'"),
    ("--method", "examples/no_such_file.py:factory", f"no file {REPO / 'examples' / 'no_such_file.py'}"),
    ("--method", "examples.custom_method:docstring_coverage", "returned DocstringCoverage, not a CustomMethod"),
    ("--method", "not a module:factory", "neither a module name nor a .py file"),
    ("--method", "examples.custom_method:", "give package.module:factory"),
    ("--scorer", "examples.custom_method:design_then_code", "returned CustomMethod, which has no name and score"),
])
def test_a_bad_spec_is_one_line_and_nothing_is_written(option: str, spec: str, says: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["experiment", "--dataset", "examples", "--tasks", "wordfreq", "--model", "reference",
            "--out", str(tmp_path / "out"), option, spec]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("projectgen: error: ") and says in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # two arms; the default suite runs the same path from the CLI (the tests above)
def test_the_example_script_runs_both_arms_offline_and_ends_green(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE), "--out", str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "NOT a real model" in done.stdout
    assert "wordfreq | 46 | 11 | 11 | 11" in done.stdout  # projectgen and design-then-code: every unit test
    assert "MEAN | 100.00 | 100.00" in done.stdout  # the docstrings scorer beside both arms


def test_a_spec_with_custom_arms_pickles_for_executors_on_other_processes(tmp_path: Path) -> None:
    """A factory of a file loaded by path has no importable module: the spec pickles as the specs it was given."""
    copy = tmp_path / "my_method.py"
    shutil.copy(EXAMPLE, copy)
    spec = ExperimentSpec(dataset="examples", models=("reference",), methods=(f"{copy}:design_then_code",),
                          scorers=(f"{copy}:docstring_coverage",))
    code = ("import pickle, sys; spec = pickle.load(sys.stdin.buffer); "
            "print(spec.methods, spec.scorers[0].scorer.name, spec.custom_methods['design-then-code'].identity.sha256)")
    done = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(spec), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    sha = spec.custom_methods["design-then-code"].identity.sha256
    assert done.stdout.decode().split() == ["('design-then-code',)", "docstrings", sha]


def test_a_scorer_may_not_take_a_name_the_run_log_gives_its_own_scores(tmp_path: Path) -> None:
    (tmp_path / "unit_scorer.py").write_text(
        "class Unit:\n    name = 'unit'\n\n    def score(self, task, folder, runner, unit_report):\n        return None\n")
    with pytest.raises(ProjectGenError, match="its name 'unit' must be"):
        ExperimentSpec(dataset="examples", models=("reference",), scorers=(f"{tmp_path / 'unit_scorer.py'}:Unit",))


def test_two_copies_of_one_file_each_have_their_own_identity(tmp_path: Path) -> None:
    """A file loaded by path is its own module: a copy edited after loading does not stand in for another."""
    first, second = tmp_path / "a" / "my_method.py", tmp_path / "b" / "my_method.py"
    for copy in (first, second):
        copy.parent.mkdir()
        shutil.copy(EXAMPLE, copy)
    load_method(f"{first}:design_then_code")
    first.write_text(first.read_text() + "\n# changed\n")
    loaded = load_method(f"{second}:design_then_code")
    assert (loaded.identity.file, loaded.identity.sha256) == (str(second), load_method(METHOD).identity.sha256)


COUNTED = '''

def counted_design_then_code() -> CustomMethod:
    """design_then_code, each call noted in calls.txt beside this file."""
    with (Path(__file__).parent / "calls.txt").open("a") as calls:
        calls.write("method\\n")
    return design_then_code()


def counted_docstring_coverage() -> Any:
    with (Path(__file__).parent / "calls.txt").open("a") as calls:
        calls.write("scorer\\n")
    return docstring_coverage()
'''


def test_an_experiment_command_calls_each_custom_factory_once(tmp_path: Path) -> None:
    """The experiment is built once, its check before an executor connects included: a factory with effects of its
    own (a model loaded, a counter) must not see them twice."""
    copy = tmp_path / "my_method.py"
    copy.write_text(EXAMPLE.read_text() + COUNTED)
    script = tmp_path / "replay.json"
    write_script(script, complete=True)
    code, output = experiment(tmp_path / "out", script, f"{copy}:counted_design_then_code",
                              f"{copy}:counted_docstring_coverage")
    assert code == 0, output
    assert sorted((tmp_path / "calls.txt").read_text().split()) == ["method", "scorer"]
