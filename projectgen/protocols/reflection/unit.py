"""One exercise under one model and one edit format: LiveRepoReflection's protocol in its own folder.

The folder holds::

    run.json             what the unit runs (`reflection_request`: exercise, model, edit format, tries) and
                         how it ended
    events.jsonl         the trace; prompts.jsonl the exact prompt of every call
    checkpoints.sqlite   the protocol graph's LangGraph checkpoints (one per node), or with a
                         checkpoint URL (PostgreSQL, shared by the machines of a cluster):
    thread.json          the run's thread in that database, a random id made on its first start
    calls.jsonl          replies of completed model calls (the door's call cache)
    usage.jsonl          one line per model call
    repository/          the solution files after the last try
    summary.json         the result (`ReflectionResult`); written last, so its presence means done
    log.json             the run log (`projectgen.runs.run_log`): the result as the one shape every run has

Run again on a folder without summary.json (killed, or the harness failed), it resumes: the
checkpointer replays the nodes that finished, and a node that was cut short after its model call
had completed gets that reply from the call cache, so no model call is made twice. A folder with
summary.json is read back without running anything.

In SQLite the thread is the run's scope (its folder holds its own database). In a database that
many runs share, each run's thread is its own random id, kept in its folder: two batches (or two
folders) with the same units never read each other's checkpoints, an emptied folder (``--fresh``)
starts a new thread, and a run retried on another machine from the driver's copy of its folder
(`projectgen.experiments.mirror`, which sends the folder before the first checkpoint is written)
resumes its own thread. A run continued with the other kind of store starts its graph over, its
model calls answered from the call cache.
"""
from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from projectgen.datasets.exercism import Exercise
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs.context import ReflectionContext
from projectgen.protocols.definition import Play, Solver
from projectgen.protocols.reflection.coder import ReflectionCoder
from projectgen.protocols.reflection.graph import build_reflection_graph, initial_reflection_state
from projectgen.protocols.reflection.settings import ReflectionUnitSettings
from projectgen.runs.folder import RunFolder
from projectgen.runs.manifest import RunManifest
from projectgen.runs.request import RunRequest
from projectgen.runs.run_log import read_run_log
from projectgen.runs.unit import UnitEnd, UnitRun, drive_unit

RESULT_SCHEMA_VERSION = 1
REFLECT_METHOD = "reflect"  # run.json's method of a reflect unit


class ReflectionResult(BaseModel):
    """How the protocol went on one exercise under one model and edit format (summary.json)."""

    schema_version: int = RESULT_SCHEMA_VERSION
    task_id: str
    language: str
    model: str = Field(description="the model's folder name (slug)")
    model_label: str = Field(description="how reports name the model; a replay says it is one")
    edit_format: str
    tries_allowed: int
    status: Literal["passed", "failed"]
    passed_at: int | None = Field(description="the first try whose tests all passed; None: none did")
    tries: list[dict[str, Any]] = Field(description="per try: the reply's well-formedness, then its test run")
    well_formed: bool = Field(description="every reply parsed and applied exactly")
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


def read_result(folder: RunFolder) -> ReflectionResult | None:
    """The folder's finished result, from its run log; None when it has none (not finished, or unreadable: run
    it again)."""
    try:
        log = read_run_log(folder)
    except ProjectGenError:
        return None
    if log.kind != "reflect" or log.record is None:
        return None
    try:
        return ReflectionResult.model_validate(log.record)
    except ValidationError:
        return None


def checkpoint_thread(folder: RunFolder, scope: str, checkpoint_url: str | None) -> str:
    """The run's checkpoint thread (see the module docstring): its scope in its own SQLite file, else the
    random id its folder keeps (made and written now on its first start)."""
    if checkpoint_url is None:
        return scope or "reflection"
    try:
        thread = json.loads(folder.thread.read_text(encoding="utf-8")).get("thread_id")
    except (OSError, ValueError, AttributeError):
        thread = None
    if isinstance(thread, str) and thread:
        return thread
    thread = f"reflect-{uuid.uuid4().hex}"
    write_atomic(folder.thread, json.dumps({"thread_id": thread}) + "\n")
    return thread


def reflection_request(exercise: Exercise, *, spec: str, model_label: str, edit_format: str, tries: int,
                       checkpoint_url: str | None = None) -> RunRequest:
    """run.json of one exercise under one model and edit format."""
    return RunRequest(task_path=str(exercise.folder), task_id=exercise.id, method=REFLECT_METHOD,
                      models={"default": spec}, model_label=model_label, checkpoint_url=checkpoint_url,
                      protocol=ReflectionUnitSettings(edit_format=edit_format, tries=tries).model_dump(mode="json"))


def reflection_solver(exercise: Exercise, settings: ReflectionUnitSettings, model: Any, runner: SandboxRunner | None,
                      progress: Callable[[str], None] | None = None) -> Solver:
    """The protocol's solver on one exercise: the graph (the coder on `model`, `settings.tries` replies), the
    exercise's stubs to start from, and its context (edit format, sandbox) around the run's gateway."""
    return Solver(graph=build_reflection_graph(ReflectionCoder(model), settings.tries),
                  start=initial_reflection_state(exercise),
                  context=lambda gateway: ReflectionContext(exercise=exercise, edit_format=settings.edit_format,
                                                            runner=runner, gateway=gateway, progress=progress))


async def arun_reflection(exercise: Exercise, run_dir: Path, request: RunRequest, *, model: Any,
                          runner: SandboxRunner, model_slug: str, scope: str = "",
                          progress: Callable[[str], None] | None = None,
                          sync: Callable[[], None] | None = None) -> ReflectionResult:
    """Run (or resume, or read back) the protocol on `exercise` in `run_dir` as `request` says
    (`reflection_request`: the edit format, the tries, where checkpoints go); `scope` keys its call cache;
    `sync()` is called after each model call is recorded and before each checkpoint is written (a worker's
    copy of the folder mirrored to the driver: `projectgen.experiments.mirror`)."""
    folder = RunFolder(Path(run_dir))
    done = read_result(folder)
    if done is not None:
        return done
    settings = ReflectionUnitSettings.model_validate(request.protocol)
    edit_format, tries = settings.edit_format, settings.tries
    solver = reflection_solver(exercise, settings, model, runner, progress)

    def outputs(folder: RunFolder, manifest: RunManifest, state: dict[str, Any]) -> UnitEnd[ReflectionResult]:
        made = [r for r in folder.usage_records() if r.error is None]
        attempts = [dict(t) for t in state.get("tries") or []]
        result = ReflectionResult(
            task_id=exercise.id, language=exercise.language_name, model=model_slug,
            model_label=manifest.model_label or model_slug, edit_format=edit_format, tries_allowed=tries,
            status="passed" if state.get("passed_at") is not None else "failed", passed_at=state.get("passed_at"),
            tries=attempts, well_formed=bool(attempts) and all(t.get("well_formed") for t in attempts),
            calls=len(made), input_tokens=sum(r.input_tokens for r in made),
            output_tokens=sum(r.output_tokens for r in made))
        folder.write_repository(state.get("repository") or {})
        record = result.model_dump(mode="json")
        return UnitEnd(result, trace={"passed_at": state.get("passed_at")}, record=record,
                       summary=json.dumps(record, indent=1) + "\n")

    return await drive_unit(folder, UnitRun(
        request=request, kind="reflect", graph=solver.graph, start=solver.start, outputs=outputs,
        context=solver.context,
        run_id=scope or folder.root.name, scope=scope or str(run_dir), sync=sync,
        thread=lambda folder, manifest: checkpoint_thread(folder, scope, manifest.checkpoint_url),
        marker={"task_id": exercise.id, "method": REFLECT_METHOD, "edit_format": edit_format}))


async def play_reflection(play: Play) -> dict[str, Any]:
    """`arun_reflection` as another protocol asks for it (`Play`: exercise construction's difficulty judges), with the
    request `reflection_request` makes of the play's model and settings; the result as the run log records it."""
    settings = ReflectionUnitSettings.model_validate(play.settings)
    request = reflection_request(play.sample, spec=play.spec, model_label=play.label, edit_format=settings.edit_format,
                                 tries=settings.tries)
    result = await arun_reflection(play.sample, play.run_dir, request, model=play.model, runner=play.runner,
                                   model_slug=play.label, scope=play.scope)
    return result.model_dump(mode="json")


def run_reflection(exercise: Exercise, run_dir: Path, request: RunRequest, *, model: Any, runner: SandboxRunner,
                   model_slug: str, scope: str = "", progress: Callable[[str], None] | None = None,
                   sync: Callable[[], None] | None = None) -> ReflectionResult:
    """`arun_reflection` for synchronous callers (each batch worker thread runs its own event loop)."""
    return asyncio.run(arun_reflection(exercise, run_dir, request, model=model, runner=runner, model_slug=model_slug,
                                       scope=scope, progress=progress, sync=sync))
