"""One task x method x model unit of the batch engine: a run of that method in its folder
(``OUT/<model-slug>/<task-id>/`` for LiveCoder, ``OUT/<method>/<model-slug>/<task-id>/`` otherwise).

How a pair runs depends on what its folder holds when the experiment is planned (`pair_mode`):
a ``summary.json`` means it finished (its figures are collected from the folder without running
anything); ``run.json`` and a checkpoint but no summary mean it was killed or raised (it resumes:
the checkpointer replays what was done, so no finished model call is repeated); anything else
starts afresh in an emptied folder.
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.experiments.engine import Batch
from projectgen.experiments.figures import FINISHED, PairResult, pair_from_run, pair_key
from projectgen.experiments.models import ExperimentModel
from projectgen.experiments.spec import ExperimentSpec
from projectgen.llm.specs import REFERENCE_SPEC
from projectgen.runs import layout

RunMode = Literal["new", "resume", "collect"]
ProgressFn = Callable[[str, str], None]  # (pair key, or "sandbox"; message)


@dataclass(frozen=True)
class PairUnit:
    """One unit to run: its method, model and task, its run folder and how to run it there."""

    key: str
    model: ExperimentModel
    task: Task
    run_dir: Path
    mode: RunMode
    method: str = "livecoder"

    @classmethod
    def plan(cls, out_dir: Path, model: ExperimentModel, task: Task, *, fresh: bool,
             method: str = "livecoder") -> PairUnit:
        """The unit of `method`, `model` and `task` in the experiment folder `out_dir`."""
        key = pair_key(model.slug, task.id, method)
        run_dir = out_dir / key
        if ".." in (model.slug, task.id, method) or not run_dir.resolve().is_relative_to(out_dir.resolve()):
            raise ProjectGenError(f"unsafe run folder for {key}")
        return cls(key, model, task, run_dir, pair_mode(run_dir, fresh), method)


def pair_mode(run_dir: Path, fresh: bool) -> RunMode:
    """Collect a finished folder, resume an interrupted one, else start anew (see the module docstring)."""
    if fresh:
        return "new"
    if (run_dir / layout.SUMMARY).is_file():
        return "collect"
    if (run_dir / layout.MANIFEST).is_file() and (run_dir / layout.CHECKPOINTS).is_file():
        return "resume"
    return "new"


def task_loc(task: Task) -> int | None:
    """The task's #LOC weight (published, else its reference's), or None when its reference cannot be read."""
    from projectgen.datasets.published import task_weight

    try:
        return task_weight(task).loc
    except OSError:
        return None


@dataclass(frozen=True)
class PairBatch(Batch[PairUnit, Any, PairResult]):
    """The pairs of one experiment: each worker has its own sandbox runner; a ledger line is a `PairResult`.

    `runner_factory` makes a worker's runner (default `SandboxRunner()` logging to `progress`);
    `prices` is a `projectgen.llm.pricing.PriceTable`; `progress(key, message)` relays the runs'
    progress lines.
    """

    spec: ExperimentSpec
    prices: Any
    runner_factory: Callable[[], Any] | None = None
    progress: ProgressFn | None = None

    def setup(self) -> Any:
        if self.runner_factory is not None:
            return self.runner_factory()
        from projectgen.evaluation.runner import SandboxRunner

        progress = self.progress
        return SandboxRunner(log=(lambda message: progress("sandbox", message)) if progress else None)

    def run(self, unit: PairUnit, state: Any) -> PairResult:
        """Run (or resume, or collect) the unit's run with `state` as its sandbox runner."""
        from projectgen.runs.livecoder import run_livecoder
        from projectgen.runs.methods import method_attempt_settings

        figures = dict(model=unit.model, task=unit.task, prices=self.prices, runner=state, method=unit.method)
        if unit.mode == "collect":
            return pair_from_run(unit.run_dir, how="collected", **figures)
        settings = method_attempt_settings(unit.method, self.spec.attempt_settings)
        models, model_specs = self.models_for(unit)
        progress = self.progress
        common = dict(models=models, model_specs=model_specs, method=unit.method,
                      settings=self.spec.settings, attempt_settings=self.spec.attempt_settings, runner=state,
                      knowledge_url=self.spec.knowledge_url, max_tokens=self.spec.max_tokens,
                      progress=(lambda message: progress(unit.key, message)) if progress else None,
                      evaluate_unit=settings.measure_unit_tests)
        if unit.mode == "resume":
            try:
                run_livecoder(unit.task, unit.run_dir, resume=True, **common)
                return pair_from_run(unit.run_dir, how="resumed", **figures)
            except ProjectGenError as exc:
                if "no checkpoint to resume from" not in str(exc):
                    raise
        # A new run starts in an emptied folder: LiveCoder's best-repository and knowledge stores are
        # per task, not per run, so leftovers of an earlier run in the same folder would leak into it.
        if unit.run_dir.exists():
            shutil.rmtree(unit.run_dir)
        run_livecoder(unit.task, unit.run_dir, force=False, embeddings=self.spec.embedding, **common)
        return pair_from_run(unit.run_dir, **figures)

    def models_for(self, unit: PairUnit) -> tuple[Any, dict[str, str]]:
        """The unit's models and the specs its run.json records (the reference replay is built per task)."""
        from projectgen.llm import ModelRoles

        if unit.model.is_reference:
            from projectgen.llm.reference_replay import reference_model

            return reference_model(unit.task), {"default": REFERENCE_SPEC}
        spec, base_url, sampling = unit.model.spec_for(unit.task.id), self.spec.base_url, dict(self.spec.sampling)
        return (ModelRoles.from_specs(spec, base_url=base_url, **sampling),
                {"default": spec, **({"base_url": base_url} if base_url else {}),
                 **{key: str(value) for key, value in sampling.items()}})

    def failed(self, unit: PairUnit, reason: str) -> PairResult:
        return PairResult(key=unit.key, method=unit.method, model=unit.model.slug, spec=unit.model.spec,
                          task_id=unit.task.id,
                          status="error", error=reason, run_dir=str(unit.run_dir), loc=task_loc(unit.task))

    def record(self, row: PairResult) -> dict[str, Any]:
        return row.model_dump(mode="json", exclude={"key"})

    def restore(self, entry: dict[str, Any]) -> PairResult | None:
        """A finished (or budget-limited) pair; an error line is run again."""
        if entry.get("status") not in FINISHED:
            return None
        return PairResult.model_validate(entry).model_copy(update={"how": "ledger"})
