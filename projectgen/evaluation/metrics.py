"""The numbers the papers report: pass rates, ProjectGen's LOC-weighted average, code statistics.

ProjectGen (Zhao et al., 2025, arXiv:2511.03404) scores every task by its unit-test pass
rate and summarises a dataset by weighting each task with the size of its reference
implementation in lines of code, so that a large project counts for more than a toy one.
LiveCoder-style reports add radon's cyclomatic complexity and maintainability index of the
generated code. Apart from reading a folder when one is passed, everything here is a pure
function of its arguments.

radon is imported inside the functions that need it, so importing this module (which the CLI
does) stays cheap. Lines of code are counted by `projectgen.repository.lines.count_loc`.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from projectgen.repository import load_repository
from projectgen.repository.lines import UNREADABLE_SOURCE_ERRORS, count_loc
from projectgen.repository.syntax import parse_python


# --------------------------------------------------------------------------- pass rates


def pass_rate(passed: int, total: int) -> float:
    """Fraction of tests that passed, in [0, 1]; 0.0 for a task with no tests.

    A task whose suite could not even be collected has ``total == 0`` and scored nothing,
    so it must not raise or produce NaN in a dataset summary.
    """
    if passed < 0 or total < 0:
        raise ValueError(f"test counts must not be negative (passed={passed}, total={total})")
    if passed > total:
        raise ValueError(f"passed ({passed}) cannot exceed total ({total})")
    return passed / total if total else 0.0


def loc_weighted_average(results: Iterable[tuple[float, int]]) -> float:
    """ProjectGen's dataset score: sum(score_i * LOC_i) / sum(LOC_i).

    ``results`` holds one ``(score, loc)`` pair per task, where the score is the task's pass
    rate (or any per-task score) and ``loc`` the size of its reference implementation.
    Weighting by LOC is why this exists: an unweighted mean would let a 50-line toy task
    count as much as a 9,000-line framework. The result is in the scores' own unit (pass
    rates as fractions give a fraction; percentages give a percentage). An empty input, or
    one whose weights are all zero, gives 0.0; negative weights are refused.

    ProjectGen's AVG_weighted (Tables 3 and 5) feeds the per-task #Pass *counts*, not rates:
    ``loc_weighted_average((passed, loc) ...)`` (`summarize` gives both).

    Which LOC: the '#LOC' column of the ProjectGen paper's CodeProjectEval table counts
    every physical line of the reference's ``*.py`` files (`RepoStats.physical_lines`),
    not `count_loc`; pass those figures to reproduce the paper's weights.
    """
    weighted: list[float] = []
    weights: list[int] = []
    for score, loc in results:
        if loc < 0:
            raise ValueError(f"LOC weight must not be negative, got {loc}")
        weighted.append(score * loc)
        weights.append(loc)
    total = math.fsum(weights)
    return math.fsum(weighted) / total if total else 0.0


class TaskScore(BaseModel):
    """One task's test outcome and the LOC weight it carries in the dataset summary."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    passed: int = Field(ge=0)
    total: int = Field(ge=0)
    loc: int = Field(ge=0, description="LOC of the task's reference implementation (the weight)")

    @model_validator(mode="after")
    def _passed_within_total(self) -> TaskScore:
        if self.passed > self.total:
            raise ValueError(f"task {self.task_id!r}: passed ({self.passed}) exceeds total ({self.total})")
        return self

    @property
    def pass_rate(self) -> float:
        """Fraction of this task's tests that passed (0.0 when it has none)."""
        return pass_rate(self.passed, self.total)


class DatasetSummary(BaseModel):
    """A dataset's scores as the ProjectGen paper reports them (rates are fractions in [0, 1])."""

    model_config = ConfigDict(frozen=True)

    tasks: int
    passed: int = Field(description="#Pass: tests passed, summed over all tasks")
    total: int = Field(description="tests run, summed over all tasks")
    mean_pass_rate: float = Field(description="unweighted mean of the per-task pass rates")
    loc_weighted_pass_rate: float = Field(description="per-task pass rates weighted by reference LOC")
    avg_weighted: float = Field(description="ProjectGen's AVG_weighted: the per-task #Pass *counts* weighted by "
                                "#LOC, sum(#Pass x #LOC) / sum(#LOC), as in its Tables 3 and 5")
    total_loc: int


def summarize(scores: Sequence[TaskScore]) -> DatasetSummary:
    """Total #Pass, mean pass rate and LOC-weighted pass rate over a dataset's tasks."""
    rates = [score.pass_rate for score in scores]
    return DatasetSummary(
        tasks=len(scores),
        passed=sum(score.passed for score in scores),
        total=sum(score.total for score in scores),
        mean_pass_rate=_mean(rates),
        loc_weighted_pass_rate=loc_weighted_average((score.pass_rate, score.loc) for score in scores),
        avg_weighted=loc_weighted_average((score.passed, score.loc) for score in scores),
        total_loc=sum(score.loc for score in scores),
    )


# --------------------------------------------------------------------------- code statistics


class RepoStats(BaseModel):
    """Size and radon quality figures of the Python files of one repository."""

    model_config = ConfigDict(frozen=True)

    python_files: int = Field(description="every *.py file, parsable or not")
    loc: int = Field(description="count_loc summed over every *.py file, parsable or not")
    physical_lines: int = Field(
        description="all lines (blank and comment lines too) of every *.py file: the '#LOC' "
        "column of the ProjectGen paper's CodeProjectEval table, and radon's raw 'loc'"
    )
    functions: int = Field(description="functions, methods and nested functions radon measured")
    mean_cyclomatic_complexity: float = Field(description="over all functions/methods; 0.0 if none")
    mean_block_complexity: float = Field(
        description="radon's `cc -a` average: over the functions, methods and classes radon lists "
        "(nested functions left out); the 'Complexity' column of ProjectGen's CodeProjectEval table"
    )
    mean_maintainability_index: float = Field(description="radon MI (0-100, clipped at 0) over parsed files")
    mean_maintainability_index_vs: float = Field(
        default=0.0, description="MI by the Visual Studio formula LiveCoder cites (no comment term), over parsed files")
    unparsable_files: int = Field(description="files radon could not parse; left out of the CC and MI means")
    unparsable_paths: tuple[str, ...] = ()


def read_python_files(root: Path) -> dict[str, str]:
    """The ``*.py`` files below a folder as a path -> text mapping (caches and VCS skipped)."""
    return load_repository(Path(root), suffixes=(".py",))


def maintainability_index_clipped(source: str, *, multi: bool = True) -> float:
    """radon's maintainability index of one file, clipped at 0 as LiveCoder reports it.

    radon 6 already bounds MI to [0, 100]; the clip is kept so that the figure matches
    LiveCoder's even if a radon version stops bounding it. ``multi=True`` counts
    multi-line strings (docstrings) as comments, which raises MI for documented code.
    Raises SyntaxError (or another parse error) for source radon cannot parse.
    """
    from radon.metrics import mi_visit

    return max(0.0, float(mi_visit(source, multi)))


def maintainability_index_vs(halstead_volume: float, complexity: float, lines: int) -> float:
    """The Visual Studio maintainability index LiveCoder cites:
    MAX(0, (171 - 5.2 ln(HV) - 0.23 CC - 16.2 ln(LOC)) * 100 / 171).

    Unlike radon's variant it has no comment term, so documenting code does not raise it. A file
    without operators or lines (HV or LOC 0, where ln is undefined) scores 100, as radon scores it.
    """
    if halstead_volume <= 0 or lines <= 0:
        return 100.0
    raw = 171 - 5.2 * math.log(halstead_volume) - 0.23 * complexity - 16.2 * math.log(lines)
    return max(0.0, raw * 100 / 171)


def maintainability_indices(source: str) -> tuple[float, float]:
    """(radon's MI, the Visual Studio MI) of one file, from the same Halstead volume, total cyclomatic
    complexity and logical lines (radon's `mi_parameters`). Raises a parse error as radon does."""
    from radon.metrics import mi_compute, mi_parameters

    volume, complexity, lines, comments = mi_parameters(source, True)
    return max(0.0, float(mi_compute(volume, complexity, lines, comments))), maintainability_index_vs(
        volume, complexity, lines)


def repository_stats(repo: Mapping[str, str] | Path) -> RepoStats:
    """Files, LOC, mean cyclomatic complexity and mean maintainability index of a repository.

    ``repo`` is a path -> text mapping (only its ``*.py`` entries are measured) or a folder.
    Generated code is often broken, so a file radon cannot parse never raises: it is counted
    in ``unparsable_files`` and left out of the complexity and MI means (it still counts as
    a Python file and towards LOC, which do not need a parse).
    """
    from radon.complexity import cc_visit_ast

    if isinstance(repo, Path):
        files = read_python_files(repo)
    else:
        files = {path: text for path, text in repo.items() if path.endswith(".py")}
    complexities: list[int] = []
    block_complexities: list[int] = []
    indices: list[float] = []
    indices_vs: list[float] = []
    unparsable: list[str] = []
    for path in sorted(files):
        source = files[path]
        try:
            with warnings.catch_warnings():  # invalid escapes etc. in measured code are not ours to report
                warnings.simplefilter("ignore")
                blocks = cc_visit_ast(parse_python(source))
                index, index_vs = maintainability_indices(source)
        except UNREADABLE_SOURCE_ERRORS:
            unparsable.append(path)
            continue
        complexities.extend(function.complexity for function in _functions(blocks))
        block_complexities.extend(block.complexity for block in blocks)
        indices.append(index)
        indices_vs.append(index_vs)
    return RepoStats(
        python_files=len(files),
        loc=sum(count_loc(text) for text in files.values()),
        physical_lines=sum(len(text.splitlines()) for text in files.values()),
        functions=len(complexities),
        mean_cyclomatic_complexity=_mean(complexities),
        mean_block_complexity=_mean(block_complexities),
        mean_maintainability_index=_mean(indices),
        mean_maintainability_index_vs=_mean(indices_vs),
        unparsable_files=len(unparsable),
        unparsable_paths=tuple(unparsable),
    )


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _functions(blocks: Iterable[Any]) -> Iterator[Any]:
    """Every function, method and nested function in radon's blocks, each exactly once.

    radon lists top-level functions, top-level classes and those classes' methods; nested
    functions (``closures``) and nested classes' methods are only reachable through their
    parents, so walk from the top level and skip the methods radon already flattened.
    """
    from radon.visitors import Class, Function

    def walk(block: Any) -> Iterator[Any]:
        if isinstance(block, Function):
            yield block
            for closure in block.closures:
                yield from walk(closure)
        elif isinstance(block, Class):
            for method in block.methods:
                yield from walk(method)
            for inner in block.inner_classes:
                yield from walk(inner)

    for block in blocks:
        if isinstance(block, Function) and block.is_method:
            continue  # reached through its class
        yield from walk(block)
