"""`projectgen construct multiturn`: every seed of a seed set a unit of the batch engine, resumable from its ledger.

The output folder is a dataset `projectgen refine --dataset OUT` reads, and the construction's record::

    OUT/<seed>/            a multi-turn task (multiturn.toml, turns/K/...), construction.json its trajectory
    OUT/runs/<seed>/       the seed's run folder: run.json, events.jsonl (every decision), usage.jsonl, calls.jsonl
    OUT/ledger.jsonl       one line per finished seed: a second invocation builds only the others
    OUT/results.json, results.md, results.html

A seed that needs a person (over a cap, or REQUIREMENT_REFINE) pauses in its run folder (run.json
``awaiting-review``, review.json the request); `continue_seed` goes on with the person's decision and brings the
ledger and results up to date (`projectgen review OUT/runs/SEED ...`).
"""
from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from projectgen.errors import ProjectGenError
from projectgen.evaluation.runner import SandboxRunner
from projectgen.experiments.batch_folder import claim_batch_folder
from projectgen.experiments.concurrency import cores
from projectgen.experiments.engine import Batch, Executor, run_batch
from projectgen.experiments.executors import LocalExecutor
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.results_writer import Bullets, Heading, ResultsPage, TableBlock, Text, write_results
from projectgen.llm.factory import make_chat_model
from projectgen.llm.naming import describe_model
from projectgen.llm.specs import REFERENCE_SPEC
from projectgen.protocols.definition import Evaluation
from projectgen.protocols.multiturn_construction.agents import ConstructionAgents
from projectgen.protocols.multiturn_construction.pipeline import (CONSTRUCT_METHOD, SeedOutcome, construct_seed,
                                                                  seed_request)
from projectgen.protocols.multiturn_construction.seeds import TaskSeed, load_seeds
from projectgen.protocols.multiturn_construction.settings import ConstructionSettings, MultiturnConstructionSettings
from projectgen.protocols.multiturn_construction.turns import ABLATIONS
from projectgen.runs import layout
from projectgen.runs.locking import folder_lock

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

KIND = "construct-multiturn"  # the batch folder's marker
RUNS_DIR = "runs"


@dataclass(frozen=True)
class ConstructionSpec:
    """What a construction runs: the seeds, the model (a spec; run.json records it) and the settings."""

    seeds: Path
    spec: str
    settings: ConstructionSettings = field(default_factory=ConstructionSettings)
    max_tokens: int | None = None
    only: tuple[str, ...] | None = None


@dataclass(frozen=True)
class TaskSeedUnit:
    key: str
    seed: TaskSeed
    run_dir: Path
    task_dir: Path


@dataclass(frozen=True)
class ConstructBatch(Batch[TaskSeedUnit, Any, SeedOutcome]):
    """One seed per unit; a ledger line holds its outcome under ``row`` and what it was built with."""

    spec: ConstructionSpec
    model: Any  # the chat model every role talks to
    runner: Any  # the SandboxRunner every check runs in
    agents: ConstructionAgents | None = None  # the roles' agents (default: each role's on `model`)
    probes: Mapping[str, Any] | None = None  # the contamination probes' models by spec (default: `model` alone)

    def setup(self) -> Any:
        return self.runner

    def run(self, unit: TaskSeedUnit, state: Any) -> SeedOutcome:
        request = seed_request(unit.seed, spec=self.spec.spec, settings=self.spec.settings,
                               max_tokens=self.spec.max_tokens)
        agents = self.agents or ConstructionAgents.default(self.model, self.probes)
        return asyncio.run(construct_seed(unit.seed, unit.run_dir, unit.task_dir, request, agents=agents,
                                          runner=state, settings=self.spec.settings))

    def failed(self, unit: TaskSeedUnit, reason: str) -> SeedOutcome:
        return SeedOutcome(seed=unit.seed.id, status="error", reason=reason)

    def record(self, row: SeedOutcome) -> dict[str, Any]:
        return {"row": row.model_dump(mode="json"), "built_with": self.built_with()}

    def restore(self, entry: dict[str, Any]) -> SeedOutcome | None:
        row = SeedOutcome.model_validate(entry["row"])
        if entry.get("built_with") != self.built_with() or row.status == "error":
            return None
        if row.status == "task" and not (row.task_folder and Path(row.task_folder).is_dir()):
            return None
        return row

    def built_with(self) -> dict[str, Any]:
        return {"model": self.spec.spec, **self.spec.settings.protocol()}


class ConstructionResults(BaseModel):
    """results.json: the settings, every seed's outcome and the review list."""

    seeds: str
    model: str
    model_description: str
    settings: dict[str, Any]
    outcomes: list[SeedOutcome]

    def review(self) -> list[SeedOutcome]:
        return [row for row in self.outcomes if row.status == "review"]

    def errors(self) -> list[SeedOutcome]:
        return [row for row in self.outcomes if row.status == "error"]


def run_construction(spec: ConstructionSpec, out_dir: Path | str, *, model: Any, runner: Any = None,
                     executor: Executor | None = None, fresh: bool = False, description: str = "",
                     agents: ConstructionAgents | None = None,
                     on_row: Callable[[SeedOutcome], None] | None = None) -> ConstructionResults:
    """Build every seed of `spec.seeds` into `out_dir` (resumable: finished seeds are not built again); `model` is
    the chat model every role talks to (`agents`, when given, replace the roles' default agents), `runner` the
    sandbox (default `SandboxRunner()`)."""
    out_dir = Path(out_dir)
    seeds = load_seeds(spec.seeds)
    if spec.only is not None:
        unknown = sorted(set(spec.only) - {seed.id for seed in seeds})
        if unknown:
            raise ProjectGenError(f"unknown seed(s) {', '.join(unknown)} in {spec.seeds}")
        seeds = [seed for seed in seeds if seed.id in spec.only]
    with folder_lock(out_dir, "construct multiturn"):
        claim_batch_folder(out_dir, KIND)
        ledger = Ledger(out_dir / layout.LEDGER)
        units = []
        for seed in seeds:
            unit = TaskSeedUnit(key=f"seed/{seed.id}", seed=seed, run_dir=seed_run_dir(out_dir, seed.id),
                            task_dir=out_dir / seed.id)
            if fresh:
                shutil.rmtree(unit.run_dir, ignore_errors=True)
                shutil.rmtree(unit.task_dir, ignore_errors=True)
            units.append(unit)
        if fresh:
            ledger.clear()
        batch = ConstructBatch(spec, model, runner or SandboxRunner(), agents,
                               probe_models(spec.settings, model, spec.spec))
        rows = run_batch(batch, units, ledger, executor or LocalExecutor(), on_row=on_row)
        results = ConstructionResults(seeds=str(spec.seeds), model=spec.spec, model_description=description,
                                      settings=spec.settings.protocol(), outcomes=list(rows.values()))
        write_results(out_dir, results, construction_page(results))
        return results


def multiturn_construction_batch(evaluation: Evaluation[MultiturnConstructionSettings]) -> ConstructionResults:
    """`evaluate`'s run of the protocol: the dataset's seeds (or those of `options.tasks`) built by its one model into
    `out`, resumable; the sandbox runs at most one per core (as refine and reflect), however many seeds at once."""
    options, hooks = evaluation.options, evaluation.options.hooks
    if len(evaluation.models) != 1:
        raise ProjectGenError(f"multi-turn construction takes one model (every role's); got {len(evaluation.models)}")
    spec = evaluation.models[0].spec
    if spec == REFERENCE_SPEC:
        raise ProjectGenError("construct multiturn writes new turns, which have no reference to replay: give a model "
                              "(or scripted:examples)")
    model = make_chat_model(spec, base_url=options.base_url, **options.sampling)
    progress = hooks.progress
    runner = options.runner_factory() if options.runner_factory is not None else SandboxRunner(
        options.runner_settings, slots=threading.BoundedSemaphore(cores()),
        log=(lambda message: progress("sandbox", message)) if progress else None)
    settings = evaluation.settings
    only = tuple(options.tasks) if options.tasks is not None else None
    return run_construction(ConstructionSpec(seeds=evaluation.dataset, spec=spec, settings=settings.construction(),
                                             max_tokens=settings.max_tokens, only=only),
                            evaluation.out, model=model, runner=runner, fresh=options.fresh,
                            executor=options.executor or LocalExecutor(), description=describe_model(model),
                            on_row=hooks.on_row)


def probe_models(settings: ConstructionSettings, model: Any, spec: str) -> dict[str, Any]:
    """The contamination probes' models by spec: those the settings name (the construction's own model where its
    spec is named), else the construction model alone. Made before any worker starts (no import in a worker)."""
    if not settings.contamination_models:
        return {spec: model}
    return {name: model if name == spec else make_chat_model(name) for name in settings.contamination_models}


def seed_run_dir(out_dir: Path, seed_id: str) -> Path:
    """OUT/runs/SEED: a seed's run folder (what `projectgen review` takes)."""
    return out_dir / RUNS_DIR / seed_id


def continue_seed(run_dir: Path | str, decision: Any, *, model: Any = None, runner: Any = None,
                  agents: ConstructionAgents | None = None) -> SeedOutcome:
    """The seed paused for a person in `run_dir` (OUT/runs/SEED) continued with `decision` (a `ReviewDecision`
    checked against its request, `review.parse_construction_decision`) from its checkpoint, with the model,
    settings and seed its run.json names (`model`, when given, replaces the model; `agents`, the roles' agents);
    its task folder written when it ends, the batch's ledger and results updated."""
    from projectgen.protocols.multiturn_construction.seeds import load_seed
    from projectgen.runs.folder import RunFolder

    run_dir = Path(run_dir)
    out_dir = run_dir.parent.parent
    manifest = RunFolder(run_dir).read_manifest()
    if manifest.method != CONSTRUCT_METHOD or run_dir.parent.name != RUNS_DIR:
        raise ProjectGenError(f"{run_dir}: not a seed's run folder of `construct multiturn` (OUT/{RUNS_DIR}/SEED)")
    seed = load_seed(manifest.task_path)
    settings = ConstructionSettings.from_protocol(manifest.protocol)
    if model is None and agents is None:
        model = make_chat_model(manifest.models["default"])
    with folder_lock(out_dir, "construct multiturn"):  # not while the batch runs: it rewrites the results
        outcome = asyncio.run(construct_seed(seed, run_dir, out_dir / seed.id, manifest.request(),
                                             agents=agents or ConstructionAgents.default(model),
                                             runner=runner or SandboxRunner(), settings=settings, decision=decision))
        update_batch(out_dir, outcome)
    return outcome


def update_batch(out_dir: Path, outcome: SeedOutcome) -> None:
    """A seed's new outcome in the batch's ledger (the next invocation keeps it) and its results page."""
    ledger = Ledger(out_dir / layout.LEDGER)
    entry = ledger.done().get(f"seed/{outcome.seed}")
    if entry is None:
        return
    ledger.append(entry["key"], row=outcome.model_dump(mode="json"), built_with=entry.get("built_with"))
    results_file = out_dir / layout.RESULTS_JSON
    if results_file.is_file():
        results = ConstructionResults.model_validate_json(results_file.read_text(encoding="utf-8"))
        results.outcomes = [outcome if row.seed == outcome.seed else row for row in results.outcomes]
        write_results(out_dir, results, construction_page(results))


def settings_line(settings: Mapping[str, Any]) -> str:
    """The construction choices docs/fidelity.md names (the contamination check and its probes, the length
    filter and how it counts, the docstring-to-instruction step), as results.json records them; a choice an
    older results.json lacks is left out."""
    parts = []
    if "contamination" in settings:
        probes = ", ".join(settings.get("contamination_models") or []) or "the construction model"
        parts.append(f"contamination {settings['contamination']}"
                     + (f" (probes: {probes}; {settings.get('contamination_rule', '')})" if settings["contamination"]
                        else ""))
    if "min_function_lines" in settings:
        parts.append(f"min_function_lines {settings['min_function_lines']} ({settings.get('length_measure', '')})")
    if "docstring_instructions" in settings:
        parts.append(f"docstring_instructions {settings['docstring_instructions']}")
    return "Settings (docs/fidelity.md): " + "; ".join(parts) + "."


def construction_page(results: ConstructionResults) -> ResultsPage:
    counts = {status: sum(row.status == status for row in results.outcomes)
              for status in ("task", "filtered", "review", "error")}
    rows = [[row.seed, row.status, str(row.turns or ""), str(row.drafts or ""),
             f"{row.input_tokens + row.output_tokens:,}", row.cost, row.reason or ""] for row in results.outcomes]
    return ResultsPage(title="SR-Eval multi-turn task construction", command="projectgen construct multiturn", blocks=[
        Text(f"Seeds `{results.seeds}`, model {results.model_description or results.model}; ablation "
             f"`{results.settings['ablation']}` ({ABLATIONS[results.settings['ablation']]})."),
        Text(settings_line(results.settings)),
        Bullets([f"{counts['task']} task(s) built", f"{counts['filtered']} seed(s) dropped by a filter",
                 f"{counts['review']} seed(s) waiting for a person (`projectgen review {RUNS_DIR}/SEED`)",
                 f"{counts['error']} seed(s) whose construction failed (built again by the next invocation)"]),
        Heading("Seeds"),
        TableBlock((["seed", "outcome", "turns", "Coder drafts", "tokens", "cost", "why"], rows)),
        Text("Each task's construction.json and runs/SEED/events.jsonl record every draft and decision.", note=True),
    ])
