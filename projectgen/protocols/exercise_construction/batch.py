"""Exercise construction's batch (`projectgen evaluate exercise_construction`, `projectgen construct exercises`) on
the batch engine: every seed a unit, the across-seed steps after them.

The output folder is a dataset `projectgen reflect --dataset OUT` reads, and the construction's record::

    OUT/<project>/          the kept exercises (Exercism layout)
    OUT/construction.json   the report: settings, kept / dropped / human-review seeds, difficulty counts, cost, and
                            per seed every decision with its figures
    OUT/decontamination.json  what was removed as a near-duplicate and why
    OUT/human-review.json   0%-pass programs and seeds without a usable pair
    OUT/ledger.jsonl        the engine's ledger: one line per finished seed (a second invocation builds the others)
    OUT/.construct/<seed>/  the seed's run folder (`seed_run`: drafts, staged exercise, judges' runs, the calls)

Each seed is a unit (`seed_run.build_seed`) run by the engine's executor, `workers` at once; the engine records
each finished unit in the ledger. Then `selection.select_exercises` decides difficulty, near-duplicates
among the new exercises and the names in OUT in seed-id order, and the reports are written: the same for any
number of workers. A folder written by the sequential version of this command (its ledger in
``OUT/.construct/ledger.jsonl``) is refused in one line. `exercise_construction_batch` is the protocol's batch:
an `Evaluation` (its one model standing in for every role its settings leave open) made into the construction.
"""
from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from projectgen.construction.execution import WORK
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.runner import SandboxRunner
from projectgen.experiments.batch_folder import claim_batch_folder
from projectgen.experiments.engine import Batch, Executor, ProgressFn, run_batch
from projectgen.experiments.executors import LocalExecutor
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.models import model_slug
from projectgen.llm.call_slots import CallSlots, limit_calls
from projectgen.llm.factory import make_chat_model
from projectgen.llm.naming import describe_model
from projectgen.llm.pricing import PriceTable
from projectgen.protocols.definition import Evaluation
from projectgen.protocols.exercise_construction.agents import ModelDesigner, ModelSolutionWriter, ModelTestWriter, ExerciseSeed
from projectgen.protocols.exercise_construction.dataset import load_dataset
from projectgen.protocols.exercise_construction.decontamination import NGRAM, ReferenceIndex
from projectgen.protocols.exercise_construction.judges import Judge, judges_play
from projectgen.protocols.exercise_construction.seed_run import (DROPPED, ERROR, JUDGED, KEPT, REVIEW, STAGED, Drafter,
                                                                 ExerciseConstruction, build_seed, reference_texts)
from projectgen.protocols.exercise_construction.selection import select_exercises
from projectgen.protocols.exercise_construction.settings import ExerciseConstructionSettings
from projectgen.runs import layout
from projectgen.runs.folder import RunFolder
from projectgen.runs.locking import folder_lock

KIND = "construct-exercises"  # the batch folder's marker
REPORT = "construction.json"
DECONTAMINATION = "decontamination.json"
HUMAN_REVIEW = "human-review.json"


@dataclass(frozen=True)
class ExerciseSeedUnit:
    """One seed, built in its run folder ``OUT/.construct/<seed>``."""

    key: str
    seed: ExerciseSeed
    run_dir: Path


@dataclass(frozen=True)
class ExerciseBatch(Batch[ExerciseSeedUnit, Any, dict[str, Any]]):
    """The seeds of one construction; a ledger line holds the seed's record under ``row`` and what it was built
    with (`ExerciseConstruction.built_with`): a line of other settings, or an error, is built again."""

    out: Path
    construction: ExerciseConstruction
    runner: Any  # the SandboxRunner every pair and judge runs in, shared by the workers (its slots cap the runs)
    index: ReferenceIndex | None  # the reference set's index (None: no reference set)
    progress: ProgressFn | None = None

    def setup(self) -> Any:
        return self.runner

    def run(self, unit: ExerciseSeedUnit, state: Any) -> dict[str, Any]:
        progress = self.progress
        say = (lambda message: progress(unit.key, message)) if progress else (lambda message: None)
        return asyncio.run(build_seed(unit.seed, unit.run_dir, self.construction, runner=state, index=self.index,
                                      say=say))

    def failed(self, unit: ExerciseSeedUnit, reason: str) -> dict[str, Any]:
        return {"seed": unit.seed.id, "seed_path": unit.seed.path, "status": ERROR, "stage": "error",
                "reason": reason}

    def record(self, row: dict[str, Any]) -> dict[str, Any]:
        return {"row": row, "built_with": self.construction.built_with()}

    def restore(self, entry: dict[str, Any]) -> dict[str, Any] | None:
        row = entry.get("row")
        if not isinstance(row, dict) or entry.get("built_with") != self.construction.built_with():
            return None
        if row.get("status") == ERROR:
            return None
        if row.get("status") == JUDGED and not staged_dir(seed_dir(self.out, str(row.get("seed"))), row).is_dir():
            return None  # its staged exercise is gone: judge it again
        return row


def seed_dir(out: Path, seed: str) -> Path:
    """A seed's run folder."""
    return out / WORK / seed


def staged_dir(run_dir: Path, row: Mapping[str, Any]) -> Path:
    """Where a judged seed's exercise is staged in its run folder."""
    return run_dir / STAGED / str(row.get("project"))


class ConstructionReport(BaseModel):
    """The run's outcome: per seed (in id order), what happened to it; and where the report files are."""

    out: Path
    seeds: dict[str, dict[str, Any]]

    def ids(self, status: str) -> list[str]:
        return [seed for seed, record in self.seeds.items() if record.get("status") == status]


def construct_exercises(seeds: Sequence[ExerciseSeed], out: Path, construction: ExerciseConstruction, *, runner: Any,
                        executor: Executor | None = None, progress: ProgressFn | None = None,
                        on_start: Callable[[int, int], None] | None = None,
                        on_row: Callable[[dict[str, Any]], None] | None = None,
                        fresh: bool = False) -> ConstructionReport:
    """Build exercises from `seeds` into `out` (see the module docstring), the seeds on `executor` (default one at a
    time); a rerun on the same `out` builds only the seeds its ledger does not hold as done (`fresh`: every seed,
    the ledger and the seeds' run folders emptied first). `progress(key, message)` hears each pair's run;
    `on_start(to build, done before)` and `on_row(record)` as `run_batch` calls them."""
    if not construction.designers or not construction.test_writers or not construction.solution_writers:
        raise ProjectGenError("construct exercises needs at least one creative and one reasoning model")
    out = Path(out)
    if construction.play_judge is None:
        construction = replace(construction, play_judge=judges_play())
    with folder_lock(out, "construct exercises"):
        refuse_sequential(out)
        claim_batch_folder(out, KIND)
        ledger = Ledger(out / layout.LEDGER)
        if fresh:
            ledger.clear()
            shutil.rmtree(out / WORK, ignore_errors=True)
        units = plan_units(out, seeds, ledger, construction)
        index = ReferenceIndex(construction.references, construction.threshold) if construction.references else None
        batch = ExerciseBatch(out, construction, runner, index, progress)
        rows = run_batch(batch, units, ledger, executor or LocalExecutor(), on_start=on_start, on_row=on_row)
        by_seed = {unit.seed.id: rows[unit.key] for unit in units}
        staged = {unit.seed.id: staged_dir(unit.run_dir, rows[unit.key]) for unit in units}
        records = select_exercises(out, by_seed, staged, construction.threshold)
        write_reports(out, construction, records)
    return ConstructionReport(out=out, seeds=records)


def refuse_sequential(out: Path) -> None:
    """A folder the sequential version wrote (its own ledger in OUT/.construct, no batch marker) is refused in one
    line: its seeds' folders and ledger lines are laid out otherwise, and reading them back would be a second format."""
    if not (out / layout.BATCH_KIND).exists() and (out / WORK / layout.LEDGER).exists():
        raise ProjectGenError(f"{out} was written by an earlier `projectgen construct exercises` (its ledger in "
                              f"{WORK}/), which this version does not continue; choose another --out")


def plan_units(out: Path, seeds: Sequence[ExerciseSeed], ledger: Ledger, construction: ExerciseConstruction) -> list[ExerciseSeedUnit]:
    """One unit per seed, in seed order; a seed whose ledger line was built with other settings gets an empty run
    folder (its drafts, staged exercise and judges' runs belong to those settings)."""
    done = ledger.done()
    units = []
    for seed in seeds:
        unit = ExerciseSeedUnit(key=f"seed/{seed.id}", seed=seed, run_dir=seed_dir(out, seed.id))
        entry = done.get(unit.key)
        if entry is not None and entry.get("built_with") != construction.built_with():
            shutil.rmtree(unit.run_dir, ignore_errors=True)
        units.append(unit)
    return units


def write_reports(out: Path, construction: ExerciseConstruction, records: Mapping[str, Mapping[str, Any]]) -> None:
    """construction.json (everything), decontamination.json (what was removed, why) and human-review.json."""
    folders = [RunFolder(seed_dir(out, seed)) for seed in records]
    judge_folders = [RunFolder(path) for folder in folders
                     for path in sorted((folder.root / "judges").glob("*")) if path.is_dir()]
    usage = [record for run in (*folders, *judge_folders) for record in run.usage_records() if record.error is None]
    counts: dict[str, int] = {}
    for record in records.values():
        for name, value in ((record.get("difficulty") or {}).get("counts") or {}).items():
            counts[name] = counts.get(name, 0) + value
    report = {
        "schema_version": 2,
        "settings": {"rng_seed": construction.rng_seed, "judge_tries": construction.judge_tries,
                     "decontamination": {"ngram": NGRAM, "jaccard_threshold": construction.threshold,
                                         "references": len(construction.references), "within_set": True},
                     "reject_sampling_score": "not computed: LiveRepoReflection defines no formula for it",
                     "models": {"creative": [d.spec for d in construction.designers],
                                "test_writers": [d.spec for d in construction.test_writers],
                                "solution_writers": [d.spec for d in construction.solution_writers],
                                "judges": [j.spec for j in construction.judges]}},
        "summary": {status: sorted(s for s, r in records.items() if r.get("status") == status)
                    for status in (KEPT, DROPPED, REVIEW, ERROR)},
        "difficulty_counts": counts,
        "cost": _cost(usage),
        "seeds": records,
    }
    write_atomic(out / REPORT, json.dumps(report, indent=1, default=str, sort_keys=True) + "\n")  # as the ledger
    removed = [{"seed": seed, **record["decontamination"]} for seed, record in records.items()
               if record.get("decontamination")]
    write_atomic(out / DECONTAMINATION, json.dumps({"ngram": NGRAM, "threshold": construction.threshold,
                                                    "references": sorted(construction.references),
                                                    "removed": removed}, indent=1) + "\n")
    review = [{"seed": seed, "status": record.get("status"), "items": record["human_review"]}
              for seed, record in records.items() if record.get("human_review")]
    write_atomic(out / HUMAN_REVIEW, json.dumps({"review": review}, indent=1) + "\n")


def _cost(usage: Sequence[Any]) -> dict[str, Any]:
    """Calls, tokens and dollars (list prices; a replay costs 0, a model without a price is n/a) of every call
    the run made, the judges' reflect runs included, in all and per role."""
    total = PriceTable.default().total(usage)
    return {"calls": len(usage), "input_tokens": sum(r.input_tokens for r in usage),
            "output_tokens": sum(r.output_tokens for r in usage), "usd": total.value, "usd_label": total.label(),
            "by_role": _by_role(usage)}


def _by_role(usage: Sequence[Any]) -> dict[str, dict[str, int]]:
    roles: dict[str, dict[str, int]] = {}
    for record in usage:
        row = roles.setdefault(record.role, {"calls": 0, "input_tokens": 0, "output_tokens": 0})
        row["calls"] += 1
        row["input_tokens"] += record.input_tokens
        row["output_tokens"] += record.output_tokens
    return roles


@dataclass(frozen=True)
class ConstructionPlan:
    """What a construction is about to run, for its caller to say before the seeds start (`Hooks.on_loaded`)."""

    seeds: Sequence[ExerciseSeed]
    models: str  # every model it made, described
    references: int  # reference exercises to decontaminate against


class ChatModels:
    """The chat model of each spec, made once with the batch's endpoint and sampling, its calls taking the run's
    call slots (at most so many in flight per model or endpoint, across the seeds)."""

    def __init__(self, base_url: str | None, sampling: Mapping[str, float | int],
                 call_slots: CallSlots | None) -> None:
        self.base_url, self.sampling, self.call_slots = base_url, dict(sampling), call_slots
        self.made: dict[str, Any] = {}

    def __call__(self, spec: str) -> Any:
        if spec not in self.made:
            model = make_chat_model(spec, base_url=self.base_url, **self.sampling)
            self.made[spec] = limit_calls(model, self.call_slots) if self.call_slots is not None else model
        return self.made[spec]


def construction_of(settings: ExerciseConstructionSettings, model: str, chat: ChatModels) -> ExerciseConstruction:
    """The roles' agents on their models (`model` for each role the settings leave open) and the reference set."""
    creative, reasoning, judges = settings.role_specs(model)
    texts: dict[str, str] = {}
    for folder in settings.references:
        texts.update(reference_texts(folder))
    return ExerciseConstruction(
        designers=[Drafter(spec, ModelDesigner(chat(spec))) for spec in creative],
        test_writers=[Drafter(spec, ModelTestWriter(chat(spec))) for spec in reasoning],
        solution_writers=[Drafter(spec, ModelSolutionWriter(chat(spec))) for spec in reasoning],
        judges=[Judge(spec, chat(spec), model_slug(spec)) for spec in judges],
        references=texts, rng_seed=settings.rng_seed, judge_tries=settings.judge_tries)


def exercise_construction_batch(evaluation: Evaluation[ExerciseConstructionSettings]) -> ConstructionReport:
    """`evaluate`'s run of the protocol: the dataset's seeds (or those of `options.tasks`) built with the one model
    the evaluation names standing in for every role its settings leave open, in the sandbox, into `out`."""
    options, hooks = evaluation.options, evaluation.options.hooks
    if len(evaluation.models) != 1:
        raise ProjectGenError("exercise construction takes one model (each role's others are settings: creative, "
                              f"reasoning, judges); got {len(evaluation.models)}")
    model = evaluation.models[0]
    seeds = load_dataset(evaluation.dataset)
    if options.tasks is not None:
        unknown = sorted(set(options.tasks) - {seed.id for seed in seeds})
        if unknown:
            raise ProjectGenError(f"unknown seed(s) {', '.join(unknown)} in {evaluation.dataset}")
        seeds = [seed for seed in seeds if seed.id in options.tasks]
    call_slots, sandbox_slots = options.concurrency.limits() if options.concurrency is not None else (None, None)
    chat = ChatModels(options.base_url, options.sampling, call_slots)
    construction = construction_of(evaluation.settings, model.spec, chat)
    if hooks.on_loaded:
        hooks.on_loaded(ConstructionPlan(seeds, ", ".join(sorted({describe_model(m) for m in chat.made.values()})),
                                         len(construction.references)))
    progress = hooks.progress
    runner = options.runner_factory() if options.runner_factory is not None else SandboxRunner(
        options.runner_settings, slots=sandbox_slots,
        log=(lambda message: progress("sandbox", message)) if progress else None)
    workers = options.concurrency.workers if options.concurrency is not None else 1
    return construct_exercises(seeds, evaluation.out, construction, runner=runner,
                               executor=options.executor or LocalExecutor(workers=workers), progress=progress,
                               on_start=hooks.on_start, on_row=hooks.on_row, fresh=options.fresh)
