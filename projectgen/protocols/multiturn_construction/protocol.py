"""Multi-turn construction as `evaluate` runs it: its settings, its seeds and its own batch (every seed filtered,
decomposed into turns and built turn by turn, each turn's tests kept only when they discriminate; a seed may pause
for a person)."""
from __future__ import annotations

from projectgen.protocols.definition import Protocol
from projectgen.protocols.multiturn_construction.batch import ConstructionResults, multiturn_construction_batch
from projectgen.protocols.multiturn_construction.dataset import load_dataset
from projectgen.protocols.multiturn_construction.seeds import TaskSeed
from projectgen.protocols.multiturn_construction.settings import MultiturnConstructionSettings


def failures(results: ConstructionResults) -> int:
    """Seeds whose construction failed (`projectgen construct multiturn` exits 1; a seed awaiting a person is not a
    failure: that command exits 3 for it)."""
    return len(results.errors())


PROTOCOL: Protocol[TaskSeed, MultiturnConstructionSettings] = Protocol(
    name="multiturn_construction",
    summary="SR-Eval: multi-turn tasks from seed tasks (decompose, evaluate, discriminative tests)",
    settings=MultiturnConstructionSettings, load_dataset=load_dataset, batch=multiturn_construction_batch,
    failures=failures)
