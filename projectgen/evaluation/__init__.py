"""Sandboxed test runs, their typed reports, and the papers' metrics.

The names are imported here, eagerly: the CLI's parser imports nothing of this package, so `projectgen --help` does
not pay for it (SketchBLEU's extra is imported only when it scores).
"""
from __future__ import annotations

from projectgen.evaluation.expectations import ExpectedTests, ScoredRun, TestScore, score_report
from projectgen.evaluation.metrics import loc_weighted_average, pass_rate, repository_stats
from projectgen.evaluation.report import Outcome, TestReport, TestResult
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.evaluation.sketchbleu import SketchBLEUScore, SketchBLEUSettings, average_sketchbleu, sketch_bleu

__all__ = [
    "ExpectedTests", "Outcome", "RunnerSettings", "SandboxRunner", "ScoredRun", "SketchBLEUScore",
    "SketchBLEUSettings", "TestReport", "TestResult", "TestScore", "average_sketchbleu", "loc_weighted_average",
    "pass_rate", "repository_stats", "score_report", "sketch_bleu",
]
