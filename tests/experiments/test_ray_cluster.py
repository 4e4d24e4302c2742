"""Two worker nodes (`ray.cluster_utils.Cluster` on this machine) and a node killed mid-unit (slow suite).

The head node has no CPU, so every unit lands on a worker node, i.e. on "another machine": it
runs in a temporary folder of that node, mirrored to the driver. Checkpoints are in PostgreSQL,
as the CLI requires with a pool of several nodes (`experiment` and `reflect` alike). The test that
removes a node comes last: the module's cluster keeps one worker node after it.
"""
from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from projectgen.config import AttemptSettings  # noqa: E402
from projectgen.datasets.examples import example_tasks_dir  # noqa: E402
from projectgen.datasets.loaders import load_task  # noqa: E402
from projectgen.experiments import ExperimentSpec, Ledger, RayExecutor, run_experiment  # noqa: E402

from test_support import experiment_script  # noqa: E402

pytestmark = pytest.mark.slow
FAST_FAILURE_DETECTION = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
                          "health_check_timeout_ms": 500, "health_check_failure_threshold": 4}


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "_system_config": FAST_FAILURE_DETECTION})
    nodes = [cluster.add_node(num_cpus=1, resources={"sandbox": 1}) for _ in range(2)]
    ray.init(address=cluster.address)
    yield cluster, nodes
    ray.shutdown()
    cluster.shutdown()


def test_the_cli_refuses_per_machine_state_on_several_nodes(cluster, tmp_path: Path, capsys) -> None:
    from projectgen.cli.main import main

    code = main(["experiment", "--executor", "ray", "--ray-address", cluster[0].address, "--dataset", "examples",
                 "--model", "reference", "--method", "livecoder", "--attempts", "2", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "the Ray cluster has 3 nodes" in err and "--checkpoint-url postgresql://" in err
    assert "--knowledge-store http://HOST:PORT" in err  # two attempts read knowledge
    assert not (tmp_path / "out").exists()


def test_evaluate_livecoder_refuses_an_embedded_knowledge_store_on_several_nodes(cluster, tmp_path: Path,
                                                                              capsys) -> None:
    """`evaluate livecoder` checks what its runs keep per machine as `experiment` does: with PostgreSQL checkpoints
    given, the knowledge store embedded in each run folder is still refused (it was let through)."""
    from projectgen.cli.main import main

    code = main(["evaluate", "livecoder", "--executor", "ray", "--ray-address", cluster[0].address, "--dataset",
                 "examples", "--model", "reference", "--set", "methods=livecoder", "--checkpoint-url",
                 "postgresql://user@127.0.0.1:1/none", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "the Ray cluster has 3 nodes" in err and "--knowledge-store http://HOST:PORT" in err, err
    assert "checkpoints in SQLite" not in err
    assert not (tmp_path / "out" / "ledger.jsonl").exists()


def test_the_cli_refuses_reflect_on_several_nodes_without_a_checkpoint_url(cluster, tmp_path: Path, capsys) -> None:
    from projectgen.cli.main import main

    code = main(["reflect", "--executor", "ray", "--ray-address", cluster[0].address, "--dataset", "examples",
                 "--model", "reference", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "the Ray cluster has 3 nodes" in err and "give --checkpoint-url postgresql://" in err
    assert not (tmp_path / "out").exists()


def ledger_rows(out: Path) -> list[dict]:
    return sorted(Ledger(out / "ledger.jsonl").entries(), key=lambda entry: entry["key"])


def test_reflect_on_two_nodes_with_postgresql_checkpoints_gives_the_local_rows(cluster, postgres_url: str,
                                                                             tmp_path: Path, capsys) -> None:
    """Every unit lands on a worker node (the head has no CPU), checkpoints in PostgreSQL on a thread of its
    own, its folder mirrored back: the local executor's ledger rows, and no SQLite anywhere."""
    import psycopg

    from projectgen.cli.main import main

    # The Python exercises: what runs where is under test, not a language (whose toolchain varies by machine)
    tasks, formats = ("ledger_book", "unit_convert", "word_index"), ("whole", "patch")
    common = ["reflect", "--dataset", "examples", "--tasks", ",".join(tasks), "--model", "scripted:exercises.reflect",
              "--edit-format", ",".join(formats), "--cache-dir", str(tmp_path / "cache")]
    assert main([*common, "--out", str(tmp_path / "local")]) == 0, capsys.readouterr().err
    code = main([*common, "--out", str(tmp_path / "ray"), "--executor", "ray", "--ray-address", cluster[0].address,
                 "--checkpoint-url", postgres_url])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "units run on the Ray cluster at" in err and "3 node(s), 2 sandbox slot(s)" in err
    local, remote = ledger_rows(tmp_path / "local"), ledger_rows(tmp_path / "ray")
    keys = sorted(f"scripted-exercises.reflect/{fmt}/{task}" for fmt in formats for task in tasks)
    assert [row["key"] for row in local] == keys and remote == local  # every unit asked for, as run locally
    assert json.loads((tmp_path / "ray" / "results.json").read_text())["summary"] == \
        json.loads((tmp_path / "local" / "results.json").read_text())["summary"]
    units = sorted((tmp_path / "ray").glob("*/*/*/summary.json"))
    assert [str(u.parent.relative_to(tmp_path / "ray")) for u in units] == keys
    assert not list((tmp_path / "ray").rglob("checkpoints.sqlite*"))
    threads = {json.loads((u.parent / "thread.json").read_text())["thread_id"] for u in units}
    assert len(threads) == len(keys)  # one thread per unit
    with psycopg.connect(postgres_url) as connection:
        stored = {row[0] for row in connection.execute(
            "SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id = ANY(%s)", (list(threads),))}
    assert stored == threads  # each unit, on its worker node, checkpointed to the shared database


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def test_a_node_killed_mid_unit_retries_it_elsewhere_from_its_checkpoint(cluster, postgres_url: str,
                                                                         tmp_path: Path) -> None:
    head, nodes = cluster
    task = load_task(example_tasks_dir() / "kvstore")
    script = experiment_script(task)
    script["delay_s"] = 0.5  # each call takes a while, so the kill lands between calls of a running unit
    (tmp_path / "kvstore.json").write_text(json.dumps(script))
    spec = ExperimentSpec(dataset=example_tasks_dir(), tasks=("kvstore",), models=[f"scripted:{tmp_path / 'kvstore.json'}"],
                          methods=("projectgen",), attempt_settings=AttemptSettings(attempts=1),
                          checkpoint_url=postgres_url)
    out = tmp_path / "out"
    run_dir = out / "projectgen" / "scripted-kvstore" / "kvstore"
    started = time.time()
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.update(results=run_experiment(
        spec, out, executor=RayExecutor(address=head.address, retries=2))))
    runner.start()
    while len(lines(run_dir / "calls.jsonl")) < 4:  # the driver's copy: some calls done and sent
        assert time.time() - started < 300 and runner.is_alive(), "the unit did not get going"
        time.sleep(0.1)
    scratch = [p for p in Path("/tmp").glob("projectgen-unit-*") if p.stat().st_mtime >= started - 1]
    assert len(scratch) == 1, scratch
    first_node = next(n for n in nodes if n.node_id.startswith(scratch[0].name.split("-")[2]))
    head.remove_node(first_node, allow_graceful=False)  # the machine is gone, and the worker with it
    done_there = lines(scratch[0] / "kvstore" / "calls.jsonl")  # what the dead worker had completed
    runner.join(600)
    assert not runner.is_alive() and "results" in outcome

    entries = Ledger(out / "ledger.jsonl").entries()
    assert [(e["key"], e["status"], e["final_unit_passed"], e["final_unit_total"]) for e in entries] == [
        ("projectgen/scripted-kvstore/kvstore", "finished", 29, 29)]  # exactly one record, the finished unit
    calls = lines(run_dir / "calls.jsonl")
    assert len(done_there) >= 4 and calls[:len(done_there)] == done_there  # every completed call kept as made
    keys = [json.loads(line)["key"] for line in calls]
    assert len(keys) == len(set(keys)) == len(lines(run_dir / "usage.jsonl"))  # no call made twice
    events = [json.loads(line)["event"] for line in lines(run_dir / "events.jsonl")]
    assert events[0] == "run_start" and "run_resumed" in events  # the retry resumed the run
    resumed = json.loads(lines(run_dir / "events.jsonl")[events.index("run_resumed")])
    assert "no checkpoint yet" not in json.dumps(resumed)  # from the PostgreSQL checkpoint, not from the start
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "finished" and manifest["checkpoint_url"] == postgres_url
    assert [p.name for p in Path("/tmp").glob("projectgen-unit-*") if p.stat().st_mtime >= started - 1] == [
        scratch[0].name]  # the retry's temporary folder is gone; only the dead worker's is left
    shutil.rmtree(scratch[0])  # what the dead machine's disk would have kept
