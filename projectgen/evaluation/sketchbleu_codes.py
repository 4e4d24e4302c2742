"""SketchBLEU as CodeS computes it: the ``codes`` mode, its arithmetic reproduced, quirks included.

ProjectGen's Tables 4 and 6 were computed by CodeS's `calc_repobleu` (NL2Code/CodeS,
``validation/evaluation_scripts/codebleu``; ProjectGen's ``datasets/evaluation`` holds the same
code, with a guard for an empty pairing matrix) called by ProjectGen's ``calc_sketchbleu.py``
with its ``tokenize_code``. To compare with those numbers this module does what that code does,
written anew (none of its code is copied here), and checked against it on known pairs
(tests/evaluation/test_sketchbleu_codes.py). Which files the two mappings hold is the caller's:
ProjectGen's script gives the whole task folder and the output with the task's tests copied in
(`sketchbleu_folders`, tests/evaluation/test_sketchbleu_folders.py). What it does, quirk by quirk:

- files: every ``.py`` file of the mapping in ``os.walk`` order (a directory's files, then
  its sub-directories, top-down), each stripped and ended by a newline, stacked into one text.
  ``os.walk`` lists a directory in the file system's order; here names are sorted, the one
  order a path -> text mapping can give.
- interpreter: what ProjectGen's script computes depends on the Python that runs it; its README
  sets up Python 3.9, and this mode reads code as 3.9 does (on Python 3.10 and 3.11 too):
- tokens: ProjectGen's ``tokenize_code`` on the stacked text: every token's string, ENCODING
  ("utf-8"), NL, COMMENT, DEDENT and ENDMARKER ("") included, but not ERRORTOKEN (a stray ``$``
  or ``?``, an unclosed quote): its hard-coded type numbers 57-59 were meant for NEWLINE, INDENT
  and DEDENT, and on Python 3.8 and 3.9 they are TYPE_IGNORE, TYPE_COMMENT (never emitted) and
  ERRORTOKEN, which it drops (on 3.10 and 3.11 ERRORTOKEN is 60 and CodeS would keep it); a
  tokenize error keeps the tokens read so far and drops the rest of the repository.
- n-gram match: CodeS's ``bleu.corpus_bleu`` defaults: unigram precision only (weights
  (1, 0, 0, 0)), clipped by the reference, and a soft brevity penalty 1 / (1 + ln(r / 2c))
  that applies only when the candidate is under half the reference's length.
- weighted n-gram match: the same unigram precision with each candidate token weighted 1 for
  a Python keyword and 0.2 otherwise (weights from the candidate, not the reference).
- structure match: a tree whose root holds every file 2^d times (d its directory depth:
  CodeS walks each directory's subtree again for every enclosing directory) and every
  directory as an empty node; each file holds its top-level statements except the first,
  after comments are removed with C rules (CodeS passes "utf8" as the language, so a floor
  division ``//`` outside a string starts a comment and blank lines go). Every node is written at depth 3 and kept
  when it nests; the score is the share of the reference's expressions (with repeats) that
  occur at all among the candidate's.
- dataflow match: functions (``def``, not ``async def``, nested ones included) from
  `ast.parse` of the stacked text with Python 3.9's grammar (``feature_version=(3, 9)``); when it
  fails anywhere (one file with a syntax error or a ``match`` statement, a ``from __future__``
  import after the first file), top-level ``def`` lines with the lines
  after them up to the first one not indented (a blank line ends a function; the line that
  ends one is never a ``def`` itself). Each pair scores CodeBLEU's dataflow match (0 when
  the reference function has no dataflow), pairs are chosen by the Hungarian method, the sum
  is divided by the smaller count and multiplied by the two-sided count penalty. Either side
  without functions gives 0 / 0: NaN, which makes the total NaN (an undefined score).
- total: 100 x (ngram + weighted + structure + (dataflow or 1)) / 4, so a dataflow of exactly
  0 counts as 1.

What cannot be the same: on Python 3.12 and later `tokenize` splits f-strings into parts, so the
n-gram parts are not ProjectGen's there (CodeS's own tokens change with the interpreter too); the
grammar is the pinned tree-sitter-python (CodeS built 0.20.4),
and codebleu orders a variable's merged dataflow sources through sets of names, so CodeS's
own value moves with PYTHONHASHSEED (with that order kept, 61 of the 90 ordered pairs of
DevBench references took 2 to 19 values under seeds 0-29). A figure may not depend on the process, so this mode
puts merged sources back in the order their names occur in the function
(`sketch_dataflow.in_source_order`): the lists as codebleu built them before the set, the
one order that needs no hash. It gives CodeS's value on every pair whose value did not move
(29 of 29) and on every known-answer pair of the tests, and CodeS's most frequent value on
55 of the 90 (where CodeS has no single value, none can be "CodeS's").
"""
from __future__ import annotations

import ast
import math
import re
import tokenize
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from projectgen.evaluation.sketch_dataflow import (
    FunctionFlow,
    count_penalty,
    dataflow_edges,
    match_matrix,
    soft_brevity_penalty,
    source_segments,
)
from projectgen.evaluation.sketch_structure import KEPT_LEAVES, subtree_forms
from projectgen.repository.syntax import retry_spurious

# Recorded with every codes-mode score: what this mode reproduces, and where it cannot.
CODES_CHOICES: dict[str, str] = {
    "source": "CodeS calc_repobleu (NL2Code/CodeS, as ProjectGen's calc_sketchbleu.py calls it)",
    "files": ".py files in os.walk order (names sorted per directory), stripped, stacked",
    "tokenizer": "ProjectGen tokenize_code on the stacked text as on Python 3.9, its README's interpreter (every "
                 "token string but ERRORTOKEN; stops at an error)",
    "ngram_match": "unigram precision, soft brevity penalty 1/(1+ln(r/2c))",
    "weighted_ngram_match": "unigram precision weighted by the candidate's tokens (keyword 1, other 0.2)",
    "structure_match": "Root/Directory/File tree, files repeated 2^depth, first statement dropped, C comments, "
                       "membership",
    "dataflow_match": "ast.parse of the stacked text (Python 3.9 grammar) or top-level def lines; Hungarian "
                      "pairs / min count x count penalty; NaN without functions; 0 counts as 1",
    "dataflow_source_order": "merged dataflow sources in the order their names occur in the function "
                             "(CodeS: codebleu's set order, which moves with PYTHONHASHSEED)",
    "departures": "pinned tree-sitter-python grammar (CodeS: 0.20.4); merged dataflow sources in source order, "
                  "not hash order; files in name order, not the disk's; f-strings split on Python 3.12+",
}

# The interpreter ProjectGen's README sets up, whose tokenize and ast its script's figures come from.
PROJECTGEN_PYTHON = (3, 9)

# CodeS keeps an expression only when it nests: "(a (b))", not "(a)".
_NESTED = re.compile(r"\(.*\(.*\).*\)")


@dataclass(frozen=True)
class CodesComponents:
    """The four parts in [0, 1] (dataflow NaN when undefined) and the function counts."""

    ngram_match: float
    weighted_ngram_match: float
    structure_match: float
    dataflow_match: float
    reference_functions: int
    candidate_functions: int


@dataclass(frozen=True)
class _FileForms:
    """One file as CodeS's tree sees it: its nodes' expressions and the File node's depth-2/3 forms."""

    counts: Counter[str]
    form2: str
    form3: str


def walk_order(paths: Iterable[str]) -> list[str]:
    """The files in ``os.walk`` order: a directory's files, then each sub-directory's, names sorted."""
    files: dict[str, list[str]] = {}
    subdirs: dict[str, set[str]] = {"": set()}
    for path in paths:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            subdirs.setdefault("/".join(parts[:depth]), set())
            subdirs["/".join(parts[:depth - 1])].add("/".join(parts[:depth]))
        files.setdefault("/".join(parts[:-1]), []).append(path)
    ordered: list[str] = []
    stack = [""]
    while stack:
        directory = stack.pop()
        ordered.extend(sorted(files.get(directory, [])))
        stack.extend(sorted(subdirs[directory], reverse=True))
    return ordered


def stacked_source(repository: Mapping[str, str]) -> str:
    """The ``.py`` files in walk order, each stripped and ended by a newline, as one text."""
    return "".join(repository[path].strip() + "\n" for path in walk_order(repository) if path.endswith(".py"))


def stacked_tokens(source: str) -> list[str]:
    """ProjectGen's ``tokenize_code`` as it runs on Python 3.9: every token's string but ERRORTOKEN's (its
    type 59 there), up to the first tokenize error."""
    tokens: list[str] = []
    try:
        for token in tokenize.tokenize(BytesIO(source.encode("utf-8")).readline):
            if token.type != tokenize.ERRORTOKEN:
                tokens.append(token.string)
    except Exception:  # noqa: BLE001 - tokenize_code's bare except: keep what was read
        pass
    return tokens


def unigram_precision(reference: list[str], candidate: list[str], keywords: frozenset[str] | None = None) -> float:
    """CodeS's BLEU-1: clipped unigram precision (weighted by the candidate's tokens when `keywords` is
    given) times the soft brevity penalty; 0 when nothing matches."""
    counts = Counter(candidate)
    reference_counts = Counter(reference)
    numerator: float = 0
    denominator: float = 0
    for token, count in counts.items():
        weight = 1 if keywords is None or token in keywords else 0.2
        numerator += min(count, reference_counts[token]) * weight
        denominator += count * weight
    if numerator == 0:
        return 0.0
    penalty = soft_brevity_penalty(len(reference), len(candidate))
    return penalty * math.exp(math.fsum([math.log(numerator / max(1, denominator))]))


def _label_form(label: str, children: int, parts: list[str]) -> str:
    """A Root/Directory/File node's form: "(label)" without children, else its children's (maybe none)."""
    return f"({label})" if children == 0 else f"({label} {' '.join(parts)})"


def _file_forms(text: str, parser: Any) -> _FileForms:
    from codebleu.parser import remove_comments_and_docstrings

    text = remove_comments_and_docstrings(text, "utf8")  # CodeS's language argument: C comment rules
    statements = parser.parse(text.encode("utf-8")).root_node.children[1:]
    counts, depth2 = subtree_forms(statements)
    kept = [node for node in statements if node.child_count or node.type in KEPT_LEAVES]
    return _FileForms(counts=counts,
                      form2=_label_form("File", len(statements), [f"({node.type})" for node in kept]),
                      form3=_label_form("File", len(statements),
                                        [depth2.get(node.id, f"({node.type})") for node in kept]))


def tree_expressions(repository: Mapping[str, str], parser: Any, cache: dict[str, _FileForms]) -> Counter[str]:
    """The expressions of CodeS's repository tree, with their repeats (see the module docstring)."""
    subdirs: dict[str, list[str]] = {}
    files: dict[str, list[str]] = {}
    for path in walk_order(repository):
        parts = path.split("/")
        for depth in range(1, len(parts)):
            siblings = subdirs.setdefault("/".join(parts[:depth - 1]), [])
            if "/".join(parts[:depth]) not in siblings:
                siblings.append("/".join(parts[:depth]))
        if path.endswith(".py"):
            files.setdefault("/".join(parts[:-1]), []).append(path)
    counts: Counter[str] = Counter()
    root_children: list[str] = []

    def walk(directory: str) -> Iterable[str]:
        yield directory
        for sub in subdirs.get(directory, []):
            yield from walk(sub)

    def add_files_and_directories(top: str) -> None:
        # CodeS's loop over os.walk(top): add each file, then each sub-directory's node, whose
        # own walk (run first) adds the files below it once more.
        for directory in walk(top):
            for path in files.get(directory, []):
                text = repository[path]
                if text not in cache:
                    cache[text] = _file_forms(text, parser)
                forms = cache[text]
                counts.update(forms.counts)
                if _NESTED.search(forms.form3):
                    counts[forms.form3] += 1
                root_children.append(forms.form2)
            for sub in subdirs.get(directory, []):
                add_files_and_directories(sub)
                root_children.append("(Directory)")

    add_files_and_directories("")
    root = _label_form("Root", len(root_children), root_children)
    if _NESTED.search(root):
        counts[root] += 1
    return counts


def membership_match(reference: Counter[str], candidate: Counter[str]) -> float:
    """Share of the reference's expressions (repeats counted) that the candidate has at all."""
    total = sum(reference.values())
    return sum(count for expression, count in reference.items() if expression in candidate) / total


def extract_functions(source: str) -> list[str]:
    """CodeS's `extract_functions` of the stacked text, parsed as Python 3.9 parses it (see the module docstring)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = retry_spurious(lambda: ast.parse(source, feature_version=PROJECTGEN_PYTHON))
    except Exception:  # noqa: BLE001 - CodeS's bare except: any parse failure takes the fallback
        return def_line_functions(source)
    return source_segments(source, [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)])


def def_line_functions(source: str) -> list[str]:
    """CodeS's fallback: each top-level ``def`` line with the indented lines after it."""
    lines = source.split("\n")
    functions = []
    start = 0
    while start < len(lines):
        if lines[start].startswith("def "):
            end = start + 1
            # CodeS reads past the end here (IndexError); the stacked text always ends with "".
            while end < len(lines) and lines[end].startswith((" ", "\t")):
                end += 1
            functions.append("\n".join(lines[start:end]))
            start = end
        start += 1
    return functions


def paired_dataflow(references: list[FunctionFlow], candidates: list[FunctionFlow]) -> float:
    """Hungarian-paired dataflow match / the smaller count x the count penalty (NaN when a side is empty)."""
    if not references or not candidates:
        return math.nan
    from scipy.optimize import linear_sum_assignment

    scores = match_matrix(references, candidates, "zero")
    paired = 0.0
    if scores.any():
        rows, cols = linear_sum_assignment(scores, maximize=True)
        paired = float(scores[rows, cols].sum())
    return paired / min(len(references), len(candidates)) * count_penalty(len(references), len(candidates))


def _flow(source: str, parser: Any, cache: dict[str, FunctionFlow]) -> FunctionFlow:
    if source not in cache:
        cache[source] = FunctionFlow(source, dataflow_edges(source, parser, as_codes=True))
    return cache[source]


def codes_components(candidate: Mapping[str, str], reference: Mapping[str, str], parser: Any,
                     keywords: frozenset[str]) -> CodesComponents:
    """CodeS's four parts of a candidate repository against the reference (both path -> text)."""
    ref_source, cand_source = stacked_source(reference), stacked_source(candidate)
    same = ref_source == cand_source  # a repository scored against itself: each part computed once
    ref_tokens = stacked_tokens(ref_source)
    cand_tokens = ref_tokens if same else stacked_tokens(cand_source)
    cache: dict[str, _FileForms] = {}
    structure = membership_match(tree_expressions(reference, parser, cache),
                                 tree_expressions(candidate, parser, cache))
    flows: dict[str, FunctionFlow] = {}
    ref_flows = [_flow(source, parser, flows) for source in extract_functions(ref_source)]
    cand_flows = ref_flows if same else [_flow(source, parser, flows) for source in extract_functions(cand_source)]
    return CodesComponents(ngram_match=unigram_precision(ref_tokens, cand_tokens),
                           weighted_ngram_match=unigram_precision(ref_tokens, cand_tokens, keywords),
                           structure_match=structure,
                           dataflow_match=paired_dataflow(ref_flows, cand_flows),
                           reference_functions=len(ref_flows), candidate_functions=len(cand_flows))
