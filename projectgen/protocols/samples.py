"""The batch of a protocol that brings only a solver and scorers: one unit per (model, sample).

Each unit runs the protocol's graph in ``OUT/<model>/<sample>/`` through the one driver (`drive_unit`: checkpoints,
call cache, trace, run log), and its scorers run there, on the graph's final state: the run log holds the scores and
nothing is scored after the run. The engine (`run_batch`) keeps ``OUT/ledger.jsonl``: run the same call again to
continue (a finished unit is skipped, any other resumes in its folder). ``OUT/evaluate.json`` ties the folder to its
protocol, dataset and settings; ``OUT/results.json`` holds each row and each model's mean per scorer.
"""
from __future__ import annotations

import asyncio
import json
import math
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.runner import RunnerSettings
from projectgen.experiments.batch_folder import claim_batch_folder
from projectgen.experiments.engine import Batch, ProgressFn, run_batch
from projectgen.experiments.executors import LocalExecutor, print_progress, worker_runner
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.models import ExperimentModel, preflight
from projectgen.llm.call_slots import CallSlots, limit_calls
from projectgen.llm.factory import make_chat_model
from projectgen.protocols.definition import Evaluation, Protocol
from projectgen.runs import layout
from projectgen.runs.folder import RunFolder
from projectgen.runs.locking import folder_lock
from projectgen.runs.manifest import RunManifest
from projectgen.runs.request import RunRequest
from projectgen.runs.run_log import read_run_log
from projectgen.runs.unit import UnitEnd, UnitRun, drive_unit

CONFIG = "evaluate.json"
RESULTS_SCHEMA_VERSION = 1


class SampleRow(BaseModel):
    """One unit's line: its scores by scorer name, or the one-line reason its work raised (retried on a continue)."""

    key: str
    model: str
    task_id: str
    status: Literal["scored", "error"]
    scores: dict[str, float] = Field(default_factory=dict)
    error: str | None = None


class ModelScores(BaseModel):
    """One model's figures: each scorer's mean over its scored samples (None when none was scored)."""

    model: str
    samples: int
    errors: int
    means: dict[str, float | None]


class EvaluationResults(BaseModel):
    """results.json of a samples batch."""

    schema_version: int = RESULTS_SCHEMA_VERSION
    protocol: str
    dataset: str
    settings: dict[str, Any]
    models: dict[str, str]
    summary: list[ModelScores]
    rows: list[SampleRow]


@dataclass(frozen=True)
class SampleUnit:
    """One (model, sample) in its folder (`Relocatable`, as every batch unit that writes one folder)."""

    key: str
    model: ExperimentModel
    sample: Any  # the protocol's own sample type, with an ``id``
    run_dir: Path
    sync: Callable[[], None] | None = None  # set on a worker only (`relocated`), never pickled

    @property
    def workspace(self) -> Path:
        return self.run_dir

    def relocated(self, workspace: Path, sync: Callable[[], None] | None = None) -> SampleUnit:
        return replace(self, run_dir=workspace, sync=sync)


def sample_request(protocol: Protocol, settings: BaseModel, dataset: Path, sample_id: str, spec: str,
                   checkpoint_url: str | None) -> RunRequest:
    """run.json of one unit: the protocol (its name is the method) and its typed settings as run.json keeps them."""
    return RunRequest(task_path=str(dataset), task_id=sample_id, method=protocol.name, models={"default": spec},
                      checkpoint_url=checkpoint_url, protocol=settings.model_dump(mode="json"))


def score(protocol: Protocol, sample: Any, state: Mapping[str, Any]) -> dict[str, float]:
    """Every scorer of the protocol on the final state; a score that is not a finite number is a bug of the
    scorer, said in one line, never a silent wrong figure."""
    scores = {}
    for name, scorer in protocol.scorers.items():
        value = scorer(sample, state)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ProjectGenError(f"protocol {protocol.name}: scorer {name!r} gave {value!r} on {sample.id}, not a "
                                  "finite number")
        scores[name] = float(value)
    return scores


async def arun_sample(protocol: Protocol, settings: BaseModel, unit: SampleUnit, request: RunRequest, *, model: Any,
                      runner: Any, sync: Callable[[], None] | None = None) -> dict[str, float]:
    """Run (or resume, or read back) one unit in its folder; its scores."""
    folder = RunFolder(unit.run_dir)
    try:
        log = read_run_log(folder)
    except ProjectGenError:
        log = None
    if log is not None and log.kind == protocol.name and log.record is not None:
        return dict(log.record["scores"])
    if protocol.solver is None:  # `Protocol` refuses a protocol without a solver or a batch of its own
        raise ProjectGenError(f"protocol {protocol.name} has no solver: it runs only through its own batch")
    solver = protocol.solver(unit.sample, settings, model, runner)

    def outputs(folder: RunFolder, manifest: RunManifest, state: dict[str, Any]) -> UnitEnd[dict[str, float]]:
        scores = score(protocol, unit.sample, state)
        record = {"task_id": unit.sample.id, "model": unit.model.slug, "scores": scores}
        return UnitEnd(scores, trace={"scores": scores}, record=record, summary=json.dumps(record, indent=1) + "\n")

    return await drive_unit(folder, UnitRun(
        request=request, kind=protocol.name, graph=solver.graph, start=dict(solver.start), context=solver.context,
        outputs=outputs, run_id=unit.key, scope=unit.key, sync=sync, config=solver.config,
        marker={"task_id": unit.sample.id, "method": protocol.name}))


@dataclass(frozen=True)
class SampleBatch(Batch[SampleUnit, Any, SampleRow]):
    """The units of one samples batch; each worker has its own sandbox runner when the protocol needs one."""

    protocol: Protocol
    settings: BaseModel
    dataset: Path
    base_url: str | None = None
    sampling: Mapping[str, float | int] = field(default_factory=dict)
    runner_settings: RunnerSettings | None = None
    runner_factory: Callable[[], Any] | None = None
    checkpoint_url: str | None = None
    progress: ProgressFn | None = None
    call_slots: CallSlots | None = None  # model calls in flight per model or endpoint, shared by the workers
    sandbox_slots: threading.Semaphore | None = None  # sandbox runs at once, shared by the default runners

    def setup(self) -> Any:
        if not self.protocol.sandbox:
            return None
        if self.runner_factory is not None:
            return self.runner_factory()
        return worker_runner(self.runner_settings, self.progress, self.sandbox_slots)

    def for_workers(self) -> SampleBatch:
        return replace(self, runner_factory=None, progress=print_progress if self.progress is not None else None,
                       call_slots=None, sandbox_slots=None)

    def run(self, unit: SampleUnit, state: Any) -> SampleRow:
        spec = unit.model.spec_for(unit.sample.id)
        model = make_chat_model(spec, base_url=self.base_url, **self.sampling)
        model = limit_calls(model, self.call_slots) if self.call_slots is not None else model
        request = sample_request(self.protocol, self.settings, self.dataset, unit.sample.id, spec, self.checkpoint_url)
        scores = asyncio.run(arun_sample(self.protocol, self.settings, unit, request, model=model, runner=state,
                                         sync=unit.sync))
        return SampleRow(key=unit.key, model=unit.model.slug, task_id=unit.sample.id, status="scored", scores=scores)

    def failed(self, unit: SampleUnit, reason: str) -> SampleRow:
        return SampleRow(key=unit.key, model=unit.model.slug, task_id=unit.sample.id, status="error", error=reason)

    def record(self, row: SampleRow) -> dict[str, Any]:
        return row.model_dump(mode="json", exclude={"key"})

    def restore(self, entry: dict[str, Any]) -> SampleRow | None:
        """A scored unit; an error line is run again."""
        return SampleRow.model_validate(entry) if entry.get("status") == "scored" else None


def check_config(out: Path, config: dict[str, Any], *, fresh: bool) -> None:
    """Write evaluate.json, or check that a continued batch keeps its protocol, dataset, settings and models."""
    path = out / CONFIG
    if path.exists() and not fresh:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ProjectGenError(f"{path}: unreadable ({exc}); use --fresh or another --out") from None
        changed = [name for name in ("protocol", "dataset", "settings") if stored.get(name) != config.get(name)]
        if changed:
            raise ProjectGenError(f"{out} holds a batch with other {', '.join(changed)}; continue it with the same "
                                  "ones, or use --fresh or another --out")
        for slug, spec in (stored.get("models") or {}).items():
            if config["models"].get(slug, spec) != spec:
                raise ProjectGenError(f"{out}: model folder {slug!r} holds runs of {spec!r}, not "
                                      f"{config['models'][slug]!r}; label the model differently (LABEL=SPEC)")
        config = {**config, "models": {**stored.get("models", {}), **config["models"]}}
    write_atomic(path, json.dumps(config, indent=1) + "\n")


def chosen_samples(samples: Sequence[Any], tasks: Sequence[str] | None, dataset: Path) -> list[Any]:
    """The samples asked for, in the dataset's order; an unknown id is refused, naming the known ones."""
    if tasks is None:
        return list(samples)
    known = [s.id for s in samples]
    unknown = [t for t in tasks if t not in known]
    if unknown:
        raise ProjectGenError(f"unknown task(s) {', '.join(unknown)} in {dataset} (samples: {', '.join(known[:20])})")
    return [s for s in samples if s.id in tasks]


def summarize(protocol: Protocol, evaluation: Evaluation, rows: Sequence[SampleRow]) -> EvaluationResults:
    """Each model's mean per scorer over its scored rows (errors counted apart, never as a zero)."""
    summary = []
    for model in evaluation.models:
        mine = [row for row in rows if row.model == model.slug]
        scored = [row for row in mine if row.status == "scored"]
        means = {name: (sum(row.scores[name] for row in scored) / len(scored) if scored else None)
                 for name in protocol.scorers}
        summary.append(ModelScores(model=model.slug, samples=len(mine), errors=len(mine) - len(scored), means=means))
    return EvaluationResults(protocol=protocol.name, dataset=str(evaluation.dataset),
                             settings=evaluation.settings.model_dump(mode="json"),
                             models={m.slug: m.spec for m in evaluation.models}, summary=summary, rows=list(rows))


def run_samples(protocol: Protocol, evaluation: Evaluation) -> EvaluationResults:
    """Run every (model, sample) of the evaluation not already finished in its folder; write results.json."""
    options, out = evaluation.options, evaluation.out
    for model in evaluation.models:
        preflight(model, options.base_url)
    samples = chosen_samples(protocol.load_dataset(evaluation.dataset), options.tasks, evaluation.dataset)
    if options.hooks.on_loaded:
        options.hooks.on_loaded(samples)
    with folder_lock(out, f"{protocol.name} batch"):
        claim_batch_folder(out, f"evaluate {protocol.name}")
        check_config(out, {"protocol": protocol.name, "dataset": str(evaluation.dataset),
                           "settings": evaluation.settings.model_dump(mode="json"),
                           "models": {m.slug: m.spec for m in evaluation.models}}, fresh=options.fresh)
        ledger = Ledger(out / layout.LEDGER)
        if options.fresh:
            ledger.clear()
        units = []
        for model in evaluation.models:
            for sample in samples:
                key = f"{model.slug}/{sample.id}"
                run_dir = out / key
                if not run_dir.resolve().is_relative_to(out.resolve()):
                    raise ProjectGenError(f"unsafe run folder for {key}")
                if options.fresh and run_dir.exists():
                    shutil.rmtree(run_dir)
                units.append(SampleUnit(key, model, sample, run_dir))
        concurrency = options.concurrency
        call_slots, sandbox_slots = concurrency.limits() if concurrency is not None else (None, None)
        batch = SampleBatch(protocol=protocol, settings=evaluation.settings, dataset=evaluation.dataset,
                            base_url=options.base_url, sampling=dict(options.sampling),
                            runner_settings=options.runner_settings, runner_factory=options.runner_factory,
                            checkpoint_url=options.checkpoint_url, progress=options.hooks.progress,
                            call_slots=call_slots, sandbox_slots=sandbox_slots)
        executor = options.executor or LocalExecutor(workers=concurrency.workers if concurrency is not None else 1)
        rows = run_batch(batch, units, ledger, executor, on_start=options.hooks.on_start, on_row=options.hooks.on_row)
        results = summarize(protocol, evaluation, list(rows.values()))
        write_atomic(out / layout.RESULTS_JSON, results.model_dump_json(indent=1) + "\n")
        return results
