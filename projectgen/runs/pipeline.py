"""Run ProjectGen on one task: graph -> repository on disk -> run summary -> hidden unit tests.

`run_project` is one pass of the three stages, without LiveCoder's attempts (the CLI always
goes through `projectgen.runs.livecoder`); library users can call it, or build the graph
themselves (see `projectgen.graphs`).

Output folder layout::

    repository/      the generated files
    ssat.json        the accepted (or last) architecture tree
    state.json       the final graph state (verdicts, memory, edits, skeleton, ...)
    usage.jsonl      one line per model call (role, stage, target, tokens, latency)
    unit_report.json the hidden unit-test report (unless skipped)
    summary.json     the run summary
"""
from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from projectgen.agents import Agents, ModelGateway
from projectgen.config import Settings
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs import RunContext, build_project_graph, initial_state
from projectgen.llm import MODEL_FAILURES, Budget, UsageRecorder, describe_model, model_failure_reason
from projectgen.repository import write_repository
from projectgen.runs import layout
from projectgen.runs.summary import RunSummary, summarize_run

# What a run writes (ProjectGen alone or LiveCoder); --force removes these and nothing else.
ROLE_FIELDS = ("architect", "architecture_judge", "skeleton", "skeleton_judge", "coder", "code_judge")


@dataclass
class RunOutcome:
    """What a run produced; `out_dir` is None when nothing was written."""

    state: dict[str, Any]
    summary: RunSummary
    unit_report: TestReport | None
    out_dir: Path | None

    @property
    def repository(self) -> dict[str, str]:
        return dict(self.state.get("repository") or {})


def describe_agents(agents: Agents) -> dict[str, str]:
    """role -> model description, for the summary (agents without a `model` are named by class)."""
    described = {}
    for role in ROLE_FIELDS:
        agent = getattr(agents, role)
        model = getattr(agent, "model", None)
        described[role] = describe_model(model) if model is not None else type(agent).__name__
    return described


def called_models(recorder: UsageRecorder) -> dict[str, str]:
    """role -> model name, from the calls made (for graphs built without an `Agents` bundle)."""
    return {record.role: record.model for record in recorder.records}


def prepare_out_dir(out_dir: Path, *, force: bool) -> None:
    """Refuse to mix a new run into an earlier one's files unless told to, and a folder that cannot be
    written; both before anything is written or removed (a folder made here is removed again on failure)."""
    out_dir = Path(out_dir)
    made: Path | None = None  # the topmost folder this call creates
    try:
        if out_dir.exists() and not out_dir.is_dir():
            raise ProjectGenError(f"{out_dir} exists and is not a folder; choose another --out")

        if out_dir.exists() and any(p.name != layout.LOCK for p in out_dir.iterdir()) and not force:
            raise ProjectGenError(f"{out_dir} is not empty; choose another --out or pass --force to replace it")
        if not out_dir.exists():
            made = out_dir
            while not made.parent.exists() and made.parent != made:
                made = made.parent
            out_dir.mkdir(parents=True)
        import os
        import tempfile

        handle, probe = tempfile.mkstemp(prefix=".projectgen-write-check-", dir=out_dir)
        os.close(handle)
        os.unlink(probe)
        if force:
            for name in layout.RUN_OUTPUTS:
                target = out_dir / name
                if target.is_dir() and not target.is_symlink():
                    import shutil

                    shutil.rmtree(target)
                elif target.exists() or target.is_symlink():
                    target.unlink()
    except OSError as exc:
        if made is not None and made.is_dir():
            import shutil

            shutil.rmtree(made, ignore_errors=True)
        raise ProjectGenError(f"{out_dir}: cannot write there ({exc.strerror or exc}); choose another --out") \
            from None


async def arun_project(task: Task, *, models: Any = None, agents: Agents | None = None,
                       settings: Settings | None = None, graph: Any = None, runner: SandboxRunner | None = None,
                       out_dir: Path | None = None, force: bool = False, budget: Budget | None = None,
                       progress: Callable[[str], None] | None = None, evaluate_unit: bool = True,
                       metadata: Mapping[str, Any] | None = None) -> RunOutcome:
    """Generate a repository for `task` and, unless told not to, run its hidden unit tests.

    A model that keeps failing still raises its error, but with `out_dir` the state reached
    before it (accepted tree, filled files, usage) is written first, with `summary.json`
    saying `failed` and why, so the calls already paid for are not lost.
    """
    settings = settings or Settings()
    if graph is None:
        if agents is None and models is None:
            raise ProjectGenError("run_project needs models, agents or a graph")
        agents = agents or Agents.from_models(models)
        graph = build_project_graph(agents=agents, settings=settings)
    if out_dir is not None:
        out_dir = Path(out_dir)
        prepare_out_dir(out_dir, force=force)
    recorder = UsageRecorder(out_dir / layout.USAGE if out_dir is not None else None)
    runner = runner or SandboxRunner(log=progress)
    context = RunContext(task=task, runner=runner, progress=progress,
                         gateway=ModelGateway(recorder=recorder, budget=budget, metadata=dict(metadata or {}),
                                              **settings.gateway_options()))
    started = time.monotonic()
    state: Mapping[str, Any] = initial_state(task)
    failure: BaseException | None = None
    try:
        async for state in graph.astream(state, context=context, stream_mode="values",
                                         config={"max_concurrency": settings.max_concurrency}):
            pass  # keep the state after each step: what a failure leaves is written below
    except MODEL_FAILURES as exc:
        if out_dir is None:
            raise
        failure = exc
    unit_report = None
    if failure is None and evaluate_unit and "unit" in task.suites and state.get("repository"):
        if progress:
            progress("running the hidden unit tests")
        unit_report = await asyncio.to_thread(runner.evaluate, task, dict(state["repository"]), "unit")
    summary = summarize_run(
        state, recorder.records, models=describe_agents(agents) if agents is not None else called_models(recorder),
        settings=settings.model_dump(), unit_tests=unit_report.summary() if unit_report else None,
        duration_s=time.monotonic() - started)
    if failure is not None:
        summary = summary.model_copy(update={"status": "failed", "reason": model_failure_reason(failure)})
    if out_dir is not None:
        write_outputs(out_dir, state, summary, unit_report)
    if failure is not None:
        raise failure
    return RunOutcome(state=dict(state), summary=summary, unit_report=unit_report, out_dir=out_dir)


def run_project(task: Task, **kwargs: Any) -> RunOutcome:
    """`arun_project` for synchronous callers."""
    return asyncio.run(arun_project(task, **kwargs))


def write_outputs(out_dir: Path, state: Mapping[str, Any], summary: RunSummary,
                  unit_report: TestReport | None) -> None:
    write_repository(state.get("repository") or {}, out_dir / layout.REPOSITORY)
    if state.get("ssat"):
        (out_dir / layout.SSAT).write_text(json.dumps(state["ssat"], indent=1) + "\n", encoding="utf-8")
    (out_dir / layout.STATE).write_text(json.dumps(dict(state), indent=1, default=str) + "\n", encoding="utf-8")
    if unit_report is not None:
        unit_report.write_json(out_dir / layout.UNIT_REPORT)
    (out_dir / layout.SUMMARY).write_text(summary.model_dump_json(indent=1) + "\n", encoding="utf-8")
