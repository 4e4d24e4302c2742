"""Runs in parallel that share one knowledge store and one experiment ledger lose and corrupt nothing.

Chroma's embedded `PersistentClient` is not safe for several processes (Chroma's advice: run a
server), so runs share knowledge through a Chroma server (`chroma run`, started here) given as
``--knowledge-store URL``; an embedded store stays inside one run folder, which one process at a
time may hold. Tested as users would run it:

- ``projectgen experiment --workers 8 --knowledge-store URL`` over 8 tasks (one process, 8 runs at
  once, one ledger), and the same without a server (8 embedded stores in one process);
- 8 ``projectgen run`` processes on the same task with the same ``--knowledge-store URL``;
- a second process in a run or experiment folder that is in use is refused, naming the first.

Each replay script fails a check test at attempt 1 and passes at attempt 2, so every run adds the
success and failure knowledge of its attempt 1 and retrieves it (from the shared store) at attempt 2.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from projectgen.llm import ModelRoles
from projectgen.runs import Run, RunParts
from projectgen.datasets.examples import example_tasks_dir
from projectgen.datasets.loaders import load_task
from projectgen.memory.knowledge_store import KnowledgeStore, knowledge_id
from test_support import chroma_server, strict_jsonl

RUNS = 8
OPTIONS = ["--attempts", "2", "--iterations", "3,3,1"]
BUGS = {"kvstore": {"kvstore/store.py": {1: [("now >= expires_at", "now > expires_at")], 2: []}},
        "wordfreq": {"wordfreq.py": {1: [("r\"[^\\W_]+(?:'[^\\W_]+)*\"", "r\"[^\\W_]+\"")], 2: []}}}


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local Chroma server shared by the module's runs."""
    with chroma_server(tmp_path_factory.mktemp("chroma")) as url:
        yield url


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """8 tasks (copies of the two examples under their own ids) and one replay script per task."""
    from test_support import experiment_script as script

    root = tmp_path_factory.mktemp("concurrency")
    data, scripts = root / "data", root / "scripts"
    scripts.mkdir()
    for number in range(RUNS):
        base = ("kvstore", "wordfreq")[number % 2]
        task_id = f"{base}{number}"
        shutil.copytree(example_tasks_dir() / base, data / task_id)
        toml = data / task_id / "task.toml"
        toml.write_text(toml.read_text().replace(f'id = "{base}"', f'id = "{task_id}"', 1))
        task = load_task(data / task_id)
        assert task.id == task_id
        (scripts / f"{task_id}.json").write_text(json.dumps(script(task, BUGS[base])))
    return {"root": root, "data": data, "scripts": scripts, "cache": root / "env-cache"}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "projectgen.cli", *args]


def check_run(run_dir: Path) -> dict[str, Any]:
    """A finished run: attempt 1 failed a check test and added knowledge, attempt 2 retrieved it and passed."""
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "finished", run_dir
    summary = json.loads((run_dir / "summary.json").read_text())
    rows = summary["attempts"]
    assert [(r["attempt"], r["score"] < 1, r["knowledge_added"]) for r in rows] == [
        (1, True, ["success", "failure"]), (2, False, [])], run_dir
    used = rows[1]["knowledge_used"]
    assert used["success"] and used["failure"], f"{run_dir}: attempt 2 retrieved no knowledge"
    assert summary["final"]["attempt"] == 2 and summary["final"]["score"] == 1.0
    calls = [(c["role"], c["stage"], c["target"], c["iteration"], c["attempt"])
             for c in strict_jsonl(run_dir / "usage.jsonl")]
    assert calls and len(calls) == len(set(calls)), f"{run_dir}: a model call was made twice"
    strict_jsonl(run_dir / "events.jsonl")
    strict_jsonl(run_dir / "calls.jsonl")
    return manifest


def expected_ids(task_id: str, run_id: str) -> set[str]:
    return {knowledge_id(task_id, kind, 1, run_id) for kind in ("success", "failure")}


def stored_ids(store: KnowledgeStore, task_id: str) -> set[str]:
    return {r.id for kind in ("success", "failure") for r in store.retrieve(task_id, "x", kind, k=100)}


def check_experiment(out: Path, done: subprocess.CompletedProcess, tasks: list[str]) -> dict[str, str]:
    """The experiment finished every pair once: one complete ledger record each, results that parse.
    Returns task id -> run id."""
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    ledger = strict_jsonl(out / "ledger.jsonl")
    assert sorted(entry["key"] for entry in ledger) == sorted(f"livecoder/scripted-scripts/{t}" for t in tasks)
    assert {entry["status"] for entry in ledger} == {"finished"}
    results = json.loads((out / "results.json").read_text())
    (model,) = results["models"]
    assert model["final"]["tasks"] == len(tasks) and model["final"]["errors"] == 0
    assert model["final"]["passed"] == model["final"]["total"] > 0
    assert (out / "results.md").read_text().startswith("# Experiment on ")
    return {task: check_run(out / "livecoder" / "scripted-scripts" / task)["run_id"] for task in tasks}


@pytest.mark.slow
def test_an_experiment_with_8_workers_sharing_a_chroma_server_and_the_ledger(dataset, chroma_url) -> None:
    out = dataset["root"] / "experiment-server"
    tasks = sorted(p.name for p in dataset["data"].iterdir())
    started = time.monotonic()
    done = subprocess.run(_cli("experiment", "--dataset", str(dataset["data"]), "--model",
                               f"scripted:{dataset['scripts']}", "--workers", str(RUNS), "--out", str(out),
                               "--knowledge-store", chroma_url, "--cache-dir", str(dataset["cache"]), *OPTIONS),
                          capture_output=True, text=True, timeout=1800)
    print(f"experiment, {RUNS} workers, Chroma server: {time.monotonic() - started:.0f}s")
    run_ids = check_experiment(out, done, tasks)
    with KnowledgeStore.server(chroma_url) as store:
        for task, run_id in run_ids.items():
            assert store.count(task, run_id=run_id) == 2
            assert stored_ids(store, task) >= expected_ids(task, run_id)
            assert not (out / "livecoder" / "scripted-scripts" / task / "knowledge").exists()  # the server holds it


@pytest.mark.slow
def test_an_experiment_with_8_workers_and_embedded_stores(dataset) -> None:
    out = dataset["root"] / "experiment-embedded"
    tasks = sorted(p.name for p in dataset["data"].iterdir())
    started = time.monotonic()
    done = subprocess.run(_cli("experiment", "--dataset", str(dataset["data"]), "--model",
                               f"scripted:{dataset['scripts']}", "--workers", str(RUNS), "--out", str(out),
                               "--cache-dir", str(dataset["cache"]), *OPTIONS),
                          capture_output=True, text=True, timeout=1800)
    print(f"experiment, {RUNS} workers, embedded stores: {time.monotonic() - started:.0f}s")
    run_ids = check_experiment(out, done, tasks)
    for task, run_id in run_ids.items():
        with KnowledgeStore.persistent(out / "livecoder" / "scripted-scripts" / task / "knowledge") as store:
            assert store.count() == 2 and stored_ids(store, task) == expected_ids(task, run_id)


@pytest.mark.slow
def test_8_run_processes_on_one_task_share_a_chroma_server(dataset, chroma_url) -> None:
    task = dataset["data"] / "wordfreq1"
    script = dataset["scripts"] / "wordfreq1.json"
    outs = [dataset["root"] / f"runs-{number}" for number in range(RUNS)]
    started = time.monotonic()
    processes = [subprocess.Popen(_cli("run", str(task), "--model", f"scripted:{script}", "--out", str(out),
                                       "--knowledge-store", chroma_url, "--cache-dir", str(dataset["cache"]),
                                       *OPTIONS), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for out in outs]
    outputs = [process.communicate(timeout=1800)[0] for process in processes]
    print(f"{RUNS} run processes, one Chroma server: {time.monotonic() - started:.0f}s")
    for process, output in zip(processes, outputs):
        assert process.returncode == 0, output[-4000:]
    run_ids = [check_run(out)["run_id"] for out in outs]
    assert len(set(run_ids)) == RUNS
    with KnowledgeStore.server(chroma_url) as store:
        ids = stored_ids(store, "wordfreq1")
        for run_id in run_ids:
            assert store.count("wordfreq1", run_id=run_id) == 2
            assert ids >= expected_ids("wordfreq1", run_id)


# --------------------------------------------------------------------------- one process per folder


def test_a_second_process_in_a_busy_run_folder_is_refused(tmp_path: Path) -> None:
    from projectgen.errors import ProjectGenError
    from projectgen.runs.locking import folder_lock

    code = ("import sys, time; from projectgen.runs.locking import folder_lock\n"
            "with folder_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ProjectGenError, match=rf"in use by another run \(pid {holder.pid}\)"):
            with folder_lock(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
    with folder_lock(tmp_path):  # a killed holder leaves no stale lock
        with pytest.raises(ProjectGenError, match=rf"pid {os.getpid()}"):
            with folder_lock(tmp_path, "experiment"):
                pass


def test_resuming_a_run_that_is_still_going_is_refused(tmp_path: Path) -> None:
    from projectgen.errors import ProjectGenError
    from projectgen.runs import RunFolder, RunManifest
    from projectgen.runs.locking import folder_lock

    RunFolder(tmp_path).lifecycle(RunManifest(run_id="r", task_path=str(example_tasks_dir() / "kvstore"),
                                              task_id="kvstore")).start()
    with folder_lock(tmp_path):
        with pytest.raises(ProjectGenError, match="in use by another run"):
            Run.resume(tmp_path, RunParts(models=ModelRoles(object()))).run()
