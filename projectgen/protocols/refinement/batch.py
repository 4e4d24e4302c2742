"""`projectgen refine`: every multi-turn task x model x strategy x context as a unit of the batch engine.

`run_refinement(spec, out_dir)` first validates every task (`check_multiturn_task`: each turn's
reference on its own tests, and on the next turn's tests; a task whose references fail is left
out), then plays each (model, strategy, context, task) through the refinement graph
(`projectgen.protocols.refinement.graph`) and summarises SR-Eval's figures. Both steps are units of the
batch engine (`projectgen.experiments.engine`) sharing one ledger, so a second invocation runs
only what is missing (an error unit runs again). The folder holds::

    ledger.jsonl                 one line per validated task and per finished task run
    <model>/<strategy>-<context>/<task>/
        a run folder (`projectgen.protocols.refinement.unit`): run.json, checkpoints, events.jsonl, usage.jsonl,
        prompts.jsonl, calls.jsonl (a rerun repeats no finished call); turns.json, turns/K/... each turn's
        record and the file it produced
    results.json, results.md, results.html

Models: a spec as for ``experiment --model`` ([LABEL=]SPEC); ``reference`` answers every turn
with that turn's reference (an oracle, labelled so everywhere); ``scripted:FILE`` replays a script
whose entries are keyed role ``refiner``, target the task id (or ``TASK@STRATEGY[/CONTEXT]`` for a
reply that differs by strategy: `projectgen.oracles.refinement_replay`), iteration the turn;
``scripted:examples`` is the bundled replay of the bundled tasks.
"""
from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from projectgen.datasets.multiturn import (TURN_SUITE, MultiTurnTask, TaskCheck, check_multiturn_task,
                                           load_multiturn_dataset)
from projectgen.datasets.task import Task
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.recent_runs import RecentRuns
from projectgen.evaluation.report import TestReport
from projectgen.experiments.batch_folder import claim_batch_folder
from projectgen.experiments.concurrency import Concurrency
from projectgen.experiments.engine import Batch, Executor, ProgressFn, run_batch
from projectgen.experiments.executors import LocalExecutor, print_progress, worker_runner
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.models import ExperimentModel, parse_models
from projectgen.experiments.results_writer import write_results
from projectgen.llm import make_chat_model
from projectgen.llm.call_slots import CallSlots, limit_calls
from projectgen.llm.naming import REFERENCE_LABEL, describe_model
from projectgen.llm.scripted import load_script, scripted_chat_model_class
from projectgen.llm.specs import SCRIPTED_PREFIX
from projectgen.oracles.refinement_replay import reference_turn_script, specialise_script
from projectgen.protocols.definition import BatchOptions, Evaluation, Hooks
from projectgen.protocols.evaluate import evaluate
from projectgen.protocols.refinement.refiner import CARRIES_CODE, CONTEXTS, STRATEGIES, check_setting
from projectgen.protocols.refinement.results import (RefinementResults, TaskRunRow, TurnRow, refinement_page,
                                                       summarize_setting)
from projectgen.protocols.refinement.settings import RefinementSettings
from projectgen.runs import layout
from projectgen.runs.locking import folder_lock

BUNDLED_REPLAY = "refine.replay"  # scripts/refine.replay.json: `scripted:examples`
EXAMPLES = "examples"


def resolve_model(text: str) -> ExperimentModel:
    """A model of a refinement batch from ``[LABEL=]SPEC``; ``scripted:examples`` is the bundled replay."""
    label, sep, rest = text.strip().partition("=")
    labelled = bool(sep and rest.strip() and label.strip() and ":" not in label and "/" not in label)
    spec = rest.strip() if labelled else text.strip()
    if spec == f"{SCRIPTED_PREFIX}{EXAMPLES}":
        from projectgen.datasets.examples import example_script_path

        text = f"{label.strip() if labelled else 'scripted-examples'}={SCRIPTED_PREFIX}" \
               f"{example_script_path(BUNDLED_REPLAY)}"
    model = ExperimentModel.parse(text)
    if model.script_dir is not None:
        raise ProjectGenError(f"{model.spec}: refine replays one script file (its entries name their task as "
                              "the target), not a folder of scripts")
    return model


def build_model(model: ExperimentModel, task: MultiTurnTask, strategy: str, context: str, *,
                base_url: str | None = None, sampling: Mapping[str, Any] | None = None) -> Any:
    """The chat model one task run talks to: the reference oracle, a replay specialised to the setting, or a
    real model (creating one never touches the network)."""
    if model.is_reference:
        script = reference_turn_script(task.id, [task.answer(t.number) for t in task.turns],
                                       language=task.language)
        return scripted_chat_model_class()(script=script, label=script.label)
    if model.spec.startswith(SCRIPTED_PREFIX):
        path = Path(model.spec[len(SCRIPTED_PREFIX):])
        script = specialise_script(load_script(path), strategy, context)
        return scripted_chat_model_class()(script=script, label=f"{script.label}, replay of {path}",
                                           fallback=script.fallback)

    return make_chat_model(model.spec, base_url=base_url, **dict(sampling or {}))


def describe(model: ExperimentModel, base_url: str | None, sampling: Mapping[str, Any] | None) -> str:
    """How reports name a model (a replay is always called one); fails early on a spec that cannot make a model."""
    if model.is_reference:
        return REFERENCE_LABEL
    if model.spec.startswith(SCRIPTED_PREFIX):
        from projectgen.llm.scripted import load_script

        path = model.spec[len(SCRIPTED_PREFIX):]
        script = load_script(path)
        return f"scripted model ({script.label or 'replay'}, replay of {path}): a recording, not a model"

    return describe_model(make_chat_model(model.spec, base_url=base_url, **dict(sampling or {})))


@dataclass(frozen=True)
class RefinementSpec:
    """What a refinement batch runs: a dataset of multi-turn tasks, models, strategies and contexts."""

    dataset: Path
    models: tuple[ExperimentModel, ...]
    strategies: tuple[str, ...] = STRATEGIES
    contexts: tuple[str, ...] = CONTEXTS
    tasks: tuple[str, ...] | None = None
    base_url: str | None = None
    sampling: Mapping[str, Any] = field(default_factory=dict)
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", parse_models(self.models))
        for strategy in self.strategies:
            check_setting(strategy, "basic")
        for context in self.contexts:
            check_setting("fh", context)

    def settings(self) -> tuple[list[tuple[str, str]], list[str]]:
        """The (strategy, context) pairs to run, and a note for each pair left out (golden with ci)."""
        pairs, skipped = [], []
        for strategy in self.strategies:
            for context in self.contexts:
                if context == "golden" and strategy not in CARRIES_CODE:
                    skipped.append(f"{strategy} with the golden context (Cumulative Instruction carries no code)")
                else:
                    pairs.append((strategy, context))
        if not pairs:
            raise ProjectGenError("nothing to run: " + "; ".join(skipped))
        return pairs, skipped


class TurnTests:
    """The sandbox runs of a batch, shared by its workers: the same turn's tests on the same files run once.

    The tests are deterministic programs of the candidate's files, so a repeat (the reference oracle
    under every strategy, a replay that gives the same file) gets the report of the run already made;
    runs that could not finish (a harness error, a timeout) are not kept.
    """

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.reports: dict[str, TestReport] = {}
        self.lock = threading.Lock()
        self.runs = 0

    def __getstate__(self) -> dict[str, Any]:
        """Sent to another process (a Ray worker) as its runner's settings: that worker makes its own
        runner and keeps its own reports."""
        return {"settings": self.runner.settings}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(worker_runner(state["settings"], print_progress))

    def evaluate(self, task: Task, candidate: Mapping[str, str]) -> TestReport:
        key = RecentRuns.key(task.id, str(task.root), TURN_SUITE, candidate)
        with self.lock:
            known = self.reports.get(key) if key is not None else None
        if known is not None:
            return known.model_copy(deep=True)
        report = self.runner.evaluate(task, dict(candidate), TURN_SUITE)
        with self.lock:
            self.runs += 1
            if key is not None and not report.error and not report.timed_out:
                self.reports[key] = report.model_copy(deep=True)
        return report


@dataclass(frozen=True)
class CheckUnit:
    key: str
    task: MultiTurnTask


@dataclass(frozen=True)
class CheckBatch(Batch[CheckUnit, TurnTests, TaskCheck]):
    """The validation of every task; a ledger line holds the check under ``check``."""

    tests: TurnTests

    def setup(self) -> TurnTests:
        return self.tests

    def run(self, unit: CheckUnit, state: TurnTests) -> TaskCheck:
        return check_multiturn_task(unit.task, state.evaluate)

    def failed(self, unit: CheckUnit, reason: str) -> TaskCheck:
        return TaskCheck(task_id=unit.task.id, error=reason)

    def record(self, row: TaskCheck) -> dict[str, Any]:
        return {"check": row.model_dump(mode="json")}

    def restore(self, entry: dict[str, Any]) -> TaskCheck | None:
        check = TaskCheck.model_validate(entry["check"])
        return None if check.error else check


@dataclass(frozen=True)
class TaskRunUnit:
    """One task played by one model under one strategy and context, in its own folder."""

    key: str
    model: ExperimentModel
    strategy: str
    context: str
    task: MultiTurnTask
    folder: Path
    expected: tuple[tuple[int, int], ...] = ()
    sync: Callable[[], None] | None = None  # set on a worker only (`relocated`), never pickled

    @property
    def workspace(self) -> Path:
        return self.folder

    def relocated(self, workspace: Path, sync: Callable[[], None] | None = None) -> TaskRunUnit:
        """This task run in `workspace` (a worker's copy of its folder), `sync` after each recorded call."""
        return replace(self, folder=workspace, sync=sync)


@dataclass(frozen=True)
class TaskRunBatch(Batch[TaskRunUnit, TurnTests, TaskRunRow]):
    """Task runs through the refinement graph; a ledger line holds the row under ``row``."""

    tests: TurnTests
    specs: Mapping[str, str]  # model folder name -> its spec: a row of another spec under that name runs again
    turn_counts: Mapping[str, int]
    base_url: str | None = None
    sampling: Mapping[str, Any] = field(default_factory=dict)
    max_tokens: int | None = None
    progress: ProgressFn | None = None
    call_slots: CallSlots | None = None  # model calls in flight per model or endpoint, shared by the workers

    def setup(self) -> TurnTests:
        return self.tests

    def for_workers(self) -> TaskRunBatch:
        """The batch on another process: progress lines go to that worker's stderr; the call caps of this
        process stay here."""
        return replace(self, progress=print_progress if self.progress is not None else None, call_slots=None)

    def received(self, unit: TaskRunUnit, row: TaskRunRow) -> TaskRunRow:
        """The row naming the driver's folder (a relocated unit's names the worker's)."""
        return row.model_copy(update={"folder": str(unit.folder)})

    def run(self, unit: TaskRunUnit, state: TurnTests) -> TaskRunRow:
        from projectgen.protocols.refinement.unit import refinement_request, run_refinement_task

        model = build_model(unit.model, unit.task, unit.strategy, unit.context, base_url=self.base_url,
                            sampling=self.sampling)
        if self.call_slots is not None:
            model = limit_calls(model, self.call_slots)
        request = refinement_request(unit.task, spec=unit.model.spec, strategy=unit.strategy, context=unit.context,
                                     max_tokens=self.max_tokens)
        progress = self.progress
        records = run_refinement_task(unit.task, unit.folder, request, model=model, evaluate=state.evaluate,
                                      expected=dict(unit.expected), scope=unit.key, sync=unit.sync,
                                      progress=(lambda message: progress(unit.key, message)) if progress else None)
        turns = [TurnRow(turn=r["turn"], passed=bool(r.get("passed")), tests_passed=r.get("tests_passed", 0),
                         tests_total=r.get("tests_total", 0), status=r.get("status", ""),
                         input_tokens=r.get("input_tokens", 0), output_tokens=r.get("output_tokens", 0),
                         failing=r.get("failing") or [], error=r.get("error"),
                         integrity_flags=r.get("integrity_flags") or []) for r in records]
        return self.row(unit, status="ok", turns=turns, sandbox=state.runner.isolation())

    def row(self, unit: TaskRunUnit, **fields: Any) -> TaskRunRow:
        return TaskRunRow(key=unit.key, model=unit.model.slug, spec=unit.model.spec, strategy=unit.strategy,
                          context=unit.context, task_id=unit.task.id, level=unit.task.level,
                          language=unit.task.language, folder=str(unit.folder),
                          **fields)

    def failed(self, unit: TaskRunUnit, reason: str) -> TaskRunRow:
        return self.row(unit, status="error", error=reason)

    def record(self, row: TaskRunRow) -> dict[str, Any]:
        return {"row": row.model_dump(mode="json")}

    def restore(self, entry: dict[str, Any]) -> TaskRunRow | None:
        row = TaskRunRow.model_validate(entry["row"])
        if not row.ok or self.specs.get(row.model) != row.spec or self.turn_counts.get(row.task_id) != len(row.turns):
            return None
        return row


def select_tasks(dataset: Path, tasks: Sequence[str] | None) -> tuple[list[MultiTurnTask], dict[str, str]]:
    """The dataset's tasks that load (only `tasks` when given), and folder -> reason for those that do not;
    unknown task ids are refused."""
    loaded, errors = load_multiturn_dataset(dataset)
    if tasks is None:
        return loaded, errors
    known = {task.id for task in loaded} | set(errors)
    unknown = [task for task in tasks if task not in known]
    if unknown:
        raise ProjectGenError(f"unknown task(s) {', '.join(unknown)} in {dataset} (tasks: "
                              f"{', '.join(sorted(known))})")
    return [t for t in loaded if t.id in tasks], {k: v for k, v in errors.items() if k in tasks}


def default_runner(hooks: Hooks, settings: Any = None, slots: threading.Semaphore | None = None) -> Any:
    return worker_runner(settings, hooks.progress, slots)


def validate_tasks(tasks: Sequence[MultiTurnTask], tests: TurnTests, ledger: Ledger, executor: Executor,
                   on_check: Callable[[TaskCheck], None] | None = None) -> dict[str, TaskCheck]:
    """task id -> its validation (`check_multiturn_task`), as units of the batch engine (the ledger keeps them)."""
    units = [CheckUnit(key=f"check/{task.id}", task=task) for task in tasks]
    checks = run_batch(CheckBatch(tests), units, ledger, executor, on_row=on_check)
    return {unit.task.id: checks[unit.key] for unit in units}


def check_dataset(dataset: Path | str, out_dir: Path | str, *, tasks: Sequence[str] | None = None, runner: Any = None,
                  executor: Executor | None = None, fresh: bool = False,
                  hooks: Hooks | None = None) -> tuple[list[TaskCheck], dict[str, str]]:
    """Only the validation of a dataset's tasks (``refine --check-only``): each turn's reference on its own tests
    and on the next turn's; resumable from the ledger in `out_dir`. Returns the checks (by task id) and the
    folders that do not load, with why."""
    out_dir, hooks = Path(out_dir), hooks or Hooks()
    loaded, load_errors = select_tasks(Path(dataset), tasks)
    with folder_lock(out_dir, "refine"):
        claim_batch_folder(out_dir, "refine")
        ledger = Ledger(out_dir / layout.LEDGER)
        if fresh:
            ledger.clear()
        checks = validate_tasks(loaded, TurnTests(runner or default_runner(hooks)), ledger,
                                executor or LocalExecutor(), hooks.on_check)
    return [checks[task.id] for task in loaded], load_errors


def run_refinement(spec: RefinementSpec, out_dir: Path | str, *, runner: Any = None, runner_settings: Any = None,
                   executor: Executor | None = None, fresh: bool = False, hooks: Hooks | None = None,
                   concurrency: Concurrency | None = None) -> RefinementResults:
    """Validate the tasks, play every (model, strategy, context, task), write results.json/md/html; resumable: the
    refinement preset of `evaluate`.

    `runner` runs the tests (default a `SandboxRunner` of `runner_settings`, its runs taking `concurrency`'s
    sandbox slots); `executor` runs the units (default: `concurrency.workers` at a time, or one), their model
    calls taking `concurrency`'s call slots (None: no caps); `fresh` forgets the ledger and the task runs' folders.
    """
    settings = RefinementSettings(strategies=spec.strategies, contexts=spec.contexts, max_tokens=spec.max_tokens)
    options = BatchOptions(tasks=spec.tasks, fresh=fresh, executor=executor, concurrency=concurrency,
                           base_url=spec.base_url, sampling=dict(spec.sampling), runner_settings=runner_settings,
                           runner_factory=(lambda: runner) if runner is not None else None, hooks=hooks or Hooks())
    results = evaluate("refinement", spec.dataset, spec.models, settings, out_dir, options)
    if not isinstance(results, RefinementResults):  # the protocol's own batch (`refinement_batch`) makes these
        raise TypeError(f"the refinement protocol's batch gave {type(results).__name__}, not RefinementResults")
    return results


def refinement_batch(evaluation: Evaluation[RefinementSettings]) -> RefinementResults:
    """The protocol's batch: validate the tasks, then every (model, strategy, context, task) as one unit on the
    engine, resumable from the folder's ledger; writes results.json, results.md and results.html."""
    out_dir, options, hooks, settings = evaluation.out, evaluation.options, evaluation.options.hooks, evaluation.settings
    spec = RefinementSpec(dataset=evaluation.dataset, models=evaluation.models, strategies=settings.strategies,
                          contexts=settings.contexts, tasks=tuple(options.tasks) if options.tasks is not None else None,
                          base_url=options.base_url, sampling=dict(options.sampling), max_tokens=settings.max_tokens)
    concurrency = options.concurrency
    call_slots, sandbox_slots = concurrency.limits() if concurrency is not None else (None, None)
    executor = options.executor or LocalExecutor(workers=concurrency.workers if concurrency is not None else 1)
    pairs, skipped = spec.settings()
    tasks, load_errors = select_tasks(spec.dataset, spec.tasks)
    descriptions = {model.slug: describe(model, spec.base_url, spec.sampling) for model in spec.models}
    runner = (options.runner_factory() if options.runner_factory is not None
              else default_runner(hooks, options.runner_settings, sandbox_slots))
    fresh = options.fresh
    with folder_lock(out_dir, "refine"):
        claim_batch_folder(out_dir, "refine")
        ledger = Ledger(out_dir / layout.LEDGER)
        if fresh:
            ledger.clear()
        tests = TurnTests(runner)
        checks = validate_tasks(tasks, tests, ledger, executor, hooks.on_check)
        valid = [task for task in tasks if checks[task.id].valid]
        units = []
        for model in spec.models:
            for strategy, context in pairs:
                for task in valid:
                    folder = out_dir / model.slug / f"{strategy}-{context}" / task.id
                    if fresh:
                        shutil.rmtree(folder, ignore_errors=True)
                    expected = tuple(sorted(checks[task.id].expected_passes().items()))
                    units.append(TaskRunUnit(key=f"{model.slug}/{strategy}-{context}/{task.id}", model=model,
                                             strategy=strategy, context=context, task=task, folder=folder,
                                             expected=expected))
        batch = TaskRunBatch(tests, specs={m.slug: m.spec for m in spec.models},
                             turn_counts={t.id: len(t.turns) for t in tasks}, base_url=spec.base_url,
                             sampling=dict(spec.sampling), max_tokens=spec.max_tokens, progress=hooks.progress,
                             call_slots=call_slots)
        rows = list(run_batch(batch, units, ledger, executor, on_start=hooks.on_start, on_row=hooks.on_row).values())
        summary = [summarize_setting(model.slug, model.spec, descriptions[model.slug], strategy, context,
                                     [r for r in rows if (r.model, r.strategy, r.context) == (model.slug, strategy,
                                                                                              context)])
                   for model in spec.models for strategy, context in pairs]
        ordered = [checks[task.id] for task in tasks]
        results = RefinementResults(
            dataset=str(spec.dataset), out_dir=str(out_dir), strategies=list(spec.strategies),
            contexts=list(spec.contexts), skipped_settings=skipped, models=descriptions, summary=summary,
            validation=ordered, validation_problems=[p for check in ordered for p in check.problems()],
            load_errors=load_errors, rows=rows)
        write_results(out_dir, results, refinement_page(results))
        return results
