"""Exercise construction as `evaluate` runs it: its settings, its seeds and its own batch (every seed designed,
drafted, cross-executed, packaged and judged; then difficulty, near-duplicates and names across the seeds)."""
from __future__ import annotations

from projectgen.protocols.definition import Protocol
from projectgen.protocols.exercise_construction.agents import ExerciseSeed
from projectgen.protocols.exercise_construction.batch import REPORT, ConstructionReport, exercise_construction_batch
from projectgen.protocols.exercise_construction.dataset import load_dataset
from projectgen.protocols.exercise_construction.seed_run import ERROR
from projectgen.protocols.exercise_construction.settings import ExerciseConstructionSettings


def failures(report: ConstructionReport) -> int:
    """Seeds whose construction failed (built again by the next run; `projectgen construct exercises` exits 1)."""
    return len(report.ids(ERROR))


PROTOCOL: Protocol[ExerciseSeed, ExerciseConstructionSettings] = Protocol(
    name="exercise_construction",
    summary="LiveRepoReflection: seed code -> new exercises, cross-executed, judged, decontaminated",
    settings=ExerciseConstructionSettings, load_dataset=load_dataset, batch=exercise_construction_batch,
    failures=failures, results_file=REPORT)
