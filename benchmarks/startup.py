"""Start-up: wall time of `projectgen --help`, and which imports it spends its time on.

`projectgen --help` runs as a fresh subprocess (the installed console script beside this
Python) several times; the median is reported. A bare interpreter start (`python -c pass`)
is measured the same way in the same run, interleaved, as the floor no CLI can go under. Then
`python -X importtime` of the same command lists the imports that cost the most.

    python benchmarks/startup.py [--runs 7] [--top 10]

Target: median `projectgen --help` < 1 s (printed as a ratio of that 1 s budget).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BUDGET_S = 1.0
HELP = "import sys; from projectgen.cli import main; sys.argv[0] = 'projectgen'; sys.exit(main(['--help']))"


def wall_time(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr.decode(errors='replace')}")
    return seconds


def interleaved(commands: list[list[str]], runs: int) -> list[list[float]]:
    """Wall times of each command, run in turn (one warm-up each first: byte-code caches)."""
    for command in commands:
        wall_time(command)
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for i, command in enumerate(commands):
            times[i].append(wall_time(command))
    return times


def import_times() -> tuple[list[tuple[int, int, str, int]], int]:
    """(self us, cumulative us, module, depth) of every import `projectgen --help` makes, and the total."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", HELP], capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append((int(own), int(cumulative), name.strip(), depth))
    total = sum(r[0] for r in rows)
    return rows, total


def main() -> int:
    from _fixtures import add_tiny_option, verdict

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--top", type=int, default=10)
    add_tiny_option(parser)
    args = parser.parse_args()
    if args.tiny:
        args.runs = 1

    from _fixtures import table

    script = Path(sys.executable).with_name("projectgen")
    command = [str(script), "--help"] if script.exists() else [sys.executable, "-c", HELP]
    cli, bare = interleaved([command, [sys.executable, "-c", "pass"]], args.runs)
    median_cli, median_bare = statistics.median(cli), statistics.median(bare)
    print(f"command: {' '.join(command)} ({args.runs} runs after one warm-up, interleaved with the floor)")
    print(table(["command", "median s", "min s", "max s"], [
        ["projectgen --help", f"{median_cli:.3f}", f"{min(cli):.3f}", f"{max(cli):.3f}"],
        ["python -c pass (interpreter floor)", f"{median_bare:.3f}", f"{min(bare):.3f}", f"{max(bare):.3f}"],
    ]))
    print(f"projectgen --help over the bare interpreter: +{median_cli - median_bare:.3f} s "
          f"({median_cli / median_bare:.1f}x the floor)")

    rows, total = import_times()
    top_level = sorted((r for r in rows if r[3] == 0), key=lambda r: -r[1])[:args.top]
    by_self = sorted(rows, key=lambda r: -r[0])[:args.top]
    print(f"\npython -X importtime (projectgen --help): {len(rows)} modules, {total / 1e6:.3f} s of imports")
    print(f"top {len(top_level)} top-level imports by cumulative time:")
    print(table(["module", "cumulative ms", "self ms"], [[n, f"{c / 1e3:.1f}", f"{s / 1e3:.1f}"]
                                                        for s, c, n, _ in top_level]))
    print(f"top {len(by_self)} imports by their own (self) time:")
    print(table(["module", "self ms", "cumulative ms"], [[n, f"{s / 1e3:.1f}", f"{c / 1e3:.1f}"]
                                                        for s, c, n, _ in by_self]))
    ratio = median_cli / BUDGET_S
    print(f"ratio: {ratio:.2f}x of the {BUDGET_S:g} s budget (target < 1.0)")
    return verdict(median_cli < BUDGET_S, args.tiny)


if __name__ == "__main__":
    sys.exit(main())
