"""SketchBLEU speed: the largest CodeProjectEval reference (flask) scored against itself and a stub.

Ours: `projectgen.evaluation.sketchbleu.sketch_bleu` in both modes ("repaired", and "codes",
CodeS's arithmetic), each extracting every function's dataflow graph once and scoring every
function pair from one sparse matrix product.
Baseline: the way CodeS's `calc_repobleu` (and ProjectGen's `calc_sketchbleu.py`, which
calls it) fills the same pairing matrix: codebleu's `corpus_dataflow_match` on every
(reference function, candidate function) pair, which parses both functions again with
tree-sitter each time. An earlier harness reported 136 s for one such repository. Running
all pairs would take minutes, so the baseline times the pairs of --sample reference
functions with every candidate function and scales by the number of pairs (printed as an
estimate).

Cases: the reference against itself; the reference with every function body replaced by
`pass` (an "architecture only" repository) against the reference. Each is timed in a
fresh call (nothing cached between calls); the first call of the process also pays the
imports (codebleu, tree-sitter, scipy) and is shown on its own line.

    python benchmarks/sketchbleu_speed.py [--task flask] [--dataset DIR] [--repeats 3] [--sample 5]

Target: every case under 5 s in each mode (worst of the repeats).
"""
from __future__ import annotations

import argparse
import ast
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 5.0


def with_pass_bodies(repository: dict[str, str]) -> dict[str, str]:
    stubbed = {}
    for path, text in repository.items():
        if path.endswith(".py"):
            tree = ast.parse(text)
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    node.body = [ast.Pass()]
            text = ast.unparse(tree) + "\n"
        stubbed[path] = text
    return stubbed


def load_reference(task_name: str, dataset: Path | None) -> tuple[str, dict[str, str]]:
    from projectgen.datasets.loaders import load_task

    from _fixtures import shared_datasets

    folder = (dataset or shared_datasets() / "CodeProjectEval") / task_name
    if folder.is_dir():
        return f"CodeProjectEval/{task_name} ({folder})", load_task(folder).reference_repository()
    from projectgen.datasets.examples import example_task_path

    print(f"note: {folder} not found; using the bundled example task kvstore instead")
    return "bundled example kvstore", load_task(example_task_path("kvstore")).reference_repository()


def baseline_seconds(candidate: dict[str, str], reference: dict[str, str], sample: int) -> tuple[float, int, int]:
    """Estimated seconds of CodeS's pairwise dataflow matrix: measured on `sample` rows, scaled to all."""
    from codebleu.dataflow_match import corpus_dataflow_match
    from codebleu.utils import get_tree_sitter_language

    from projectgen.evaluation.sketch_dataflow import function_sources
    from projectgen.evaluation.sketchbleu import python_files

    language = get_tree_sitter_language("python")
    refs = [f for text in python_files(reference).values() for f in function_sources(text)]
    hyps = [f for text in python_files(candidate).values() for f in function_sources(text)]
    rows = refs[:: max(1, len(refs) // sample)][:sample]
    logging.disable(logging.WARNING)  # codebleu warns on every pair whose reference has no dataflow
    began = time.perf_counter()
    for ref in rows:
        for hyp in hyps:
            corpus_dataflow_match([[ref]], [hyp], "python", language)
    measured = time.perf_counter() - began
    logging.disable(logging.NOTSET)
    return measured * len(refs) / len(rows), len(refs), len(hyps)


def main() -> int:
    from _fixtures import add_tiny_option, verdict

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="flask", help="a CodeProjectEval task (default: the largest, flask)")
    parser.add_argument("--dataset", type=Path, default=None, help="a CodeProjectEval folder")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sample", type=int, default=5, help="reference functions the baseline is timed on")
    add_tiny_option(parser)
    args = parser.parse_args()
    if args.tiny:
        args.task, args.repeats, args.sample = "tinydb", 1, 1

    from _fixtures import ratio_line, table

    from projectgen.evaluation.sketchbleu import SKETCHBLEU_MODES, sketch_bleu

    source, reference = load_reference(args.task, args.dataset)
    cases = {"reference vs itself": reference, "pass bodies vs reference": with_pass_bodies(reference)}
    python = {p: t for p, t in reference.items() if p.endswith(".py")}
    print(f"repository: {source}: {len(python)} Python files, "
          f"{sum(t.count(chr(10)) for t in python.values())} lines")
    began = time.perf_counter()
    sketch_bleu(reference, reference)
    first_call = time.perf_counter() - began
    rows, worst = [], 0.0
    for name, candidate in cases.items():
        baseline, n_ref, n_hyp = baseline_seconds(candidate, reference, args.sample)
        for mode in SKETCHBLEU_MODES:
            times = []
            for _ in range(args.repeats):
                began = time.perf_counter()
                score = sketch_bleu(candidate, reference, mode=mode)
                times.append(time.perf_counter() - began)
            worst = max(worst, max(times))
            rows.append([name, mode, f"{score.total:.2f}", f"{n_ref} x {n_hyp}", f"{min(times):.2f}",
                         f"{max(times):.2f}", f"~{baseline:.0f}"])
    print(table(["case", "mode", "SketchBLEU", "function pairs", "ours min s", "ours max s",
                 "CodeS pairwise dataflow s (estimate)"], rows))
    print(f"first call of the process (imports included), reference vs itself: {first_call:.2f} s")
    print(ratio_line(worst / TARGET_S, f"worst case / {TARGET_S:.0f} s < 1"))
    return verdict(worst < TARGET_S, args.tiny)


if __name__ == "__main__":
    sys.exit(main())
