"""One task x method x model unit of the batch engine: a run of that method in its folder
(``OUT/<method>/<model-slug>/<task-id>/``; LiveCoder's at ``OUT/<model-slug>/<task-id>/`` in an experiment folder
begun before that layout, `projectgen.experiments.folder_layout`).

How a pair runs depends on what its folder holds when the experiment is planned (`pair_mode`):
a ``summary.json`` means it finished (its figures are collected from the folder without running
anything); ``run.json`` and a checkpoint (``checkpoints.sqlite``, or a PostgreSQL URL in run.json)
but no summary mean it was killed or raised (it resumes: the checkpointer replays what was done,
so no finished model call is repeated); anything else starts afresh in an emptied folder, as a
run with the unit's own run id. An executor may start a unit twice (Ray retries a unit whose
worker died): a folder whose run.json has the unit's run id was started by this very plan, so
it is resumed (or collected) rather than emptied.

On a worker that does not see the driver's files, the unit runs `relocated` into a folder of
that machine (`projectgen.experiments.engine.Relocatable`); the row that comes back names the
driver's folder again (`PairBatch.received`).
"""
from __future__ import annotations

import json
import shutil
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from projectgen.config import Settings
from projectgen.datasets.published import task_weight
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.denominators import nothing_produced
from projectgen.experiments.custom_arms import check_run_method, custom_run_parts
from projectgen.experiments.engine import Batch, ProgressFn
from projectgen.experiments.executors import print_progress, worker_runner
from projectgen.experiments.figures import FINISHED, PairResult, pair_from_run
from projectgen.experiments.folder_layout import PAIR_LAYOUT, pair_key
from projectgen.experiments.models import ExperimentModel
from projectgen.experiments.spec import ExperimentSpec
from projectgen.external.methods import is_external
from projectgen.external.systems import describe_system
from projectgen.llm import ModelRoles
from projectgen.llm.call_slots import CallSlots, limit_calls
from projectgen.llm.specs import REFERENCE_SPEC
from projectgen.runs.folder import read_manifest
from projectgen.runs.layout import RunLayout
from projectgen.runs.output_scorers import REFERENCE_SCORERS
from projectgen.runs.request import RunRequest

if TYPE_CHECKING:
    from projectgen.evaluation.runner import RunnerSettings
    from projectgen.llm.pricing import PriceTable

RunMode = Literal["new", "resume", "collect"]


@dataclass(frozen=True)
class PairUnit:
    """One unit to run: its method, model and task, its run folder and how to run it there."""

    key: str
    model: ExperimentModel
    task: Task
    run_dir: Path
    mode: RunMode
    method: str = "livecoder"
    run_id: str = ""  # the run id a new run gets (see the module docstring)
    fresh: bool = False  # --fresh: an external system's run starts over (it has no checkpoints to tell by)
    sync: Callable[[], None] | None = None  # set on a worker only (`relocated`), never pickled

    @classmethod
    def plan(cls, out_dir: Path, model: ExperimentModel, task: Task, *, fresh: bool,
             method: str = "livecoder", layout: str = PAIR_LAYOUT) -> PairUnit:
        """The unit of `method`, `model` and `task` in the experiment folder `out_dir` (of folder `layout`)."""
        key = pair_key(model.slug, task.id, method, layout)
        run_dir = out_dir / key
        if ".." in (model.slug, task.id, method) or not run_dir.resolve().is_relative_to(out_dir.resolve()):
            raise ProjectGenError(f"unsafe run folder for {key}")
        return cls(key, model, task, run_dir, pair_mode(run_dir, fresh), method, run_id=uuid.uuid4().hex[:12],
                   fresh=fresh)

    @property
    def workspace(self) -> Path:
        """The run folder on the driver: all the unit writes."""
        return self.run_dir

    def relocated(self, workspace: Path, sync: Callable[[], None] | None = None) -> PairUnit:
        """The unit running in `workspace` (a worker's copy of the run folder), calling `sync` as
        `projectgen.experiments.engine.Relocatable` says."""
        return replace(self, run_dir=workspace, sync=sync)

    def current_mode(self) -> RunMode:
        """How to run now: as planned, unless the folder holds a run this plan started (a retry)."""
        if self.mode != "collect" and self.run_id and folder_run_id(self.run_dir) == self.run_id:
            return "collect" if RunLayout(self.run_dir).is_finished() else "resume"
        return self.mode


def folder_run_id(run_dir: Path) -> str | None:
    """The run id in a run folder's run.json, or None."""
    try:
        return json.loads(RunLayout(run_dir).manifest.read_text(encoding="utf-8")).get("run_id")
    except (OSError, ValueError, AttributeError):
        return None


def pair_mode(run_dir: Path, fresh: bool) -> RunMode:
    """Collect a finished folder, resume an interrupted one, else start anew (see the module docstring)."""
    if fresh:
        return "new"
    if RunLayout(run_dir).is_finished():
        return "collect"
    if RunLayout(run_dir).manifest.is_file() and checkpointed(run_dir):
        return "resume"
    return "new"


def checkpointed(run_dir: Path) -> bool:
    """Whether a run folder's checkpoints exist: its SQLite file, or a PostgreSQL URL its run.json names."""
    folder = RunLayout(run_dir)
    if folder.checkpoints.is_file():
        return True
    try:
        return bool(json.loads(folder.manifest.read_text(encoding="utf-8")).get("checkpoint_url"))
    except (OSError, ValueError, AttributeError):
        return False


def task_loc(task: Task) -> int | None:
    """The task's #LOC weight (published, else its reference's), or None when its reference cannot be read."""
    try:
        return task_weight(task).loc
    except OSError:
        return None


@dataclass(frozen=True)
class PairBatch(Batch[PairUnit, Any, PairResult]):
    """The pairs of one experiment: each worker has its own sandbox runner; a ledger line is a `PairResult`.

    `runner_factory` makes a worker's runner (default `SandboxRunner()` logging to `progress`);
    `progress(key, message)` relays the runs'
    progress lines.
    """

    spec: ExperimentSpec
    prices: PriceTable
    runner_factory: Callable[[], Any] | None = None
    progress: ProgressFn | None = None
    runner_settings: RunnerSettings | None = None  # for the default SandboxRunner (picklable, unlike a factory)
    call_slots: CallSlots | None = None  # model calls in flight per model or endpoint, shared by the workers
    sandbox_slots: threading.Semaphore | None = None  # sandbox runs at once, shared by the default runners

    def setup(self) -> Any:
        if self.runner_factory is not None:
            return self.runner_factory()
        return worker_runner(self.runner_settings, self.progress, self.sandbox_slots)

    def for_workers(self) -> PairBatch:
        """The batch on another process: progress lines go to that worker's stderr (Ray shows them on
        the driver's terminal); a runner factory must pickle (use `runner_settings` where it would not).
        The caps of this process stay here (the executor's slots cap the workers there)."""
        return replace(self, progress=print_progress if self.progress is not None else None, call_slots=None,
                       sandbox_slots=None)

    def received(self, unit: PairUnit, row: PairResult) -> PairResult:
        """The row naming the driver's run folder (a relocated unit's names the worker's)."""
        return row.model_copy(update={"run_dir": str(unit.run_dir)}) if row.run_dir is not None else row

    def run(self, unit: PairUnit, state: Any) -> PairResult:
        """Run (or resume, or collect) the unit's run with `state` as its sandbox runner; the row says how
        protected its tests were."""
        return self.attempt(unit, state).model_copy(update={"sandbox": state.isolation(), "key": unit.key})

    def attempt(self, unit: PairUnit, state: Any) -> PairResult:
        from projectgen.runs.livecoder import Run, RunParts

        scorers = [loaded.scorer for loaded in self.spec.scorers]
        figures = dict(model=unit.model, task=unit.task, prices=self.prices, runner=state, method=unit.method,
                       denominator=self.spec.denominator, scorers=tuple(scorer.name for scorer in scorers))
        custom = self.spec.custom_methods.get(unit.method)
        mode = unit.current_mode()
        if mode != "new" and RunLayout(unit.run_dir).manifest.is_file():
            check_run_method(unit.run_dir, read_manifest(unit.run_dir).custom_method, custom)
        if mode == "collect":
            return pair_from_run(unit.run_dir, how="collected", **figures)
        if is_external(unit.method):
            return pair_from_run(unit.run_dir, how=self.run_external(unit, state), **figures)
        models, model_specs = self.models_for(unit)
        progress = self.progress
        request = RunRequest.for_task(unit.task, method=self.spec.base_method(unit.method), models=model_specs,
                                      settings=self.spec.settings, attempt_settings=self.spec.attempt_settings,
                                      knowledge_store=self.spec.knowledge_url, embedding=self.spec.embedding,
                                      max_tokens=self.spec.max_tokens, checkpoint_url=self.spec.checkpoint_url)
        if custom is not None:
            request = request.model_copy(update={"custom_method": custom.record()})
        # The scores against the task's reference are taken where the run ends and kept in its log, so the
        # row reads them (`pair_from_run`) rather than scoring the folder again.
        agents, graph = custom_run_parts(custom, request, models) if custom is not None else (None, None)
        parts = RunParts(models=models, agents=agents, project_graph=graph, runner=state, sync=unit.sync,
                         scorers=(*REFERENCE_SCORERS, *scorers),
                         progress=(lambda message: progress(unit.key, message)) if progress else None)
        if mode == "resume":
            try:
                Run.resume(unit.run_dir, parts).run()
                return pair_from_run(unit.run_dir, how="resumed", **figures)
            except ProjectGenError as exc:
                if "no checkpoint to resume from" not in str(exc):
                    raise
        # A new run starts in an emptied folder: LiveCoder's best-repository and knowledge stores are
        # per task, not per run, so leftovers of an earlier run in the same folder would leak into it.
        if unit.run_dir.exists():
            shutil.rmtree(unit.run_dir)
        Run.open(request, unit.run_dir, parts, run_id=unit.run_id or None).run()
        return pair_from_run(unit.run_dir, **figures)

    def run_external(self, unit: PairUnit, state: Any) -> str:
        """Run the unit's external system (`projectgen.external.runner`); how: "resumed" when its folder held a
        killed run of the same request (its paid calls replayed), else "run"."""
        from projectgen.external.runner import ExternalRun, run_external

        folder = RunLayout(unit.run_dir)
        if unit.fresh and unit.run_id and folder_run_id(unit.run_dir) != unit.run_id and unit.run_dir.exists():
            shutil.rmtree(unit.run_dir)  # --fresh: not even the call cache of an earlier run is kept
        again = folder.manifest.is_file()
        models, model_specs = self.models_for(unit)
        settings = Settings.with_profile(unit.task.settings_profile, self.spec.settings)
        label = None
        if unit.model.is_reference:  # the oracle's replies are known: the cap fits the longest
            from projectgen.llm.naming import REFERENCE_LABEL
            from projectgen.oracles.reference_replay import oracle_reply_cap

            label = REFERENCE_LABEL
            settings = settings.model_copy(update={"max_reply_chars": oracle_reply_cap(unit.task,
                                                                                       settings.max_reply_chars)})
        system_path = self.spec.system_paths.get(unit.method)
        progress = self.progress
        run_external(describe_system(unit.method), ExternalRun(
            task=unit.task, run_dir=unit.run_dir, model=models.default, model_specs=model_specs, model_label=label,
            settings=settings, max_tokens=self.spec.max_tokens, system_path=Path(system_path) if system_path else None,
            measure_unit_tests=self.spec.attempt_settings.measure_unit_tests,
            run_id=unit.run_id, progress=(lambda message: progress(unit.key, message)) if progress else None,
            sync=unit.sync), state, REFERENCE_SCORERS)
        return "resumed" if again else "run"

    def models_for(self, unit: PairUnit) -> tuple[ModelRoles, dict[str, str]]:
        """The unit's models, their calls taking the batch's call slots, and the specs its run.json records."""
        models, specs = self.unlimited_models(unit)
        if self.spec.faults:
            from projectgen.llm.faults import inject_faults

            models, specs = inject_faults(models, self.spec.faults), {**specs, "faults": self.spec.faults}
        return (limit_calls(models, self.call_slots) if self.call_slots is not None else models), specs

    def unlimited_models(self, unit: PairUnit) -> tuple[ModelRoles, dict[str, str]]:
        """The unit's models and the specs its run.json records (the reference replay is built per task)."""
        if unit.model.is_reference:
            from projectgen.oracles.reference_replay import reference_model

            return ModelRoles(reference_model(unit.task)), {"default": REFERENCE_SPEC}
        spec, base_url, sampling = unit.model.spec_for(unit.task.id), self.spec.base_url, dict(self.spec.sampling)
        return (ModelRoles.from_specs(spec, base_url=base_url, **sampling),
                {"default": spec, **({"base_url": base_url} if base_url else {}),
                 **{key: str(value) for key, value in sampling.items()}})

    def failed(self, unit: PairUnit, reason: str) -> PairResult:
        """An error row; on a published task it keeps the paper's #Tests, with no test passed."""
        counts = nothing_produced(unit.task, self.spec.denominator)
        return PairResult(key=unit.key, method=unit.method, model=unit.model.slug, spec=unit.model.spec,
                          task_id=unit.task.id,
                          status="error", error=reason, run_dir=str(unit.run_dir), loc=task_loc(unit.task),
                          final_unit_passed=counts and counts.passed, final_unit_total=counts and counts.total,
                          unit_denominator=counts and counts.denominator)

    def record(self, row: PairResult) -> dict[str, Any]:
        return row.model_dump(mode="json", exclude={"key"})

    def restore(self, entry: dict[str, Any]) -> PairResult | None:
        """A finished (or budget-limited) pair; an error line is run again."""
        if entry.get("status") not in FINISHED:
            return None
        return PairResult.model_validate(entry).model_copy(update={"how": "ledger"})
