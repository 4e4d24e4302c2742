"""The hostile set (tests/evaluation/hostile_set): candidates written as a score-gaming model would write them.

Each attack is a folder holding `attack.toml` (the task it targets, its class, whether it is slow, the run's
limits) and `files/`, laid over the task's honest stub (every function body emptied). The attacks were written
without reading the sandbox's defences: what they know of the runner they find at run time, from inside the
sandbox. An attack must never score above the honest stub, and the report must say why when it tried.

`python tests/hostile_attacks.py [NAME ...]` scores the attacks and prints a table (the stub's score beside).
"""
from __future__ import annotations

import ast
import os
import signal
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from projectgen.datasets.loaders import load_task
from projectgen.datasets.task import Task
from projectgen.evaluation.expectations import ScoredRun
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.evaluation.sandbox import Limits

HOSTILE_SET = Path(__file__).resolve().parent / "evaluation" / "hostile_set"
SHARED_DATASETS = Path(os.environ.get("PROJECTGEN_TEST_SHARED_DATASETS")
                       or Path(__file__).resolve().parents[1].parent / "shared" / "datasets")
CLASSES = {1: "pytest plugin/hook forgery", 2: "test-body replacement", 3: "value gaming",
           4: "results-channel forgery", 5: "process exit", 6: "suite swapping", 7: "runner-crashing data",
           8: "resource attack"}
# the argument every process a resource attack leaves behind carries (`sleep 41.4242`): a survivor is found by it
SURVIVOR_MARK = "41.4242"


@dataclass(frozen=True)
class Attack:
    """One hostile candidate: the files it lays over its task's honest stub, and how it is run."""

    name: str
    task: str
    kind: int
    slow: bool
    summary: str
    timeout: float
    memory_mb: int | None
    folder: Path

    def files(self) -> dict[str, str]:
        root = self.folder / "files"
        return {path.relative_to(root).as_posix(): path.read_text() for path in sorted(root.rglob("*"))
                if path.is_file() and "__pycache__" not in path.parts}


def load_attacks() -> list[Attack]:
    """Every attack folder of the hostile set, by name."""
    attacks = []
    for config in sorted(HOSTILE_SET.glob("*/attack.toml")):
        data = tomllib.loads(config.read_text())
        attacks.append(Attack(name=config.parent.name, task=data["task"], kind=data["class"],
                              slow=data.get("slow", False), summary=data["summary"],
                              timeout=data.get("timeout", 60), memory_mb=data.get("memory_mb"),
                              folder=config.parent))
    return attacks


def task_folder(name: str) -> Path:
    """lice is DevBench's (the shared data); the others are the hostile set's own tasks."""
    return SHARED_DATASETS / "DevBench" / "lice" if name == "lice" else HOSTILE_SET / "tasks" / name


def empty_bodies(source: str) -> str:
    """A Python module with every function body reduced to its docstring and `return None`."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            node.body = [*([ast.Expr(ast.Constant(doc))] if doc else []), ast.Return(ast.Constant(None))]
    return ast.unparse(tree) + "\n"


def honest_stub(task: Task) -> dict[str, str]:
    """The reference with nothing implemented: Python bodies emptied, a Rust task's `stub/` folder."""
    stub_folder = task_folder(task.id) / "stub"
    if stub_folder.is_dir():
        return {path.relative_to(stub_folder).as_posix(): path.read_text()
                for path in sorted(stub_folder.rglob("*")) if path.is_file()}
    return {path: (empty_bodies(text) if path.endswith(".py") else text)
            for path, text in task.reference_repository().items()}


def attack_candidate(attack: Attack, task: Task) -> dict[str, str]:
    return {**honest_stub(task), **attack.files()}


def attack_runner(attack: Attack) -> SandboxRunner:
    limits = Limits(memory_bytes=attack.memory_mb * 2**20) if attack.memory_mb else Limits()
    return SandboxRunner(RunnerSettings(timeout=attack.timeout, limits=limits))


def reason(report: TestReport) -> str:
    """What the report says went wrong, if anything: a tampering verdict, an error, a timeout, a failure."""
    failures = [f"{t.nodeid}: {t.message}" for t in report.tests if t.outcome.value != "passed" and t.message]
    return (report.tampered or report.error or report.install_error or ("timed out" if report.timed_out else "")
            or report.not_run_reason() or "; ".join(f"{c.nodeid}: {c.message}" for c in report.collection_errors)
            or "; ".join(failures))


def survivors() -> list[int]:
    """Processes a resource attack left running (they carry `SURVIVOR_MARK`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if SURVIVOR_MARK.encode() in argv:
                found.append(int(entry.name))
    return found


def kill_survivors(pids: list[int]) -> None:
    """End the processes our own attack started (by id: they are ours, found by their mark)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def score_attack(attack: Attack) -> tuple[ScoredRun | None, str]:
    """The attack's scored run, or None and the exception the runner raised (itself an outcome)."""
    task = load_task(task_folder(attack.task))
    try:
        return attack_runner(attack).score(task, attack_candidate(attack, task), "unit"), ""
    except Exception as error:  # a crash of the runner is what this measures
        return None, f"{type(error).__name__}: {error}"


def stub_score(task_name: str) -> int:
    task = load_task(task_folder(task_name))
    return SandboxRunner(RunnerSettings(timeout=60)).score(task, honest_stub(task), "unit").score.passed


def main(names: list[str]) -> None:
    attacks = [a for a in load_attacks() if not names or a.name in names]
    stubs = {name: stub_score(name) for name in sorted({a.task for a in attacks})}
    print("| attack | class | task | score (stub) | outcome |\n|---|---|---|---|---|")
    for attack in attacks:
        started = time.monotonic()
        scored, crash = score_attack(attack)
        left = survivors()
        kill_survivors(left)
        if scored is None:
            outcome, score = f"SUCCEEDS: the runner raised {crash[:160]}", "-"
        else:
            score = f"{scored.score.passed}/{scored.score.expected} ({stubs[attack.task]})"
            why = reason(scored.report).replace("\n", " ").replace("|", "/")[:140]
            above = scored.score.passed > stubs[attack.task]
            outcome = ("SUCCEEDS: above the stub" if above else "held") + (f"; {len(left)} survivor(s)" if left else "")
            outcome += f"; tampered={scored.report.tampered!r:.80}; why: {why}"
        print(f"| {attack.name} | {attack.kind} | {attack.task} | {score} | {outcome} "
              f"({time.monotonic() - started:.0f}s) |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
