"""Cold versus warm evaluation: what the environment cache saves.

Cold: an empty projectgen environment cache and an empty uv download cache, as
on a fresh machine (packages come from the index). Warm: the same evaluation
again, reusing the cached environment. Both are measured in this one run and
printed side by side with their ratio.

    python benchmarks/harness_cache.py [--task TASK_DIR] [--suite unit] [--repeats 3]

Default task: CodeProjectEval/tinydb from ../shared/datasets when present,
otherwise the bundled kvstore example.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def default_task() -> Path:
    shared = ROOT.parent / "shared" / "datasets" / "CodeProjectEval" / "tinydb"
    if shared.is_dir():
        return shared
    from projectgen.datasets.examples import example_task_path

    return example_task_path("kvstore")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=None)
    parser.add_argument("--suite", default="unit")
    parser.add_argument("--repeats", type=int, default=3, help="warm runs (median reported)")
    args = parser.parse_args()

    from projectgen.datasets.loaders import load_task
    from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

    task = load_task(args.task or default_task())
    with tempfile.TemporaryDirectory(prefix="projectgen-bench-") as scratch:
        os.environ["UV_CACHE_DIR"] = str(Path(scratch) / "uv-cache")  # nothing downloaded before
        runner = SandboxRunner(RunnerSettings(cache_dir=Path(scratch) / "envs"))
        candidate = task.reference_files()
        started = time.perf_counter()
        cold = runner.evaluate(task, candidate, args.suite)
        cold_seconds = time.perf_counter() - started
        warm_times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            warm = runner.evaluate(task, candidate, args.suite)
            warm_times.append(time.perf_counter() - started)
    warm_seconds = statistics.median(warm_times)
    print(f"task: {task.id} ({args.suite} tests, {len(task.env.requirements)} requirements)")
    print(f"cold evaluation (empty caches): {cold_seconds:7.2f} s   {cold.passed}/{cold.total} passed")
    print(f"warm evaluation (median of {args.repeats}): {warm_seconds:7.2f} s   {warm.passed}/{warm.total} passed")
    print(f"speed-up warm vs cold: {cold_seconds / warm_seconds:.1f}x")
    return 0 if (cold.passed, cold.total) == (warm.passed, warm.total) else 1


if __name__ == "__main__":
    sys.exit(main())
