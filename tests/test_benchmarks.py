"""Every benchmark script still runs: its `--tiny` mode (seconds, every step, no target gated) in a subprocess.

Benchmarks run nowhere else in CI, so without this a change that breaks one (a renamed argument, a
changed return type) stays unseen until someone runs `make bench`. A script that cannot run here says
why and exits 77 (`benchmarks/_fixtures.SKIPPED`: the shared datasets or the bench extra missing);
that is a skip, not a pass.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SKIPPED = 77
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_") and p.name != "run_all.py")
# The two longest tiny runs (20-25 s each on an idle machine, a tenth of the default suite's worker time among
# 2,000 tests) run with the slow tests, which CI runs after `make test` on every run: the default suite keeps
# faster tests of what they drive (tests/experiments/test_ray_executor.py, test_experiment_concurrency.py).
SLOW_SCRIPTS = ("experiment_throughput.py", "ray_overhead.py")


def test_every_script_is_covered() -> None:
    """A new script is picked up by the glob; the runner and the helpers are not benchmarks."""
    assert "context_size.py" in SCRIPTS and "experiment_throughput.py" in SCRIPTS
    assert not {"run_all.py", "_fixtures.py"} & set(SCRIPTS)
    assert set(SLOW_SCRIPTS) <= set(SCRIPTS)  # a renamed script is not silently dropped from the slow run


@pytest.mark.parametrize("script", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW_SCRIPTS else s
                                    for s in SCRIPTS])
def test_tiny_mode_runs(script: str) -> None:
    # the system's temporary folder: a local Ray instance's socket paths under tmp_path exceed AF_UNIX's 107 bytes
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), "--tiny"], cwd=BENCHMARKS.parent,
                          capture_output=True, text=True, timeout=300)
    lines = done.stdout.strip().splitlines()
    if done.returncode == SKIPPED:
        pytest.skip(lines[-1] if lines else f"{script}: skipped")
    assert done.returncode == 0, (f"{script} --tiny exited {done.returncode}:\n{done.stdout[-3000:]}\n"
                                  f"{done.stderr[-3000:]}")
    assert "tiny run" in done.stdout, done.stdout[-2000:]
