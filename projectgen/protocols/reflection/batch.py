"""LiveRepoReflection's batch: every exercise x model x edit format as one unit of the batch engine.

`run_reflect(dataset, models, out_dir, ...)` loads the exercises (`projectgen.datasets.exercism`),
plans one unit per (model, edit format, exercise) and runs them on the engine
(`projectgen.experiments.engine`) with the ledger in ``OUT/ledger.jsonl``. A unit's folder is
``OUT/<model>/<format>/<exercise>/`` (`projectgen.protocols.reflection.unit`). The folder holds::

    reflect.json    what the batch is (dataset, tries, models); checked on every continue
    ledger.jsonl    one line per unit that finished (its result) or failed (its one-line reason)
    <model>/<format>/<exercise>/   the unit's run folder (checkpoints or their thread, calls, usage, summary.json)
    results.json    versioned; `summary` holds one entry per (model, edit format)
    results.md      the same as Markdown tables; results.html: the pass@k curves and the tables

Continuing: run the same command again. A unit whose ledger line says it finished is skipped; any
other resumes in its folder (checkpoints and call cache: no finished model call is made again), or
is read back from it when it had finished but its ledger line was lost. A unit whose work raised
(the test harness could not run the tests, the model failed for good) is an error line: never a
pass or a fail, left out of every figure, counted apart, and retried on the next continue. An exercise whose
reference itself cannot get its dependencies here (`SandboxRunner.environment_incomplete`: a Go module without
the Go proxy, a crate without crates.io) is "environment incomplete": no model is asked, it is named with its
reason and left out of every figure (the machine's shortfall, not the model's), and checked again on a continue.

Checkpoints are in SQLite in each unit's folder, or with `checkpoint_url` in one PostgreSQL
database, each unit on a thread of its own (`projectgen.protocols.reflection.unit`): what a batch whose units
may land on several machines needs, since a unit retried elsewhere resumes from the database.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from projectgen.datasets.exercism import LANGUAGES, Exercise, ExerciseSet, exercise_task, load_exercises
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.languages.toolchains import probe_toolchain
from projectgen.evaluation.runner import RunnerSettings
from projectgen.experiments.batch_folder import claim_batch_folder
from projectgen.experiments.concurrency import Concurrency
from projectgen.experiments.engine import Batch, Executor, ProgressFn, run_batch
from projectgen.experiments.executors import LocalExecutor, print_progress, worker_runner
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.models import ExperimentModel, preflight
from projectgen.experiments.results_writer import write_results
from projectgen.llm.call_slots import CallSlots, limit_calls
from projectgen.llm.naming import describe_model
from projectgen.protocols.definition import BatchOptions, Evaluation, Hooks
from projectgen.protocols.evaluate import evaluate
from projectgen.protocols.reflection.defects import exercise_declarations
from projectgen.protocols.reflection.results import (INCOMPLETE, ReflectResults, ReflectRow, reflect_page,
                                                       summarize_reflect)
from projectgen.protocols.reflection.settings import ReflectionSettings
from projectgen.runs import layout
from projectgen.runs.locking import folder_lock

REFLECT_CONFIG = "reflect.json"
FORMATS = ("whole", "patch")


@dataclass(frozen=True)
class ReflectUnit:
    """One (model, edit format, exercise) to run in its folder (`Relocatable`: a worker that does not see the
    driver's files runs it in a folder of its own, mirrored back)."""

    key: str
    model: ExperimentModel
    edit_format: str
    exercise: Exercise
    run_dir: Path
    sync: Callable[[], None] | None = None  # set on a worker only (`relocated`), never pickled

    @property
    def workspace(self) -> Path:
        return self.run_dir

    def relocated(self, workspace: Path, sync: Callable[[], None] | None = None) -> ReflectUnit:
        return replace(self, run_dir=workspace, sync=sync)


@dataclass(frozen=True)
class ReflectBatch(Batch[ReflectUnit, Any, ReflectRow]):
    """The units of one batch: each worker has its own sandbox runner."""

    tries: int
    base_url: str | None = None
    runner_factory: Callable[[], Any] | None = None
    progress: ProgressFn | None = None
    runner_settings: RunnerSettings | None = None  # what a worker's runner is made from when there is no factory
    sampling: Mapping[str, float | int] = field(default_factory=dict)
    """Overrides of the sampling real models are made with (`make_chat_model`'s temperature, top_p, max_tokens)."""
    checkpoint_url: str | None = None
    """A PostgreSQL database for every unit's checkpoints (None: SQLite in each unit's folder)."""
    call_slots: CallSlots | None = None  # model calls in flight per model or endpoint, shared by the workers
    sandbox_slots: threading.Semaphore | None = None  # sandbox runs at once, shared by the default runners

    def setup(self) -> Any:
        if self.runner_factory is not None:
            return self.runner_factory()
        return worker_runner(self.runner_settings, self.progress, self.sandbox_slots)

    def for_workers(self) -> ReflectBatch:
        """The batch on another process: its runner from `runner_settings`, progress to that worker's stderr;
        the caps of this process stay here (the executor's slots cap the workers there)."""
        return replace(self, runner_factory=None, progress=print_progress if self.progress is not None else None,
                       call_slots=None, sandbox_slots=None)

    def run(self, unit: ReflectUnit, state: Any) -> ReflectRow:
        from projectgen.protocols.reflection.unit import reflection_request, run_reflection

        incomplete = state.environment_incomplete(exercise_task(unit.exercise))
        if unit.model.is_reference and unit.exercise.lacking_reference:
            incomplete = (f"environment incomplete: this copy of the exercise lacks its reference "
                          f"({', '.join(unit.exercise.lacking_reference)}): there is nothing to replay")
        if incomplete:  # asked before any model call: the machine's or the data's shortfall, never the model's failure
            return ReflectRow(key=unit.key, model=unit.model.slug, edit_format=unit.edit_format,
                              task_id=unit.exercise.id, language=unit.exercise.language_name, status=INCOMPLETE,
                              error=incomplete, sandbox=state.isolation())
        model = self.model_for(unit)
        progress = self.progress
        request = reflection_request(unit.exercise, spec=unit.model.spec, model_label=describe_model(model),
                                     edit_format=unit.edit_format, tries=self.tries,
                                     checkpoint_url=self.checkpoint_url)
        result = run_reflection(unit.exercise, unit.run_dir, request, model=model, runner=state,
                                model_slug=unit.model.slug, scope=unit.key, sync=unit.sync,
                                progress=(lambda message: progress(unit.key, message)) if progress else None)
        return ReflectRow(key=unit.key, model=unit.model.slug, edit_format=unit.edit_format, task_id=unit.exercise.id,
                          language=unit.exercise.language_name, status=result.status,
                          result=result.model_dump(mode="json"), sandbox=state.isolation())

    def model_for(self, unit: ReflectUnit) -> Any:
        """The unit's chat model (the exercise's reference replay, or the spec's model), its calls taking the
        batch's call slots."""
        if unit.model.is_reference:
            from projectgen.oracles.reference_replay import exercise_reference_model

            model = exercise_reference_model(unit.exercise)
        else:
            from projectgen.llm.factory import make_chat_model

            model = make_chat_model(unit.model.spec_for(unit.exercise.id), base_url=self.base_url, **self.sampling)
        return limit_calls(model, self.call_slots) if self.call_slots is not None else model

    def failed(self, unit: ReflectUnit, reason: str) -> ReflectRow:
        return ReflectRow(key=unit.key, model=unit.model.slug, edit_format=unit.edit_format, task_id=unit.exercise.id,
                          language=unit.exercise.language_name, status="error", error=reason)

    def record(self, row: ReflectRow) -> dict[str, Any]:
        return row.model_dump(mode="json", exclude={"key"})

    def restore(self, entry: dict[str, Any]) -> ReflectRow | None:
        """A finished unit (passed or failed); an error line is run again, and so is an environment-incomplete one
        (checked again without a model call: the machine may have what the reference needs by then)."""
        if entry.get("status") not in ("passed", "failed"):
            return None
        return ReflectRow.model_validate(entry)


def without_toolchain(exercises: Sequence[Exercise]) -> tuple[list[Exercise], dict[str, str]]:
    """The exercises whose language this machine can test, and for each language it cannot, one line:
    how many exercises are skipped and what to install (toolchains probed, never assumed)."""
    toolchains = {language: probe_toolchain(language) for language in {e.language for e in exercises}}
    ready = [e for e in exercises if toolchains[e.language].ready]
    missing = {}
    for language, toolchain in sorted(toolchains.items()):
        if not toolchain.ready:
            count = sum(e.language == language for e in exercises)
            missing[LANGUAGES.get(language, language)] = f"{count} exercise(s) skipped: {toolchain.not_ready_reason()}"
    return ready, missing


def select(exercises: ExerciseSet, tasks: Sequence[str] | None) -> tuple[list[Exercise], dict[str, str]]:
    """The exercises (and load errors) of the ids asked for; an unknown id is refused, naming the known ones."""
    if tasks is None:
        return exercises.exercises, exercises.errors
    known = {e.id for e in exercises.exercises} | set(exercises.errors)
    unknown = [t for t in tasks if t not in known]
    if unknown:
        listed = ", ".join(sorted(known)[:20]) + (", ..." if len(known) > 20 else "")
        raise ProjectGenError(f"unknown task(s) {', '.join(unknown)} in {exercises.root} (exercises: {listed})")
    return ([e for e in exercises.exercises if e.id in tasks],
            {k: v for k, v in exercises.errors.items() if k in tasks})


def check_reflect_json(out_dir: Path, config: dict[str, Any], *, fresh: bool) -> None:
    """Write reflect.json, or check that a continued batch keeps its dataset, tries, sampling and model specs."""
    path = out_dir / REFLECT_CONFIG
    if path.exists() and not fresh:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ProjectGenError(f"{path}: unreadable ({exc}); use --fresh or another --out") from None
        changed = [name for name in ("dataset", "tries", "sampling") if stored.get(name) != config.get(name)]
        if changed:
            raise ProjectGenError(f"{out_dir} holds a reflect batch with other {', '.join(changed)}; continue it with "
                                  "the same options, or use --fresh or another --out")
        for slug, spec in (stored.get("models") or {}).items():
            if config["models"].get(slug, spec) != spec:
                raise ProjectGenError(f"{out_dir}: model folder {slug!r} holds runs of {spec!r}, not "
                                      f"{config['models'][slug]!r}; label the model differently (LABEL=SPEC)")
        config = {**config, "models": {**stored.get("models", {}), **config["models"]}}
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(config, indent=1) + "\n")


def plan_units(out_dir: Path, models: Sequence[ExperimentModel], formats: Sequence[str], exercises: Sequence[Exercise],
               *, fresh: bool) -> list[ReflectUnit]:
    """One unit per model, edit format and exercise, in that order; `fresh` empties their folders."""
    units = []
    for model in models:
        for fmt in formats:
            for exercise in exercises:
                key = f"{model.slug}/{fmt}/{exercise.id}"
                run_dir = out_dir / key
                if not run_dir.resolve().is_relative_to(out_dir.resolve()):
                    raise ProjectGenError(f"unsafe run folder for {key}")
                if fresh and run_dir.exists():
                    shutil.rmtree(run_dir)
                units.append(ReflectUnit(key, model, fmt, exercise, run_dir))
    return units


def parse_formats(text: str | Sequence[str]) -> tuple[str, ...]:
    """``whole``, ``patch`` or ``whole,patch`` as a tuple; anything else is a one-line error."""
    given = [f.strip() for f in (text.split(",") if isinstance(text, str) else text) if f.strip()]
    unknown = [f for f in given if f not in FORMATS]
    if unknown or not given:
        raise ProjectGenError(f"unknown edit format {', '.join(unknown) or repr(text)} (formats: whole, patch, or "
                              "whole,patch)")
    return tuple(dict.fromkeys(given))


def run_reflect(dataset: Path | str, models: Sequence[ExperimentModel | str], out_dir: Path | str, *,
                formats: Sequence[str] = ("whole",), tries: int = 2, tasks: Sequence[str] | None = None,
                executor: Executor | None = None, fresh: bool = False, base_url: str | None = None,
                sampling: Mapping[str, float | int] | None = None,
                runner_factory: Callable[[], Any] | None = None, runner_settings: Any = None,
                hooks: Hooks | None = None, checkpoint_url: str | None = None,
                concurrency: Concurrency | None = None) -> ReflectResults:
    """Run LiveRepoReflection's protocol on every exercise of `dataset` under every model and edit format,
    `tries` tries each (1 to 10); continue from `out_dir`'s ledger: the reflection preset of `evaluate`.
    `sampling` overrides what real models are made with (temperature, top_p, max_tokens: `make_chat_model`),
    recorded in reflect.json. `checkpoint_url` keeps every unit's checkpoints in that PostgreSQL database (checked,
    and its tables made, before anything is written). `executor` runs the units (default: `concurrency.workers` at
    a time, or one); `concurrency` caps the model calls and sandbox runs of this process (None: no caps). Writes
    results.json, results.md and results.html and returns the results."""
    if not 1 <= tries <= 10:
        raise ProjectGenError(f"--tries must be from 1 to 10, got {tries}")
    settings = ReflectionSettings(edit_formats=parse_formats(formats), tries=tries)
    options = BatchOptions(tasks=tasks, fresh=fresh, executor=executor, concurrency=concurrency, base_url=base_url,
                           sampling=dict(sampling or {}), runner_settings=runner_settings,
                           runner_factory=runner_factory, checkpoint_url=checkpoint_url, hooks=hooks or Hooks())
    results = evaluate("reflection", dataset, models, settings, out_dir, options)
    if not isinstance(results, ReflectResults):  # the protocol's own batch (`reflect_batch`) makes these
        raise TypeError(f"the reflection protocol's batch gave {type(results).__name__}, not ReflectResults")
    return results


def reflect_batch(evaluation: Evaluation[ReflectionSettings]) -> ReflectResults:
    """The protocol's batch: every exercise x model x edit format as one unit on the engine, resumable from the
    folder's ledger; writes results.json, results.md and results.html."""
    out_dir, options, hooks = evaluation.out, evaluation.options, evaluation.options.hooks
    formats, tries, parsed = evaluation.settings.edit_formats, evaluation.settings.tries, evaluation.models
    sampling, checkpoint_url, concurrency = options.sampling, options.checkpoint_url, options.concurrency
    for model in parsed:
        preflight(model, options.base_url)
    exercises = load_exercises(evaluation.dataset)
    chosen, load_errors = select(exercises, options.tasks)
    chosen, missing = without_toolchain(chosen)
    if checkpoint_url is not None:
        from projectgen.runs.checkpoints import check_checkpoint_database

        asyncio.run(check_checkpoint_database(checkpoint_url))
    if hooks.on_loaded:
        hooks.on_loaded(exercises)
    if hooks.on_missing and missing:
        hooks.on_missing(missing)
    with folder_lock(out_dir, "reflect batch"):
        claim_batch_folder(out_dir, "reflect")
        check_reflect_json(out_dir, {"dataset": str(exercises.root), "tries": tries,
                                     "models": {m.slug: m.spec for m in parsed},
                                     **({"sampling": dict(sampling)} if sampling else {})}, fresh=options.fresh)
        ledger = Ledger(out_dir / layout.LEDGER)
        if options.fresh:
            ledger.clear()
        units = plan_units(out_dir, parsed, formats, chosen, fresh=options.fresh)
        call_slots, sandbox_slots = concurrency.limits() if concurrency is not None else (None, None)
        batch = ReflectBatch(tries=tries, base_url=options.base_url, runner_factory=options.runner_factory,
                             progress=hooks.progress, runner_settings=options.runner_settings,
                             sampling=dict(sampling), checkpoint_url=checkpoint_url, call_slots=call_slots,
                             sandbox_slots=sandbox_slots)
        executor = options.executor or LocalExecutor(workers=concurrency.workers if concurrency is not None else 1)
        rows = run_batch(batch, units, ledger, executor, on_start=hooks.on_start, on_row=hooks.on_row)
        results = summarize_reflect(str(exercises.root), str(out_dir), tries, parsed, formats, list(rows.values()),
                                    skipped=exercises.other_languages, load_errors=load_errors,
                                    missing_toolchains=missing,
                                    declarations=exercise_declarations(chosen))
        write_results(out_dir, results, reflect_page(results))
        return results
