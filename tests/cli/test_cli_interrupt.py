"""Ctrl-C during a batch (`projectgen experiment`): a terminal sends SIGINT to the whole foreground
process group, the command's children (environment builds, model servers) included. The command
ends promptly with exit code 130; the ledger holds only units that finished (none of the units
that were running is recorded as an error), and the same command then finishes every unit once."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from test_support import experiment_script, restore_sigint, strict_jsonl


@pytest.mark.slow  # a whole experiment interrupted; the exit path itself is the fast test below
def test_ctrl_c_during_an_experiment_records_no_spurious_error(tmp_path: Path, env_cache: Path) -> None:
    script = experiment_script(load_task(example_task_path("kvstore")))
    script["delay_s"] = 0.3
    (tmp_path / "slow.json").write_text(json.dumps(script))
    out = tmp_path / "exp"
    command = [sys.executable, "-m", "projectgen.cli", "experiment", "--dataset", "examples", "--tasks", "kvstore",
               "--model", f"scripted:{tmp_path / 'slow.json'}", "--method", "livecoder,direct", "--attempts", "2",
               "--workers", "2", "--cache-dir", str(env_cache), "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=restore_sigint)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if list(out.glob("**/events.jsonl")):  # units are running
            break
        time.sleep(0.05)
    time.sleep(1.0)
    assert process.poll() is None, "the experiment ended before it could be interrupted"
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    ledger = out / "ledger.jsonl"
    recorded = strict_jsonl(ledger) if ledger.is_file() else []
    assert all(entry["status"] == "finished" and not entry.get("error") for entry in recorded), recorded
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode in (0, 1), again.stdout + again.stderr
    entries = strict_jsonl(ledger)
    assert len({e["key"] for e in entries}) == len(entries) == 2, entries  # each unit once
    assert all(e["status"] == "finished" and not e.get("error") for e in entries), entries


def test_an_interrupted_command_with_threads_running_ends_without_the_interpreters_tear_down(tmp_path: Path) -> None:
    """The tear-down ends live threads with pthread_exit, which aborts a thread inside a library's native code
    (SIGABRT, "FATAL: exception not rethrown", seen once on a Ctrl-C of an experiment under load): an
    interrupted command ends with 130 once its exit functions ran and its output is flushed, and nothing of the
    tear-down (a finalizer run as modules are freed) happens."""
    script = tmp_path / "interrupted.py"
    script.write_text(
        "import atexit, sys, threading, time\n"
        "import projectgen.cli\n"
        "cli = sys.modules['projectgen.cli.main']  # the module: the package names its `main` function so\n"
        "class Freed:\n"
        "    def __del__(self):\n"
        "        print('torn down', flush=True)\n"
        "kept = Freed()\n"
        "atexit.register(lambda: print('exit functions ran', flush=True))\n"
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "cli.main = lambda: cli.EXIT_INTERRUPTED\n"
        "print('work saved')\n"
        "cli.entry_point()\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stdout.splitlines() == ["work saved", "exit functions ran"], done.stdout
