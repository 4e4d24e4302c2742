"""Experiments: every task x model as one LiveCoder run, in parallel, resumable, summarised per attempt.

`run_experiment(spec, out_dir, ...)` runs each (model, task) pair of an `ExperimentSpec` as one
LiveCoder run (`projectgen.runs.livecoder.Run`: the attempts of one task in order,
inside that run) into ``OUT/<method>/<model-slug>/<task-id>/`` (`projectgen.experiments.folder_layout`), on
the batch engine (`projectgen.experiments.engine`): different pairs run in parallel on the executor's workers
(`LocalExecutor(workers=N)`). The folder holds::

    experiment.json      what the experiment is (dataset, settings, models, folder layout); checked on every continue
    ledger.jsonl         one line per pair that finished (its figures) or failed (its one-line reason)
    <method>/<model-slug>/<task-id>/   the run folder (run.json, checkpoints, usage.jsonl, summary.json, ...)
    results.json         per model: per-attempt figures, final-output figures, one row per task
    results.md           the same as Markdown tables

Continuing. Run the same command again and:

- a pair whose latest ledger line says it finished (or stopped at its token budget) is skipped;
- a pair whose run folder holds ``run.json`` and a checkpoint but no ``summary.json`` (killed,
  or it raised) is resumed (``resume=True``): the checkpointer replays what was done, so no
  finished model call is repeated;
- a pair whose folder holds a ``summary.json`` but no ledger line (killed between the two)
  is recorded from its folder, without running anything;
- a pair that failed (an error line) is tried again, resuming its folder when it can;
- anything else starts afresh in an emptied folder.

``fresh=True`` forgets the ledger and starts every pair again. An experiment folder is tied to
its settings (`projectgen.experiments.spec`); adding models or tasks is fine. One experiment
process at a time works in a folder.

Sharing out. ``shard=Shard(i, N)`` runs only share i of the pairs (`projectgen.experiments.engine.Shard`);
N machines each run one share into a folder of their own, and `merge_experiments`
(`projectgen experiment merge`) joins the folders into one result. An executor on a cluster
(`projectgen.experiments.ray_executor.RayExecutor`) runs the pairs of one folder on many machines.

Errors. A task folder that fails to load and a run that raises are both recorded as error
lines (with a one-line reason) and the experiment goes on. Error pairs are left out of every
figure and counted apart (`projectgen.experiments.results`), and are retried on the next
continue. Models and per-task replay scripts: `projectgen.experiments.models`.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from projectgen.datasets.published import published_tests_of
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.experiments.batch_folder import claim_batch_folder
from projectgen.experiments.concurrency import Concurrency
from projectgen.experiments.custom_arms import arm_attempts, plugin_fields
from projectgen.experiments.engine import Executor, ProgressFn, Shard, run_batch
from projectgen.experiments.executors import LocalExecutor
from projectgen.experiments.figures import PairResult
from projectgen.experiments.folder_layout import PAIR_LAYOUT, pair_key
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.models import ExperimentModel, preflight
from projectgen.experiments.pairs import PairBatch, PairUnit
from projectgen.experiments.results import ExperimentResults, summarize_pairs
from projectgen.experiments.results_writer import write_results
from projectgen.experiments.spec import ExperimentSpec, write_experiment_json
from projectgen.experiments.tables import experiment_page
from projectgen.experiments.tasks import load_tasks
from projectgen.runs import layout
from projectgen.runs.locking import folder_lock


@dataclass(frozen=True)
class ExperimentHooks:
    """What a caller hears while an experiment runs (each optional).

    `on_start(pending, already)`: once the plan is known (pairs to run, pairs already finished
    in the ledger). `on_pair(result)`: after each pair, also for a task that does not load.
    `progress(key, message)`: the runs' progress lines (key ``sandbox`` for the default runner's).
    """

    on_start: Callable[[int, int], None] | None = None
    on_pair: Callable[[PairResult], None] | None = None
    progress: ProgressFn | None = None


def run_experiment(spec: ExperimentSpec, out_dir: Path | str, *, executor: Executor | None = None,
                   fresh: bool = False, runner_factory: Callable[[], Any] | None = None, prices: Any = None,
                   prices_source: str = "", hooks: ExperimentHooks | None = None, runner_settings: Any = None,
                   shard: Shard | None = None, concurrency: Concurrency | None = None) -> ExperimentResults:
    """Run every task x model pair of `spec` as one LiveCoder run; continue from `out_dir`'s ledger.

    `executor` runs the pairs (default: `concurrency.workers` at a time, or one). `concurrency` caps the
    model calls in flight per model or endpoint and the sandbox runs at once across the pairs of this
    process (`projectgen.experiments.concurrency`; None: no caps). `runner_factory` makes
    one sandbox runner per worker (default `SandboxRunner(runner_settings)` logging to
    `hooks.progress`; an executor on other processes needs a factory that pickles, or settings).
    `shard` keeps one share of the pairs (the results cover that share).
    `prices`: a `projectgen.llm.pricing.PriceTable` (default: list prices) and `prices_source`
    where they came from. Writes ``results.json`` and ``results.md`` and returns the results.
    """
    out_dir, hooks = Path(out_dir), hooks or ExperimentHooks()
    if prices is None:
        from projectgen.llm.pricing import PRICES_AS_OF, PriceTable

        prices, prices_source = PriceTable.default(), prices_source or f"list prices as of {PRICES_AS_OF}"
    for model in spec.models:
        preflight(model, spec.base_url)
    tasks, load_errors = select_tasks(spec)
    if spec.checkpoint_url is not None:  # unreachable: one line before anything is written; tables made once,
        from projectgen.runs.checkpoints import check_checkpoint_database  # not raced by units starting at once

        asyncio.run(check_checkpoint_database(spec.checkpoint_url))
    # One experiment process at a time in the folder: a second one would plan the same pairs from the ledger.
    with folder_lock(out_dir, "experiment"):
        claim_batch_folder(out_dir, "experiment")
        config = write_experiment_json(out_dir, spec, fresh=fresh, shard=str(shard) if shard else None)
        pairs_at = config["layout"]  # a folder begun before keeps LiveCoder's pairs at OUT/MODEL/TASK
        ledger = Ledger(out_dir / layout.LEDGER)
        if fresh:
            ledger.clear()
        keep = None
        if shard is not None:
            keep = shard.keeps([pair_key(model.slug, task_id, method, pairs_at) for method in spec.methods
                                for model in spec.models for task_id in [*(t.id for t in tasks), *load_errors]])
        formats = {task.format for task in tasks} or {spec.dataset.name.lower()}
        unloaded = record_load_errors(ledger, spec, load_errors, keep, formats=formats, layout=pairs_at)
        units = [PairUnit.plan(out_dir, model, task, fresh=fresh, method=method, layout=pairs_at)
                 for method in spec.methods for model in spec.models for task in tasks
                 if keep is None or pair_key(model.slug, task.id, method, pairs_at) in keep]

        def on_start(pending: int, already: int) -> None:
            if hooks.on_start:
                hooks.on_start(pending, already)
            if hooks.on_pair:
                for result in unloaded:
                    hooks.on_pair(result)

        call_slots, sandbox_slots = concurrency.limits() if concurrency is not None else (None, None)
        batch = PairBatch(spec, prices, runner_factory=runner_factory, progress=hooks.progress,
                          runner_settings=runner_settings, call_slots=call_slots, sandbox_slots=sandbox_slots)
        executor = executor or LocalExecutor(workers=concurrency.workers if concurrency is not None else 1)
        rows = run_batch(batch, units, ledger, executor, on_start=on_start, on_row=hooks.on_pair)
        current = [*unloaded, *rows.values()]
        results = collect_results(spec, out_dir, [*current, *earlier_pairs(ledger, current)], prices_source, tasks,
                                  config=config)
        write_results(out_dir, results, experiment_page(results))
        return results


def select_tasks(spec: ExperimentSpec) -> tuple[list[Task], dict[str, str]]:
    """The spec's tasks that load, and task id -> reason for those that do not; unknown task ids are refused."""
    loaded, errors = load_tasks(spec.dataset.resolve())  # absolute: a worker's working directory is not ours
    if spec.tasks is None:
        return loaded, errors
    known = {t.id for t in loaded} | set(errors)
    unknown = [t for t in spec.tasks if t not in known]
    if unknown:
        raise ProjectGenError(f"unknown task(s) {', '.join(unknown)} in {spec.dataset} (tasks: "
                              f"{', '.join(sorted(known))})")
    return [t for t in loaded if t.id in spec.tasks], {k: v for k, v in errors.items() if k in spec.tasks}


def record_load_errors(ledger: Ledger, spec: ExperimentSpec, errors: dict[str, str],
                       keep: set[str] | None = None, *, formats: Iterable[str] = (),
                       layout: str = PAIR_LAYOUT) -> list[PairResult]:
    """An error unit per method and model for each task that does not load, in the ledger unless its last line
    says so (only the keys in `keep`, when given: a shard's). Under the published denominator a task a paper
    prints (looked up in `formats`, its dataset's) keeps its #Tests in SUM, 0 passed: a dataset defect must
    not raise the score by shrinking SUM."""
    done = ledger.done()
    results = []
    for method, model in ((method, model) for method in spec.methods for model in spec.models):
        for task_id, reason in sorted(errors.items()):
            key = pair_key(model.slug, task_id, method, layout)
            if keep is not None and key not in keep:
                continue
            tests = published_tests_of(formats, task_id) if spec.denominator == "published" else None
            result = PairResult(key=key, method=method, model=model.slug, spec=model.spec, task_id=task_id,
                                status="error", error=f"task does not load: {reason}", how="load",
                                **({} if tests is None else {"final_unit_passed": 0, "final_unit_total": tests,
                                                             "unit_denominator": "published"}))
            previous = done.get(key)
            if previous is None or previous.get("status") != "error" or previous.get("error") != result.error:
                ledger.append(key, **result.model_dump(mode="json", exclude={"key"}))
            results.append(result)
    return results


def earlier_pairs(ledger: Ledger, current: Sequence[PairResult]) -> list[PairResult]:
    """The ledger's pairs this invocation did not plan (other methods, models or tasks run into the folder
    before): the folder's results show every pair its ledger holds, not only the last command's."""
    planned = {pair.key for pair in current}
    return [PairResult.model_validate(entry) for key, entry in ledger.done().items() if key not in planned]


def collect_results(spec: ExperimentSpec, out_dir: Path, pairs: Sequence[PairResult], prices_source: str,
                    tasks: Sequence[Task] = (), *, config: dict[str, Any] | None = None) -> ExperimentResults:
    """Every (method, model)'s figures over its pairs, and the paper settings each task ran with where the
    experiment left them unset. `config` (the folder's experiment.json) adds the methods and models
    earlier commands ran into the folder."""
    models = list(spec.models)
    methods = list(spec.methods)
    if config is not None:
        models += [ExperimentModel(slug, text) for slug, text in (config.get("models") or {}).items()
                   if slug not in {model.slug for model in models}]
        methods += [method for method in config.get("methods") or [] if method not in methods]
    reports = [summarize_pairs(model, [p for p in pairs if p.model == model.slug and p.method == method],
                               arm_attempts(method, spec.attempt_settings, config or spec.stored()), method=method)
               for method in methods for model in models
               if any(p.model == model.slug and p.method == method for p in pairs)
               or (method in spec.methods and model in spec.models)]
    return ExperimentResults(
        dataset=str(spec.dataset), out_dir=str(out_dir), settings=spec.settings.model_dump(mode="json"),
        attempt_settings=spec.attempt_settings.model_dump(mode="json"), max_tokens=spec.max_tokens,
        denominator=spec.denominator, prices=prices_source, models=reports, settings_profiles=applied_profiles(spec, tasks),
        **plugin_fields(config or spec.stored()))


def applied_profiles(spec: ExperimentSpec, tasks: Sequence[Task]) -> dict[str, dict[str, Any]]:
    """task id -> the settings its paper profile set because the experiment did not (only tasks with any)."""
    given = spec.settings.model_fields_set
    applied = {task.id: {k: v for k, v in task.settings_profile.items() if k not in given} for task in tasks}
    return {task_id: values for task_id, values in sorted(applied.items()) if values}
