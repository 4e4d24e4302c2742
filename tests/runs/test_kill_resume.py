"""Kill and resume at random: a run SIGKILLed anywhere, resumed (and sometimes killed again), ends as if whole.

Each trial starts `projectgen run` on kvstore with a replay script in which attempt 1 fails a check
test (its repair fails too) and attempt 2 passes (attempt 3 reuses it), with a small delay per model
reply. It kills the run's process group at a moment drawn uniformly over the duration of an
uninterrupted run (start-up, architecture, skeleton, filling, judging with the sandbox, knowledge
extraction, the stores, between attempts, the final unit tests; timed with as many runs at once as
there are trials at once), resumes it with `projectgen run
--resume` (killing the resume too in some trials) until it finishes, and then compares the folder
with the uninterrupted run's: the same repository, attempts, scores, unit tests, best, knowledge
entries and trace nodes, and the same model calls, each made once (usage.jsonl keys unique and
equal; calls.jsonl likewise); every JSONL line parses.

The kill times come from one seed, printed with each trial: replay a failure with
``PROJECTGEN_KILL_SEED=<seed> pytest -m slow tests/test_kill_resume.py`` (``PROJECTGEN_KILL_TRIALS``
sets the number of trials, 24 by default). The moments are wall-clock times, so a replay kills at the
same times, which are the same points of the run only under a similar load: each trial also prints
where its kills landed (the last trace event and the number of calls made). The default suite's kill-and-resume tests are
tests/test_resume.py and tests/test_durable_files.py.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from test_support import strict_jsonl

DELAY_S = 0.05  # per model reply
OPTIONS = ["--attempts", "3", "--iterations", "3,3,2"]
TRIALS = int(os.environ.get("PROJECTGEN_KILL_TRIALS", "24"))
SEED = int(os.environ.get("PROJECTGEN_KILL_SEED") or random.SystemRandom().randrange(1 << 30))
PARALLEL = 2  # trials at a time (the kill moments are random anyway)


def _script(path: Path) -> Path:
    from test_support import attempt_script

    data = attempt_script(load_task(example_task_path("kvstore")))
    data["delay_s"] = DELAY_S
    path.write_text(json.dumps(data))
    return path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "projectgen.cli", "run", *args]


def _run_command(script: Path, out: Path, cache: Path, *, force: bool = False) -> list[str]:
    return _cli("kvstore", "--model", f"scripted:{script}", "--out", str(out), *OPTIONS, "--cache-dir", str(cache),
                *(["--force"] if force else []))


def _resume_command(out: Path, cache: Path) -> list[str]:
    return _cli("--resume", str(out), "--cache-dir", str(cache))


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _call_key(row: dict[str, Any]) -> tuple:
    return (row["role"], row["stage"], row["target"], row["iteration"], row["attempt"])


def _where(out: Path) -> str:
    """What the run was doing when it was killed: its last trace event and how many calls it had made."""
    events = []
    if (out / "events.jsonl").exists():
        for line in (out / "events.jsonl").read_text().splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    calls = len((out / "usage.jsonl").read_text().splitlines()) if (out / "usage.jsonl").exists() else 0
    if not (out / "run.json").exists():
        return "start-up (no run.json yet)"
    if not events:
        return "start-up (run.json written)"
    last = events[-1]
    label = f"{last['event']}" + (f" {last.get('node')} a{last.get('attempt')}" if last.get("node") else "")
    return f"after {label}, {calls} calls"


def outcome(out: Path) -> dict[str, Any]:
    """Everything a finished run folder must agree on with the uninterrupted run's."""
    from projectgen.memory.knowledge_store import KnowledgeStore

    summary = json.loads((out / "summary.json").read_text())
    usage = strict_jsonl(out / "usage.jsonl")
    calls = strict_jsonl(out / "calls.jsonl")
    events = strict_jsonl(out / "events.jsonl")
    attempts = {p.name: {"record": json.loads((p / "attempt.json").read_text()), "files": _files(p / "repository")}
                for p in sorted((out / "attempts").iterdir())}
    best = json.loads((out / "best" / "kvstore" / "best.json").read_text())
    with KnowledgeStore.persistent(out / "knowledge") as store:
        knowledge = [entry.model_dump(mode="json") for entry in store.entries("kvstore")]
        knowledge_count = store.count()
    def timeless(tokens: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in tokens.items() if k != "latency_s"}

    return {
        "repository": _files(out / "repository"),
        "attempt_rows": [{**row, "tokens": timeless(row["tokens"])} for row in summary["attempts"]],
        "final": summary["final"],
        "totals": (timeless(summary["tokens"]), summary["attempts_run"], summary["reuse"], summary["stopped"]),
        "unit": [(t["nodeid"], t["outcome"]) for t in json.loads((out / "unit_report.json").read_text())["tests"]],
        "status": json.loads((out / "run.json").read_text())["status"],
        "attempt_folders": attempts,
        "best": (best["score"], best["attempt"], best["files"],
                 _files(out / "best" / "kvstore" / "snapshots" / best["snapshot"])),
        "knowledge": (knowledge_count, knowledge),
        "calls": sorted(_call_key(r) for r in usage),
        "cached": sorted(_call_key(c["record"]) for c in calls),  # one completed call per line
        "nodes": sorted(Counter((tuple(e["path"]), e["node"], e["attempt"]) for e in events
                                if e["event"] in ("node", "stage_end")).items()),
        "leftovers": sorted(str(p.relative_to(out)) for p in out.rglob("*") if ".tmp" in p.name),
    }


@dataclass
class Trial:
    number: int
    seed: int
    kills: list[float]
    where: list[str] = field(default_factory=list)
    duration_s: float = 0.0

    def describe(self) -> str:
        moments = ", ".join(f"{t:.2f}s ({w})" for t, w in zip(self.kills, self.where))
        return f"trial {self.number} (seed {self.seed}): killed at {moments}"


def plan_trials(seed: int, count: int, duration: float) -> list[Trial]:
    """Kill moments drawn over the whole run; a third of the trials kill the resume as well (some twice)."""
    trials = []
    for number in range(count):
        rng = random.Random(f"{seed}:{number}")
        kills = [rng.uniform(0.0, duration)]
        while len(kills) < 3 and rng.random() < 0.35:
            kills.append(rng.uniform(0.0, duration))
        trials.append(Trial(number, seed, kills))
    return trials


def run_trial(trial: Trial, script: Path, out: Path, cache: Path) -> None:
    started = time.monotonic()
    for moment in trial.kills:
        if not (out / "run.json").exists():  # nothing to resume: the user runs the command again
            command = _run_command(script, out, cache, force=True)
        else:
            command = _resume_command(out, cache)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        try:
            process.wait(timeout=moment)
            trial.where.append("after the end")
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the run and its sandboxed tests
            process.wait(timeout=60)
            trial.where.append(_where(out))
        finally:
            if process.poll() is None:  # interrupted: leave nothing running
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=60)
    command = _resume_command(out, cache) if (out / "run.json").exists() else _run_command(script, out, cache,
                                                                                           force=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    trial.duration_s = time.monotonic() - started
    assert done.returncode == 0, f"{trial.describe()}: the last run failed\n{done.stdout[-3000:]}\n{done.stderr}"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("kill-resume")
    script, cache, whole = _script(root / "script.json"), root / "env-cache", root / "whole"
    # Once to build the test environment, then PARALLEL runs at once to time a run as the trials will see it
    # (they run PARALLEL at a time too); the first of them is the reference.
    first = subprocess.run(_run_command(script, root / "warm-up", cache), capture_output=True, text=True,
                           timeout=900)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr
    started = time.monotonic()
    timed = [subprocess.Popen(_run_command(script, out, cache), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for out in [whole, *(root / f"timing-{n}" for n in range(1, PARALLEL))]]
    durations = []
    for process in timed:
        output = process.communicate(timeout=900)[0]
        durations.append(time.monotonic() - started)
        assert process.returncode == 0, output[-3000:]
    expected = outcome(whole)
    assert [(r["attempt"], r["score"], r["reused"]) for r in expected["attempt_rows"]] == [
        (1, 0.8, False), (2, 1.0, False), (3, 1.0, True)]
    assert expected["knowledge"][0] == 3 and len(set(expected["calls"])) == len(expected["calls"])
    return {"root": root, "script": script, "cache": cache, "duration": sum(durations) / len(durations),
            "expected": expected}


def check_trial(trial: Trial, reference: dict[str, Any], out: Path) -> None:
    got, expected = outcome(out), reference["expected"]
    calls = got["calls"]
    assert len(calls) == len(set(calls)), f"{trial.describe()}: a model call was made twice: " + str(
        sorted(k for k, n in Counter(calls).items() if n > 1))
    for name in expected:
        assert got[name] == expected[name], f"{trial.describe()}: {name} differs from the uninterrupted run's"


@pytest.mark.slow
def test_one_kill_and_resume_at_a_fixed_moment(reference: dict[str, Any]) -> None:
    """One trial, killed a third of the way in (attempt 1), resumed once. The default suite's kill-and-resume
    test is tests/test_resume.py (a kill just after a call completed, inside code filling)."""
    trial = Trial(0, 0, [reference["duration"] / 3])
    out = reference["root"] / "fixed"
    run_trial(trial, reference["script"], out, reference["cache"])
    print(trial.describe())
    check_trial(trial, reference, out)


@pytest.mark.slow
def test_kill_and_resume_at_random_moments(reference: dict[str, Any]) -> None:
    trials = plan_trials(SEED, TRIALS, reference["duration"])
    print(f"\nkill-resume: seed {SEED}, {TRIALS} trials, uninterrupted run {reference['duration']:.1f}s "
          f"(replay: PROJECTGEN_KILL_SEED={SEED})")
    started = time.monotonic()
    failures: list[str] = []

    def one(trial: Trial) -> None:
        out = reference["root"] / f"trial-{trial.number}"
        try:
            run_trial(trial, reference["script"], out, reference["cache"])
            check_trial(trial, reference, out)
            print(f"ok   {trial.describe()} [{trial.duration_s:.1f}s]")
        except AssertionError as exc:
            print(f"FAIL {trial.describe()}: {str(exc).splitlines()[0]}")
            failures.append(str(exc))

    with ThreadPoolExecutor(PARALLEL) as pool:
        list(pool.map(one, trials))
    print(f"kill-resume: {len(trials)} trials in {time.monotonic() - started:.0f}s, {len(failures)} failed")
    assert not failures, f"seed {SEED}: {len(failures)} of {len(trials)} trials failed; first:\n{failures[0]}"
