"""The Ray executor against the local executor: the same units on the same cores.

An experiment of the reference replay (``--model reference``, an oracle, not a model) over the
bundled example tasks (kvstore, wordfreq) with two methods (projectgen, direct), one attempt: 4
units, each with its model calls (replayed) and its sandboxed test runs. Both executors run them
2 at a time (``--workers 2``): the local executor on 2 threads of this process, the Ray executor
as 2 Ray tasks at a time on a local Ray instance with 2 CPUs and 2 sandbox slots, started once
(its start-up is timed apart: a cluster outlives one batch). Each round runs the local executor,
then Ray as a one-machine `--executor ray` does (units in the experiment folder), then Ray with
every unit relocated (run in a temporary folder and mirrored back to the experiment folder, as on
a node that does not share the driver's files; shown, not gated). Every run starts from an empty
experiment folder. A warm-up run with each executor comes first (sandbox environments built,
projectgen imported in this process and in Ray's worker processes); the first Ray batch, with
its workers' imports, is shown apart. Medians of --repeats rounds.

    python benchmarks/ray_overhead.py [--repeats 2] [--workers 2]

Target: Ray (units in place) / local <= 1.10x. Needs the `ray` extra; without it the script says
so and exits 0 (nothing to compare).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET = 1.10


def main() -> int:
    from _fixtures import add_tiny_option, skipped, verdict

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    add_tiny_option(parser)
    args = parser.parse_args()
    if args.tiny:
        args.repeats = 1
    try:
        import ray
    except ImportError:
        return skipped("ray is not installed (pip install 'projectgen[ray]'): nothing to compare")

    from _fixtures import ratio_line, table

    from projectgen.config import AttemptSettings
    from projectgen.datasets.examples import example_tasks_dir
    from projectgen.experiments import ExperimentSpec, LocalExecutor, RayExecutor, run_experiment

    spec = ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("projectgen", "direct"),
                          attempt_settings=AttemptSettings(attempts=1))
    if args.tiny:  # one unit; Ray's start and its first batch still cost ~20 s
        spec = ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("direct",),
                              tasks=("kvstore",), attempt_settings=AttemptSettings(attempts=1))
    scratch = Path(tempfile.mkdtemp(prefix="projectgen-ray-bench-"))
    executors = {
        "local": lambda: LocalExecutor(workers=args.workers),
        "ray": lambda: RayExecutor(workers=args.workers),
        "ray, relocated": lambda: RayExecutor(workers=args.workers, relocate="always"),
    }
    walls: dict[str, list[float]] = {name: [] for name in executors}
    passed: dict[str, set[int]] = {name: set() for name in executors}
    try:
        started = time.perf_counter()
        if not args.tiny:
            run_experiment(spec, scratch / "warm-up", executor=LocalExecutor(workers=args.workers))
            print(f"warm-up (environments built): {time.perf_counter() - started:.1f} s", flush=True)
        started = time.perf_counter()
        ray.init(num_cpus=args.workers, resources={"sandbox": args.workers}, include_dashboard=False,
                 log_to_driver=False)
        ray_start = time.perf_counter() - started
        print(f"local Ray instance started in {ray_start:.1f} s", flush=True)
        started = time.perf_counter()
        run_experiment(spec, scratch / "warm-up-ray", executor=RayExecutor(workers=args.workers))
        first_batch = time.perf_counter() - started
        print(f"first Ray batch (its worker processes importing projectgen): {first_batch:.1f} s", flush=True)
        for round_ in range(args.repeats):
            for name, make in executors.items():
                out = scratch / f"{name.replace(', ', '-')}-{round_}"
                began = time.perf_counter()
                results = run_experiment(spec, out, executor=make())
                walls[name].append(time.perf_counter() - began)
                passed[name].add(sum(report.final.passed or 0 for report in results.models))
                shutil.rmtree(out, ignore_errors=True)
            print(f"round {round_ + 1}/{args.repeats}: " + ", ".join(f"{n} {w[-1]:.2f} s" for n, w in walls.items()),
                  flush=True)
    finally:
        ray.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)

    median = {name: statistics.median(values) for name, values in walls.items()}
    print()
    print(table(["executor", "median wall s", "runs s", "/ local", "#Pass (all runs)"],
                [[name, f"{median[name]:.2f}", ", ".join(f"{w:.2f}" for w in walls[name]),
                  f"{median[name] / median['local']:.3f}x", ",".join(map(str, sorted(passed[name])))]
                 for name in executors]))
    print(f"4 units (kvstore, wordfreq x projectgen, direct; reference replay, 1 attempt), {args.workers} at a time; "
          f"in no figure: the Ray instance's start-up ({ray_start:.1f} s) and its first batch ({first_batch:.1f} s, "
          f"{first_batch / median['local']:.2f}x local's median)")
    same = len({frozenset(v) for v in passed.values()}) == 1 and all(len(v) == 1 for v in passed.values())
    print(f"every run of every executor gave the same #Pass: {'yes' if same else 'NO'}")
    ratio = median["ray"] / median["local"]
    print("Ray executor (units in the experiment folder) / local executor, same units and cores:")
    print(ratio_line(ratio, f"<= {TARGET}"))
    return verdict(ratio <= TARGET, args.tiny) if same else 1


if __name__ == "__main__":
    sys.exit(main())
