"""A run killed with SIGKILL in the middle of code filling resumes to the same result, calling no model twice.

Kills at random moments over the whole run: tests/test_kill_resume.py (slow)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from projectgen.cli import main
from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.oracles.reference_replay import Breakage, reference_script


def _script(tmp_path: Path, delay: float) -> Path:
    task = load_task(example_task_path("kvstore"))
    data = reference_script(task, breakage=Breakage("kvstore/store.py", "_expired")).model_dump(
        mode="json", exclude_none=True)
    data["delay_s"] = delay
    path = tmp_path / f"script-{delay}.json"
    path.write_text(json.dumps(data))
    return path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "projectgen.cli", "run", *args]


def _usage(out: Path) -> list[dict]:
    path = out / "usage.jsonl"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return rows


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _call_key(row: dict) -> tuple:
    return (row["role"], row["stage"], row["target"], row["iteration"], row["attempt"])


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory, env_cache: Path) -> Path:
    """The uninterrupted run every killed one is compared with (made once: where its checkpoints live does not
    change its calls or files), in this process: only the killed run needs one of its own. Read only: a test that
    resumes it works on a copy."""
    root = tmp_path_factory.mktemp("whole")
    assert main(["run", "kvstore", "--model", f"scripted:{_script(root, 0.0)}", "--out", str(root / "run"),
                 "--attempts", "1", "--cache-dir", str(env_cache), "--no-unit-tests"]) == 0
    return root / "run"


def test_sigkill_during_code_filling_then_resume_matches_an_uninterrupted_run(tmp_path: Path, env_cache: Path,
                                                                              whole: Path) -> None:
    _kill_during_filling_then_resume(tmp_path, env_cache, whole, [])
    assert (tmp_path / "killed" / "checkpoints.sqlite").is_file()


@pytest.mark.slow  # the SQLite test above is the same resume; this one adds a Postgres server's start
def test_the_same_with_checkpoints_in_postgres(tmp_path: Path, env_cache: Path, whole: Path, postgres_url: str) -> None:
    _kill_during_filling_then_resume(tmp_path, env_cache, whole, ["--checkpoint-url", postgres_url])
    assert not (tmp_path / "killed" / "checkpoints.sqlite").exists()
    manifest = json.loads((tmp_path / "killed" / "run.json").read_text())
    assert manifest["checkpoint_url"] == postgres_url


def _kill_during_filling_then_resume(tmp_path: Path, env_cache: Path, whole: Path, extra: list[str]) -> None:
    common = ["--attempts", "1", "--cache-dir", str(env_cache), "--no-unit-tests", *extra]
    # The uninterrupted run (`whole`), slowed so that it can be killed while files are being filled.
    killed = tmp_path / "killed"
    process = subprocess.Popen(_cli("kvstore", "--model", f"scripted:{_script(tmp_path, 0.4)}", "--out",
                                    str(killed), *common), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if sum(1 for row in _usage(killed) if row["role"] == "coder") >= 3:
            break
        assert process.poll() is None, "the run ended before it could be killed"
        time.sleep(0.05)
    else:
        pytest.fail("code filling never started")
    # At once: the node whose call was just recorded may not have returned (nor been checkpointed); the
    # resume replays that call from calls.jsonl instead of making it again.
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    before = _usage(killed)
    coder_before = [r for r in before if r["role"] == "coder"]
    assert 3 <= len(coder_before) < 7  # killed in the middle of filling kvstore's 7 files
    assert not (killed / "summary.json").exists()

    resumed = subprocess.run(_cli("--resume", str(killed), "--cache-dir", str(env_cache)), capture_output=True,
                             text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr

    after = _usage(killed)
    keys = [_call_key(r) for r in after]
    assert len(keys) == len(set(keys)), "a model call was made twice"
    assert sorted(keys) == sorted(_call_key(r) for r in _usage(whole))  # the same calls, each once
    assert _files(killed / "repository") == _files(whole / "repository")
    summary, reference = (json.loads((d / "summary.json").read_text()) for d in (killed, whole))
    assert [(a["attempt"], a["score"], a.get("check")) for a in summary["attempts"]] == [
        (a["attempt"], a["score"], a.get("check")) for a in reference["attempts"]]
    assert len(summary["attempts"]) == 1 and summary["attempts"][0]["score"] == 1.0
    assert summary["final"] == reference["final"]
    events = [json.loads(line) for line in (killed / "events.jsonl").read_text().splitlines() if line.strip()]
    assert [e["event"] for e in events if e["event"].startswith("run_")][:2] == ["run_start", "run_resumed"]


def test_resuming_a_finished_run_changes_nothing(tmp_path: Path, env_cache: Path, whole: Path) -> None:
    out = shutil.copytree(whole, tmp_path / "run")
    calls = len(_usage(out))
    assert main(["run", "--resume", str(out), "--cache-dir", str(env_cache)]) == 0
    assert len(_usage(out)) == calls
