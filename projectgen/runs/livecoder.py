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

A killed run continues with `run_livecoder(task, DIR, ..., resume=True)` (`projectgen run
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
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from projectgen.agents import Agents
from projectgen.config import AttemptSettings, Settings
from projectgen.datasets.task import Task
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs.attempts import AttemptsContext, build_attempts_graph
from projectgen.graphs.project import Stage
from projectgen.graphs.review import check_review_stages, parse_decision
from projectgen.llm import Budget, CallCache, PromptStore, UsageRecorder, describe_model, model_failure_reason
from projectgen.llm.roles import ROLES
from projectgen.llm.sampling import sampling_by_role
from projectgen.memory.embedding_models import embedding_name, resolve_embeddings
from projectgen.runs import layout
from projectgen.runs.checkpoints import check_checkpoint_database, check_checkpoint_url, open_checkpointer
from projectgen.runs.execution import (
    new_run_folder, open_gateway, run_hidden_unit_tests, stream_graph, write_output_repository,
)
from projectgen.runs.locking import folder_lock
from projectgen.runs.manifest import RunManifest, read_manifest, run_budget, write_manifest
from projectgen.runs.method_graphs import (
    check_custom_graph, custom_graph_nodes, custom_inner_graph, custom_warm_graph, direct_generator, inner_graph,
    warm_graph,
)
from projectgen.runs.methods import DEFAULT_METHOD, check_review, describe_method, method_attempt_settings
from projectgen.runs.pending_review import (
    AWAITING_REVIEW, awaiting_reason, clear_pending_review, write_pending_review,
)
from projectgen.runs.summary import describe_agents, summarize_attempts
from projectgen.runs.trace import TraceWriter


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


@dataclass(frozen=True)
class LiveCoderRun:
    """One invocation of LiveCoder, its folder opened and locked by `arun_livecoder`: what `_run` works with."""

    task: Task
    out_dir: Path
    manifest: RunManifest
    agents: Agents | None
    models: Any
    settings: Settings
    attempt_settings: AttemptSettings
    context: AttemptsContext
    resume: bool
    evaluate_unit: bool
    custom_graph: Any = None  # the caller's graph for every attempt (None: the method's)
    custom_warm_graph: Any = None  # warm-started attempts of the caller's stages
    sync: Callable[[], None] | None = None
    decision: Any = None  # a `ReviewDecision` to continue a run paused for review with


def open_knowledge_store(out_dir: Path, url: str | None, embeddings: Any) -> Any:
    """The run's knowledge store: a Chroma server when `url` is given, else embedded in the run folder.
    `embeddings`: a name, an object, or None for the default (`KnowledgeStore`)."""
    from projectgen.memory.knowledge_store import KnowledgeStore

    if url:
        return KnowledgeStore.server(url, embeddings=embeddings)
    return KnowledgeStore.persistent(out_dir / layout.KNOWLEDGE, embeddings=embeddings)


def resumed_embeddings(out_dir: Path, manifest: RunManifest, given: Any) -> Any:
    """The embedding a resumed run's knowledge store was built with (run.json's; none recorded: hashing).

    A name other than the recorded one is refused; an object is taken as given (the store refuses
    it unless it embeds as the recorded one did)."""
    from projectgen.memory.embedding_models import make_embeddings

    recorded = manifest.embedding or "hashing"
    if given is None:
        if recorded == "custom":
            raise ProjectGenError(f"{out_dir}: the run's knowledge store was built with an embeddings object given "
                                  "from Python; resume it with run_livecoder(..., resume=True, embeddings=<the same "
                                  "object>)")
        return make_embeddings(recorded)
    if isinstance(given, str):
        if given != recorded:
            raise ProjectGenError(f"{out_dir}: the run's knowledge store was built with the {recorded} embedding, "
                                  f"not {given}; a resume keeps its embedding")
        return make_embeddings(given)
    return given


def _warn(message: str) -> None:
    import warnings

    warnings.warn(message, stacklevel=3)


def knowledge_extractor(models: Any) -> Any:
    """The knowledge agent on the "knowledge" role's model (None without models: no extraction)."""
    from projectgen.agents.knowledge import KnowledgeExtractor

    if models is None:
        return None
    model = getattr(models, "for_role", lambda role: models)("knowledge")
    return KnowledgeExtractor(model) if model is not None else None


async def arun_livecoder(task: Task, out_dir: Path, *, models: Any = None, agents: Agents | None = None,
                         settings: Settings | None = None, attempt_settings: AttemptSettings | None = None,
                         model_specs: Mapping[str, str] | None = None, runner: SandboxRunner | None = None,
                         knowledge_url: str | None = None, embeddings: Any = None,
                         max_tokens: int | None = None,
                         max_cost_usd: float | None = None, prices_file: Path | str | None = None,
                         checkpoint_url: str | None = None, budget: Budget | None = None, resume: bool = False,
                         force: bool = False,
                         progress: Callable[[str], None] | None = None, evaluate_unit: bool = True,
                         method: str | None = None, project_graph: Any = None,
                         stages: Sequence[Stage] | None = None, run_id: str | None = None,
                         sync: Callable[[], None] | None = None, review: Sequence[str] | str = (),
                         decision: Any = None) -> LiveCoderOutcome:
    """Run (or, with `resume`, continue) LiveCoder on `task` into `out_dir`.

    `method` (`projectgen.runs.METHODS`; default "livecoder") picks the graph inside the attempts and
    the attempt settings' defaults (`method_attempt_settings`); a resume continues run.json's method.

    `project_graph` (a compiled graph over `ProjectState`, e.g. ``build_project_graph(stages=...)``) or
    `stages` (a list for `build_project_graph`) replaces the ProjectGen graph inside the attempts, with
    the run otherwise the same: checkpoints, trace, attempts, knowledge, the historical best. run.json
    records its node names; a resume must be given the same graph again (its checkpoints are of it).
    `models` or `agents` are then optional: without them no knowledge is extracted.

    `max_tokens` and `max_cost_usd` (priced with the list prices, or `prices_file` over them)
    stop the run cleanly with the best so far; `checkpoint_url` puts the checkpoints in
    PostgreSQL instead of the run folder. All three are kept in run.json, so a resume
    honours them and counts what was spent before it.

    `run_id` names a new run (default: a random one): a batch that may start the same unit twice
    (an executor retrying it) tells its own run from an older one in the folder by it. `sync()`,
    when given, is called after each model call is recorded and before each checkpoint is written
    (an executor copying the folder to another machine sends it then; see `Relocatable`).
    `review` ("architecture", "skeleton") pauses the run for a person's decision once that stage has
    its output (`projectgen.graphs.review`): the outcome's `review` is then the request and run.json says
    ``awaiting-review``. Continue with ``resume=True`` and `decision` (a `ReviewDecision` or its JSON;
    `projectgen.runs.review.review_run` builds it); run.json keeps `review`, so a resume reviews the same
    stages.
    `embeddings` is the knowledge store's embedding: a name (``wordllama``, ``e5``, ``hashing``:
    `projectgen.memory.EMBEDDINGS`), any LangChain `Embeddings`, or None for the default (WordLlama;
    ``hashing``, said through `progress`, when its package is missing). run.json records it, and a
    resume reopens the store with it (a run.json that records none is a ``hashing`` run).
    """
    from projectgen.memory.best_repo import BestRepositoryStore

    settings = Settings.with_profile(task.settings_profile, settings)  # on --resume, run.json's instead
    out_dir = Path(out_dir)
    custom = custom_inner_graph(project_graph, stages)
    custom_nodes = custom_graph_nodes(custom) if custom is not None else None
    custom_warm = custom_warm_graph(stages)
    # One process at a time in a run folder (its embedded Chroma store and checkpoints are not
    # shareable); held until the run returns.
    with ExitStack() as locked:
        knowledge = None
        review = check_review_stages(review)
        if decision is not None and not resume:
            raise ProjectGenError("a review decision continues a paused run: pass resume=True")
        if custom is not None and review:
            raise ProjectGenError("review= applies to the method's graph; build your own stages with review=True "
                                  "(architecture_stage(..., review=True))")
        if resume:
            manifest = _resumable_manifest(out_dir)
            if review and list(review) != manifest.review:
                raise ProjectGenError(f"the run was started with review {','.join(manifest.review) or 'of no stage'};"
                                      " a resume reviews the same stages (leave out review)")
            method = _resumed_method(manifest, method)
            embeddings = resumed_embeddings(out_dir, manifest, embeddings)
            if manifest.embedding is None:  # a run from before it was recorded: its store was built with hashing
                manifest = manifest.model_copy(update={"embedding": "hashing"})
            _check_resumed_graph(out_dir, manifest, custom_nodes)
            if attempt_settings is None:
                attempt_settings = AttemptSettings.model_validate(manifest.attempt_settings)
            attempt_settings = method_attempt_settings(method, attempt_settings)
            check_custom_graph(method, custom_nodes, custom_warm, warm_start=attempt_settings.warm_start)
            locked.enter_context(folder_lock(out_dir))
            if budget is None:
                budget = run_budget(manifest, UsageRecorder.load(out_dir / layout.USAGE))
        else:
            method = method or DEFAULT_METHOD
            check_review(method, review)
            embeddings = resolve_embeddings(embeddings, notice=progress or _warn)
            attempt_settings = method_attempt_settings(method, attempt_settings)
            check_custom_graph(method, custom_nodes, custom_warm, warm_start=attempt_settings.warm_start)
            if agents is None and models is None and custom is None:
                raise ProjectGenError("run_livecoder needs models, agents or a project graph")
            manifest = RunManifest(run_id=run_id or uuid.uuid4().hex[:12], task_path=str(Path(task.root).resolve()),
                                   task_id=task.id, custom_graph=custom_nodes,
                                   method=method, model_label=model_label(model_specs),
                                   models=dict(model_specs or {}), settings=settings.model_dump(),
                                   sampling=sampling_by_role(models, ROLES) if models is not None else {},
                                   attempt_settings=attempt_settings.model_dump(), knowledge_store=knowledge_url,
                                   embedding=embedding_name(embeddings) or "custom",
                                   max_tokens=max_tokens, max_cost_usd=max_cost_usd,
                                   prices_file=str(Path(prices_file).resolve()) if prices_file else None,
                                   checkpoint_url=checkpoint_url, review=list(review))
            await _refuse_bad_options(checkpoint_url=checkpoint_url, prices_file=prices_file,
                                      knowledge_url=knowledge_url)
            if knowledge_url:  # a server that cannot be reached is refused before the run folder is made
                knowledge = locked.enter_context(closing(open_knowledge_store(out_dir, knowledge_url, embeddings)))
            budget = budget if budget is not None else run_budget(manifest)
            locked.enter_context(new_run_folder(out_dir, force=force))
            write_manifest(out_dir, manifest)
        if agents is None and models is not None:
            agents = Agents.from_models(models)
        elif agents is None and custom is None:
            raise ProjectGenError("run_livecoder needs models, agents or a project graph")
        gateway = open_gateway(settings, recorder=UsageRecorder(out_dir / layout.USAGE), budget=budget,
                               cache=CallCache(out_dir / layout.CALLS, manifest.run_id, after_put=sync),
                               prompts=PromptStore(out_dir / layout.PROMPTS))
        if knowledge is None:  # closed before the folder lock is released (an embedded store is not shareable)
            knowledge = locked.enter_context(closing(open_knowledge_store(out_dir, manifest.knowledge_store,
                                                                          embeddings)))
        context = AttemptsContext(
            task=task, runner=runner or SandboxRunner(log=progress), knowledge=knowledge,
            best=BestRepositoryStore(out_dir / layout.BEST), extractor=knowledge_extractor(models),
            gateway=gateway, run_id=manifest.run_id, progress=progress, out_dir=out_dir)
        return await _run(LiveCoderRun(task=task, out_dir=out_dir, manifest=manifest, agents=agents, models=models,
                                       settings=settings, attempt_settings=attempt_settings, context=context,
                                       resume=resume, evaluate_unit=evaluate_unit, custom_graph=custom,
                                       custom_warm_graph=custom_warm, sync=sync, decision=decision))


def run_livecoder(task: Task, out_dir: Path, **kwargs: Any) -> LiveCoderOutcome:
    """`arun_livecoder` for synchronous callers."""
    return asyncio.run(arun_livecoder(task, out_dir, **kwargs))


def model_label(model_specs: Mapping[str, str] | None) -> str | None:
    """run.json's label for a run whose models are the reference replay (spec "reference")."""
    from projectgen.llm.naming import REFERENCE_LABEL
    from projectgen.llm.specs import REFERENCE_SPEC

    return REFERENCE_LABEL if REFERENCE_SPEC in (model_specs or {}).values() else None


def _resumed_method(manifest: RunManifest, asked: str | None) -> str:
    """run.json's method; asking a resume for another one is a mistake (the checkpoints are of that graph)."""
    describe_method(manifest.method)
    if asked is not None and asked != manifest.method:
        raise ProjectGenError(f"the run was started with method {manifest.method}, not {asked}; a resume "
                              "continues its own method")
    return manifest.method


def _check_resumed_graph(out_dir: Path, manifest: RunManifest, nodes: list[str] | None) -> None:
    """A resume runs the graph the run was started with: its checkpoints hold that graph's nodes."""
    if manifest.custom_graph is not None and nodes is None:
        raise ProjectGenError(f"{out_dir}: the run used its own project graph (nodes {', '.join(manifest.custom_graph)}); "
                              "resume it with run_livecoder(..., resume=True) given the same project_graph or stages")
    if manifest.custom_graph is None and nodes is not None:
        raise ProjectGenError(f"{out_dir}: the run used method {manifest.method}'s graph, not a custom one; resume it "
                              "without project_graph or stages")
    if nodes is not None and nodes != manifest.custom_graph:
        raise ProjectGenError(f"{out_dir}: the run's project graph had the nodes {', '.join(manifest.custom_graph)}, "
                              f"not {', '.join(nodes)}; resume it with the same graph")


def _resumable_manifest(out_dir: Path) -> RunManifest:
    """run.json of a run folder that can be resumed (checkpoints kept, or no attempt made yet)."""
    manifest = read_manifest(out_dir)
    if (manifest.checkpoint_url is None and not (out_dir / layout.CHECKPOINTS).is_file()
            and (out_dir / layout.ATTEMPTS).exists()):
        raise ProjectGenError(f"{out_dir}: no checkpoint to resume from (no {layout.CHECKPOINTS}, though "
                              "attempts were made); start the run again instead")
    return manifest


async def _refuse_bad_options(*, checkpoint_url: str | None, prices_file: Path | str | None,
                              knowledge_url: str | None) -> None:
    """Bad prices, checkpoint or knowledge-store URLs are refused before anything is written."""
    check_checkpoint_url(checkpoint_url)
    if prices_file:
        from projectgen.llm.pricing import PriceTable

        PriceTable.from_file(prices_file)  # a missing or malformed file is an error even without --max-cost
    if knowledge_url:
        from projectgen.memory.knowledge_store import parse_server_url

        parse_server_url(knowledge_url)
    await check_checkpoint_database(checkpoint_url)  # unreachable: fails here, not after the folder is made


def model_descriptions(run: LiveCoderRun) -> dict[str, str]:
    """role -> model description of the roles the run's method calls (a replay is named as one)."""
    method = describe_method(run.manifest.method)
    if method.graph in ("direct", "self-reflection"):
        return {"direct": describe_model(direct_generator(run.models).model)}
    described = ({role: text for role, text in describe_agents(run.agents).items() if role in method.roles}
                 if run.agents is not None else {})
    settings, extractor = run.attempt_settings, run.context.extractor
    if extractor is not None and settings.attempts > 1 and (settings.success_knowledge or settings.failure_knowledge):
        described["knowledge"] = describe_model(getattr(extractor, "model", extractor))
    return described


async def _run(run: LiveCoderRun) -> LiveCoderOutcome:
    """The attempts graph, checkpointed, from the start or on from its checkpoint; then the run's outputs."""
    trace = TraceWriter(run.out_dir / layout.EVENTS)
    started = time.monotonic()
    config = {"configurable": {"thread_id": run.manifest.run_id}, "max_concurrency": run.settings.max_concurrency}
    async with open_checkpointer(run.out_dir, run.manifest.checkpoint_url, before_write=run.sync) as saver:
        method = run.manifest.method
        if run.custom_graph is not None:
            inner, warm = run.custom_graph, run.custom_warm_graph
        else:
            inner = inner_graph(method, run.agents, run.settings, models=run.models, review=run.manifest.review)
            warm = warm_graph(method, run.agents, run.settings)
        graph = build_attempts_graph(inner, settings=run.attempt_settings, warm_graph=warm, checkpointer=saver)
        try:
            failure = await _stream_attempts(run, graph, config, trace)
        except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, or SIGTERM through the CLI
            record_interruption(run, trace)
            raise
        if failure is not None:
            await _record_failure(run, trace, failure)
            raise failure
        snapshot = await graph.aget_state(config)
        state = dict(snapshot.values)
        if snapshot.interrupts:
            return _pause(run, state, snapshot.interrupts[0], trace)
    clear_pending_review(run.out_dir)
    return await _finish(run, state, trace, started)


async def _stream_attempts(run: LiveCoderRun, graph: Any, config: Mapping[str, Any],
                           trace: TraceWriter) -> BaseException | None:
    """Stream the attempts graph, traced; the model error that ended it early, if one did. A run paused for
    review goes on with the decision given to its interrupt as ``Command(resume=...)``; resumed without
    one, it pauses at once again (the interrupted node only reads its state before it asks)."""
    from langgraph.types import Command

    snapshot = await graph.aget_state(config)
    if run.decision is not None:
        if not snapshot.interrupts:
            raise ProjectGenError(f"{run.out_dir}: no review is pending (the run is {run.manifest.status})")
        pending = snapshot.interrupts[0]
        decision = parse_decision(run.decision, pending.value)  # a bad edit is refused before anything runs
        write_manifest(run.out_dir, run.manifest.model_copy(update={"status": "running", "reason": None}))
        trace.write("run_resumed", run_id=run.manifest.run_id, review=decision.action,
                    stage=pending.value.get("stage"), iteration=pending.value.get("iteration"))
        trace.resume_at(snapshot.values.get("attempt"))
        resumed = Command(resume={pending.id: decision.model_dump(mode="json", exclude_none=True)})
        streamed = await stream_graph(graph, resumed, context=run.context, config=config, on_update=trace.update)
        return streamed.failure
    # Killed before the first checkpoint: start from the beginning (completed calls are still replayed),
    # unless attempts were made whose checkpoints are gone (say, a PostgreSQL database was dropped).
    from_start = not run.resume or not snapshot.values
    if run.resume and from_start and (run.out_dir / layout.ATTEMPTS).exists():
        raise ProjectGenError(f"{run.out_dir}: no checkpoint to resume from")
    # Finished: nothing to run next and no task pending (a run killed right after its input was
    # checkpointed has no next node yet, but the pending start task).
    if run.resume and not from_start and not snapshot.next and not snapshot.tasks:
        trace.write("run_resumed", run_id=run.manifest.run_id, note="already finished")
        return None
    trace.write("run_resumed" if run.resume else "run_start", run_id=run.manifest.run_id, task_id=run.task.id,
                method=run.manifest.method, models=model_descriptions(run),
                **({"note": "no checkpoint yet: from the beginning"} if run.resume and from_start else {}))
    trace.resume_at(None if from_start else snapshot.values.get("attempt"))
    start = {"task_id": run.task.id, "attempt": 1} if from_start else None
    streamed = await stream_graph(graph, start, context=run.context, config=config, on_update=trace.update)
    return streamed.failure


async def _finish(run: LiveCoderRun, state: dict[str, Any], trace: TraceWriter, started: float) -> LiveCoderOutcome:
    """Hidden unit tests, summary.json, the output repository and run.json's end status. A resume of a run
    that had finished keeps its unit report instead of running the same tests on the same output again."""
    unit_report = None
    kept = run.out_dir / layout.UNIT_REPORT
    if run.evaluate_unit and run.resume and run.manifest.status == "finished" and kept.is_file():
        unit_report = TestReport.model_validate_json(kept.read_text(encoding="utf-8"))
        run.context.say(f"the run had finished: its hidden unit tests are read from {kept}, not run again")
    elif run.evaluate_unit:
        unit_report = await run_hidden_unit_tests(run.context.runner, run.task, state.get("repository") or {},
                                                  progress=run.context.progress, what=" on the final repository")
        if unit_report is not None:
            unit_report.write_json(run.out_dir / layout.UNIT_REPORT)
    # Every call of the run, those made before a resume included.
    summary = summarize_attempts(state, UsageRecorder.load(run.out_dir / layout.USAGE).records, run.manifest,
                                 model_descriptions=model_descriptions(run),
                                 unit_tests=unit_report.summary() if unit_report is not None else None,
                                 duration_s=time.monotonic() - started)
    write_output_repository(run.out_dir, state.get("repository") or {})
    if (tree := output_tree(state)) is not None:
        write_atomic(run.out_dir / layout.SSAT, json.dumps(tree, indent=1) + "\n")  # what `evolve` starts from
    # summary.json says the run is done (experiments collect a folder that has one): whole or absent.
    write_atomic(run.out_dir / layout.SUMMARY, summary.to_json())
    write_manifest(run.out_dir, run.manifest.model_copy(update={"status": summary.status, "reason": summary.reason}))
    trace.write("run_end", final=state.get("final"), stopped=state.get("stopped"), status=summary.status)
    return LiveCoderOutcome(state=state, summary=summary.model_dump(mode="json"), out_dir=run.out_dir,
                            unit_report=unit_report)


def output_tree(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The architecture tree of the run's output: the best attempt's (the last attempt's without the
    historical best); None for a method without a tree (direct, self-reflection)."""
    final = state.get("final") or {}
    design = (state.get("current") or {}) if final.get("source") == "last" else (state.get("best_design") or {})
    return design.get("ssat") or None


def _pause(run: LiveCoderRun, state: dict[str, Any], pending: Any, trace: TraceWriter) -> LiveCoderOutcome:
    """A run paused by a review: review.json holds the request, run.json says awaiting-review, the trace says
    so; the outcome carries the request (no summary, no unit tests: the run is not over)."""
    request = dict(pending.value)
    attempt = state.get("attempt")
    write_pending_review(run.out_dir, attempt=attempt, interrupt_id=pending.id, request=request)
    record = {"stage": request.get("stage"), "attempt": attempt, "iteration": request.get("iteration"),
              "request": request}
    reason = awaiting_reason(run.out_dir, record)
    write_manifest(run.out_dir, run.manifest.model_copy(update={"status": AWAITING_REVIEW, "reason": reason}))
    trace.write("review_requested", attempt=attempt, stage=request.get("stage"), iteration=request.get("iteration"),
                judge=request.get("judge"))
    return LiveCoderOutcome(state=state, summary={}, out_dir=run.out_dir, review={**record,
                                                                                   "interrupt_id": pending.id})


def record_interruption(run: LiveCoderRun, trace: TraceWriter) -> None:
    """An interrupted run must not stay "running" in run.json: it says "interrupted", and the trace ends.
    Its checkpoint holds every finished step, so `--resume` continues it."""
    reason = "interrupted (Ctrl-C or SIGTERM); continue with --resume"
    write_manifest(run.out_dir, run.manifest.model_copy(update={"status": "interrupted", "reason": reason}))
    trace.write("run_end", stopped=reason, status="interrupted")


async def _record_failure(run: LiveCoderRun, trace: TraceWriter, exc: BaseException) -> None:
    """A model that keeps failing ends the run cleanly: the best so far becomes the output, run.json
    says "failed" with a one-line reason, the trace ends. No summary.json is written, and the
    checkpoint still holds the failed step, so `--resume` continues from it once the model is back."""
    reason = model_failure_reason(exc)
    context = run.context
    stored = await asyncio.to_thread(context.best.best, context.task.id)
    final = ({"source": "best", "attempt": stored.attempt, "score": stored.score} if stored is not None
             else {"source": "none", "attempt": None, "score": None})
    await asyncio.to_thread(write_output_repository, run.out_dir, dict(stored.repository) if stored is not None else {})
    write_manifest(run.out_dir, run.manifest.model_copy(update={"status": "failed", "reason": reason}))
    trace.write("run_end", final=final, stopped=reason, status="failed")
    # Not said here too: the exception that follows carries the reason (the CLI prints it once).
