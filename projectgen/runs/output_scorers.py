"""Scorers of a run's final output against its task's reference, run where the run ends so the run log keeps
their scores by name and an experiment reads them instead of scoring the folder again.

A `Scorer` has a name (its key in the log's scores) and scores a finished run's folder (a `RunLayout`: its
output repository, its attempts) with the run's sandbox runner and its hidden unit-test report; None where it
does not apply (no reference, no output, a missing extra, another benchmark), so the log then holds no score
of that name. The caller chooses them
(`RunParts(scorers=...)`); `REFERENCE_SCORERS` are the ones an experiment's result row reports.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.expectations import expected_counts
from projectgen.evaluation.metrics import repository_stats
from projectgen.evaluation.nonfunctional import MAINTAINABILITY_MEASURE, RESOURCE_MEASURE, score_candidate
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.evaluation.sketchbleu import sketch_bleu
from projectgen.evaluation.sketchbleu_folders import codes_files
from projectgen.repository import load_repository
from projectgen.runs.layout import RunLayout
from projectgen.runs.run_log import Score

EXPECTED_UNIT = "unit_expected"  # the hidden unit tests counted over the task's expected tests
SKETCHBLEU = "sketchbleu"
# How SketchBLEU computes its two figures, kept in every score it gives: a run log whose score carries another
# (or none: runs scored before CRLF was read as text and code as Python 3.9 reads it) is scored again by
# whoever reads it, so a continued experiment never mixes figures of two computations. Raise it whenever a
# change moves either mode's figure.
SKETCHBLEU_VERSION = 2
NON_FUNCTIONAL = "non_functional"
ATTEMPT_MAINTAINABILITY = "attempt_maintainability"


class Scorer(Protocol):
    """Scores a finished run's folder; None where it does not apply."""

    @property
    def name(self) -> str: ...

    def score(self, task: Task, folder: RunLayout, runner: SandboxRunner | None,
              unit_report: TestReport | None) -> Score | None: ...


@dataclass(frozen=True)
class ExpectedUnitTests:
    """#Pass over the task's expected tests (`evaluation.expectations.expected_counts`: what the reference
    collects, a test file that does not collect failing all its tests), its denominator's kind in
    ``detail["counts"]``; None without a unit report or a runner."""

    name: str = EXPECTED_UNIT

    def score(self, task: Task, folder: RunLayout, runner: SandboxRunner | None,
              unit_report: TestReport | None) -> Score | None:
        if unit_report is None or runner is None:
            return None
        passed, total, counts = expected_counts(runner, task, unit_report)
        return Score(value=passed / total if total else None, passed=passed, total=total, detail={"counts": counts})


@dataclass(frozen=True)
class SketchBLEU:
    """SketchBLEU (0-100) of the output against the task's reference: the value in the repaired mode, the codes
    mode's in ``detail["codes"]`` over the file set ``detail["codes_files"]`` names (`sketchbleu_folders`: on
    DevBench and CodeProjectEval what ProjectGen's script scored); None without a reference, an output, the
    `sketchbleu` extra or a Python file in the reference."""

    name: str = SKETCHBLEU

    def score(self, task: Task, folder: RunLayout, runner: SandboxRunner | None,
              unit_report: TestReport | None) -> Score | None:
        output = folder.repository
        if not task.has_reference or not output.is_dir():
            return None
        try:
            repaired = sketch_bleu(load_repository(output), task.reference_repository(), mode="repaired")
        except ProjectGenError:  # the extra is missing, or the reference has no Python file
            return None
        try:
            files = codes_files(task, output)
            codes = sketch_bleu(files.candidate, files.reference, mode="codes")
        except ProjectGenError:  # a config.json ProjectGen's script could not read: no figure of its file set
            return Score(value=repaired.total, detail={"codes": None, "codes_files": None,
                                                       "version": SKETCHBLEU_VERSION})
        return Score(value=repaired.total, detail={"codes": codes.total if codes.defined else None,
                                                   "codes_files": files.file_set, "version": SKETCHBLEU_VERSION})


@dataclass(frozen=True)
class NonFunctional:
    """LiveCoder Table 1's non-functional figures (%) of the output against the reference, both measured in the
    sandbox: their AHP combination as the value, every figure and how resource and maintainability were
    measured in ``detail``; RAL-Bench tasks with a reference, an output and a runner only."""

    name: str = NON_FUNCTIONAL

    def score(self, task: Task, folder: RunLayout, runner: SandboxRunner | None,
              unit_report: TestReport | None) -> Score | None:
        output = folder.repository
        if task.format != "ralbench" or runner is None or not task.has_reference or not output.is_dir():
            return None
        scores = score_candidate(task, load_repository(output), runner)
        figures = scores.as_percent()
        return Score(value=figures["non_functional"], detail={
            "figures": figures,
            "resource_measure": RESOURCE_MEASURE if scores.scores.get("resource") is not None else None,
            "maintainability_measure": MAINTAINABILITY_MEASURE})


@dataclass(frozen=True)
class AttemptMaintainability:
    """The mean maintainability indices of each attempt's repository (attempts/N/repository), radon's and the
    Visual Studio formula's LiveCoder cites, in ``detail["attempts"]`` by attempt number (as text, a JSON key);
    an attempt without parsable Python has none. None for a run without attempts."""

    name: str = ATTEMPT_MAINTAINABILITY

    def score(self, task: Task, folder: RunLayout, runner: SandboxRunner | None,
              unit_report: TestReport | None) -> Score | None:
        if not folder.attempts.is_dir():
            return None
        numbers = sorted(int(path.name) for path in folder.attempts.iterdir() if path.name.isdigit())
        return Score(detail={"attempts": {str(number): repository_maintainability(folder.attempt(number).repository)
                                          for number in numbers}})


def repository_maintainability(repository: Path) -> dict[str, float]:
    """The mean maintainability indices of a repository folder, radon's (`maintainability`) and the Visual Studio
    formula's (`maintainability_vs`); none when it has no parsable Python."""
    if not repository.is_dir():
        return {}
    stats = repository_stats(repository)
    if stats.python_files <= stats.unparsable_files:
        return {}
    return {"maintainability": stats.mean_maintainability_index,
            "maintainability_vs": stats.mean_maintainability_index_vs}


REFERENCE_SCORERS: tuple[Scorer, ...] = (ExpectedUnitTests(), SketchBLEU(), NonFunctional(), AttemptMaintainability())


def score_output(scorers: Sequence[Scorer], task: Task, folder: RunLayout, runner: SandboxRunner | None,
                 unit_report: TestReport | None) -> dict[str, Score]:
    """Scorer name -> its score of the run in `folder`, for the scorers that apply (blocking: sandbox runs,
    parsing; a run calls it off its event loop)."""
    scores = {}
    for scorer in scorers:
        score = scorer.score(task, folder, runner, unit_report)
        if score is not None:
            scores[scorer.name] = score
    return scores
