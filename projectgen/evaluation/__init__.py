"""Sandboxed test runs, their typed reports, and the papers' metrics.

Names are re-exported lazily: the runner and the metrics need pydantic (SketchBLEU its extra), and
`projectgen --help` must stay fast.
"""
from __future__ import annotations

from projectgen.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "SandboxRunner": "projectgen.evaluation.runner",
    "RunnerSettings": "projectgen.evaluation.runner",
    "TestReport": "projectgen.evaluation.report",
    "TestResult": "projectgen.evaluation.report",
    "Outcome": "projectgen.evaluation.report",
    "ExpectedTests": "projectgen.evaluation.expectations",
    "TestScore": "projectgen.evaluation.expectations",
    "ScoredRun": "projectgen.evaluation.expectations",
    "score_report": "projectgen.evaluation.expectations",
    "pass_rate": "projectgen.evaluation.metrics",
    "loc_weighted_average": "projectgen.evaluation.metrics",
    "repository_stats": "projectgen.evaluation.metrics",
    "sketch_bleu": "projectgen.evaluation.sketchbleu",
    "average_sketchbleu": "projectgen.evaluation.sketchbleu",
    "SketchBLEUScore": "projectgen.evaluation.sketchbleu",
    "SketchBLEUSettings": "projectgen.evaluation.sketchbleu",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
