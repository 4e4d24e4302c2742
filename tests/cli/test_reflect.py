"""`projectgen reflect` as a user runs it: the bundled exercises in both edit formats, the reference replay on
every nesting, results.json/md/html, the ledger, resuming a killed batch without a second model call, and
harness failures recorded as retryable, never as a pass or a fail."""
from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from projectgen.cli import main
from projectgen.datasets.examples import example_exercises_dir, example_script_path
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.protocols.reflection.batch import run_reflect
from projectgen.runs.run_log import read_run_log
from test_support import strict_jsonl

LAYOUTS = Path(__file__).parents[1] / "datasets" / "exercism_layouts"
BUNDLED_SCRIPT = "scripted:exercises.reflect"
PYTHON_TASKS = "ledger_book,unit_convert,word_index"  # the other languages: tests/evaluation/test_languages.py
LAYOUT_TASKS = "hop_count,route_cache,tally_marks"  # its C++ exercise has no reference: it does not load


def reflect(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["reflect", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def summary(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    data = json.loads((out / "results.json").read_text())
    return {(e["model"], e["edit_format"]): e for e in data["summary"]}


def usage_lines(out: Path) -> dict[str, list[dict[str, Any]]]:
    return {str(p.parent.relative_to(out)): strict_jsonl(p) for p in sorted(out.glob("*/*/*/usage.jsonl"))}


def bundled_batch(model: str, out: Path, cache_dir: Path) -> list[str]:
    """`reflect`'s arguments for the README's example on the Python exercises: every run compared with the
    `bundled` fixture's takes them from here, so both run the same exercises as exercises are added."""
    return ["--dataset", "examples", "--model", model, "--edit-format", "whole,patch", "--out", str(out),
            "--cache-dir", str(cache_dir), "--tasks", PYTHON_TASKS]


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory, env_cache: Path) -> dict[str, Any]:
    """The README's example on the bundled Python exercises, the bundled replay, both edit formats: through
    `main` in this process (a new interpreter would only import projectgen again), printed 160 columns wide."""
    out = tmp_path_factory.mktemp("reflect") / "out"
    argv = ["reflect", *bundled_batch(BUNDLED_SCRIPT, out, env_cache), "--workers", "2"]
    stdout, stderr = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        patch.setenv("COLUMNS", "160")
        code = main(argv)
    return {"out": out, "code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}


def test_the_bundled_exercises_give_the_scripted_figures_in_both_edit_formats(bundled) -> None:
    assert bundled["code"] == 0, bundled["stderr"]
    figures = summary(bundled["out"])
    for fmt in ("whole", "patch"):
        entry = figures[("scripted-exercises.reflect", fmt)]
        assert entry["tasks"] == 3 and entry["errors"] == 0
        assert (round(entry["pass_at_1"], 1), round(entry["pass_at_2"], 1), round(entry["fix_weight"], 1),
                round(entry["well_formed"], 1)) == (33.3, 66.7, 50.0, 66.7)
        assert [round(v, 1) for v in entry["pass_at_k"]] == [33.3, 66.7]
        assert entry["input_tokens"] > 0 and entry["output_tokens"] > 0
        assert entry["model_label"].startswith("scripted model (")  # a replay is named as one
    out = bundled["stdout"]
    assert "│ scripted-exercises.reflect │ whole       │ Python   │     3 │   33.3 │   66.7 │ 50.0 │ 66.7 │" in out
    assert "│ scripted-exercises.reflect │ whole       │ All      │     3 │   33.3 │   66.7 │ 50.0 │ 66.7 │" in out
    assert "scripted-exercises.reflect/patch/word_index: failed, 2 tr(ies), NOT well formed" in out


def test_each_task_of_the_bundled_run_in_the_results_and_the_ledger(bundled) -> None:
    out = bundled["out"]
    results = json.loads((out / "results.json").read_text())
    assert results["schema_version"] == 1 and results["tries"] == 2
    rows = {(r["edit_format"], r["task_id"]): r for report in results["reports"] for r in report["rows"]}
    for fmt in ("whole", "patch"):
        assert rows[(fmt, "unit_convert")]["result"]["passed_at"] == 1
        ledger_book = rows[(fmt, "ledger_book")]["result"]
        assert ledger_book["passed_at"] == 2 and [t["tests_passed"] for t in ledger_book["tries"]] == [7, 9]
        word_index = rows[(fmt, "word_index")]["result"]
        assert word_index["status"] == "failed" and not word_index["well_formed"]
        assert [t["well_formed"] for t in word_index["tries"]] == [False, True]
    assert len(strict_jsonl(out / "ledger.jsonl")) == 6
    md = (out / "results.md").read_text()
    assert "| scripted-exercises.reflect | patch | 3 | 33.3 | 66.7 | 50.0 | 66.7 | 0 |" in md
    assert "| scripted-exercises.reflect | whole | word_index | Python | failed | | 2 | no | 4/6 |" in md
    page = (out / "results.html").read_text()
    assert "<svg" in page and "pass@k: tasks passed by try k" in page and "k=2" in page
    # One model call per try, each answered once.
    calls = usage_lines(out)
    assert {unit: len(lines) for unit, lines in calls.items()} == {
        f"scripted-exercises.reflect/{fmt}/{task}": n for fmt in ("whole", "patch")
        for task, n in (("ledger_book", 2), ("unit_convert", 1), ("word_index", 2))}


def test_a_rerun_continues_from_the_ledger_and_calls_no_model(bundled, capsys, env_cache: Path) -> None:
    out = bundled["out"]
    before, figures = usage_lines(out), summary(out)
    (out / "results.json").unlink()
    code, stdout, _ = reflect(capsys, *bundled_batch(BUNDLED_SCRIPT, out, env_cache))
    assert code == 0 and "6 unit(s) already finished in the ledger" in stdout
    assert usage_lines(out) == before
    assert summary(out) == figures  # written again from the ledger: the same figures


def test_the_bundled_script_is_the_one_tests_exercise_replays_writes() -> None:
    from exercise_replays import script_text

    assert example_script_path("exercises.reflect").read_text() == script_text()


@pytest.mark.parametrize("dataset", ["examples", str(LAYOUTS)])
def test_the_reference_replay_passes_every_exercise_at_try_one(tmp_path: Path, capsys, env_cache: Path,
                                                              dataset: str) -> None:
    out = tmp_path / "out"
    code, stdout, _ = reflect(capsys, "--dataset", dataset, "--model", "reference", "--edit-format", "whole,patch",
                              "--out", str(out), "--cache-dir", str(env_cache),
                              "--tasks", PYTHON_TASKS if dataset == "examples" else LAYOUT_TASKS)
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    for entry in results["summary"]:
        assert entry["tasks"] == 3 and entry["errors"] == 0
        assert (entry["pass_at_1"], entry["pass_at_2"], entry["fix_weight"], entry["well_formed"]) == (
            100.0, 100.0, 0.0, 100.0)
        assert entry["model_label"] == "reference replay (oracle, not a model)"
    assert "- reference: reference replay (oracle, not a model)" in (out / "results.md").read_text()
    if dataset != "examples":  # the Aider, LiveRepoReflection and short nestings
        assert results["skipped_languages"] == {} and results["load_errors"] == {}
        tries = [r["result"]["tries"][0] for report in results["reports"] for r in report["rows"]]
        assert all(t["tests_passed"] == t["tests_total"] > 0 for t in tries)


class FlakyHarness(SandboxRunner):
    """A sandbox whose environment fails to build for the tasks named in `broken` (the class attribute)."""

    broken: set[str] = set()

    def evaluate(self, task, candidate, suite="unit"):  # noqa: ANN001
        if task.id in self.broken:
            return TestReport(task_id=task.id, suite=suite, error="environment: pip failed")
        return super().evaluate(task, candidate, suite)


def test_a_harness_failure_is_a_retryable_error_never_a_pass_or_a_fail(tmp_path: Path, env_cache: Path) -> None:
    out = tmp_path / "out"
    FlakyHarness.broken = {"ledger_book"}
    settings = RunnerSettings(cache_dir=env_cache)
    model, tasks = ["scripted:" + str(example_script_path("exercises.reflect"))], ["ledger_book", "word_index"]
    results = run_reflect(example_exercises_dir(), model, out, formats=["patch"], tasks=tasks,
                          runner_factory=lambda: FlakyHarness(settings))
    [entry] = results.summary
    assert entry.errors == 1 and entry.tasks == 1  # left out of every figure: word_index alone counts
    assert (entry.pass_at_1, entry.pass_at_2, entry.well_formed) == (0.0, 0.0, 0.0)
    [error] = [line for line in strict_jsonl(out / "ledger.jsonl") if line["status"] == "error"]
    assert error["task_id"] == "ledger_book" and "TestHarnessError" in error["error"]
    assert "pip failed" in error["error"]
    calls_before = len(strict_jsonl(out / "scripted-exercises.reflect/patch/ledger_book/usage.jsonl"))
    assert calls_before == 1  # try 1 was asked; its test run failed in the harness
    FlakyHarness.broken = set()
    again = run_reflect(example_exercises_dir(), model, out, formats=["patch"], tasks=tasks,
                        runner_factory=lambda: FlakyHarness(settings))
    [entry] = again.summary
    assert entry.errors == 0 and entry.tasks == 2 and (entry.pass_at_1, entry.pass_at_2) == (0.0, 50.0)
    # The retried unit went on from its checkpoint: try 1's reply was not asked for again.
    usage = strict_jsonl(out / "scripted-exercises.reflect/patch/ledger_book/usage.jsonl")
    assert [u["iteration"] for u in usage] == [1, 2]


HOP_ROUTER = LAYOUTS / "liverepo/go/exercises/practice/unit_test_7d3e9b21_4a6c_4f08_9b15_c2e8a0f4d6b3/hop_router"


def test_an_exercise_whose_reference_cannot_get_its_modules_is_named_environment_incomplete_not_scored(
        tmp_path: Path, env_cache: Path, capsys) -> None:
    """No Go proxy on this machine: the reference's go.mod requiring a module makes the exercise 'environment
    incomplete' (named with the reason in results.json/md and the summary), not a 0/0 failure of the model."""
    from projectgen.evaluation.languages.toolchains import probe_toolchain

    if not probe_toolchain("go").ready:
        pytest.skip(probe_toolchain("go").not_ready_reason())
    dataset = tmp_path / "data" / "go" / "exercises" / "practice"
    shutil.copytree(HOP_ROUTER, dataset / "hop_router")
    (dataset / "hop_router" / ".meta" / "go.mod").write_text("module hoprouter\n\ngo 1.18\n\n"
                                                             "require nothere.invalid/mod v1.0.0\n")
    out = tmp_path / "out"
    code, printed, _ = reflect(capsys, "--dataset", str(tmp_path / "data"), "--model", "reference", "--tries", "1",
                               "--out", str(out), "--cache-dir", str(env_cache))
    assert code == 0  # a finished outcome, not an error of the harness
    results = json.loads((out / "results.json").read_text())
    [why] = results["environment_incomplete"].values()
    assert list(results["environment_incomplete"]) == ["hop_router"]
    assert why.startswith("environment incomplete: ") and "nothere.invalid/mod" in why
    [entry] = results["summary"]
    assert (entry["tasks"], entry["errors"], entry["environment_incomplete"]) == (0, 0, 1)
    assert results["summary_by_language"] == []  # no Go figure made of it
    [row] = strict_jsonl(out / "ledger.jsonl")
    assert row["status"] == "environment incomplete" and row["result"] is None
    assert "Environment incomplete, not scored" in (out / "results.md").read_text()
    assert "hop_router: environment incomplete" in printed
    assert not (out / "reference" / "whole" / "hop_router" / "usage.jsonl").exists()  # no model was asked


def test_an_exercise_published_without_its_reference_loads_and_its_replay_is_named_not_scored(
        tmp_path: Path, capsys) -> None:
    """A LiveRepoReflection JavaScript exercise lists .meta files its folder lacks: its tests can still score a
    model, so it loads; the reference replay has nothing to replay and says so, never a load error or a 0."""
    dataset = tmp_path / "data" / "python" / "exercises" / "practice"
    shutil.copytree(LAYOUTS / "aider/python/exercises/practice/tally_marks", dataset / "tally_marks")
    (dataset / "tally_marks" / ".meta" / "example.py").unlink()
    out = tmp_path / "out"
    code, _, _ = reflect(capsys, "--dataset", str(tmp_path / "data"), "--model", "reference", "--tries", "1",
                         "--out", str(out))
    results = json.loads((out / "results.json").read_text())
    assert code == 0 and results["load_errors"] == {}
    assert results["environment_incomplete"] == {"tally_marks": "environment incomplete: this copy of the exercise "
                                                 "lacks its reference (.meta/example.py): there is nothing to replay"}
    assert results["summary"][0]["tasks"] == 0 and results["summary"][0]["environment_incomplete"] == 1


WINDOW_MEDIAN = LAYOUTS / "liverepo/python/exercises/practice/unit_test_3c7a9e15_b2d4_4f6a_8c1e_5d9b0f2a4e68/window_median"
ROUTE_CACHE = LAYOUTS / "liverepo/python/exercises/practice/unit_test_5b1c0e7a_3f2d_4c1b_9a8e_2d4f6b8c0a1e/route_cache"


def test_a_declared_reference_defect_is_named_beside_its_row_and_a_stale_one_is_reported(
        tmp_path: Path, capsys, env_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """window_median's test expects what its instructions do not ask (LiveRepoReflection's node_placement kind):
    its reference fails it. Declared, the row and the summary say so, with Pass@1 on the rest beside the raw
    figure; a declaration the reference replay passes (route_cache's) is reported stale and not applied."""
    import projectgen.protocols.reflection.batch as reflection_batch

    dataset = tmp_path / "data" / "python" / "exercises" / "practice"
    for exercise in (WINDOW_MEDIAN, ROUTE_CACHE):
        shutil.copytree(exercise, dataset / exercise.parent.name / exercise.name)
    table = tmp_path / "known_defects.toml"
    table.write_text(
        f'["exercism/python/{WINDOW_MEDIAN.parent.name}/window_median"]\n'
        'tests = ["window_median/test_window_median.py::WindowMedianTest::test_even_window"]\n'
        'defect = "the test expects the lower middle number of an even window; the instructions ask for the mean"\n'
        f'["exercism/python/{ROUTE_CACHE.parent.name}/route_cache"]\n'
        'tests = ["route_cache/test_route_cache.py::RouteCacheTest::test_bad_capacity"]\n'
        'defect = "a defect that was fixed"\n', encoding="utf-8")
    monkeypatch.setattr(reflection_batch, "exercise_declarations",
                        functools.partial(reflection_batch.exercise_declarations, path=table))
    out = tmp_path / "out"
    code, printed, _ = reflect(capsys, "--dataset", str(tmp_path / "data"), "--model", "reference", "--tries", "1",
                               "--out", str(out), "--cache-dir", str(env_cache))
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert results["declared_defects"] == {"window_median": "the test expects the lower middle number of an even "
                                                            "window; the instructions ask for the mean"}
    assert list(results["stale_declarations"]) == ["route_cache"]
    assert "the reference now passes route_cache/test_route_cache.py::RouteCacheTest::test_bad_capacity" in (
        results["stale_declarations"]["route_cache"])
    rows = {row["task_id"]: row for row in results["reports"][0]["rows"]}
    assert rows["window_median"]["status"] == "failed"  # the raw outcome stays
    assert rows["window_median"]["defect"] == (
        "dataset defect: the test expects the lower middle number of an even window; the instructions ask for the "
        "mean (1 test(s): window_median/test_window_median.py::WindowMedianTest::test_even_window)")
    assert rows["route_cache"]["defect"] == ""
    [python] = results["summary_by_language"]
    assert (python["language"], python["tasks"], python["pass_at_1"], python["declared_defective"],
            python["pass_at_1_without_declared"]) == ("Python", 2, 50.0, 1, 100.0)
    page = (out / "results.md").read_text()
    assert "Declared reference defects (1 exercise(s)" in page and "Stale declarations (1:" in page
    assert "| reference | whole | Python | 2 | 50.0 | 1 | 100.0 |" in page
    assert "window_median: the test expects the lower middle number" in printed
    assert "Stale declarations (1:" in printed and "route_cache: stale declaration" in printed


def test_a_unit_cut_short_after_its_model_call_resumes_without_calling_again(tmp_path: Path, env_cache: Path,
                                                                              monkeypatch) -> None:
    """Killed between a repair's model call and the node's checkpoint: the resumed node is answered from the
    call cache."""
    import projectgen.protocols.reflection.graph as graph_module

    real = graph_module.reply_update
    cut = {"done": False}

    def killed_once(attempt: int, outcome):  # noqa: ANN001
        if attempt == 2 and not cut["done"]:
            cut["done"] = True
            raise KeyboardInterrupt  # as Ctrl-C or SIGTERM would, right after the reply came in
        return real(attempt, outcome)

    monkeypatch.setattr(graph_module, "reply_update", killed_once)
    out = tmp_path / "out"
    model = ["scripted:" + str(example_script_path("exercises.reflect"))]
    settings = RunnerSettings(cache_dir=env_cache)
    with pytest.raises(KeyboardInterrupt):
        run_reflect(example_exercises_dir(), model, out, formats=["whole"], tasks=["ledger_book"],
                    runner_factory=lambda: SandboxRunner(settings))
    unit = out / "scripted-exercises.reflect/whole/ledger_book"
    assert [u["iteration"] for u in strict_jsonl(unit / "usage.jsonl")] == [1, 2]
    assert not (unit / "summary.json").exists() and not (out / "ledger.jsonl").exists()
    results = run_reflect(example_exercises_dir(), model, out, formats=["whole"], tasks=["ledger_book"],
                          runner_factory=lambda: SandboxRunner(settings))
    assert results.summary[0].pass_at_2 == 100.0 and results.summary[0].pass_at_1 == 0.0
    usage = strict_jsonl(unit / "usage.jsonl")
    assert [u["iteration"] for u in usage] == [1, 2]  # no call made twice
    assert len({u["call_id"] for u in usage}) == 2


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "nowhere", "--model", "reference"], "nowhere: dataset folder not found"),
    (["--dataset", "examples", "--model", "reference", "--edit-format", "diff"], "unknown edit format diff"),
    (["--dataset", "examples", "--model", "reference", "--tries", "11"], "--tries must be from 1 to 10"),
    (["--dataset", "examples", "--model", "reference", "--tasks", "nope"], "unknown task(s) nope"),
    (["--dataset", "examples", "--model", "scripted:no-such-script"], "unknown example script 'no-such-script'"),
])
def test_user_mistakes_are_one_line_and_exit_2(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    code, _, err = reflect(capsys, *argv, "--out", str(tmp_path / "out"))
    assert code == 2
    assert err.startswith("projectgen: error: ") and message in err and len(err.strip().splitlines()) == 1


def test_a_cluster_of_several_nodes_is_refused_only_without_a_checkpoint_url(tmp_path: Path, capsys,
                                                                             monkeypatch) -> None:
    """SQLite checkpoints stay on the machine that ran the unit: on a cluster of several nodes (faked here:
    the executor joins nothing) reflect needs --checkpoint-url, and with it goes on to the database."""
    from projectgen.experiments.ray_executor import RayExecutor

    monkeypatch.setattr(RayExecutor, "connect", lambda self: self)
    monkeypatch.setattr(RayExecutor, "nodes", lambda self: 3)
    monkeypatch.setattr(RayExecutor, "describe", lambda self: "units run on a fake cluster: 3 node(s)")
    out = tmp_path / "out"
    argv = ["--executor", "ray", "--ray-address", "head:6379", "--dataset", "examples", "--model", "reference",
            "--out", str(out)]
    code, _, err = reflect(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "the Ray cluster has 3 nodes" in err and "give --checkpoint-url postgresql://USER@HOST/DB" in err
    assert not out.exists()
    nowhere = f"postgresql://projectgen@/db?host={tmp_path / 'no-server'}&port=1"
    code, _, err = reflect(capsys, *argv, "--checkpoint-url", nowhere)
    joined, error = err.strip().splitlines()  # past the cluster check: joined, then the database is refused
    assert code == 2 and joined == "units run on a fake cluster: 3 node(s)", err
    assert error.startswith("projectgen: error: cannot reach the checkpoint database postgresql://"), err
    assert not out.exists()
    code, _, err = reflect(capsys, *argv, "--checkpoint-url", "sqlite:///x.db")
    assert code == 2 and "--checkpoint-url must be a PostgreSQL URL" in err


def test_a_continued_batch_must_keep_its_tries(tmp_path: Path, capsys, env_cache: Path) -> None:
    out = tmp_path / "out"
    args = ["--dataset", "examples", "--model", "reference", "--tasks", "unit_convert", "--out", str(out),
            "--cache-dir", str(env_cache)]
    assert reflect(capsys, *args)[0] == 0
    code, _, err = reflect(capsys, *args, "--tries", "3")
    assert code == 2 and "other tries" in err


@pytest.mark.slow
def test_a_batch_killed_mid_way_finishes_with_the_same_results_and_no_call_twice(tmp_path: Path, env_cache: Path,
                                                                                 bundled) -> None:
    """SIGKILL the whole command once two units are in the ledger, run it again, compare with the uninterrupted
    run: same figures and rows, and every model call made exactly once."""
    script = json.loads(example_script_path("exercises.reflect").read_text())
    script["delay_s"] = 0.4
    (tmp_path / "slow.json").write_text(json.dumps(script))
    out = tmp_path / "out"
    slow_model = f"scripted-exercises.reflect=scripted:{tmp_path / 'slow.json'}"
    argv = [sys.executable, "-m", "projectgen", "reflect", *bundled_batch(slow_model, out, env_cache)]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        ledger = out / "ledger.jsonl"
        if ledger.exists() and len(ledger.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the batch ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (out / "results.json").exists()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr

    def figures(folder: Path) -> dict:
        return {key: {k: v for k, v in entry.items() if k != "model_label"} for key, entry in summary(folder).items()}

    assert figures(out) == figures(bundled["out"])
    calls = usage_lines(out)
    assert calls.keys() == usage_lines(bundled["out"]).keys()
    for unit, lines in calls.items():
        ids = [line["call_id"] for line in lines]
        assert len(ids) == len(set(ids)) == len(usage_lines(bundled["out"])[unit]), unit
    shutil.rmtree(out)


def test_a_served_model_gets_the_output_cap_and_its_calls_the_servers_token_counts(tmp_path: Path, capsys,
                                                                                  env_cache: Path) -> None:
    """`reflect --base-url` against a server that answers as llama-cpp-python's (tests/openai_server.py):
    every request carries the cap as max_tokens, the usage is the server's, and a continued batch must keep
    the sampling it was made with."""
    from openai_server import fake_llama_server

    out = tmp_path / "out"
    reply = "word_index.py\n```python\n" + "x = 1\n" * 40 + "```\n"  # cut at the cap: the block is not closed
    with fake_llama_server(reply=reply) as server:
        args = ["--dataset", "examples", "--tasks", "word_index", "--model", "smollm2", "--base-url", server.url,
                "--out", str(out), "--cache-dir", str(env_cache)]
        code, stdout, err = reflect(capsys, *args, "--max-output-tokens", "12")
        assert code == 0, err
        assert [body["max_tokens"] for body in server.requests] == [12, 12]  # try 1, then the repair
        assert not any("max_completion_tokens" in body for body in server.requests)
        code, _, err = reflect(capsys, *args, "--max-output-tokens", "64")
        assert code == 2 and "other sampling" in err
    (calls,) = usage_lines(out).values()
    assert [(c["model"], c["tokens_estimated"], c["output_tokens"], c["finish_reason"]) for c in calls] == [
        ("smollm2", False, 12, "length")] * 2
    assert json.loads((out / "reflect.json").read_text())["sampling"] == {"max_tokens": 12}
    result = json.loads((out / "smollm2" / "whole" / "word_index" / "summary.json").read_text())
    assert result["status"] == "failed" and not result["well_formed"]  # the cut reply was not applied
    assert "not closed" in result["tries"][0]["edit_feedback"]
    log = read_run_log(out / "smollm2" / "whole" / "word_index")
    assert (log.kind, log.score("tests").value, log.score("well_format").value) == ("reflect", 0.0, 0.0)


def test_a_units_report_names_it_a_reflection_unit_not_livecoder_attempts(bundled) -> None:
    """`projectgen report` on a reflect unit: its own kind, and none of LiveCoder's facts (a method, an attempt
    selection, the settings' feedback suite) or an empty attempts table, which its run never had."""
    unit = next(path.parent for path in sorted(bundled["out"].glob("*/whole/*/run.json")))
    assert main(["report", str(unit)]) == 0
    page = (unit / "report.md").read_text()
    assert "- **kind**: LiveRepoReflection unit" in page
    for livecoder_only in ("- **method**", "- **selection**", "- **execution feedback**", "## Attempts"):
        assert livecoder_only not in page
    assert "Attempts" not in (unit / "report.html").read_text()
