"""Run ProjectGen on one task: graph -> repository on disk -> run summary -> hidden unit tests.

`run_project` is one pass of the three stages, without LiveCoder's attempts (the CLI always
goes through `projectgen.runs.livecoder`); library users can call it, or build the graph
themselves (see `projectgen.graphs`).

Output folder layout::

    repository/      the generated files
    ssat.json        the accepted (or last) architecture tree
    state.json       the final graph state (verdicts, memory, edits, skeleton, ...)
    run.json         what was run (method "single-pass") and how it ended
    checkpoints.sqlite, events.jsonl   the graph's checkpoints and its trace
    usage.jsonl      one line per model call (role, stage, target, tokens, latency, prompt id)
    prompts.jsonl    the exact prompt of every call, each distinct one once
    unit_report.json the hidden unit-test report (unless skipped)
    summary.json     the run summary
"""
from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from projectgen.agents import Agents
from projectgen.config import Settings
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs import RunContext, build_project_graph, initial_state
from projectgen.graphs.project import Stage
from projectgen.llm import Budget, ModelRoles
from projectgen.runs.driver import Drive, drive
from projectgen.runs.execution import run_hidden_unit_tests
from projectgen.runs.folder import RunFolder
from projectgen.runs.manifest import RunManifest
from projectgen.runs.method_graphs import custom_inner_graph
from projectgen.runs.run_log import write_run_log
from projectgen.runs.summary import RunSummary, called_models, describe_agents, summarize_run


@dataclass
class RunOutcome:
    """What a run produced, and where."""

    state: dict[str, Any]
    summary: RunSummary
    unit_report: TestReport | None
    out_dir: Path | None

    @property
    def repository(self) -> dict[str, str]:
        return dict(self.state.get("repository") or {})


SINGLE_PASS = "single-pass"  # run.json's method of a run_project folder (resumed by running it again)


async def arun_project(task: Task, *, out_dir: Path | str, models: ModelRoles | None = None,
                       agents: Agents | None = None, settings: Settings | None = None, graph: Any = None,
                       stages: Sequence[Stage] | None = None, runner: SandboxRunner | None = None,
                       force: bool = False, budget: Budget | None = None,
                       progress: Callable[[str], None] | None = None, evaluate_unit: bool = True,
                       metadata: Mapping[str, Any] | None = None) -> RunOutcome:
    """Generate a repository for `task` into the run folder `out_dir` and, unless told not to, run its
    hidden unit tests.

    The graph is ProjectGen's from `models` or `agents`, or the caller's: `graph` (compiled, over
    `ProjectState`) or `stages` (chained by `build_project_graph`). It runs through the driver like
    every run (run.json, checkpoints, events.jsonl, usage.jsonl, prompts.jsonl).

    A model that keeps failing still raises its error, but the state reached before it (accepted tree,
    filled files, usage) is written first, with `summary.json` saying `failed` and why, so the calls
    already paid for are not lost.
    """
    settings = Settings.with_profile(task.settings_profile, settings)
    graph = custom_inner_graph(graph, stages)
    if graph is None:
        if agents is None and models is None:
            raise ProjectGenError("run_project needs models, agents or a graph")
        agents = agents or Agents.from_models(models, settings)
        graph = build_project_graph(agents=agents, settings=settings)
    folder = RunFolder(Path(out_dir))
    runner = runner or SandboxRunner(log=progress)
    manifest = RunManifest(task_path=str(task.load_path()), task_id=task.id, method=SINGLE_PASS,
                           settings=settings, run_id=uuid.uuid4().hex[:12])
    with folder.create(force=force):
        lifecycle = folder.lifecycle(manifest)
        lifecycle.start()
        context = RunContext(task=task, runner=runner, progress=progress,
                             gateway=folder.gateway(settings, scope=manifest.run_id, budget=budget, metadata=metadata))
        started = time.monotonic()

        async def save_state(reason: str, reached: dict[str, Any]) -> dict[str, Any]:
            """The state reached before the model failed for good, written as a failed pass."""
            summary = _summary(reached, folder, agents, settings, None, time.monotonic() - started)
            write_outputs(folder, reached, summary.model_copy(update={"status": "failed", "reason": reason}), None)
            return {}

        how = Drive(start=initial_state(task), context=context, config={"max_concurrency": settings.max_concurrency},
                    marker={"task_id": task.id, "method": SINGLE_PASS}, on_failure=save_state)
        trace = folder.trace()
        driven = await drive(graph, how, lifecycle, trace, folder.checkpoints)
        unit_report = None
        if evaluate_unit:
            unit_report = await run_hidden_unit_tests(runner, task, driven.state.get("repository") or {},
                                                      progress=progress)
        summary = _summary(driven.state, folder, agents, settings, unit_report, time.monotonic() - started)
        write_outputs(folder, driven.state, summary, unit_report)
        lifecycle.record(summary.status, summary.reason)
        trace.write("run_end", stopped=driven.state.get("stopped"), status=summary.status)
    return RunOutcome(state=driven.state, summary=summary, unit_report=unit_report, out_dir=folder.root)


def _summary(state: Mapping[str, Any], folder: RunFolder, agents: Agents | None, settings: Settings,
             unit_report: TestReport | None, duration_s: float) -> RunSummary:
    """The pass's summary, from its final state and the calls it made."""
    records = folder.usage_records()
    return summarize_run(
        state, records, models=describe_agents(agents) if agents is not None else called_models(records),
        settings=settings.model_dump(), unit_tests=unit_report.summary() if unit_report else None,
        duration_s=duration_s)


def run_project(task: Task, *, out_dir: Path | str, models: ModelRoles | None = None, agents: Agents | None = None,
                settings: Settings | None = None, graph: Any = None, stages: Sequence[Stage] | None = None,
                runner: SandboxRunner | None = None, force: bool = False, budget: Budget | None = None,
                progress: Callable[[str], None] | None = None, evaluate_unit: bool = True,
                metadata: Mapping[str, Any] | None = None) -> RunOutcome:
    """`arun_project` for synchronous callers."""
    return asyncio.run(arun_project(task, out_dir=out_dir, models=models, agents=agents, settings=settings,
                                    graph=graph, stages=stages, runner=runner, force=force, budget=budget,
                                    progress=progress, evaluate_unit=evaluate_unit, metadata=metadata))


def write_outputs(folder: RunFolder, state: Mapping[str, Any], summary: RunSummary,
                  unit_report: TestReport | None) -> None:
    """The pass's files in its folder (see the module's docstring); every JSON file is replaced atomically."""
    folder.write_repository(state.get("repository") or {})
    if state.get("ssat"):
        folder.write_json(folder.ssat, state["ssat"])
    folder.write_json(folder.state, dict(state))
    if unit_report is not None:
        unit_report.write_json(folder.unit_report)
    write_run_log(folder, "single-pass", summary.model_dump(mode="json"), manifest=folder.read_manifest(),
                  summary=summary.model_dump_json(indent=1) + "\n")
