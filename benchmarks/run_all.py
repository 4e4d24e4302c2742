"""`make bench`: run every benchmark script in this folder, one after another, and sum up.

Each script prints its own table and a "ratio: ..." line and exits non-zero when it misses
its target, or 77 when it cannot run here (a dataset or extra missing: it says which); this
runner prints a summary (wall time and status per script, total wall time against the
25-minute budget: `experiment_throughput.py` alone waits ~7 minutes on its 1 s model latency,
most of it in the one-pair-at-a-time run its speed-up is measured against) and exits non-zero
when any script failed or the budget was exceeded (a skipped script is neither). Files starting with "_" are shared helpers, not benchmarks.
`--tiny` runs every script's tiny mode (what tests/test_benchmarks.py runs).

    python benchmarks/run_all.py [--only NAME[,NAME...]] [--budget-s 1500] [--tiny]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from _fixtures import SKIPPED

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated script names (without .py)")
    parser.add_argument("--budget-s", type=float, default=1500.0, help="wall-time budget of the whole run")
    parser.add_argument("--tiny", action="store_true", help="every script's seconds-long tiny mode")
    args = parser.parse_args()
    wanted = {name.strip().removesuffix(".py") for name in args.only.split(",") if name.strip()}
    scripts = [s for s in sorted(HERE.glob("*.py"))
               if s.name != Path(__file__).name and not s.name.startswith("_") and (not wanted or s.stem in wanted)]
    summary = []
    started = time.perf_counter()
    for script in scripts:
        print(f"\n=== {script.name}", flush=True)
        began = time.perf_counter()
        code = subprocess.run([sys.executable, str(script), *(['--tiny'] if args.tiny else [])]).returncode
        summary.append((script.name, time.perf_counter() - began, code))
    total = time.perf_counter() - started
    print("\n=== summary")
    for name, seconds, code in summary:
        status = {0: "ok", SKIPPED: "skipped (see its last line)"}.get(code, f"MISSED TARGET OR FAILED (exit {code})")
        print(f"{name:26s} {seconds:8.1f} s   {status}")
    exceeded = ", EXCEEDED" if total > args.budget_s else ""
    print(f"{'total':26s} {total:8.1f} s   (budget {args.budget_s:.0f} s{exceeded})")
    return 1 if any(code not in (0, SKIPPED) for _, _, code in summary) or total > args.budget_s else 0


if __name__ == "__main__":
    sys.exit(main())
