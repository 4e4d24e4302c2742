"""Evolve as `evaluate` runs it: its settings, its dataset (one finished run), and its own batch (that run changed
for the new requirement, in the output folder; its figures, the check tests split into the change's and the
earlier ones and the kept files' bytes, are its scorers': `scorers`)."""
from __future__ import annotations

from pathlib import Path

from projectgen.protocols.definition import Protocol
from projectgen.protocols.evolve.batch import EvolveResults, evolve_batch
from projectgen.protocols.evolve.dataset import BaseRun, load_dataset
from projectgen.protocols.evolve.settings import EvolveSettings
from projectgen.runs.layout import EvolveLayout


def failures(results: EvolveResults) -> int:
    """1 when the pipeline stopped before its end (no complete repository), else 0: failing check tests are the
    run's result, not an error (`projectgen evolve`'s exit code says whether they all pass)."""
    return int(results.stopped is not None)


# The unit builds its solver (`unit.evolve_solver`) from the folder's copy of the base, so that a resumed run reads
# nothing outside its folder, with a model per role: not `Protocol.solver`'s (sample, settings, chat model) shape.
PROTOCOL: Protocol[BaseRun, EvolveSettings] = Protocol(
    name="evolve",
    summary="incremental development: change a finished run for a new requirement, redoing only what it needs",
    settings=EvolveSettings, load_dataset=load_dataset, batch=evolve_batch, failures=failures,
    results_file=EvolveLayout(Path()).evolve.name)
