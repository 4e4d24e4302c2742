"""Run LiveCoder on one task: attempts around the project graph, durable and traced.

Everything lands in one run folder::

    run.json            what was run (task, model specs, settings, run id): enough to resume
    checkpoints.sqlite  LangGraph checkpoints of the attempts graph and every inner graph
                        (or a PostgreSQL database given by URL, for runs shared between machines)
    events.jsonl        the trace (one event per node update; `projectgen trace DIR`)
    usage.jsonl         one line per model call
    calls.jsonl         the replies of completed model calls, replayed on resume (`CallCache`)
    knowledge/          the Chroma knowledge store (embedded, unless a server URL is given)
    best/               the historical-best repository store
    attempts/N/         each attempt's repository and record
    repository/         the final output (the historical best)
    summary.json        per attempt: score, best so far, reuse, knowledge, tokens; the final choice

A killed run continues with `run_livecoder(task, DIR, ..., resume=True)` (`projectgen run
--resume DIR`): the checkpointer replays finished nodes from the database, and a node that
was cut short runs again with its completed model calls answered from calls.jsonl, so no
completed model call is made again.

How a run ends (``status`` in run.json, with a one-line ``reason`` unless finished):
``finished``; ``budget-limited`` (a token or cost budget stopped it; the best so far is the
output, summary.json says so); ``failed`` (a model kept failing: a transient error after the
door's retries, or a non-transient one such as a rejected key). A failed run writes the best
so far to ``repository/`` and ends its trace, writes no summary.json, and raises the model's
error to the caller; its checkpoint still holds the failed step, so a resume continues there.
"""
from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from projectgen.agents import Agents, ModelGateway
from projectgen.config import AttemptSettings, Settings
from projectgen.datasets.task import Task
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs.attempts import AttemptsContext, build_attempts_graph
from projectgen.graphs.project import build_project_graph
from projectgen.llm import MODEL_FAILURES, Budget, CallCache, UsageRecorder, model_failure_reason
from projectgen.repository import write_repository
from projectgen.runs import layout
from projectgen.runs.trace import TraceWriter



class RunManifest(BaseModel):
    """What a run folder holds a run of; written first, read on resume."""

    run_id: str
    task_path: str
    task_id: str
    models: dict[str, str] = Field(default_factory=dict, description="role -> spec string, when known")
    settings: dict[str, Any] = Field(default_factory=dict)
    attempt_settings: dict[str, Any] = Field(default_factory=dict)
    knowledge_store: str | None = Field(default=None, description="Chroma server URL; None = embedded in the run")
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    prices_file: str | None = Field(default=None, description="price file over the list prices, for the cost budget")
    checkpoint_url: str | None = Field(default=None, description="PostgreSQL URL; None = checkpoints.sqlite in the run")
    status: str = Field(default="running", description="running, finished, budget-limited or failed")
    reason: str | None = Field(default=None, description="why the run stopped early (one line), if it did")


@dataclass
class LiveCoderOutcome:
    state: dict[str, Any]
    summary: dict[str, Any]
    out_dir: Path
    unit_report: TestReport | None = None

    @property
    def repository(self) -> dict[str, str]:
        return dict(self.state.get("repository") or {})


def _knowledge_store(out_dir: Path, url: str | None, embeddings: Any):
    from projectgen.memory.knowledge_store import KnowledgeStore

    if url:
        return KnowledgeStore.server(url, embeddings=embeddings)
    return KnowledgeStore.persistent(out_dir / layout.KNOWLEDGE, embeddings=embeddings)


def run_budget(manifest: RunManifest, earlier: UsageRecorder | None = None) -> Budget | None:
    """The token and cost budgets run.json asks for, already charged with the calls in `earlier`."""
    from projectgen.llm import AllBudgets, CostBudget, TokenBudget
    from projectgen.llm.pricing import PriceTable

    calls = earlier.records if earlier is not None else []
    budgets: list[Budget] = []
    if manifest.max_tokens:
        budgets.append(TokenBudget(manifest.max_tokens, used=sum(c.total_tokens for c in calls)))
    if manifest.max_cost_usd is not None:
        prices = PriceTable.from_file(manifest.prices_file) if manifest.prices_file else PriceTable.default()
        budgets.append(CostBudget(manifest.max_cost_usd, prices, spent=prices.total(calls).value or 0.0))
    if len(budgets) > 1:
        return AllBudgets(*budgets)
    return budgets[0] if budgets else None


def _check_checkpoint_url(url: str | None) -> None:
    """Refuse a checkpoint URL we cannot use before anything is written for it."""
    if url is None:
        return
    if not url.startswith(("postgres://", "postgresql://")):
        raise ProjectGenError(f"--checkpoint-url must be a PostgreSQL URL (postgresql://...), got {url!r}")
    try:
        import langgraph.checkpoint.postgres.aio  # noqa: F401
    except ImportError:
        raise ProjectGenError("PostgreSQL checkpoints need the postgres extra: "
                              "pip install 'projectgen[postgres]'") from None


@asynccontextmanager
async def open_checkpointer(out_dir: Path, url: str | None) -> AsyncIterator[Any]:
    """SQLite in the run folder by default; PostgreSQL when `url` is given (tables created on first use)."""
    if url is None:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(str(out_dir / layout.CHECKPOINTS)) as saver:
            yield saver
        return
    _check_checkpoint_url(url)
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection, OperationalError
    from psycopg.rows import dict_row

    try:
        connection = await AsyncConnection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    except OperationalError as exc:
        raise ProjectGenError(f"cannot reach the checkpoint database {_redact(url)}: "
                              f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc}") from None
    async with connection:
        saver = AsyncPostgresSaver(conn=connection)
        await saver.setup()
        yield saver


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _warm_graph(agents: Agents, settings: Settings):
    from projectgen.graphs.code import code_stage

    return build_project_graph(stages=[("code", code_stage(agents.coder, [agents.code_judge,
                                                                         *agents.extra_code_judges], settings))])


def attempts_summary(state: Mapping[str, Any], recorder: UsageRecorder, manifest: RunManifest,
                     duration_s: float) -> dict[str, Any]:
    """The run summary: one row per attempt plus the final choice and token totals."""
    from projectgen.llm import UsageTotals

    records = recorder.records
    rows = []
    for record in state.get("records") or []:
        calls = [r for r in records if r.attempt == record["attempt"]]
        rows.append({**{k: v for k, v in record.items() if k != "id"},
                     "tokens": UsageTotals.of(calls).model_dump()})
    attempts = [r for r in rows if not r.get("reused")]
    return {
        "task_id": manifest.task_id, "run_id": manifest.run_id, "models": manifest.models,
        "selection": manifest.attempt_settings.get("selection", "check"),
        "oracle": manifest.attempt_settings.get("selection") == "unit",
        "attempts": rows, "final": state.get("final"), "stopped": state.get("stopped"),
        "status": "budget-limited" if state.get("stopped") else "finished", "reason": state.get("stopped"),
        "budget_limited": bool(state.get("stopped")),
        "reuse": any(r.get("reused") for r in rows), "attempts_run": len(attempts),
        "tokens": UsageTotals.of(records).model_dump(), "duration_s": round(duration_s, 3),
        "settings": manifest.settings, "attempt_settings": manifest.attempt_settings,
    }


async def arun_livecoder(task: Task, out_dir: Path, *, models: Any = None, agents: Agents | None = None,
                         settings: Settings | None = None, attempt_settings: AttemptSettings | None = None,
                         model_specs: Mapping[str, str] | None = None, runner: SandboxRunner | None = None,
                         knowledge_url: str | None = None, embeddings: Any = None, max_tokens: int | None = None,
                         max_cost_usd: float | None = None, prices_file: Path | str | None = None,
                         checkpoint_url: str | None = None, budget: Budget | None = None, resume: bool = False,
                         force: bool = False,
                         progress: Callable[[str], None] | None = None, evaluate_unit: bool = True
                         ) -> LiveCoderOutcome:
    """Run (or, with `resume`, continue) LiveCoder on `task` into `out_dir`.

    `max_tokens` and `max_cost_usd` (priced with the list prices, or `prices_file` over them)
    stop the run cleanly with the best so far; `checkpoint_url` puts the checkpoints in
    PostgreSQL instead of the run folder. All three are kept in run.json, so a resume
    honours them and counts what was spent before it.
    """
    from contextlib import ExitStack

    from projectgen.runs.locking import folder_lock
    from projectgen.runs.pipeline import prepare_out_dir

    settings = settings or Settings()
    attempt_settings = attempt_settings or AttemptSettings()
    out_dir = Path(out_dir)
    usage_path = out_dir / layout.USAGE
    # One process at a time in a run folder (its embedded Chroma store and checkpoints are not
    # shareable); held until the run returns.
    with ExitStack() as locked:
        if resume:
            manifest = read_manifest(out_dir)
            if (manifest.checkpoint_url is None and not (out_dir / layout.CHECKPOINTS).is_file()
                    and (out_dir / layout.ATTEMPTS).exists()):
                raise ProjectGenError(f"{out_dir}: no checkpoint to resume from (no {layout.CHECKPOINTS}, though "
                                      "attempts were made); start the run again instead")
            locked.enter_context(folder_lock(out_dir))
            if budget is None:
                budget = run_budget(manifest, UsageRecorder.load(usage_path))
        else:
            manifest = RunManifest(run_id=uuid.uuid4().hex[:12], task_path=str(task.root), task_id=task.id,
                                   models=dict(model_specs or {}), settings=settings.model_dump(),
                                   attempt_settings=attempt_settings.model_dump(), knowledge_store=knowledge_url,
                                   max_tokens=max_tokens, max_cost_usd=max_cost_usd,
                                   prices_file=str(Path(prices_file).resolve()) if prices_file else None,
                                   checkpoint_url=checkpoint_url)
            # Bad prices, checkpoint or knowledge-store URLs are refused before anything is written.
            _check_checkpoint_url(checkpoint_url)
            if prices_file:
                from projectgen.llm.pricing import PriceTable

                PriceTable.from_file(prices_file)  # a missing or malformed file is an error even without --max-cost
            if knowledge_url:
                from projectgen.memory.knowledge_store import parse_server_url

                parse_server_url(knowledge_url)
            if checkpoint_url:
                async with open_checkpointer(out_dir, checkpoint_url):
                    pass  # an unreachable database fails here, not after the run folder is made
            budget = budget if budget is not None else run_budget(manifest)
            # Before --force deletes anything in an existing folder: not the files of a run still going there.
            early = force and out_dir.is_dir()
            if early:
                locked.enter_context(folder_lock(out_dir))
            prepare_out_dir(out_dir, force=force)
            if not early:
                locked.enter_context(folder_lock(out_dir))
            write_manifest(out_dir, manifest)
        if agents is None:
            if models is None:
                raise ProjectGenError("run_livecoder needs models or agents")
            agents = Agents.from_models(models)
        recorder = UsageRecorder(usage_path)
        knowledge = _knowledge_store(out_dir, manifest.knowledge_store, embeddings)
        try:
            return await _run(task, out_dir, manifest, agents, settings, attempt_settings, recorder, budget,
                              runner, knowledge, models, resume, progress, evaluate_unit)
        finally:
            knowledge.close()


async def _run(task: Task, out_dir: Path, manifest: RunManifest, agents: Agents, settings: Settings,
               attempt_settings: AttemptSettings, recorder: UsageRecorder, budget: Budget | None,
               runner: SandboxRunner | None, knowledge: Any, models: Any, resume: bool,
               progress: Callable[[str], None] | None, evaluate_unit: bool) -> LiveCoderOutcome:
    from projectgen.agents.knowledge import KnowledgeExtractor
    from projectgen.memory.best_repo import BestRepositoryStore

    trace = TraceWriter(out_dir / layout.EVENTS)
    runner = runner or SandboxRunner(log=progress)
    knowledge_model = getattr(models, "for_role", lambda role: models)("knowledge") if models is not None else None
    extractor = KnowledgeExtractor(knowledge_model) if knowledge_model is not None else None
    context = AttemptsContext(
        task=task, runner=runner, knowledge=knowledge,
        best=BestRepositoryStore(out_dir / layout.BEST), extractor=extractor,
        gateway=ModelGateway(recorder=recorder, budget=budget, cache=CallCache(out_dir / layout.CALLS, manifest.run_id),
                             **settings.gateway_options()),
        run_id=manifest.run_id, progress=progress, out_dir=out_dir)
    started = time.monotonic()
    config = {"configurable": {"thread_id": manifest.run_id}, "max_concurrency": settings.max_concurrency}
    async with open_checkpointer(out_dir, manifest.checkpoint_url) as saver:
        graph = build_attempts_graph(build_project_graph(agents=agents, settings=settings),
                                     settings=attempt_settings, warm_graph=_warm_graph(agents, settings),
                                     checkpointer=saver)
        snapshot = await graph.aget_state(config)
        # Killed before the first checkpoint: start from the beginning (completed calls are still replayed),
        # unless attempts were made whose checkpoints are gone (say, a PostgreSQL database was dropped).
        from_start = not resume or not snapshot.values
        if resume and from_start and (out_dir / layout.ATTEMPTS).exists():
            raise ProjectGenError(f"{out_dir}: no checkpoint to resume from")
        # Finished: nothing to run next and no task pending (a run killed right after its input was
        # checkpointed has no next node yet, but the pending start task).
        if resume and not from_start and not snapshot.next and not snapshot.tasks:
            trace.write("run_resumed", run_id=manifest.run_id, note="already finished")
        else:
            trace.write("run_resumed" if resume else "run_start", run_id=manifest.run_id, task_id=task.id,
                        **({"note": "no checkpoint yet: from the beginning"} if resume and from_start else {}))
            trace.resume_at(None if from_start else snapshot.values.get("attempt"))
            start = {"task_id": task.id, "attempt": 1} if from_start else None
            try:
                async for namespace, chunk in graph.astream(start, config, context=context, stream_mode="updates",
                                                            subgraphs=True):
                    trace.update(namespace, chunk)
            except MODEL_FAILURES as exc:
                await _record_failure(out_dir, manifest, context, trace, exc)
                raise
        state = dict((await graph.aget_state(config)).values)
    unit_report = None
    if evaluate_unit and "unit" in task.suites and state.get("repository"):
        if progress:
            progress("running the hidden unit tests on the final repository")
        unit_report = await asyncio.to_thread(runner.evaluate, task, dict(state["repository"]), "unit")
        unit_report.write_json(out_dir / layout.UNIT_REPORT)
    # Every call of the run, those made before a resume included.
    summary = attempts_summary(state, UsageRecorder.load(out_dir / layout.USAGE), manifest,
                               time.monotonic() - started)
    from projectgen.runs.pipeline import describe_agents

    summary["model_descriptions"] = describe_agents(agents)
    summary["unit_tests"] = unit_report.summary() if unit_report is not None else None
    _write_output(state.get("repository") or {}, out_dir)
    # summary.json says the run is done (experiments collect a folder that has one): whole or absent.
    write_atomic(out_dir / layout.SUMMARY, json.dumps(summary, indent=1, default=str) + "\n")
    write_manifest(out_dir, manifest.model_copy(update={"status": summary["status"], "reason": summary["reason"]}))
    trace.write("run_end", final=state.get("final"), stopped=state.get("stopped"), status=summary["status"])
    return LiveCoderOutcome(state=state, summary=summary, out_dir=out_dir, unit_report=unit_report)


def _write_output(repository: Mapping[str, str], out_dir: Path) -> None:
    """The run's output repository, replacing what an earlier (failed or resumed) invocation left there."""
    import shutil

    target = out_dir / layout.REPOSITORY
    if target.is_dir():
        shutil.rmtree(target)
    write_repository(repository, target)
    target.mkdir(parents=True, exist_ok=True)


async def _record_failure(out_dir: Path, manifest: RunManifest, context: AttemptsContext, trace: TraceWriter,
                          exc: BaseException) -> None:
    """A model that keeps failing ends the run cleanly: the best so far becomes the output, run.json
    says "failed" with a one-line reason, the trace ends. No summary.json is written, and the
    checkpoint still holds the failed step, so `--resume` continues from it once the model is back."""
    reason = model_failure_reason(exc)
    stored = await asyncio.to_thread(context.best.best, context.task.id)
    final = ({"source": "best", "attempt": stored.attempt, "score": stored.score} if stored is not None
             else {"source": "none", "attempt": None, "score": None})
    await asyncio.to_thread(_write_output, dict(stored.repository) if stored is not None else {}, out_dir)
    write_manifest(out_dir, manifest.model_copy(update={"status": "failed", "reason": reason}))
    trace.write("run_end", final=final, stopped=reason, status="failed")
    context.say(f"the run failed ({reason}); the best so far is in {out_dir / 'repository'}")


def run_livecoder(task: Task, out_dir: Path, **kwargs: Any) -> LiveCoderOutcome:
    """`arun_livecoder` for synchronous callers."""
    return asyncio.run(arun_livecoder(task, out_dir, **kwargs))


def write_manifest(out_dir: Path, manifest: RunManifest) -> None:
    write_atomic(out_dir / layout.MANIFEST, manifest.model_dump_json(indent=1) + "\n")


def read_manifest(out_dir: Path) -> RunManifest:
    path = Path(out_dir) / layout.MANIFEST
    if not path.is_file():
        raise ProjectGenError(f"{out_dir}: not a run folder (no {layout.MANIFEST})")
    try:
        return RunManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        problem = error["msg"] if error["type"] == "json_invalid" else f"{where or 'top level'}: {error['msg']}"
        raise ProjectGenError(f"{path}: not a readable run manifest ({problem})") from None
    except UnicodeDecodeError as exc:
        raise ProjectGenError(f"{path}: not a readable run manifest (not valid UTF-8 at byte {exc.start})") from None
    except OSError as exc:
        raise ProjectGenError(f"{path}: cannot read the run manifest ({exc.strerror or exc})") from None
