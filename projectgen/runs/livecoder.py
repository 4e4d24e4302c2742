"""Run LiveCoder on one task: attempts around the project graph, durable and traced.

The same path runs every method (`projectgen.runs.methods`: direct, self-reflection, projectgen,
projectgen-no-iter, LiveCoder and its ablations): the method picks the graph inside the attempts
and the attempt settings, and run.json and summary.json name it. A caller's own project graph
(`project_graph=` or `stages=`) can take the place of the ProjectGen graph in the attempts.

Everything lands in one run folder::

    run.json            what was run (task, model specs, settings, run id): enough to resume
    checkpoints.sqlite  LangGraph checkpoints of the attempts graph and every inner graph
                        (or a PostgreSQL database given by URL, for runs shared between machines)
    events.jsonl        the trace (one event per node update; `projectgen trace DIR`)
    usage.jsonl         one line per model call
    calls.jsonl         the replies of completed model calls, replayed on resume (`CallCache`)
    prompts.jsonl       the exact prompt of every call, each distinct one once (`PromptStore`)
    knowledge/          the Chroma knowledge store (embedded, unless a server URL is given), built with
                        the embedding run.json names (`embedding`), which a resume keeps
    best/               the historical-best repository store
    attempts/N/         each attempt's repository and record
    repository/         the final output (the historical best)
    ssat.json           the output's architecture tree (what `projectgen evolve` starts from)
    summary.json        per attempt: score, best so far, reuse, knowledge, tokens; the final choice

A killed run continues with `Run.resume(DIR, parts).run()` (`projectgen run
--resume DIR`): the checkpointer replays finished nodes from the database, and a node that
was cut short runs again with its completed model calls answered from calls.jsonl, so no
completed model call is made again.

How a run ends (``status`` in run.json, with a one-line ``reason`` unless finished):
``finished``; ``interrupted`` (Ctrl-C or SIGTERM: resume it); ``budget-limited`` (a token or cost
budget stopped it; the best so far is the output, summary.json says so); ``awaiting-review`` (a stage
named in `review` paused it for a person's decision: review.json holds the request, the outcome's
`review` too; `projectgen review DIR` or `review_run` continues it with the decision, which reaches the
graph as ``Command(resume=...)``); ``failed`` (a model kept
failing: a transient error after the door's retries, or a non-transient one such as a rejected
key). A failed run writes the best
so far to ``repository/`` and ends its trace, writes no summary.json, and raises the model's
error to the caller; its checkpoint still holds the failed step, so a resume continues there.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from projectgen.agents import Agents
from projectgen.agents.knowledge import KnowledgeExtractor
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs.attempts import AttemptsContext, build_attempts_graph
from projectgen.graphs.project import Stage
from projectgen.graphs.review import parse_decision
from projectgen.llm import Budget, ModelRoles, describe_model
from projectgen.memory.best_repo import BestRepositoryStore
from projectgen.memory.embedding_models import embedding_name, make_embeddings, resolve_embeddings
from projectgen.memory.knowledge_store import KnowledgeStore
from projectgen.repository import write_repository
from projectgen.runs.checkpoints import check_checkpoint_database
from projectgen.runs.driver import Drive, drive
from projectgen.runs.execution import run_hidden_unit_tests
from projectgen.runs.folder import RunFolder
from projectgen.runs.layout import AttemptLayout
from projectgen.runs.lifecycle import Lifecycle
from projectgen.runs.manifest import RunManifest, run_budget
from projectgen.runs.method_graphs import (
    check_custom_graph, custom_graph_nodes, custom_inner_graph, custom_warm_graph, direct_generator, inner_graph,
    warm_graph,
)
from projectgen.runs.methods import describe_method, method_attempt_settings
from projectgen.runs.output_scorers import Scorer, score_output
from projectgen.runs.pending_review import (
    AWAITING_REVIEW, awaiting_reason, pending_review_record, read_pending_review,
)
from projectgen.runs.request import RunRequest
from projectgen.runs.run_log import write_run_log
from projectgen.runs.summary import describe_agents, summarize_attempts
from projectgen.runs.trace import TraceWriter

if TYPE_CHECKING:
    from projectgen.agents.base import ModelGateway


@dataclass
class LiveCoderOutcome:
    """What a run produced; `summary` is summary.json's content (a `LiveCoderSummary` as JSON)."""

    state: dict[str, Any]
    summary: dict[str, Any]
    out_dir: Path
    unit_report: TestReport | None = None
    review: dict[str, Any] | None = None  # the paused run's review request (review.json); summary is then {}

    @property
    def repository(self) -> dict[str, str]:
        return dict(self.state.get("repository") or {})


def open_knowledge_store(embedded: Path, url: str | None, embeddings: Any) -> Any:
    """The run's knowledge store: a Chroma server when `url` is given, else embedded at `embedded` (the run
    folder's knowledge/). `embeddings`: a name, an object, or None for the default (`KnowledgeStore`)."""
    if url:
        return KnowledgeStore.server(url, embeddings=embeddings)
    return KnowledgeStore.persistent(embedded, embeddings=embeddings)


def _warn(message: str) -> None:
    import warnings

    warnings.warn(message, stacklevel=3)


def knowledge_extractor(models: ModelRoles | None) -> Any:
    """The knowledge agent on the "knowledge" role's model (None without models: no extraction)."""
    if models is None:
        return None
    model = models.for_role("knowledge")
    return KnowledgeExtractor(model) if model is not None else None


@dataclass(frozen=True)
class RunParts:
    """What a run is made of besides its request, given again on every (re)start: the models or agents, the
    caller's own graph, the knowledge store's embedding object, the sandbox, a budget, progress, sync and the
    output's scorers.

    `models` (a model per role) or `agents` make the method's agents; without `models` no knowledge is
    extracted. `project_graph` (a compiled graph over `ProjectState`, e.g. ``build_project_graph(stages=...)``)
    or `stages` (a list for `build_project_graph`) replaces the ProjectGen graph inside the attempts, with the
    run otherwise the same; run.json records its node names, and a resume must be given the same graph again
    (its checkpoints are of it). `embeddings` is an Embeddings object for the knowledge store in place of the
    request's named one (run.json then says ``custom``; a resume must be given it again). `budget` replaces
    the request's token and cost budgets. `sync()`, when given, is called after each model call is recorded
    and before each checkpoint is written (an executor copying the folder to another machine sends it then;
    see `Relocatable`). `scorers` score the final output where the run ends, their scores kept in the run log
    (`projectgen.runs.output_scorers`)."""

    models: ModelRoles | None = None
    agents: Agents | None = None
    project_graph: Any = None
    stages: Sequence[Stage] | None = None
    embeddings: Any = None
    runner: SandboxRunner | None = None
    budget: Budget | None = None
    progress: Callable[[str], None] | None = None
    sync: Callable[[], None] | None = None
    scorers: Sequence[Scorer] = ()


@dataclass(frozen=True)
class _CustomGraph:
    """The caller's own graph, compiled once: for every attempt, and for warm-started attempts of its stages."""

    graph: Any
    warm: Any

    @classmethod
    def of(cls, parts: RunParts) -> _CustomGraph:
        graph = custom_inner_graph(parts.project_graph, parts.stages)
        if parts.agents is None and parts.models is None and graph is None:
            raise ProjectGenError("a LiveCoder run needs models, agents or a project graph")
        return cls(graph=graph, warm=custom_warm_graph(parts.stages))

    @property
    def nodes(self) -> list[str] | None:
        return custom_graph_nodes(self.graph) if self.graph is not None else None


class Run:
    """One LiveCoder run, opened once: a new one (`Run.open`) or one continued from its folder (`Run.resume`),
    checked before anything is written; `arun` runs it (the async core) and `run` for synchronous callers.

    The run owns its folder: it holds the folder's lock while it runs, writes run.json only through its
    `Lifecycle`, and hands the graph and the driver narrow things made from the folder (the gateway, the trace
    writer, the knowledge and best stores, the attempt writer, the checkpoints' path), never the folder; only
    the output's scorers and the run log read the finished folder."""

    def __init__(self, folder: RunFolder, manifest: RunManifest, parts: RunParts, custom: _CustomGraph, *,
                 resume: bool, force: bool = False, decision: Any = None) -> None:
        self.folder = folder
        self.manifest = manifest
        self.parts = parts
        self.custom = custom
        self.resuming = resume
        self.force = force
        self.decision = decision

    @classmethod
    def open(cls, request: RunRequest, out_dir: Path | str, parts: RunParts, *, run_id: str | None = None,
             force: bool = False) -> Run:
        """`request` (`RunRequest.for_task`: task, method, models' specs, settings, budgets, review ...) to run in
        a new run folder `out_dir` (`force`: replacing an earlier run's files there). The request's method
        (`projectgen.runs.METHODS`) picks the graph inside the attempts. `run_id` names the run (default: a
        random one): a batch that may start the same unit twice (an executor retrying it) tells its own run
        from an older one in the folder by it."""
        custom = _CustomGraph.of(parts)
        if custom.graph is not None and request.review:
            raise ProjectGenError("review= applies to the method's graph; build your own stages with review=True "
                                  "(architecture_stage(..., review=True))")
        check_custom_graph(request.method, custom.nodes, custom.warm, warm_start=request.attempt_settings.warm_start)
        named = request.embedding if parts.embeddings is None else None
        embeddings = (parts.embeddings if parts.embeddings is not None
                      else resolve_embeddings(named, notice=parts.progress or _warn))
        models = parts.models
        manifest = RunManifest(**request.model_dump(exclude={"custom_graph", "sampling", "embedding"}),
                               run_id=run_id or uuid.uuid4().hex[:12], custom_graph=custom.nodes,
                               sampling=models.sampling() if models is not None else {},
                               embedding=embedding_name(embeddings) or "custom")
        return cls(RunFolder(Path(out_dir)), manifest, replace(parts, embeddings=embeddings), custom, resume=False,
                   force=force)

    @classmethod
    def resume(cls, out_dir: Path | str, parts: RunParts, *, decision: Any = None) -> Run:
        """The run in `out_dir` continued with the request its run.json holds: the checkpointer replays the
        finished nodes and the call cache answers the completed calls. The models and the caller's graph are
        given again (the checkpoints are of that graph); `parts.embeddings` must embed as the run's store did.
        A run paused for review continues with `decision` (a `ReviewDecision` or its JSON; `review_run`
        builds it)."""
        folder = RunFolder(Path(out_dir))
        custom = _CustomGraph.of(parts)
        manifest, embeddings = _resumed_manifest(folder, custom, parts.embeddings)
        return cls(folder, manifest, replace(parts, embeddings=embeddings), custom, resume=True, decision=decision)

    def run(self) -> LiveCoderOutcome:
        """`arun` for synchronous callers."""
        return asyncio.run(self.arun())

    async def arun(self) -> LiveCoderOutcome:
        """The run in its folder, held by this process until it returns (its embedded Chroma store and
        checkpoints are not shareable): a new run's folder made (a knowledge server or checkpoint database
        that cannot be reached is refused first) and run.json written; then the attempts graph."""
        if not self.resuming:
            await check_checkpoint_database(self.manifest.checkpoint_url)
        with ExitStack() as held:
            knowledge = None
            if not self.resuming and self.manifest.knowledge_store:
                knowledge = held.enter_context(closing(open_knowledge_store(
                    self.folder.knowledge, self.manifest.knowledge_store, self.parts.embeddings)))
            lifecycle = self.folder.lifecycle(self.manifest)
            if self.resuming:
                held.enter_context(self.folder.hold())
                budget = self.parts.budget if self.parts.budget is not None else self.folder.budget(self.manifest)
            else:
                held.enter_context(self.folder.create(force=self.force))
                lifecycle.start()
                budget = self.parts.budget if self.parts.budget is not None else run_budget(self.manifest)
            if knowledge is None:  # closed before the folder lock is released (an embedded store is not shareable)
                knowledge = held.enter_context(closing(open_knowledge_store(
                    self.folder.knowledge, self.manifest.knowledge_store, self.parts.embeddings)))
            gateway = self.folder.gateway(self.manifest.settings, scope=self.manifest.run_id, budget=budget,
                                          sync=self.parts.sync)
            return await self._attempts(lifecycle, self._context(gateway, knowledge), self.folder.trace())

    def _context(self, gateway: ModelGateway, knowledge: Any) -> AttemptsContext:
        """What the attempts graph runs with: the task, the sandbox, the stores, the gateway, the attempt writer."""
        attempt = self.folder.attempt
        return AttemptsContext(
            task=self.manifest.task(), runner=self.parts.runner or SandboxRunner(log=self.parts.progress),
            knowledge=knowledge, best=BestRepositoryStore(self.folder.best),
            extractor=knowledge_extractor(self.parts.models), gateway=gateway, run_id=self.manifest.run_id,
            progress=self.parts.progress,
            record_attempt=lambda number, repository, record: write_attempt(attempt(number), repository, record))

    def _agents(self) -> Agents | None:
        """The caller's agents, or the default ones, made here where the run's settings (which choose the
        judges' form) are known."""
        parts = self.parts
        if parts.agents is not None or parts.models is None:
            return parts.agents
        return Agents.from_models(parts.models, self.manifest.settings)

    async def _attempts(self, lifecycle: Lifecycle, context: AttemptsContext, trace: TraceWriter) -> LiveCoderOutcome:
        """The attempts graph, through the driver, from the start or on from its checkpoint; then the outputs."""
        from langgraph.types import Command

        started = time.monotonic()
        manifest, agents = self.manifest, self._agents()
        method, settings = manifest.method, manifest.settings
        if self.custom.graph is not None:
            inner, warm = self.custom.graph, self.custom.warm
        else:
            inner = inner_graph(method, agents, settings, models=self.parts.models, review=manifest.review)
            warm = warm_graph(method, agents, settings)
        graph = build_attempts_graph(inner, settings=manifest.attempt_settings, feedback_suite=settings.feedback_suite,
                                     warm_graph=warm)
        described = model_descriptions(manifest, agents, self.parts.models, context.extractor)
        how = Drive(start={"task_id": context.task.id, "attempt": 1}, context=context, resume=self.resuming,
                    marker={"task_id": context.task.id, "method": method, "models": described},
                    config={"max_concurrency": settings.max_concurrency}, sync=self.parts.sync,
                    attempt_key="attempt", started_mark=self.folder.attempts,
                    on_failure=lambda reason, state: self._save_best(context))
        if self.decision is not None:
            pending = read_pending_review(self.folder)
            if pending is None:
                raise ProjectGenError(f"{self.folder.root}: no review is pending (the run is {manifest.status})")
            decision = parse_decision(self.decision, pending["request"])  # a bad edit is refused before anything runs
            lifecycle.running()
            how = replace(how, decision=Command(resume={pending["interrupt_id"]: decision.model_dump(
                mode="json", exclude_none=True)}), marker={"review": decision.action, "stage": pending.get("stage"),
                                                           "iteration": pending.get("iteration")})
        driven = await drive(graph, how, lifecycle, trace, self.folder.checkpoints)
        if driven.finished_before:
            return await self._finish(lifecycle, context, described, driven.state, trace, started)
        if driven.interrupts:
            return self._pause(lifecycle, driven.state, driven.interrupts[0], trace)
        self.folder.clear_review()
        return await self._finish(lifecycle, context, described, driven.state, trace, started)

    async def _finish(self, lifecycle: Lifecycle, context: AttemptsContext, described: dict[str, str],
                      state: dict[str, Any], trace: TraceWriter, started: float) -> LiveCoderOutcome:
        """Hidden unit tests, summary.json, the output repository and run.json's end status. A resume of a run
        that had finished keeps its unit report instead of running the same tests on the same output again."""
        folder, manifest = self.folder, self.manifest
        unit_report = None
        evaluate_unit = manifest.attempt_settings.measure_unit_tests
        if evaluate_unit and self.resuming and manifest.status == "finished" and folder.unit_report.is_file():
            unit_report = TestReport.model_validate_json(folder.unit_report.read_text(encoding="utf-8"))
            context.say(f"the run had finished: its hidden unit tests are read from {folder.unit_report}, not run "
                        "again")
        elif evaluate_unit:
            unit_report = await run_hidden_unit_tests(context.runner, context.task, state.get("repository") or {},
                                                      progress=context.progress, what=" on the final repository")
            if unit_report is not None:
                unit_report.write_json(folder.unit_report)
        # Every call of the run, those made before a resume included.
        summary = summarize_attempts(state, folder.usage_records(), manifest, model_descriptions=described,
                                     unit_tests=unit_report.summary() if unit_report is not None else None,
                                     duration_s=time.monotonic() - started)
        folder.write_repository(state.get("repository") or {})
        if (tree := output_tree(state)) is not None:
            folder.write_json(folder.ssat, tree)  # what `evolve` starts from
        scores = await asyncio.to_thread(score_output, self.parts.scorers, context.task, folder, context.runner,
                                         unit_report)
        # summary.json says the run is done (experiments collect a folder that has one): whole or absent; the run
        # log beside it.
        write_run_log(folder, "livecoder", summary.model_dump(mode="json"), manifest=manifest,
                      summary=summary.to_json(), scores=scores)
        lifecycle.record(summary.status, summary.reason)
        trace.write("run_end", final=state.get("final"), stopped=state.get("stopped"), status=summary.status)
        return LiveCoderOutcome(state=state, summary=summary.model_dump(mode="json"), out_dir=folder.root,
                                unit_report=unit_report)

    def _pause(self, lifecycle: Lifecycle, state: dict[str, Any], pending: Any, trace: TraceWriter
               ) -> LiveCoderOutcome:
        """A run paused by a review: review.json holds the request, run.json says awaiting-review, the trace says
        so; the outcome carries the request (no summary, no unit tests: the run is not over)."""
        request = dict(pending.value)
        attempt = state.get("attempt")
        self.folder.write_review(pending_review_record(attempt=attempt, interrupt_id=pending.id, request=request))
        record = {"stage": request.get("stage"), "attempt": attempt, "iteration": request.get("iteration"),
                  "request": request}
        lifecycle.record(AWAITING_REVIEW, awaiting_reason(self.folder.root, record))
        trace.write("review_requested", attempt=attempt, stage=request.get("stage"),
                    iteration=request.get("iteration"), judge=request.get("judge"))
        return LiveCoderOutcome(state=state, summary={}, out_dir=self.folder.root,
                                review={**record, "interrupt_id": pending.id})

    async def _save_best(self, context: AttemptsContext) -> dict[str, Any]:
        """A model that keeps failing ends the run cleanly: the best so far becomes the output (the driver then
        records the failure). No summary.json is written, and the checkpoint still holds the failed step, so
        `--resume` continues from it once the model is back. The trace's ``final`` says what the output is."""
        stored = await asyncio.to_thread(context.best.best, context.task.id)
        final = ({"source": "best", "attempt": stored.attempt, "score": stored.score} if stored is not None
                 else {"source": "none", "attempt": None, "score": None})
        await asyncio.to_thread(self.folder.write_repository, dict(stored.repository) if stored is not None else {})
        return {"final": final}


def write_attempt(attempt: AttemptLayout, repository: Mapping[str, str], record: Mapping[str, Any]) -> None:
    """attempts/N with the attempt's repository and record, complete or not at all: written aside, then
    renamed into place (a run killed while writing it writes it again when it resumes)."""
    tmp = AttemptLayout(attempt.root.with_name(f".tmp-{attempt.root.name}"))
    shutil.rmtree(tmp.root, ignore_errors=True)
    write_repository(repository, tmp.repository)
    tmp.root.mkdir(parents=True, exist_ok=True)  # an attempt without a repository still has its record
    write_atomic(tmp.record, json.dumps(dict(record), indent=1, default=str) + "\n")
    shutil.rmtree(attempt.root, ignore_errors=True)
    tmp.root.rename(attempt.root)


def _resumed_manifest(folder: RunFolder, custom: _CustomGraph, embeddings: Any) -> tuple[RunManifest, Any]:
    """run.json of a run that can be continued with the caller's graph `custom` and `embeddings`, and the
    embeddings its knowledge store takes.

    Refused with one line: no checkpoint though attempts were made; an embedding other than the one the
    store was built with (run.json's; none recorded: hashing), or a custom one not given again; a graph
    other than the run's (its checkpoints hold that graph's nodes)."""
    manifest = folder.read_manifest()
    if not folder.has_checkpoints(manifest.checkpoint_url) and folder.attempts.exists():
        raise ProjectGenError(f"{folder}: no checkpoint to resume from (no {folder.checkpoints.name}, though "
                              "attempts were made); start the run again instead")
    describe_method(manifest.method)
    recorded = manifest.embedding or "hashing"
    if isinstance(embeddings, str) and embeddings != recorded:
        raise ProjectGenError(f"{folder}: the run's knowledge store was built with the {recorded} embedding, "
                              f"not {embeddings}; a resume keeps its embedding")
    if embeddings is None or isinstance(embeddings, str):
        if recorded == "custom":
            raise ProjectGenError(f"{folder}: the run's knowledge store was built with an embeddings object given "
                                  "from Python; resume it with Run.resume(DIR, RunParts(embeddings=<the same object>))")
        embeddings = make_embeddings(recorded)
    nodes, recorded_nodes = custom.nodes, manifest.custom_graph
    if recorded_nodes is not None and nodes is None:
        raise ProjectGenError(f"{folder}: the run used its own project graph (nodes {', '.join(recorded_nodes)}); "
                              "resume it with Run.resume(DIR, RunParts(...)) given the same project_graph or stages")
    if recorded_nodes is None and nodes is not None:
        raise ProjectGenError(f"{folder}: the run used method {manifest.method}'s graph, not a custom one; resume it "
                              "without project_graph or stages")
    if nodes is not None and nodes != recorded_nodes:
        raise ProjectGenError(f"{folder}: the run's project graph had the nodes {', '.join(recorded_nodes)}, "
                              f"not {', '.join(nodes)}; resume it with the same graph")
    manifest = manifest.model_copy(update={
        "embedding": recorded,  # a run from before embeddings were recorded: its store was built with hashing
        "attempt_settings": method_attempt_settings(manifest.method, manifest.attempt_settings)})
    check_custom_graph(manifest.method, nodes, custom.warm, warm_start=manifest.attempt_settings.warm_start)
    return manifest, embeddings


def model_descriptions(manifest: RunManifest, agents: Agents | None, models: ModelRoles | None,
                       extractor: Any) -> dict[str, str]:
    """role -> model description of the roles the run's method calls (a replay is named as one)."""
    method = describe_method(manifest.method)
    if method.graph in ("direct", "self-reflection"):
        return {"direct": describe_model(direct_generator(models, manifest.settings.feedback_suite).model)}
    described = ({role: text for role, text in describe_agents(agents).items() if role in method.roles}
                 if agents is not None else {})
    settings = manifest.attempt_settings
    if extractor is not None and settings.attempts > 1 and (settings.success_knowledge or settings.failure_knowledge):
        described["knowledge"] = describe_model(getattr(extractor, "model", extractor))
    return described


def output_tree(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The architecture tree of the run's output: the best attempt's (the last attempt's without the
    historical best); None for a method without a tree (direct, self-reflection)."""
    final = state.get("final") or {}
    design = (state.get("current") or {}) if final.get("source") == "last" else (state.get("best_design") or {})
    return design.get("ssat") or None
