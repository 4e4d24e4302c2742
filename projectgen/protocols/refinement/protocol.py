"""Refinement as `evaluate` runs it: its settings, its tasks, its solver and its own batch (the tasks' references
checked first; every task x model x strategy x context; its figures, Acc(k), Avg Acc, CR and ATC, are the
batch's: `metrics`)."""
from __future__ import annotations

from projectgen.datasets.multiturn import MultiTurnTask
from projectgen.protocols.definition import Protocol
from projectgen.protocols.refinement.batch import refinement_batch
from projectgen.protocols.refinement.dataset import load_dataset
from projectgen.protocols.refinement.results import RefinementResults
from projectgen.protocols.refinement.settings import RefinementSettings
from projectgen.protocols.refinement.unit import refinement_solver

def failures(results: RefinementResults) -> int:
    """Task runs that ended in an error and tasks that do not load (`projectgen refine`'s exit code counts the
    same)."""
    return sum(not row.ok for row in results.rows) + len(results.load_errors)


PROTOCOL: Protocol[MultiTurnTask, RefinementSettings] = Protocol(
    name="refinement",
    summary="SR-Eval: multi-turn tasks turn by turn under strategies and contexts (Acc(k), Avg Acc, CR, ATC)",
    settings=RefinementSettings, load_dataset=load_dataset, solver=refinement_solver, batch=refinement_batch,
    failures=failures)
