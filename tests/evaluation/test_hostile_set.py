"""The hostile set (tests/evaluation/hostile_set) against the sandbox: candidates that game their tests the way a
real model would (forged plugins, hollowed tests, lying values, forged results, exits, swapped suites, hostile
bytes, resource bombs), written without reading the defences. No attack may score above its task's honest stub,
every run must end in a report (never an exception, never a process left behind), and the report must say what
went wrong. One attack per class runs by default; the rest are `slow`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from hostile_attacks import (CLASSES, SHARED_DATASETS, SURVIVOR_MARK, Attack, attack_candidate, kill_survivors,
                             load_attacks, reason, score_attack, stub_score, survivors, task_folder)
from projectgen.cli.main import main as cli_main
from projectgen.datasets.loaders import load_task

ATTACKS = load_attacks()


def _skip_without_what_it_needs(attack: Attack) -> None:
    if attack.task == "lice" and not (SHARED_DATASETS / "DevBench" / "lice").is_dir():
        pytest.skip(f"DevBench lice not found under {SHARED_DATASETS}")
    if load_task(task_folder(attack.task)).language == "rust" and shutil.which("cargo") is None:
        pytest.skip("no cargo here: the Rust attacks need a Rust toolchain")


def _leftover_files() -> list[Path]:
    """Files a disk attack left on the machine outside its workspace (shared memory counts: it is RAM)."""
    return [path for folder in (Path("/dev/shm"), Path("/tmp")) if folder.is_dir()
            for path in folder.glob(f"hostile-{SURVIVOR_MARK}-*")]


@pytest.fixture(scope="module")
def stub_scores() -> dict[str, int]:
    """Each task's honest stub's #Pass (an attack must never do better), measured on a task's first attack: a
    Rust stub costs a cargo build only when a Rust attack runs."""
    return {}


@pytest.mark.parametrize("attack", [pytest.param(attack, id=attack.name,
                                                 marks=[pytest.mark.slow] if attack.slow else [])
                                    for attack in ATTACKS])
def test_an_attack_scores_no_higher_than_the_honest_stub_and_the_report_says_why(
        attack: Attack, stub_scores: dict[str, int]) -> None:
    _skip_without_what_it_needs(attack)
    if attack.task not in stub_scores:
        stub_scores[attack.task] = stub_score(attack.task)
    scored, crash = score_attack(attack)
    left, files = survivors(), _leftover_files()
    kill_survivors(left)
    for path in files:
        path.unlink(missing_ok=True)
    assert scored is not None, f"{attack.name}: the runner raised {crash}"
    stub = stub_scores[attack.task]
    assert stub < scored.score.expected, f"the honest stub of {attack.task} passes every test: nothing to measure"
    assert scored.score.passed <= stub, (f"{attack.name} ({CLASSES[attack.kind]}) scored {scored.score.passed}/"
                                         f"{scored.score.expected}, above the honest stub's {stub}: {attack.summary}")
    assert reason(scored.report), f"{attack.name}: the report does not say what went wrong"
    assert not left, f"{attack.name}: {len(left)} process(es) it started outlived the run"
    assert not files, f"{attack.name}: it left {len(files)} file(s) outside its workspace"


def test_the_hostile_set_covers_every_class_and_runs_one_of_each_but_resources_by_default() -> None:
    """`make test` runs an attack of each class but the resource attacks (each holds a core until its timeout)."""
    assert len(ATTACKS) >= 14
    assert {attack.kind for attack in ATTACKS} == set(CLASSES)
    assert {attack.kind for attack in ATTACKS if not attack.slow} == set(CLASSES) - {8}


@pytest.mark.parametrize("attack", [pytest.param(attack, id=attack.name,
                                                 marks=[pytest.mark.slow] if attack.slow else [])
                                    for attack in ATTACKS if attack.kind == 7])
def test_eval_prints_the_report_of_a_candidate_whose_output_is_hostile_bytes(
        attack: Attack, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exception class names and messages like `[bold red]Boom[/]`, ANSI escapes, NUL bytes and invalid UTF-8 on
    the test output are data: `projectgen eval` exits 1 (tests failed), never with an internal error, and none of
    the candidate's control characters reaches the user's terminal (the runner-crashing-data attacks, class 7)."""
    _skip_without_what_it_needs(attack)
    repo = tmp_path / "repo"
    for path, text in attack_candidate(attack, load_task(task_folder(attack.task))).items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    code = cli_main(["eval", "--task", str(task_folder(attack.task)), "--repo", str(repo),
                     "--out", str(tmp_path / "report.json"), "--timeout", "60"])
    captured = capsys.readouterr()
    assert code == 1, captured.err[-2000:]
    assert "internal error" not in captured.err and "Traceback" not in captured.err
    assert not {"\x1b", "\x00", "\x07"} & set(captured.out + captured.err)
    assert (tmp_path / "report.json").is_file()


def test_the_survivor_check_finds_a_process_carrying_the_mark() -> None:
    """The check the resource attacks rely on: a process with the mark in its arguments is found (and ended)."""
    process = subprocess.Popen(["sleep", SURVIVOR_MARK])
    try:
        cmdline = Path(f"/proc/{process.pid}/cmdline")
        for _ in range(1000):  # the child's arguments appear once its exec has finished
            if cmdline.read_bytes():
                break
            time.sleep(0.01)
        assert process.pid in survivors()
        kill_survivors([process.pid])
        assert process.wait(timeout=10) == -9
    finally:
        if process.poll() is None:
            os.kill(process.pid, 9)
