"""SketchBLEU: how close a generated repository is to the reference, ProjectGen's Tables 4 and 6.

SketchBLEU comes from CodeS (Zan et al., 2024, arXiv:2403.16443; `calc_repobleu` in the
CodeS authors' fork of codebleu), and ProjectGen scores with that function, tokenizing
with Python's `tokenize`. It is CodeBLEU lifted to a repository, a quarter each of:

1. n-gram match: BLEU-4 over the tokens of every Python file stacked into one text;
2. weighted n-gram match: the same with Python keywords weighted 1 and other tokens 0.2;
3. structure match: depth-3 AST subtrees of one tree holding the repository's
   directories, files and code (`sketch_structure`);
4. dataflow match: functions paired one-to-one by the Hungarian method on their CodeBLEU
   dataflow match, with a brevity penalty on the function counts (`sketch_dataflow`).

Parts 1 and 2 are the `codebleu` package's own (`bleu.corpus_bleu`,
`weighted_ngram_match.corpus_bleu`, its Python keyword list); the dataflow graphs are
its `get_data_flow`; the pairing is scipy's `linear_sum_assignment`.

Two modes, both recorded with every score (`SKETCHBLEU_MODES`):

- ``repaired`` (this module, the default): the metric as CodeS describes it, with its defects
  fixed, so the reference scores 100 against itself and damage lowers the score;
- ``codes`` (`sketchbleu_codes`): CodeS's own arithmetic, quirks included (an identical
  repository scores below 100, a syntax error in every file leaves its n-gram and structure
  parts almost whole, a repository of stubs whose functions match nothing keeps 25 from the
  dataflow part). Given the file set ProjectGen's script scored, the whole task folder against
  the output with the task's tests copied in (`sketchbleu_folders.script_folders`; experiments
  do this for DevBench and CodeProjectEval), it gives CodeS's value on those folders, the
  computation behind ProjectGen's printed figures (their outputs are not published, so the
  printed figures themselves cannot be recomputed); on the source files alone it gives other
  numbers (deprecated's stubs: 41.29, not 91.39).

docs/evaluation.md sets the two side by side. Choices of the repaired mode where CodeS is
unclear or wrong, all recorded in `SketchBLEUSettings.to_dict()`:
- files: the mapping's ``.py`` files in path order, each stripped and ended by a newline
  (CodeS stacks them in `os.walk` order, which depends on the file system);
- tokens: Python's `tokenize` per file, NEWLINE as "\\n", INDENT as four spaces,
  comments, blank lines, DEDENT and markers dropped, as ProjectGen's `tokenize_code`
  means to (its hard-coded token numbers pick other token types on other Pythons); a
  file `tokenize` rejects is split on whitespace;
- weighted n-grams: codebleu 0.7.0's (recall against the reference's keyword weights,
  the standard brevity penalty); the CodeS fork weighs the candidate's tokens instead and
  softens the brevity penalty;
- the known defect: CodeS adds ``theta * (dataflow or 1)``, so a dataflow score of 0 (no
  function paired, or none at all) counts as a perfect 1. Setting
  ``zero_dataflow_counts_as_one=False`` (the default) counts it as 0;
- `empty_dataflow_pairs` and `structure_counting`: see their modules.
The three switches turn those parts back to CodeS's behaviour one at a time (an ablation; the
``codes`` mode is the whole of CodeS's arithmetic).

One limit stays, codebleu's own: the weighted unigram recall divides by at least 1, so a
reference with fewer than five non-keyword tokens (a one-line file) scores below 100
against itself.

Tasks are averaged as Tables 4 and 6 do: the unweighted mean over the tasks that have a
value (`average_sketchbleu`).

The metric needs the ``sketchbleu`` extra (codebleu, tree-sitter, tree-sitter-python,
scipy), imported inside the functions; without it `sketch_bleu` raises a one-line
`ProjectGenError` saying what to install.
"""
from __future__ import annotations

import io
import math
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from projectgen.errors import ProjectGenError
from projectgen.evaluation.sketch_dataflow import EmptyDataflowPairs, FunctionFlow, dataflow_match, repository_flows
from projectgen.evaluation.sketch_structure import StructureCounting, repository_expressions, structure_match
from projectgen.evaluation.sketchbleu_codes import CODES_CHOICES, codes_components

SketchBLEUMode = Literal["repaired", "codes"]
# Every table and result shows both, in this order.
SKETCHBLEU_MODES: tuple[SketchBLEUMode, ...] = ("repaired", "codes")

MISSING_EXTRA = ("SketchBLEU needs the 'sketchbleu' extra (codebleu, tree-sitter, tree-sitter-python, scipy): "
                 "pip install 'projectgen[sketchbleu]'")

# What is fixed about this implementation, recorded beside the switches.
FIXED_CHOICES: dict[str, str] = {
    "files": ".py files of the mapping in path order, each stripped and ended by a newline",
    "tokenizer": "python tokenize per file; NEWLINE '\\n', INDENT 4 spaces; comments, NL, DEDENT dropped",
    "ngram_match": "codebleu==0.7.0 bleu.corpus_bleu (BLEU-4)",
    "weighted_ngram_match": "codebleu==0.7.0 weighted_ngram_match.corpus_bleu (keywords 1.0, other 0.2)",
    "structure_match": "depth-3 subtrees over Root/Directory/File/tree-sitter nodes",
    "dataflow_match": ("codebleu get_data_flow per function, sources sorted by name; "
                       "scipy linear_sum_assignment; two-sided count penalty"),
}

_SKIPPED_TOKENS = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER})


@dataclass(frozen=True)
class SketchBLEUSettings:
    """The switches where the repaired SketchBLEU departs from CodeS's code (defaults: the fixes)."""

    weights: tuple[float, float, float, float] = (0.25, 0.25, 0.25, 0.25)
    zero_dataflow_counts_as_one: bool = False
    empty_dataflow_pairs: EmptyDataflowPairs = "match-when-both-empty"
    structure_counting: StructureCounting = "clipped"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "weights": list(self.weights), "fixed": dict(FIXED_CHOICES)}


@dataclass(frozen=True)
class SketchBLEUScore:
    """One task's SketchBLEU in one mode: the four components in [0, 1] and the total on the papers' 0-100
    scale (in the codes mode, dataflow and total are NaN when a repository has no function: CodeS's 0 / 0)."""

    ngram_match: float
    weighted_ngram_match: float
    structure_match: float
    dataflow_match: float
    total: float
    reference_functions: int
    candidate_functions: int
    settings: SketchBLEUSettings = field(default_factory=SketchBLEUSettings)
    mode: SketchBLEUMode = "repaired"

    @property
    def defined(self) -> bool:
        """False for CodeS's NaN (a repository without functions): no score, not a low one."""
        return not math.isnan(self.total)

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        record["settings"] = (self.settings.to_dict() if self.mode == "repaired"
                              else {**CODES_CHOICES, "weights": list(self.settings.weights)})
        return record


def code_tokens(text: str) -> list[str]:
    """One file's tokens for the n-gram parts (see the module docstring)."""
    tokens: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _SKIPPED_TOKENS:
                continue
            if token.type == tokenize.NEWLINE:
                tokens.append("\n")
            elif token.type == tokenize.INDENT:
                tokens.append("    ")
            else:
                tokens.append(token.string)
    except (tokenize.TokenError, SyntaxError):
        return text.split()
    return tokens


def _cached_tokens(text: str, cache: dict[str, list[str]]) -> list[str]:
    if text not in cache:
        cache[text] = code_tokens(text)
    return cache[text]


def python_files(repository: Mapping[str, str]) -> dict[str, str]:
    """The ``.py`` files SketchBLEU reads, in path order, each stripped and ended by a newline."""
    return {path: repository[path].strip() + "\n" for path in sorted(repository) if path.endswith(".py")}


def python_parser() -> Any:
    """A tree-sitter parser for Python; a missing extra is a one-line `ProjectGenError`."""
    try:
        import scipy.optimize  # noqa: F401 - checked here so a missing extra fails before any work
        from codebleu.utils import get_tree_sitter_language
        from tree_sitter import Parser

        language = get_tree_sitter_language("python")
    except ImportError as exc:
        raise ProjectGenError(MISSING_EXTRA) from exc
    parser = Parser()
    parser.language = language
    return parser


def python_keywords() -> frozenset[str]:
    """codebleu's Python keyword list (the weighted n-gram match weighs these 1, other tokens 0.2)."""
    import codebleu

    keyword_file = Path(codebleu.__file__).parent / "keywords" / "python.txt"
    return frozenset(line.strip() for line in keyword_file.read_text(encoding="utf-8").splitlines() if line.strip())


def ngram_scores(reference_tokens: list[str], candidate_tokens: list[str]) -> tuple[float, float]:
    """codebleu's BLEU-4 and keyword-weighted BLEU of one candidate against one reference."""
    from codebleu import bleu, weighted_ngram_match

    keywords = python_keywords()
    weights = {token: 1 if token in keywords else 0.2 for token in reference_tokens}
    plain = bleu.corpus_bleu([[reference_tokens]], [candidate_tokens])
    weighted = weighted_ngram_match.corpus_bleu([[[reference_tokens, weights]]], [candidate_tokens])
    return float(plain), float(weighted)


def sketch_bleu(candidate: Mapping[str, str], reference: Mapping[str, str],
                settings: SketchBLEUSettings | None = None, mode: SketchBLEUMode = "repaired") -> SketchBLEUScore:
    """SketchBLEU of a generated repository against the reference (both path -> text), in one mode.

    ``settings`` (the repaired mode's switches and the four weights) applies to the repaired mode;
    the codes mode takes only its weights. Raises `ProjectGenError` when the reference has no Python
    file, the mode is unknown or the extra is missing.
    """
    settings = settings or SketchBLEUSettings()
    if mode not in SKETCHBLEU_MODES:
        raise ProjectGenError(f"SketchBLEU: unknown mode {mode!r} (one of {', '.join(SKETCHBLEU_MODES)})")
    if not python_files(reference):
        raise ProjectGenError("SketchBLEU: the reference repository has no .py file to compare with")
    parser = python_parser()
    if mode == "codes":
        parts = codes_components(candidate, reference, parser, python_keywords())
        alpha, beta, gamma, theta = settings.weights
        total = 100 * (alpha * parts.ngram_match + beta * parts.weighted_ngram_match
                       + gamma * parts.structure_match + theta * (parts.dataflow_match or 1))
        return SketchBLEUScore(ngram_match=parts.ngram_match, weighted_ngram_match=parts.weighted_ngram_match,
                               structure_match=parts.structure_match, dataflow_match=parts.dataflow_match,
                               total=total, reference_functions=parts.reference_functions,
                               candidate_functions=parts.candidate_functions,
                               settings=SketchBLEUSettings(weights=settings.weights), mode="codes")
    return _repaired(candidate, reference, settings, parser)


def sketch_bleu_modes(candidate: Mapping[str, str],
                      reference: Mapping[str, str]) -> dict[SketchBLEUMode, SketchBLEUScore]:
    """SketchBLEU in every mode (what results record and tables show side by side)."""
    return {mode: sketch_bleu(candidate, reference, mode=mode) for mode in SKETCHBLEU_MODES}


def _repaired(candidate: Mapping[str, str], reference: Mapping[str, str], settings: SketchBLEUSettings,
              parser: Any) -> SketchBLEUScore:
    ref_files, cand_files = python_files(reference), python_files(candidate)
    token_cache: dict[str, list[str]] = {}
    ref_tokens = [token for text in ref_files.values() for token in _cached_tokens(text, token_cache)]
    cand_tokens = [token for text in cand_files.values() for token in _cached_tokens(text, token_cache)]
    ngram, weighted = ngram_scores(ref_tokens, cand_tokens)
    expression_cache: dict[str, Any] = {}
    structure = structure_match(repository_expressions(ref_files, parser, expression_cache),
                                repository_expressions(cand_files, parser, expression_cache),
                                settings.structure_counting)
    flow_cache: dict[str, FunctionFlow] = {}
    ref_flows = repository_flows(ref_files.values(), parser, flow_cache)
    cand_flows = repository_flows(cand_files.values(), parser, flow_cache)
    dataflow = dataflow_match(ref_flows, cand_flows, settings.empty_dataflow_pairs)
    counted_dataflow = (dataflow or 1.0) if settings.zero_dataflow_counts_as_one else dataflow
    alpha, beta, gamma, theta = settings.weights
    total = 100 * (alpha * ngram + beta * weighted + gamma * structure + theta * counted_dataflow)
    return SketchBLEUScore(ngram_match=ngram, weighted_ngram_match=weighted, structure_match=structure,
                           dataflow_match=dataflow, total=total, reference_functions=len(ref_flows),
                           candidate_functions=len(cand_flows), settings=settings)


def average_sketchbleu(scores: Iterable[SketchBLEUScore | float | None]) -> float | None:
    """Tables 4 and 6's AVG: the unweighted mean over the tasks that have a value (None when none has)."""
    values = [score.total if isinstance(score, SketchBLEUScore) else float(score)
              for score in scores if score is not None]
    values = [value for value in values if not math.isnan(value)]
    return sum(values) / len(values) if values else None
