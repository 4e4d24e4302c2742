"""SketchBLEU's dataflow component: functions paired by the Hungarian method.

CodeS (`calc_repobleu`) takes every function of each repository, scores every
(reference, candidate) pair with CodeBLEU's dataflow match, pairs functions one-to-one
with `scipy.optimize.linear_sum_assignment` (maximising the summed match), divides the
sum by the smaller function count, and multiplies by a two-sided brevity penalty on the
function counts. It parses both functions of every pair again with tree-sitter, which
is what made one large repository take minutes. Here each function's dataflow graph is
extracted once (codebleu's `get_data_flow` and `normalize_dataflow`), and every pair's
match count comes from one sparse matrix product, so the pairing costs one dense
n x m matrix and one assignment.

Departures from CodeS, each a named setting recorded with the score:
- ``empty_dataflow_pairs="match-when-both-empty"``: a reference function with no
  dataflow (``def name(self): return "x"``) matches a candidate function that has none
  either (1.0) and nothing else (0.0). CodeS scores every such pair 0, so a repository
  scored against itself stays below 100. ``"zero"`` is CodeS's rule.
- Repositories without functions: both empty -> 1.0 (nothing differs), one empty -> 0.0
  (CodeS divides by zero).
- Each variable's sources are sorted by name before normalising, so the score does not
  depend on the hash seed (codebleu's graphs order them through sets of names).
- Functions are found per file (a file that does not parse costs only its own
  functions; CodeS parses all files stacked into one source and, when any file fails,
  falls back to top-level ``def`` lines), async functions included.
"""
from __future__ import annotations

import ast
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from projectgen.repository.syntax import parse_python

EmptyDataflowPairs = Literal["match-when-both-empty", "zero"]

# One normalised dataflow edge: (variable, relation, its sources), names renamed var_0.. in order.
Edge = tuple[str, str, tuple[str, ...]]
# One entry of codebleu's dataflow graph: (name, token position, relation, source names, source positions).
GraphEntry = tuple[str, int, str, list[str], list[int]]


@dataclass(frozen=True)
class FunctionFlow:
    """One function's normalised dataflow edges (a multiset, as CodeBLEU counts them)."""

    source: str
    edges: tuple[Edge, ...]


def function_sources(text: str) -> list[str]:
    """The source of every function and method in one file, nested ones included."""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError):
        return []
    found = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    found.sort(key=lambda node: (node.lineno, node.col_offset))
    return source_segments(text, found)


def source_segments(text: str, nodes: Sequence[ast.stmt]) -> list[str]:
    """`ast.get_source_segment` of each node, without its cost.

    `ast.get_source_segment` splits the whole text on every call, which is quadratic in a
    large file; the lines are split once here and sliced the same way (offsets in UTF-8 bytes).
    """
    lines = [line.encode("utf-8") for line in re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", text)]
    sources = []
    for node in nodes:
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        if first == last:
            chunk = lines[first][node.col_offset:node.end_col_offset]
        else:
            chunk = lines[first][node.col_offset:] + b"".join(lines[first + 1:last]) + lines[last][:node.end_col_offset]
        sources.append(chunk.decode("utf-8"))
    return sources


def dataflow_edges(source: str, parser: Any, as_codes: bool = False) -> tuple[Edge, ...]:
    """CodeBLEU's normalised dataflow of one function (comments and docstrings removed first).

    codebleu merges a variable's sources through sets of names, so their order (and with it the
    var_N numbering) follows the interpreter's hash seed; here they are sorted, and an edge's
    sources compare as a sorted tuple, so the graph does not move with the seed. ``as_codes``
    compares sources in order, as CodeS does, with merged sources put back in the order they
    occur in the function (`in_source_order`): one fixed order where CodeS's follows the seed.
    """
    from codebleu.dataflow_match import get_data_flow, normalize_dataflow
    from codebleu.parser import DFG_python, remove_comments_and_docstrings

    try:
        source = remove_comments_and_docstrings(source, "python")
    except Exception:  # noqa: BLE001 - CodeBLEU keeps the text as it is when tokenize fails
        pass
    graph = get_data_flow(source, [parser, DFG_python])
    if as_codes:
        return tuple((var, relation, tuple(parents))
                     for var, relation, parents in normalize_dataflow(in_source_order(graph)))
    flow = normalize_dataflow([(name, index, relation, sorted(parents), parent_indices)
                               for name, index, relation, parents, parent_indices in graph])
    return tuple((var, relation, tuple(sorted(parents))) for var, relation, parents in flow)


def in_source_order(graph: Sequence[GraphEntry]) -> list[GraphEntry]:
    """codebleu's dataflow graph with every merged source list in the order its names occur in the function.

    codebleu merges a variable's sources with ``list(set(names))`` (loops, repeated entries), which
    orders them by the hash seed, and CodeS's value with them. Each name of a merged list is put
    where its first recorded source token stands (the graph maps token positions to names), which
    is the list as codebleu built it before the set: on every function of the DevBench and
    CodeProjectEval references the same graph as codebleu with an insertion-ordered set.
    """
    name_at = {index: name for name, index, _, _, _ in graph}
    return [(name, index, relation, _sources_in_order(parents, positions, name_at), positions)
            for name, index, relation, parents, positions in graph]


def _sources_in_order(names: list[str], positions: list[int], name_at: dict[int, str]) -> list[str]:
    if len(set(names)) < len(names):
        return names  # a set never repeats a name: this list was not merged, its order is the code's
    first: dict[str, int] = {}
    for position in sorted(positions):
        if position in name_at:
            first.setdefault(name_at[position], position)
    # a name without a recorded token goes last, by name: still one order under every seed
    return sorted(names, key=lambda name: (first.get(name, math.inf), name))


def match_matrix(references: Sequence[FunctionFlow], candidates: Sequence[FunctionFlow],
                 empty_pairs: EmptyDataflowPairs) -> Any:
    """The n x m matrix of CodeBLEU dataflow matches: matched reference edges / reference edges.

    A multiset intersection is a dot product once every edge is split into its occurrences
    ((edge, 1), (edge, 2), ...), so the whole matrix is one sparse product.
    """
    import numpy as np
    from scipy.sparse import csr_matrix

    columns: dict[tuple[Edge, int], int] = {}

    def occurrence_matrix(flows: Sequence[FunctionFlow]) -> Any:
        rows: list[int] = []
        cols: list[int] = []
        for row, flow in enumerate(flows):
            for edge, count in Counter(flow.edges).items():
                for k in range(count):
                    rows.append(row)
                    cols.append(columns.setdefault((edge, k), len(columns)))
        return rows, cols

    ref_rows, ref_cols = occurrence_matrix(references)
    cand_rows, cand_cols = occurrence_matrix(candidates)
    width = max(len(columns), 1)
    ref = csr_matrix((np.ones(len(ref_rows)), (ref_rows, ref_cols)), shape=(len(references), width))
    cand = csr_matrix((np.ones(len(cand_rows)), (cand_rows, cand_cols)), shape=(len(candidates), width))
    matched = (ref @ cand.T).toarray()
    ref_sizes = np.array([len(flow.edges) for flow in references], dtype=float)
    cand_sizes = np.array([len(flow.edges) for flow in candidates], dtype=float)
    scores = matched / np.where(ref_sizes > 0, ref_sizes, 1.0)[:, None]
    if empty_pairs == "match-when-both-empty":
        both_empty = (ref_sizes == 0)[:, None] & (cand_sizes == 0)[None, :]
        scores[both_empty] = 1.0
    return scores


def soft_brevity_penalty(longer: int, shorter: int) -> float:
    """CodeS's brevity penalty: 1 while `shorter` is over half of `longer`, else 1 / (1 + ln(longer / 2 shorter))
    (0 when `shorter` is 0); its BLEU uses it on token counts, its dataflow on function counts."""
    if 2 * shorter > longer:
        return 1.0
    if shorter == 0:
        return 0.0
    return 1.0 / (1.0 + math.log(longer / (2 * shorter)))


def count_penalty(reference_count: int, candidate_count: int) -> float:
    """CodeS's brevity penalty on function counts, applied both ways (too few or too many)."""
    return min(soft_brevity_penalty(reference_count, candidate_count),
               soft_brevity_penalty(candidate_count, reference_count))


def dataflow_match(references: Sequence[FunctionFlow], candidates: Sequence[FunctionFlow],
                   empty_pairs: EmptyDataflowPairs = "match-when-both-empty") -> float:
    """Hungarian-paired dataflow match of two repositories' functions, in [0, 1]."""
    if not references and not candidates:
        return 1.0
    if not references or not candidates:
        return 0.0
    from scipy.optimize import linear_sum_assignment

    scores = match_matrix(references, candidates, empty_pairs)
    rows, cols = linear_sum_assignment(scores, maximize=True)
    paired = float(scores[rows, cols].sum())
    return paired / min(len(references), len(candidates)) * count_penalty(len(references), len(candidates))


def repository_flows(files: Iterable[str], parser: Any, cache: dict[str, FunctionFlow]) -> list[FunctionFlow]:
    """Every function of the given file texts with its dataflow, reusing flows already extracted."""
    flows = []
    for text in files:
        for source in function_sources(text):
            if source not in cache:
                cache[source] = FunctionFlow(source, dataflow_edges(source, parser))
            flows.append(cache[source])
    return flows
