"""Run ProjectGen on one task: graph -> repository on disk -> run summary -> hidden unit tests.

`run_project` is one pass of the three stages, without LiveCoder's attempts (the CLI always
goes through `projectgen.runs.livecoder`); library users can call it, or build the graph
themselves (see `projectgen.graphs`).

Output folder layout::

    repository/      the generated files
    ssat.json        the accepted (or last) architecture tree
    state.json       the final graph state (verdicts, memory, edits, skeleton, ...)
    usage.jsonl      one line per model call (role, stage, target, tokens, latency, prompt id)
    prompts.jsonl    the exact prompt of every call, each distinct one once
    unit_report.json the hidden unit-test report (unless skipped)
    summary.json     the run summary
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from projectgen.agents import Agents
from projectgen.config import Settings
from projectgen.datasets.task import Task
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs import RunContext, build_project_graph, initial_state
from projectgen.graphs.project import Stage
from projectgen.llm import Budget, PromptStore, UsageRecorder
from projectgen.runs import layout
from projectgen.runs.execution import (
    GraphRun, open_gateway, prepare_out_dir, run_hidden_unit_tests, stream_graph, write_json, write_output_repository,
)
from projectgen.runs.method_graphs import custom_inner_graph
from projectgen.runs.summary import RunSummary, called_models, describe_agents, summarize_run


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


async def arun_project(task: Task, *, models: Any = None, agents: Agents | None = None,
                       settings: Settings | None = None, graph: Any = None, runner: SandboxRunner | None = None,
                       out_dir: Path | None = None, force: bool = False, budget: Budget | None = None,
                       progress: Callable[[str], None] | None = None, evaluate_unit: bool = True,
                       metadata: Mapping[str, Any] | None = None, stages: Sequence[Stage] | None = None
                       ) -> RunOutcome:
    """Generate a repository for `task` and, unless told not to, run its hidden unit tests.

    The graph is ProjectGen's from `models` or `agents`, or the caller's: `graph` (compiled, over
    `ProjectState`) or `stages` (chained by `build_project_graph`).

    A model that keeps failing still raises its error, but with `out_dir` the state reached
    before it (accepted tree, filled files, usage) is written first, with `summary.json`
    saying `failed` and why, so the calls already paid for are not lost.
    """
    settings = Settings.with_profile(task.settings_profile, settings)
    graph = custom_inner_graph(graph, stages)
    if graph is None:
        if agents is None and models is None:
            raise ProjectGenError("run_project needs models, agents or a graph")
        agents = agents or Agents.from_models(models)
        graph = build_project_graph(agents=agents, settings=settings)
    if out_dir is not None:
        out_dir = Path(out_dir)
        prepare_out_dir(out_dir, force=force)
    recorder = UsageRecorder(out_dir / layout.USAGE if out_dir is not None else None)
    prompts = PromptStore(out_dir / layout.PROMPTS) if out_dir is not None else None
    runner = runner or SandboxRunner(log=progress)
    context = RunContext(task=task, runner=runner, progress=progress,
                         gateway=open_gateway(settings, recorder=recorder, budget=budget, prompts=prompts,
                                              metadata=metadata))
    started = time.monotonic()
    run = await stream_graph(graph, initial_state(task), context=context,
                             config={"max_concurrency": settings.max_concurrency})
    if run.failure is not None and out_dir is None:
        raise run.failure
    unit_report = None
    if run.failure is None and evaluate_unit:
        unit_report = await run_hidden_unit_tests(runner, task, run.state.get("repository") or {}, progress=progress)
    summary = _summary(run, recorder, agents, settings, unit_report, time.monotonic() - started)
    if out_dir is not None:
        write_outputs(out_dir, run.state, summary, unit_report)
    if run.failure is not None:
        raise run.failure
    return RunOutcome(state=run.state, summary=summary, unit_report=unit_report, out_dir=out_dir)


def _summary(run: GraphRun, recorder: UsageRecorder, agents: Agents | None, settings: Settings,
             unit_report: TestReport | None, duration_s: float) -> RunSummary:
    """The pass's summary; a model that failed for good makes it `failed`, with the reason."""
    summary = summarize_run(
        run.state, recorder.records, models=describe_agents(agents) if agents is not None else called_models(recorder),
        settings=settings.model_dump(), unit_tests=unit_report.summary() if unit_report else None,
        duration_s=duration_s)
    if run.failure is not None:
        summary = summary.model_copy(update={"status": "failed", "reason": run.reason})
    return summary


def run_project(task: Task, **kwargs: Any) -> RunOutcome:
    """`arun_project` for synchronous callers."""
    return asyncio.run(arun_project(task, **kwargs))


def write_outputs(out_dir: Path, state: Mapping[str, Any], summary: RunSummary,
                  unit_report: TestReport | None) -> None:
    """The pass's files in `out_dir` (see the module's docstring); every JSON file is replaced atomically."""
    write_output_repository(out_dir, state.get("repository") or {})
    if state.get("ssat"):
        write_json(out_dir / layout.SSAT, state["ssat"])
    write_json(out_dir / layout.STATE, dict(state))
    if unit_report is not None:
        unit_report.write_json(out_dir / layout.UNIT_REPORT)
    write_atomic(out_dir / layout.SUMMARY, summary.model_dump_json(indent=1) + "\n")
