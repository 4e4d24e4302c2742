"""One evolve run: a finished run's repository changed for a new requirement, as a new durable run folder.

`run_evolve(base_run, out_dir, requirement=..., tests=..., models=...)` takes a finished run folder
(`dataset.read_base_run`: its ``repository/``, its ``ssat.json``, else a tree derived from the repository's code,
and its task), writes the evolved task (`task`: the base task with the change request added to the PRD and the
change's tests to its check tests, every other setting kept but the reference), and runs the solver
(`evolve_solver`: the evolve graph of `graph`) checkpointed and traced; its scorers (`scorers`) run where it ends.
The new run folder holds::

    run.json            method "evolve": task (the evolved task below), models, settings, status
    evolve.json         the base run, the change, the tree diff, what was redone and kept, and the results
    task/               the evolved task (task.toml, docs/, check_tests/, unit_tests/, the fixtures ...)
    base/               the base run's repository and tree, as the run started from them
    checkpoints.sqlite, events.jsonl, usage.jsonl, calls.jsonl
    repository/, ssat.json, state.json, summary.json, check_report.json, unit_report.json

`run_evolve(..., resume=True)` (``projectgen evolve --resume DIR``) continues a killed run from its
checkpoint; the folder holds everything it needs. An evolve run is itself a finished run, so
changes chain: the next `evolve` starts from it, and the check tests of every earlier change run as
regression tests beside the new ones.
"""
from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from projectgen.agents import Agents
from projectgen.config import Settings
from projectgen.datasets.loaders import load_task
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.llm import Budget, ModelRoles
from projectgen.protocols.definition import Solver
from projectgen.protocols.evolve.dataset import BaseRun, read_base_run
from projectgen.protocols.evolve.graph import EvolutionPlan, EvolveContext, build_evolve_graph
from projectgen.protocols.evolve.reviser import TreeReviser
from projectgen.protocols.evolve.scorers import CheckCounts, evolve_scores
from projectgen.protocols.evolve.task import EvolvedTask, plan_evolved_task
from projectgen.repository import load_repository, write_repository
from projectgen.runs.driver import Drive, drive
from projectgen.runs.folder import RunFolder
from projectgen.runs.layout import EvolveLayout
from projectgen.runs.lifecycle import Lifecycle
from projectgen.runs.manifest import RunManifest, run_budget
from projectgen.runs.run_log import write_run_log
from projectgen.runs.summary import describe_agents, summarize_run
from projectgen.runs.trace import TraceWriter
from projectgen.ssat import SSAT

EVOLVE_METHOD = "evolve"


class EvolveRecord(BaseModel):
    """evolve.json: what an evolve run started from, what it asked, what it changed, and how it ended."""

    schema_version: int = 1
    base_run: str
    base_task_id: str
    base_tree: str = Field(description="where the base tree came from: the run's ssat.json, or derived from its code")
    number: int = Field(description="the change request's number in the chain of evolve runs")
    change: str
    new_tests: list[str] = Field(default_factory=list, description="check test files the change brought")
    regression_tests: list[str] = Field(default_factory=list, description="the earlier requirements' check test files")
    plan: EvolutionPlan | None = None
    status: str = "running"
    reason: str | None = None
    check_new: CheckCounts | None = None
    check_regression: CheckCounts | None = None
    unit_tests: dict[str, Any] | None = Field(default=None, description="the base task's hidden unit tests")
    kept_identical: bool | None = Field(default=None, description="every kept file is byte-identical to the base's")
    changed_kept_files: list[str] = Field(default_factory=list)
    generator_calls: dict[str, int] = Field(default_factory=dict, description="file -> skeleton and coder calls")
    calls_on_kept_files: list[str] = Field(default_factory=list, description="kept files a generator was called on")


@dataclass
class EvolveOutcome:
    """What an evolve run produced."""

    state: dict[str, Any]
    record: EvolveRecord
    summary: dict[str, Any]
    out_dir: Path
    check_report: TestReport | None = None
    unit_report: TestReport | None = None

    @property
    def repository(self) -> dict[str, str]:
        return dict(self.state.get("repository") or {})


# ------------------------------------------------------------------ the change


def check_change(requirement: str, tests: Path | str | None) -> None:
    """Refuse, before anything is written, an empty change request or a tests folder without tests."""
    if not requirement.strip():
        raise ProjectGenError("the change request is empty: give the new requirement's text")
    if tests is not None:
        folder = Path(tests)
        if not folder.is_dir():
            raise ProjectGenError(f"{folder}: tests folder not found")
        if not any(folder.rglob("test_*.py")):
            raise ProjectGenError(f"{folder}: holds no test_*.py file")



# ------------------------------------------------------------------ the solver


@dataclass(frozen=True)
class EvolveStart:
    """What an evolve run's graph starts from, as its folder holds it (a resumed run reads nothing else): the
    evolved task, the base's tree (as JSON) and repository, and the change request."""

    task: Task
    base_tree: dict[str, Any]
    base_repository: dict[str, str]
    change: str


def evolve_solver(start: EvolveStart, settings: Settings, models: ModelRoles, runner: SandboxRunner,
                  progress: Callable[[str], None] | None = None) -> Solver:
    """The protocol's solver on one base: the evolve graph (the usual agents, the architect a `TreeReviser` of the
    base's tree), the state it starts from, and its context around the run's gateway. Its models are per role,
    not one chat model (`Protocol.solver`'s shape), so evolve's own batch runs it through `arun_evolve`."""
    agents = Agents.from_models(models, settings).replace(architect=TreeReviser(
        models.for_role("architect"), base=SSAT.model_validate(start.base_tree), change=start.change))
    return Solver(graph=build_evolve_graph(agents, settings),
                  start={"task_id": start.task.id, "documents": start.task.docs.model_dump(), "guidance": ""},
                  context=lambda gateway: EvolveContext(task=start.task, runner=runner, gateway=gateway,
                                                        progress=progress, base_tree=start.base_tree,
                                                        base_repository=dict(start.base_repository)),
                  config={"max_concurrency": settings.max_concurrency, "recursion_limit": 200})


# ------------------------------------------------------------------ the run


@dataclass(frozen=True)
class EvolveRun:
    """One invocation of an evolve run, its folder opened and locked."""

    folder: RunFolder
    manifest: RunManifest
    record: EvolveRecord
    task: Task
    agents: Agents
    settings: Settings
    solver: Solver
    context: EvolveContext
    resume: bool
    evaluate_unit: bool

    @property
    def out_dir(self) -> Path:
        return self.folder.root

    @property
    def paths(self) -> EvolveLayout:
        """Where the evolve run's own files are (evolve.json, its task, its base, the check tests' report)."""
        return EvolveLayout(self.folder.root)


async def arun_evolve(base_run: Path | str | None, out_dir: Path | str, *, requirement: str = "",
                      tests: Path | str | None = None, models: ModelRoles | None = None,
                      model_specs: Mapping[str, str] | None = None,
                      settings: Settings | None = None, runner: SandboxRunner | None = None,
                      max_tokens: int | None = None, budget: Budget | None = None, resume: bool = False,
                      force: bool = False, progress: Callable[[str], None] | None = None,
                      evaluate_unit: bool = True) -> EvolveOutcome:
    """Evolve the finished run `base_run` for `requirement` (with the change's check tests in `tests`) into
    `out_dir`, or with `resume` continue the evolve run in `out_dir` (`base_run` and the change are then read
    from it). A model that keeps failing ends the run as failed (run.json says why) and raises its error."""
    folder = RunFolder(Path(out_dir))
    paths = EvolveLayout(folder.root)
    if models is None:
        raise ProjectGenError("an evolve run needs models")
    if not resume:
        check_change(requirement, tests)
    with open_evolve_folder(folder, base_run, resume=resume, force=force, requirement=requirement,
                            tests=Path(tests) if tests else None) as opened:
        if resume:
            manifest, record = opened
            task = load_task(paths.evolved_task)
            settings = manifest.settings
            base_repository = load_repository(paths.base.repository)
            base_tree = json.loads(paths.base.ssat.read_text(encoding="utf-8"))
            if budget is None:
                budget = folder.budget(manifest)
        else:
            base, evolved = opened
            assert isinstance(base, BaseRun) and isinstance(evolved, EvolvedTask)
            settings = Settings.with_profile(base.task.settings_profile, settings)
            evolved.write(paths.evolved_task)
            task = load_task(paths.evolved_task)
            write_repository(base.repository, paths.base.repository)
            base_tree = base.tree.model_dump(mode="json", by_alias=True, exclude_defaults=True)
            folder.write_json(paths.base.ssat, base_tree)
            base_repository = base.repository
            record = EvolveRecord(base_run=str(base.folder.resolve()), base_task_id=base.task.id,
                                  base_tree=base.tree_source, number=evolved.number, change=requirement.strip(),
                                  new_tests=evolved.new_tests, regression_tests=evolved.earlier_tests)
            manifest = RunManifest(run_id=uuid.uuid4().hex[:12], task_path=str(paths.evolved_task.resolve()),
                                   task_id=task.id, method=EVOLVE_METHOD, models=dict(model_specs or {}),
                                   settings=settings, max_tokens=max_tokens)
            budget = budget if budget is not None else run_budget(manifest)
            folder.write_json(paths.evolve, record.model_dump(mode="json"))
            folder.lifecycle(manifest).start()
        start = EvolveStart(task=task, base_tree=base_tree, base_repository=dict(base_repository),
                            change=record.change)
        solver = evolve_solver(start, settings, models, runner or SandboxRunner(log=progress), progress)
        context = solver.context(folder.gateway(settings, scope=manifest.run_id, budget=budget))
        agents = Agents.from_models(models, settings)  # the roles' models, as the trace names them
        return await _run(EvolveRun(folder=folder, manifest=manifest, record=record, task=task, agents=agents,
                                    settings=settings, solver=solver, context=context, resume=resume,
                                    evaluate_unit=evaluate_unit))


def run_evolve(base_run: Path | str | None, out_dir: Path | str, *, requirement: str = "",
               tests: Path | str | None = None, models: ModelRoles | None = None,
               model_specs: Mapping[str, str] | None = None, settings: Settings | None = None,
               runner: SandboxRunner | None = None, max_tokens: int | None = None, budget: Budget | None = None,
               resume: bool = False, force: bool = False, progress: Callable[[str], None] | None = None,
               evaluate_unit: bool = True) -> EvolveOutcome:
    """`arun_evolve` for synchronous callers."""
    return asyncio.run(arun_evolve(base_run, out_dir, requirement=requirement, tests=tests, models=models,
                                   model_specs=model_specs, settings=settings, runner=runner, max_tokens=max_tokens,
                                   budget=budget, resume=resume, force=force, progress=progress,
                                   evaluate_unit=evaluate_unit))


@contextmanager
def open_evolve_folder(folder: RunFolder, base_run: Path | str | None, *, resume: bool, force: bool,
                       requirement: str = "", tests: Path | None = None
                       ) -> Iterator[tuple[BaseRun, EvolvedTask] | tuple[RunManifest, EvolveRecord]]:
    """The evolve run's folder, held by this process: a new one giving the `BaseRun` and its evolved task (both
    read and checked first, so nothing is written when the run cannot be evolved), or one to resume giving
    its run.json and evolve.json."""
    if resume:
        manifest = folder.read_manifest()
        if manifest.method != EVOLVE_METHOD:
            raise ProjectGenError(f"{folder}: a {manifest.method} run, not an evolve run; continue it with "
                                  f"`projectgen run --resume {folder}`")
        record = read_evolve_record(folder.root)
        with folder.hold():
            yield manifest, record
        return
    if base_run is None:
        raise ProjectGenError("give the finished run folder to evolve")
    base = read_base_run(Path(base_run))
    evolved = plan_evolved_task(base.task, requirement, tests)
    if folder.root.resolve() == base.folder.resolve():
        raise ProjectGenError(f"{folder}: the evolve run needs its own folder (--out), not the base run's")
    with folder.create(force=force):
        yield base, evolved


async def _run(run: EvolveRun) -> EvolveOutcome:
    """The evolve graph, through the driver, from the start or on from its checkpoint; then the outputs."""
    trace = run.folder.trace()
    started = time.monotonic()

    def on_update(trace: TraceWriter, namespace: tuple[str, ...], chunk: Any) -> None:
        trace.update(namespace, chunk)
        if not namespace and isinstance(chunk, Mapping) and isinstance(chunk.get("plan_changes"), Mapping):
            plan = chunk["plan_changes"].get("evolution") or {}
            trace.write("evolve_plan", **{key: plan.get(key) for key in
                                          ("added", "removed", "changed", "importers", "redo", "diff_text")},
                        kept=len(plan.get("kept") or []))

    async def on_failure(reason: str, state: dict[str, Any]) -> dict[str, Any]:
        _write_record(run, run.record.model_copy(update={"status": "failed", "reason": reason}))
        run.context.say(f"the evolve run failed ({reason}); continue with --resume once the model is back")
        return {}

    how = Drive(start=dict(run.solver.start), context=run.context, resume=run.resume,
                marker={"task_id": run.task.id, "method": EVOLVE_METHOD, "base_run": run.record.base_run,
                        "models": describe_agents(run.agents)},
                config=dict(run.solver.config), on_update=on_update, on_failure=on_failure)
    lifecycle = run.folder.lifecycle(run.manifest)
    driven = await drive(run.solver.graph, how, lifecycle, trace, run.folder.checkpoints)
    return await _finish(run, driven.state, lifecycle, trace, started)


async def _finish(run: EvolveRun, state: dict[str, Any], lifecycle: Lifecycle, trace: TraceWriter,
                  started: float) -> EvolveOutcome:
    """Every check test (the earlier and the change's), the hidden unit tests, the checks on kept files, the
    outputs and the end status."""
    repository = dict(state.get("repository") or {})
    runner = run.context.runner
    assert runner is not None
    check_report = unit_report = None
    if "check" in run.task.suites and repository:
        run.context.say("running every check test (the earlier requirements' and the change's)")
        check_report = await asyncio.to_thread(runner.evaluate, run.task, repository, "check")
        check_report.write_json(run.paths.check_report)
    if run.evaluate_unit and run.task.has_scored_suite() and repository:
        run.context.say("running the base task's hidden unit tests")
        unit_report = await asyncio.to_thread(runner.evaluate, run.task, repository, run.task.scored_suite)
        unit_report.write_json(run.folder.unit_report)
    records = run.folder.usage_records()
    plan = EvolutionPlan.model_validate(state["evolution"]) if state.get("evolution") else None
    scores = evolve_scores(state, plan, check_report, run.record.new_tests, run.context.base_repository, records)
    record = run.record.model_copy(update={"plan": plan, **scores})
    summary = summarize_run(state, records, models=describe_agents(run.agents), settings=run.settings.model_dump(),
                            unit_tests=unit_report.summary() if unit_report is not None else None,
                            duration_s=time.monotonic() - started)
    record = record.model_copy(update={"status": summary.status, "unit_tests": summary.unit_tests})
    run.folder.write_repository(repository)
    if state.get("ssat"):
        run.folder.write_json(run.folder.ssat, state["ssat"])
    run.folder.write_json(run.folder.state, {k: v for k, v in state.items() if k != "base_ssat"})
    _write_record(run, record)
    write_run_log(run.folder, "evolve", summary.model_dump(mode="json"), manifest=run.manifest,
                  summary=summary.model_dump_json(indent=1) + "\n")
    lifecycle.record("finished", state.get("stopped"))
    trace.write("run_end", stopped=state.get("stopped"), status="finished",
                check=check_report.summary() if check_report is not None else None)
    return EvolveOutcome(state=state, record=record, summary=summary.model_dump(mode="json"), out_dir=run.out_dir,
                         check_report=check_report, unit_report=unit_report)


def _write_record(run: EvolveRun, record: EvolveRecord) -> None:
    run.folder.write_json(run.paths.evolve, record.model_dump(mode="json"))


def read_evolve_record(out_dir: Path) -> EvolveRecord:
    """evolve.json of an evolve run folder (a one-line error when it is not one)."""
    path = EvolveLayout(out_dir).evolve
    if not path.is_file():
        raise ProjectGenError(f"{out_dir}: not an evolve run (no {path.name})")
    return EvolveRecord.model_validate_json(path.read_text(encoding="utf-8"))
