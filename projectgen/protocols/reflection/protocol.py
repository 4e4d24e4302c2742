"""Reflection as `evaluate` runs it: its settings, its exercises, its solver and its own batch (every exercise x
model x edit format; its figures, Pass@k, Fix Weight and Well Format, are the batch's: `metrics`); and one exercise
played in a caller's folder (`play_reflection`), which exercise construction's judges reach through the registry."""
from __future__ import annotations

from projectgen.datasets.exercism import Exercise
from projectgen.protocols.definition import Protocol
from projectgen.protocols.reflection.batch import reflect_batch
from projectgen.protocols.reflection.dataset import load_dataset
from projectgen.protocols.reflection.results import ReflectResults
from projectgen.protocols.reflection.settings import ReflectionSettings
from projectgen.protocols.reflection.unit import play_reflection, reflection_solver

def failures(results: ReflectResults) -> int:
    """Error units and exercises that do not load (`projectgen reflect`'s exit code counts the same)."""
    return sum(report.errors for report in results.reports) + len(results.load_errors)


PROTOCOL: Protocol[Exercise, ReflectionSettings] = Protocol(
    name="reflection",
    summary="LiveRepoReflection: write each exercise's files, repair them from the test errors (Pass@k, FW, WF)",
    settings=ReflectionSettings, load_dataset=load_dataset, solver=reflection_solver, batch=reflect_batch,
    failures=failures, play=play_reflection)
