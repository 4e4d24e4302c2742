"""ProjectGen/LiveCoder as `evaluate` runs it: its settings, its tasks and the experiment's batch (an adapter:
its solver is the method's graph inside LiveCoder's attempts, which `projectgen.runs.livecoder` builds and runs)."""
from __future__ import annotations

from projectgen.datasets.loaders import load_dataset
from projectgen.datasets.task import Task
from projectgen.experiments.results import ExperimentResults
from projectgen.protocols.definition import Protocol
from projectgen.protocols.livecoder.batch import livecoder_batch
from projectgen.protocols.livecoder.settings import LiveCoderSettings

def failures(results: ExperimentResults) -> int:
    """Runs that ended in an error (`projectgen experiment`'s exit code counts the same)."""
    return sum(report.final.errors for report in results.models)


PROTOCOL: Protocol[Task, LiveCoderSettings] = Protocol(
    name="livecoder",
    summary="ProjectGen inside LiveCoder's attempts, or another method: each task x method x model one run",
    settings=LiveCoderSettings, load_dataset=load_dataset, batch=livecoder_batch, failures=failures)
