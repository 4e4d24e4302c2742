"""Evaluation harness: warm sandboxed evaluation against plain pytest in the same environment, per task;
our cached environments, cold and warm, against the reference method, for information.

Each task's reference repository is evaluated against its unit tests, tasks one after
another:

- ours, cold: an empty projectgen environment cache and an empty uv download cache, as on
  a fresh machine (packages come from the index).
- reference method (the ProjectGen harness's): one shared virtual environment; before
  every evaluation `pip install -r requirements.txt` into it (the tasks' own
  setup_shell_script), then pytest. Pass 1 starts with an empty pip cache (the same
  starting point as our cold run).
- steady state, interleaved: --repeats more rounds in which every task is evaluated by the
  reference method (pip's cache now warm; pip still reinstalls whatever the previous
  task's pins replaced), then every task by ours, warm (the cached environment is reused),
  and plain pytest (below). Each round ends with ours, warm, evaluating all the tasks
  --workers at a time, as
  `projectgen bench-reference --workers N` does: every task has its own environment, so
  tasks need not wait for each other. The reference method cannot do that, since its one
  shared environment holds one task's pins at a time. Interleaving puts both under the same
  machine load; medians are reported.

- plain pytest, interleaved with ours warm in each round (the two take turns at running first;
  neither runs right after a pip install): the task's reference, required
  files and tests copied into a fresh folder, then `python -m pytest -q -p no:cacheprovider
  SUITE` with the Python of the task's cached environment (the same packages ours uses), no
  sandbox, no results plugin: what a developer would run by hand. The gated figure, per task:
  ours warm / plain pytest, the cost of the sandbox and of the harness around the tests.

Pytest runs plainly in the reference method (no coverage or JSON report plugins), so only
the environment method differs. All of it is measured in this one run.

Default tasks (when ../shared/datasets is present): deprecated, imapclient, parsel, pyjwt,
python-hl7, tinydb, voluptuous. Why not all 18: the whole of `make bench` has to fit 15
minutes on 2 cores, and each task is evaluated 2 + 2 x repeats times here (6 by default).
Left out: bplustree (its unit tests alone take about 150 s), xmnlp and zxcvbn (incomplete data: the
reference cannot pass), and the tasks with the heaviest environments to build cold
(djangorestframework-simplejwt, portalocker, flask, cookiecutter, csvs-to-sqlite,
trailscraper, simpy, rsa: 8 to 26 requirements each, django/pandas/boto3/sphinx-sized).
The subset has a task with no requirements (imapclient), one whose tests take about 6 s
(pyjwt), and conflicting pins (pytest<8 for tinydb, pytest==8.4.2 for parsel), as a shared
environment meets them. `--all` runs every task; `--tasks a,b` picks some. Without
../shared/datasets the bundled example tasks are used, and the output says so.

    python benchmarks/harness_cache.py [--tasks a,b | --all] [--suite unit] [--repeats 2] [--pairs 3]

Target: ours warm / plain pytest in the same environment <= 1.10x for every task (the median of the
ratios of the interleaved pairs, each pair run back to back: --pairs of them per task in each round, 6
in all by default; with one per round, a median of 2 half-second runs moved by 5-15% between runs of
the script on this machine). The earlier gate, the reference method at its steady state / ours warm
>= 5x, is printed for information only: it is bounded by the machine's cores and the longest
task (3.3x on an idle 2-core machine, 6.0x on a loaded one), while the sandbox's own cost is
what this harness controls.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _fixtures import shared_datasets

ROOT = Path(__file__).resolve().parents[1]
DATASET = shared_datasets() / "CodeProjectEval"
DEFAULT_TASKS = ["deprecated", "imapclient", "parsel", "pyjwt", "python-hl7", "tinydb", "voluptuous"]
TARGET = 1.10  # ours warm / plain pytest in the same environment, per task
REFERENCE_RATIO = 5.0  # the earlier gate (reference steady state / ours warm), printed for information
INSTALL_TIMEOUT = 900
TEST_TIMEOUT = 600


@dataclass
class Result:
    seconds: float
    passed: int
    total: int
    install_seconds: float = 0.0
    install_ok: bool = True
    not_passed: frozenset[str] = frozenset()  # test ids that did not pass or skip (ours only)
    cpu_seconds: float = 0.0  # user + system time of the evaluation's processes (ours, one at a time only)

    @property
    def score(self) -> str:
        return f"{self.passed}/{self.total}" + ("" if self.install_ok else " (pip failed)")


def load_tasks(args: argparse.Namespace) -> tuple[str, list]:
    from projectgen.datasets.loaders import load_task

    if args.tiny:  # one small bundled task: every step, in seconds
        from projectgen.datasets.examples import example_task_path

        return "bundled example task kvstore (--tiny)", [load_task(example_task_path("kvstore"))]
    if DATASET.is_dir():
        names = sorted(p.name for p in DATASET.iterdir() if p.is_dir()) if args.all else (
            args.tasks.split(",") if args.tasks else DEFAULT_TASKS)
        return f"CodeProjectEval ({DATASET})", [load_task(DATASET / name) for name in names]
    from projectgen.datasets.examples import example_task_names, example_task_path

    print(f"note: {DATASET} not found; using the bundled example tasks instead")
    return "bundled example tasks", [load_task(example_task_path(n)) for n in example_task_names()]


# --------------------------------------------------------------------------- ours

def ours(runner, task, suite: str) -> Result:
    import resource

    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    report = runner.evaluate(task, task.reference_files(), suite)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if report.error:
        print(f"  {task.id}: {report.error}", flush=True)
    not_passed = frozenset(t.nodeid for t in report.tests if t.outcome.value not in ("passed", "skipped"))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Result(time.perf_counter() - started, report.passed, report.total, not_passed=not_passed,
                  cpu_seconds=cpu)


def ours_concurrently(runner, tasks: list, suite: str, workers: int) -> tuple[float, dict[str, Result]]:
    """Wall time of evaluating every task, `workers` at a time, and each task's result."""
    from concurrent.futures import ThreadPoolExecutor

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = dict(zip([t.id for t in tasks], pool.map(lambda task: ours(runner, task, suite), tasks)))
    return time.perf_counter() - started, results


# --------------------------------------------------------------------------- the reference method

SUMMARY = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float, log: Path) -> tuple[int, str]:
    with open(log, "a", encoding="utf-8") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        try:
            done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=timeout, text=True, errors="replace")
        except subprocess.TimeoutExpired:
            out.write(f"timed out after {timeout} s\n")
            return -1, ""
        out.write(done.stdout)
    return done.returncode, done.stdout


def plain_pytest(runner, task, suite: str, scratch: Path) -> Result:
    """The task's tests run by hand: its files copied into a fresh folder, then plain pytest with the Python
    of the task's cached environment (no sandbox, no results plugin)."""
    environment = runner.environments.ensure(task.env)
    workspace = Path(tempfile.mkdtemp(prefix=f"plain-{task.id}-", dir=scratch))
    started = time.perf_counter()
    for rel, source in task.reference_files().items():
        _copy(source, workspace / rel)
    for rel in (*task.required_files, *task.suite_files(suite)):
        _copy(task.root / rel, workspace / rel)
    env = {**os.environ, "PATH": f"{environment.path / 'bin'}:{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(workspace), "PYTHONDONTWRITEBYTECODE": "1", **task.env.env_vars}
    _, output = _run([str(environment.python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      *task.suite(suite).paths],
                     workspace, env, TEST_TIMEOUT, scratch / f"plain-{task.id}.log")
    last = output.strip().splitlines()[-1] if output.strip() else ""
    counts = {kind.rstrip("s"): int(n) for n, kind in SUMMARY.findall(last)}
    result = Result(time.perf_counter() - started, counts.get("passed", 0), sum(counts.values()))
    shutil.rmtree(workspace, ignore_errors=True)
    return result


def reference(venv: Path, task, suite: str, scratch: Path, env: dict[str, str]) -> Result:
    """The reference method for one task: pip install its requirements into the shared venv, run its tests."""
    python = venv / "bin" / "python"
    workspace = Path(tempfile.mkdtemp(prefix=f"ref-{task.id}-", dir=scratch))
    started = time.perf_counter()
    for rel, source in task.reference_files().items():
        _copy(source, workspace / rel)
    for rel in (*task.required_files, *task.suite_files(suite)):
        _copy(task.root / rel, workspace / rel)
    requirements = task.root / "requirements.txt"
    if not requirements.is_file():
        requirements = workspace / "requirements.txt"
        requirements.write_text("\n".join(task.env.requirements) + "\n", encoding="utf-8")
    log = scratch / f"reference-{task.id}.log"
    code, _ = _run([str(python), "-m", "pip", "install", "-r", str(requirements)], workspace, env,
                   INSTALL_TIMEOUT, log)
    installed = time.perf_counter()
    _, output = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      *task.suite(suite).paths],
                     workspace, {**env, **task.env.env_vars}, TEST_TIMEOUT, log)
    last = output.strip().splitlines()[-1] if output.strip() else ""
    counts = {kind.rstrip("s"): int(n) for n, kind in SUMMARY.findall(last)}
    result = Result(time.perf_counter() - started, counts.get("passed", 0), sum(counts.values()),
                    install_seconds=installed - started, install_ok=code == 0)
    shutil.rmtree(workspace, ignore_errors=True)
    return result


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    elif source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)  # not copy2: the dataset folders are read-only


# --------------------------------------------------------------------------- main

def median_result(results: list[Result]) -> Result:
    return Result(statistics.median(r.seconds for r in results), results[0].passed, results[0].total,
                  install_seconds=statistics.median(r.install_seconds for r in results),
                  install_ok=all(r.install_ok for r in results))


def main() -> int:
    from _fixtures import add_tiny_option, verdict

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=None, help="comma-separated CodeProjectEval task ids")
    parser.add_argument("--all", action="store_true", help="every CodeProjectEval task (far over 15 minutes)")
    parser.add_argument("--suite", default="unit")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved steady-state rounds (median reported)")
    parser.add_argument("--pairs", type=int, default=3,
                        help="gated (ours warm, plain pytest) pairs per task in each round, taking turns at going "
                             "first (the gate's median is over repeats x pairs)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                        help="tasks ours evaluates at a time in the concurrent pass (default: one per core)")
    add_tiny_option(parser)
    args = parser.parse_args()
    if args.tiny:
        args.repeats, args.pairs, args.workers = 1, 1, 1

    from _fixtures import paired_ratio, ratio_line, table

    from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

    source, tasks = load_tasks(args)
    scratch = Path(tempfile.mkdtemp(prefix="projectgen-bench-"))
    cold: dict[str, Result] = {}
    first: dict[str, Result] = {}
    warm: dict[str, list[Result]] = {t.id: [] for t in tasks}
    steady: dict[str, list[Result]] = {t.id: [] for t in tasks}
    concurrent_walls: list[float] = []
    concurrent: dict[str, list[Result]] = {t.id: [] for t in tasks}
    plain: dict[str, list[Result]] = {t.id: [] for t in tasks}
    try:
        if not args.tiny:  # a tiny run keeps uv's own cache: what it checks is every step, not a download's speed
            os.environ["UV_CACHE_DIR"] = str(scratch / "uv-cache")  # nothing downloaded before
        runner = SandboxRunner(RunnerSettings(cache_dir=scratch / "envs"))
        print(f"tasks: {source}: {', '.join(t.id for t in tasks)} ({args.suite} tests)", flush=True)
        started = time.perf_counter()
        for task in tasks:
            cold[task.id] = ours(runner, task, args.suite)
        print(f"ours, cold: done in {time.perf_counter() - started:.0f} s (isolation: {runner.isolation()})",
              flush=True)

        venv = scratch / "reference-venv"
        reference_too = not args.tiny  # the ProjectGen harness's method pip-installs for ~20 s: not in a tiny run
        env = dict(os.environ, PIP_CACHE_DIR=str(scratch / "pip-cache"), PIP_DISABLE_PIP_VERSION_CHECK="1",
                   HOME=str(scratch / "reference-home"))
        env.pop("UV_CACHE_DIR", None)
        setup = 0.0
        if reference_too:
            (scratch / "reference-home").mkdir()
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pytest"], env=env, check=True)
            setup = time.perf_counter() - started
            started = time.perf_counter()
            for task in tasks:
                first[task.id] = reference(venv, task, args.suite, scratch, env)
            print(f"reference, pass 1 (empty pip cache): done in {time.perf_counter() - started:.0f} s", flush=True)
        for round_ in range(args.repeats):
            for task in tasks if reference_too else ():
                steady[task.id].append(reference(venv, task, args.suite, scratch, env))
            # Then the gated pair, away from the reference's pip installs (whose writes may slow whatever runs
            # next; ours used to run right after them), ours and plain pytest taking turns at going first.
            for index, task in enumerate(tasks):
                for pair in range(args.pairs):
                    for side in ("ours", "plain") if (round_ + index + pair) % 2 == 0 else ("plain", "ours"):
                        if side == "ours":
                            warm[task.id].append(ours(runner, task, args.suite))
                        else:
                            plain[task.id].append(plain_pytest(runner, task, args.suite, scratch))
            wall, results = ours_concurrently(runner, tasks, args.suite, args.workers)
            concurrent_walls.append(wall)
            for task_id, result in results.items():
                concurrent[task_id].append(result)
            print(f"steady state, round {round_ + 1}/{args.repeats}: done", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    warm_m = {tid: median_result(rs) for tid, rs in warm.items()}
    samples = args.repeats * args.pairs  # of each task's ours warm and plain pytest
    warm_total = statistics.median(sum(rs[i].seconds for rs in warm.values()) for i in range(samples))
    concurrent_total = statistics.median(concurrent_walls)
    differing = {t.id: [cold[t.id], *warm[t.id], *concurrent[t.id]] for t in tasks}
    differing = {tid: rs for tid, rs in differing.items() if len({r.not_passed for r in rs}) > 1}
    if reference_too:  # the reference's figures (none in a tiny run)
        steady_m = {tid: median_result(rs) for tid, rs in steady.items()}
        cold_total = sum(r.seconds for r in cold.values())
        first_total = sum(r.seconds for r in first.values())
        steady_total = statistics.median(sum(rs[i].seconds for rs in steady.values()) for i in range(args.repeats))

        def cell(result: Result) -> str:
            return f"{result.seconds:.2f} ({result.install_seconds:.1f})"

        print()
        print(table(
            ["task", "reqs", "ours cold s", "ref pass 1 s (pip)", "ours warm s", "ref steady s (pip)", "ours result",
             "ref result"],
            [[t.id, len(t.env.requirements), f"{cold[t.id].seconds:.2f}", cell(first[t.id]),
              f"{warm_m[t.id].seconds:.2f}", cell(steady_m[t.id]), warm_m[t.id].score, steady_m[t.id].score]
             for t in tasks]
            + [["total", "", f"{cold_total:.2f}", f"{first_total:.2f} ({sum(r.install_seconds for r in first.values()):.1f})",
                f"{warm_total:.2f}", f"{steady_total:.2f} ({sum(r.install_seconds for r in steady_m.values()):.1f})",
                "", ""]]))
        print(f"warm and steady-state figures: median of {args.repeats} interleaved rounds; "
              f"(pip) = seconds of the reference's pip install step")
        print(f"reference set-up, once (python -m venv + pip install pytest; in no total): {setup:.1f} s")
        ref_tests = statistics.median(sum(rs[i].seconds - rs[i].install_seconds for rs in steady.values())
                                      for i in range(args.repeats))
        print(f"the tests alone: the reference's plain pytest step {ref_tests:.2f} s; ours warm (sandboxed, "
              f"whole evaluation) {warm_total:.2f} s, so its pip step costs the reference "
              f"{steady_total - ref_tests:.2f} s more per pass")
        print(f"ours cold / ours warm: {cold_total / warm_total:.1f}x")
        print(f"reference pass 1 (empty pip cache) / ours cold: {first_total / cold_total:.1f}x; "
              f"/ ours warm: {first_total / warm_total:.1f}x")
        print(f"ours warm, {args.workers} tasks at a time: {concurrent_total:.2f} s (median of {args.repeats}; "
              f"one after another: {warm_total:.2f} s, {warm_total / concurrent_total:.1f}x)")
        for task_id, results in differing.items():
            flaky = sorted(frozenset().union(*(r.not_passed for r in results))
                           - frozenset.intersection(*(r.not_passed for r in results)))
            print(f"ours: {task_id} gave different results across its {len(results)} evaluations "
                  f"({', '.join(r.score for r in results)}); not always passing: {', '.join(flaky)}")
        print(f"ours: every evaluation of a task gave the same results: {'NO' if differing else 'yes'}")
        print(f"reference steady state (pip cache warm) / ours warm, one task after another: "
              f"{steady_total / warm_total:.1f}x (shown, not gated)")
        # What bounds any schedule of whole tasks: the busiest core, and the longest single evaluation.
        cpu_total = statistics.median(sum(rs[i].cpu_seconds for rs in warm.values()) for i in range(samples))
        cores = os.cpu_count() or 1
        longest_id = max(warm_m, key=lambda tid: warm_m[tid].seconds)
        longest = warm_m[longest_id]
        floor = max(cpu_total / cores, longest.seconds)
        print(f"bound for ours warm on this machine: CPU time of the evaluations {cpu_total:.2f} s over {cores} cores "
              f"= {cpu_total / cores:.2f} s; longest single evaluation ({longest_id}) {longest.seconds:.2f} s; so no "
              f"schedule of whole tasks beats {floor:.2f} s, i.e. {steady_total / floor:.1f}x the reference's steady "
              f"state")
        print(f"reference steady state (pip cache warm) / ours warm, {args.workers} tasks at a time: "
              f"{steady_total / concurrent_total:.1f}x (the earlier gate, >= {REFERENCE_RATIO:.0f}x; for information)")

    # The gate: what the sandbox and the harness cost over running the same tests by hand.
    plain_m = {tid: statistics.median(r.seconds for r in rs) for tid, rs in plain.items()}
    ratios = {t.id: paired_ratio([r.seconds for r in warm[t.id]], [r.seconds for r in plain[t.id]]) for t in tasks}
    print()
    print(table(["task", "ours warm s", "plain pytest s", "ours / plain", "ours result", "plain result"],
                [[t.id, f"{warm_m[t.id].seconds:.2f}", f"{plain_m[t.id]:.2f}", f"{ratios[t.id]:.3f}x",
                  warm_m[t.id].score, median_result(plain[t.id]).score] for t in tasks]
                + [["total", f"{sum(r.seconds for r in warm_m.values()):.2f}", f"{sum(plain_m.values()):.2f}",
                    f"{sum(r.seconds for r in warm_m.values()) / sum(plain_m.values()):.3f}x", "", ""]]))
    print(f"ours warm: the whole sandboxed evaluation (workspace, namespaces, pytest with the results plugin, "
          f"report); plain pytest: the same files and tests in a fresh folder, `python -m pytest -q` with the "
          f"task's cached environment, no sandbox; ours / plain: the median of the {samples} pairs' ratios (each "
          f"pair ran back to back), the seconds: medians of {samples} runs each ({args.repeats} rounds x "
          f"{args.pairs} pairs, taking turns at going first)")
    worst = max(ratios, key=ratios.__getitem__)
    print(f"ours warm / plain pytest in the same environment, the worst task ({worst}):")
    print(ratio_line(ratios[worst], f"<= {TARGET} for every task"))
    return verdict(all(r <= TARGET for r in ratios.values()), args.tiny) if not differing else 1


if __name__ == "__main__":
    sys.exit(main())
