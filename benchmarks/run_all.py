"""`make bench`: run every benchmark script in this folder, one after another, and sum up.

Each script prints its own table and a "ratio: ..." line and exits non-zero when it misses
its target; this runner prints a summary (wall time and status per script, total wall
time against the 15-minute budget) and exits non-zero when any script failed or the
budget was exceeded. Files starting with "_" are shared helpers, not benchmarks.

    python benchmarks/run_all.py [--only NAME[,NAME...]] [--budget-s 900]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated script names (without .py)")
    parser.add_argument("--budget-s", type=float, default=900.0, help="wall-time budget of the whole run")
    args = parser.parse_args()
    wanted = {name.strip().removesuffix(".py") for name in args.only.split(",") if name.strip()}
    scripts = [s for s in sorted(HERE.glob("*.py"))
               if s.name != Path(__file__).name and not s.name.startswith("_") and (not wanted or s.stem in wanted)]
    summary = []
    started = time.perf_counter()
    for script in scripts:
        print(f"\n=== {script.name}", flush=True)
        began = time.perf_counter()
        code = subprocess.run([sys.executable, str(script)]).returncode
        summary.append((script.name, time.perf_counter() - began, code))
    total = time.perf_counter() - started
    print("\n=== summary")
    for name, seconds, code in summary:
        print(f"{name:24s} {seconds:8.1f} s   {'ok' if code == 0 else f'MISSED TARGET OR FAILED (exit {code})'}")
    print(f"{'total':24s} {total:8.1f} s   (budget {args.budget_s:.0f} s{', EXCEEDED' if total > args.budget_s else ''})")
    return 1 if any(code for _, _, code in summary) or total > args.budget_s else 0


if __name__ == "__main__":
    sys.exit(main())
