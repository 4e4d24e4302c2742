"""Repair cost: output tokens of a SEARCH/REPLACE repair versus a whole-file repair of the same bug.

Cases are real files: reference Python files of the CodeProjectEval tasks (the bundled
example tasks when ../shared/datasets is absent). In each case one function's body is
broken the way the demo and end-to-end tests break it (`projectgen.oracles.reference_replay.
Breakage`: the body after the docstring becomes `raise NotImplementedError`), and the fix
is the reference file again. The reply each edit format needs for that fix is built with
the project's own writers (`edits.make_whole_file_reply`, `edits.make_search_replace_reply`,
which checks that its blocks apply and give exactly the fixed file), and its tokens are
counted with a real tokenizer (OpenAI's cl100k_base BPE via tiktoken, offline).

Choice of cases (seeded, so every run picks the same): per task, up to --per-task files
among those that define at least one function, one function each, both uniformly at random.

    python benchmarks/repair_cost.py [--per-task 3] [--seed 0] [--dataset DIR]

Target: SEARCH/REPLACE tokens / whole-file tokens <= 0.5 (totals over all cases).
"""
from __future__ import annotations

import argparse
import ast
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.5


def functions_of(code: str) -> list[str]:
    """Top-level functions and methods of top-level classes, as `Breakage` names them."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef):
            names += [f"{node.name}.{m.name}" for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return names


def load_tasks(dataset: Path | None):
    from projectgen.datasets.loaders import load_task

    from _fixtures import shared_datasets

    folder = dataset or shared_datasets() / "CodeProjectEval"
    if folder.is_dir():
        tasks = [load_task(d) for d in sorted(folder.iterdir()) if d.is_dir()]
        return f"CodeProjectEval reference code ({folder})", [t for t in tasks if t.has_reference]
    from projectgen.datasets.examples import example_task_names, example_task_path

    print(f"note: {folder} not found; using the bundled example tasks instead")
    return "bundled example tasks", [load_task(example_task_path(n)) for n in example_task_names()]


def main() -> int:
    from _fixtures import add_tiny_option, verdict

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=3, help="files (one broken function each) per task")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dataset", type=Path, default=None, help="a CodeProjectEval folder")
    add_tiny_option(parser)
    args = parser.parse_args()
    if args.tiny:
        args.per_task = 1

    from _fixtures import TOKENIZER_NAME, load_tokenizer, ratio_line, table

    from projectgen.repository.edits import make_search_replace_reply, make_whole_file_reply
    from projectgen.oracles.reference_replay import Breakage, break_function, reference_python_files

    count = load_tokenizer()
    source, tasks = load_tasks(args.dataset)
    rng = random.Random(args.seed)
    rows, case_ratios, skipped = [], [], []
    total_whole = total_sr = cases = 0
    for task in tasks:
        files = reference_python_files(task)
        candidates = sorted(p for p, code in files.items() if functions_of(code))
        task_whole = task_sr = task_cases = 0
        for path in rng.sample(candidates, min(args.per_task, len(candidates))):
            function = rng.choice(functions_of(files[path]))
            fixed = files[path]
            broken = break_function(fixed, Breakage(path, function))
            if broken == fixed:
                skipped.append(f"{task.id}:{path}:{function} (already raises)")
                continue
            try:
                sr_reply = make_search_replace_reply({path: broken}, {path: fixed})
            except ValueError as exc:
                skipped.append(f"{task.id}:{path}:{function} ({exc})")
                continue
            whole, sr = count(make_whole_file_reply([path], {path: fixed})), count(sr_reply)
            task_whole, task_sr, task_cases = task_whole + whole, task_sr + sr, task_cases + 1
            case_ratios.append(sr / whole)
        if task_cases:
            rows.append([task.id, task_cases, task_whole, task_sr, f"{task_sr / task_whole:.2f}"])
            total_whole, total_sr, cases = total_whole + task_whole, total_sr + task_sr, cases + task_cases

    print(f"cases: {source}; one function broken per file (Breakage), seed {args.seed}")
    print(f"tokenizer: {TOKENIZER_NAME}")
    print(table(["task", "cases", "whole-file tokens", "SEARCH/REPLACE tokens", "SR/whole"],
                [*rows, ["total", cases, total_whole, total_sr, f"{total_sr / max(1, total_whole):.2f}"]]))
    if case_ratios:
        print(f"per case SR/whole: median {statistics.median(case_ratios):.2f}, "
              f"min {min(case_ratios):.2f}, max {max(case_ratios):.2f}")
    for note in skipped:
        print(f"skipped: {note}")
    ratio = total_sr / max(1, total_whole)
    print(ratio_line(ratio, f"<= {TARGET}"))
    return verdict(ratio <= TARGET, args.tiny) if cases else 1


if __name__ == "__main__":
    sys.exit(main())
