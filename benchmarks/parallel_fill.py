"""Parallel code filling: what the code stage's per-layer fan-out saves when model calls are slow.

A 12-file project in 4 dependency layers (3 files each; every file imports every file of
the layer below) is filled by the real code stage graph (`projectgen.graphs.code_stage`)
with the real `Coder` and `CodeJudge`. The model is `ScriptedChatModel`, a replay of
the files' code (not a model) that sleeps 1 s per call, like a slow API. Both runs use the
same graph; only LangGraph's `max_concurrency` differs:

- sequential: max_concurrency=1, so the 12 calls run one after another (about 12 s);
- fan-out: max_concurrency=4 (the run default), a layer's files at once (bound: 4 layers
  x 1 s = about 4 s).

The task has no check tests here, so the real code judge accepts without a sandbox run:
only the filling is timed.

    python benchmarks/parallel_fill.py [--delay 1.0] [--layers 4] [--width 3] [--concurrency 4] [--repeats 2]

Target: sequential / fan-out >= 2.5x.
"""
from __future__ import annotations

import argparse
import statistics
import sys

TARGET = 2.5


def timed_fill(files: dict[str, str], delay: float, concurrency: int) -> tuple[float, int, dict[str, str]]:
    from _fixtures import coder_script, run_code_stage

    model = coder_script(files, delay_s=delay, label=f"scripted replay, {delay:g} s per call (not a model)")
    state, seconds = run_code_stage(files, model=model, max_concurrency=concurrency)
    return seconds, len(model.calls), dict(state.get("repository") or {})


def main() -> int:
    from _fixtures import add_tiny_option, verdict

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=1.0, help="simulated seconds per model call")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=3, help="files per layer")
    parser.add_argument("--concurrency", type=int, default=4, help="max_concurrency of the fan-out run")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved pairs of runs (median reported)")
    add_tiny_option(parser)
    args = parser.parse_args()
    if args.tiny:
        args.delay, args.layers, args.width, args.repeats = 0.05, 2, 2, 1

    from _fixtures import layered_project, ratio_line, table

    from projectgen.repository.dependencies import dependency_layers, import_graph

    files = layered_project(args.layers, args.width)
    layers = dependency_layers(import_graph(files))
    timed_fill(files, 0.0, args.concurrency)  # warm-up: imports and graph compilation are not what is measured
    seq_times, fan_times = [], []
    for _ in range(args.repeats):  # interleaved, so that both see the same machine load
        seconds, seq_calls, seq_repo = timed_fill(files, args.delay, 1)
        seq_times.append(seconds)
        seconds, fan_calls, fan_repo = timed_fill(files, args.delay, args.concurrency)
        fan_times.append(seconds)
    sequential, fanned = statistics.median(seq_times), statistics.median(fan_times)
    bound = len(layers) * args.delay * -(-args.width // max(1, args.concurrency))
    same = seq_repo == fan_repo == files
    print(f"project: {len(files)} files in {len(layers)} dependency layers of {args.width}; "
          f"model: scripted replay (ScriptedChatModel, not a model), {args.delay:g} s per call; "
          f"median of {args.repeats} interleaved runs each")
    print(table(["run", "max_concurrency", "model calls", "wall s", "ideal s"], [
        ["sequential", 1, seq_calls, f"{sequential:.2f}", f"{len(files) * args.delay:.2f}"],
        ["fan-out (real code stage graph)", args.concurrency, fan_calls, f"{fanned:.2f}", f"{bound:.2f}"],
    ]))
    print(f"outputs identical to the project in both runs: {'yes' if same else 'NO'}")
    print(f"graph overhead beyond the model's sleeps: sequential {sequential - len(files) * args.delay:.2f} s, "
          f"fan-out {fanned - bound:.2f} s")
    ratio = sequential / fanned
    print(ratio_line(ratio, f">= {TARGET}"))
    return verdict(ratio >= TARGET, args.tiny) if same else 1


if __name__ == "__main__":
    sys.exit(main())
