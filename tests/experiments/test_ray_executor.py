"""The Ray executor on a local Ray instance, started once for the module (`ray.init(num_cpus=2)`).

Skipped when Ray is not installed (`pip install 'projectgen[ray]'`). The two-node cluster with
a worker killed mid-unit is in test_ray_cluster.py (slow suite).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from projectgen.config import AttemptSettings  # noqa: E402
from projectgen.datasets.examples import example_tasks_dir  # noqa: E402
from projectgen.errors import ProjectGenError  # noqa: E402
from projectgen.evaluation.report import TestReport  # noqa: E402
from projectgen.experiments import (  # noqa: E402
    Batch, ExperimentSpec, Ledger, LocalExecutor, RayExecutor, run_batch, run_experiment,
)

# The workers import projectgen, not this test module: its units and batches travel by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, resources={"sandbox": 2}, include_dashboard=False)
    yield
    ray.shutdown()


class Square:
    def __init__(self, key: str, n: int) -> None:
        self.key, self.n = key, n


class Squares(Batch):
    """n -> n*n; n == 3 raises; n == 5 kills its worker process (every try); setup says which process ran it."""

    def setup(self) -> int:
        return os.getpid()

    def run(self, unit: Square, state: int) -> dict:
        if unit.n == 3:
            raise ValueError("three")
        if unit.n == 5:
            os._exit(1)
        return {"n": unit.n, "square": unit.n * unit.n, "pid": state}

    def failed(self, unit: Square, reason: str) -> dict:
        return {"n": unit.n, "error": reason}

    def record(self, row: dict) -> dict:
        return {"row": row}

    def restore(self, entry: dict) -> dict | None:
        return None if "error" in entry["row"] else entry["row"]


@pytest.mark.slow  # the CLI's experiment on Ray stays in the default suite
def test_each_unit_is_a_ray_task_recorded_once_and_a_lost_unit_is_a_failure(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    units = [Square(f"u{n}", n) for n in range(7)]
    done = run_batch(Squares(), units, ledger, RayExecutor(retries=1))
    assert list(done) == [u.key for u in units]
    assert done["u4"]["square"] == 16 and done["u3"] == {"n": 3, "error": "ValueError: three"}
    assert done["u5"]["error"].startswith("its Ray worker was lost 2 time(s), the last time: ")  # retried once
    assert all(done[f"u{n}"]["pid"] != os.getpid() for n in (0, 1, 2, 4, 6))  # in Ray's worker processes
    assert sorted(e["key"] for e in ledger.entries()) == sorted(u.key for u in units)  # one line per unit

    class Broken(Squares):
        def setup(self) -> int:
            raise ProjectGenError("no sandbox here")

    with pytest.raises(ProjectGenError, match="no sandbox here"):  # setup raising is a bug: the batch stops
        run_batch(Broken(), [Square("b0", 0)], Ledger(tmp_path / "other.jsonl"), RayExecutor())


def results_rows(out: Path) -> list[tuple]:
    data = json.loads((out / "results.json").read_text())
    return [(m["method"], m["model"], p["task_id"], p["status"], p["final_unit_passed"], p["final_unit_total"],
             p["attempts_run"] if "attempts_run" in p else len(p["attempts"]), p["tokens"], p["sketchbleu"])
            for m in data["models"] for p in m["pairs"]]


def run_files(run_dir: Path) -> set[str]:
    return {p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*")
            if p.is_file() and not p.name.endswith(".lock") and "snapshots" not in p.parts}


@pytest.mark.slow  # ~18 s with Ray's start; the CLI's experiment on Ray below is the default suite's
def test_an_experiment_on_ray_gives_the_local_rows_and_brings_each_run_folder_back(tmp_path: Path) -> None:
    """Relocated ("always"): each unit runs in a temporary folder and its folder comes back through the mirror,
    as on a node that does not share the driver's files."""
    spec = ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("projectgen",),
                          tasks=("wordfreq",), attempt_settings=AttemptSettings(attempts=1))
    local = run_experiment(spec, tmp_path / "local", executor=LocalExecutor())
    remote = run_experiment(spec, tmp_path / "ray", executor=RayExecutor(workers=2, relocate="always"))
    assert results_rows(tmp_path / "ray") == results_rows(tmp_path / "local")
    assert remote.models[0].final.passed == local.models[0].final.passed == 11
    run_dir = tmp_path / "ray" / "projectgen" / "reference" / "wordfreq"
    assert remote.models[0].pairs[0].run_dir == str(run_dir)  # the driver's folder, not the worker's
    assert run_files(run_dir) == run_files(tmp_path / "local" / "projectgen" / "reference" / "wordfreq")
    assert {"summary.json", "calls.jsonl", "usage.jsonl", "checkpoints.sqlite", "unit_report.json",
            "repository/wordfreq.py"} <= run_files(run_dir)
    assert len(Ledger(tmp_path / "ray" / "ledger.jsonl").entries()) == 1
    again = run_experiment(spec, tmp_path / "ray", executor=RayExecutor(relocate="always"))
    assert again.models[0].pairs[0].how == "ledger"  # the rerun skips the recorded unit


@pytest.mark.slow  # the CLI's experiment on Ray is the default suite's; reflect's and refine's units ride the same executor
def test_reflect_on_ray_relocated_gives_the_local_rows(tmp_path: Path) -> None:
    """LiveRepoReflection's batch on Ray, every unit relocated (as on another machine) and mirrored back:
    the same figures and ledger rows as the local executor, and each unit's folder back on the driver."""
    from projectgen.datasets.examples import example_exercises_dir, example_script_path
    from projectgen.protocols.reflection.batch import run_reflect

    model = f"scripted:{example_script_path('exercises.reflect')}"
    python = ["ledger_book", "unit_convert", "word_index"]  # the executor is under test, not the compilers
    local = run_reflect(example_exercises_dir(), [model], tmp_path / "local", formats=("patch",), tasks=python)
    remote = run_reflect(example_exercises_dir(), [model], tmp_path / "ray", formats=("patch",), tasks=python,
                         executor=RayExecutor(workers=2, relocate="always"))

    def rows(folder: Path) -> list[dict]:
        return sorted((e for e in Ledger(folder / "ledger.jsonl").entries()), key=lambda e: e["key"])

    assert remote.summary == local.summary and local.summary[0].pass_at_2 > local.summary[0].pass_at_1
    assert [(e["key"], e["status"], e["result"]["passed_at"]) for e in rows(tmp_path / "ray")] == \
           [(e["key"], e["status"], e["result"]["passed_at"]) for e in rows(tmp_path / "local")]
    unit = next((tmp_path / "ray").glob("*/patch/unit_convert"))
    assert {"summary.json", "calls.jsonl", "usage.jsonl", "checkpoints.sqlite"} <= run_files(unit)


@pytest.mark.slow  # the CLI's experiment on Ray is the default suite's; reflect's and refine's units ride the same executor
def test_refine_on_ray_relocated_gives_the_local_rows(tmp_path: Path) -> None:
    """SR-Eval's batch on Ray, every task run relocated and mirrored back: the local executor's figures,
    each row naming the driver's folder, the folder's turns and calls back on the driver."""
    from projectgen.datasets.multiturn import bundled_dataset_dir
    from projectgen.protocols.refinement.batch import RefinementSpec, run_refinement

    spec = RefinementSpec(dataset=bundled_dataset_dir(), models=("reference",), strategies=("ce",),
                          contexts=("basic",), tasks=("roman",))
    local = run_refinement(spec, tmp_path / "local")
    remote = run_refinement(spec, tmp_path / "ray", executor=RayExecutor(workers=2, relocate="always"))
    assert remote.summary == local.summary and local.summary[0].avg_acc == 1.0
    (row,) = [e["row"] for e in Ledger(tmp_path / "ray" / "ledger.jsonl").entries() if "row" in e]
    folder = Path(row["folder"])
    assert folder.is_relative_to(tmp_path / "ray") and {"calls.jsonl", "usage.jsonl"} <= run_files(folder)


def test_the_cli_runs_experiment_and_bench_reference_on_ray(tmp_path: Path, capsys) -> None:
    from projectgen.cli.main import main

    code = main(["experiment", "--executor", "ray", "--dataset", "examples", "--tasks", "wordfreq", "--model",
                 "reference", "--method", "direct", "--attempts", "1", "--out", str(tmp_path / "exp")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "units run on a local Ray instance: 1 node(s), 2 sandbox slot(s)" in captured.err
    assert results_rows(tmp_path / "exp")[0][2:6] == ("wordfreq", "finished", 11, 11)

    code = main(["bench-reference", "examples", "--executor", "ray", "--tasks", "wordfreq", "--out",
                 str(tmp_path / "bench")])
    assert code == 0, capsys.readouterr().err
    report = tmp_path / "bench" / "reports" / "wordfreq.unit.json"
    line = json.loads((tmp_path / "bench" / "ledger.jsonl").read_text())
    assert line["row"]["report"] == str(report) and TestReport.model_validate_json(report.read_text()).passed == 11

    assert main(["experiment", "--dataset", "examples", "--model", "reference", "--ray-address", "auto",
                 "--out", str(tmp_path / "x")]) == 2
    assert "--ray-address joins a Ray cluster: give it with --executor ray" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_relocated_reference_bench_brings_each_report_back(tmp_path: Path) -> None:
    from projectgen.evaluation.runner import SandboxRunner
    from projectgen.experiments import bench_reference

    rows = bench_reference(example_tasks_dir(), SandboxRunner(), tmp_path / "bench", tasks=["wordfreq"],
                           executor=RayExecutor(relocate="always"))
    report = tmp_path / "bench" / "reports" / "wordfreq.unit.json"
    assert [(r.task_id, r.passed, r.report) for r in rows] == [("wordfreq", 11, str(report))]
    assert TestReport.model_validate_json(report.read_text()).passed == 11


def test_per_machine_state_is_refused_only_when_units_may_land_elsewhere() -> None:
    spec = ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("livecoder",))
    assert set(spec.per_machine_state()) == {"checkpoints in SQLite in each run folder",
                                             "a knowledge store embedded in each run folder"}
    one_pass = ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("projectgen",),
                              attempt_settings=AttemptSettings(attempts=1), checkpoint_url="postgresql://h/db")
    assert one_pass.per_machine_state() == {}  # one attempt reads no knowledge
    RayExecutor().refuse_per_machine(spec.per_machine_state())  # one node: nothing to refuse


@pytest.mark.datasets
@pytest.mark.slow
def test_devbench_on_ray_gives_the_local_executors_rows(shared_datasets: Path, tmp_path: Path, capsys) -> None:
    """The issue's command: lice and readtime by the reference replay, local executor and Ray, same rows."""
    from projectgen.cli.main import main

    common = ["experiment", "--dataset", str(shared_datasets / "DevBench"), "--tasks", "lice,readtime", "--model",
              "reference", "--method", "projectgen", "--attempts", "1"]
    assert main([*common, "--out", str(tmp_path / "local")]) == 0, capsys.readouterr().err
    assert main([*common, "--executor", "ray", "--out", str(tmp_path / "ray")]) == 0, capsys.readouterr().err
    rows = results_rows(tmp_path / "ray")
    assert rows == results_rows(tmp_path / "local")
    assert [(r[2], r[4], r[5]) for r in rows] == [("lice", 25, 25), ("readtime", 8, 8)]
