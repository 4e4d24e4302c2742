"""The graphs `langgraph dev` serves to LangGraph Studio (langgraph.json): ProjectGen's project graph
and LiveCoder's attempts graph, each behind a small entry that a server can describe and start.

    pip install -e '.[studio]'
    PROJECTGEN_MODEL=openai:gpt-4o-mini langgraph dev

A run starts from the input ``{"task": "kvstore"}`` (a bundled example name or a task folder):
node "load_task" reads the task into the state, then node "projectgen" (or "livecoder") runs the
real graph on it through the driver (`runs.driver.drive_within`), under the node's config, so the
inner graph's checkpoints and events nest in the run's, and its nodes are traced to the thread
folder's events.jsonl. Studio builds its input and context forms from the graphs' JSON schemas, so both hold
plain values only: the context (`StudioContext`) may name a model spec, the stages to review and,
for the attempts graph, the number of attempts. With ``review`` the run pauses for your decision once
those stages have their output: the interrupt (`projectgen.graphs.review`) reaches Studio through both
graphs, and the value Studio resumes with (``{"action": "approve"}``, ...) reaches the stage's review
node; the stages are kept in the outer state, so the resumed node builds the graph that paused.
What is not data (the `Task`, the sandbox runner, the model gateway, the knowledge and
best-repository stores) is built inside the node from those values.

`langgraph dev` runs graphs in its asyncio loop and fails a run on a blocking call there
(blockbuster). So everything here that touches files or processes runs in a worker thread
(`asyncio.to_thread`): loading the task, building models and stores, and (in the nodes of the
graphs themselves) the sandboxed test runs, the stores' reads and writes. No `--allow-blocking`.

Models come from the context's ``model``, else PROJECTGEN_MODEL (either way PROJECTGEN_MODEL_<ROLE>
overrides one role, PROJECTGEN_BASE_URL serves a named model). Both graphs keep a thread's trace and
model calls, and the attempts graph its knowledge store, best repository and ``attempts/N`` folders,
in PROJECTGEN_STUDIO_DIR/<thread id> (default: projectgen's cache folder's ``studio/``, outside the
repository `langgraph dev` watches: a run writing Python files there would make the server reload
mid-run, and the interrupted model calls be paid again).

A user's mistake (a model spec it cannot use, an unknown task) fails the run with its one line: the server
sends the message of built-in errors only (ValueError, ...) and "An internal error occurred" for others, so
the nodes raise a `ProjectGenError` as `StudioUserError`, which is both.
"""
from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import Field
from typing_extensions import TypedDict

from projectgen.agents import Agents
from projectgen.config import AttemptSettings, Settings, cache_root
from projectgen.datasets.loaders import load_task, load_task_or_example
from projectgen.errors import ProjectGenError, one_line
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs.attempts import build_attempts_graph
from projectgen.graphs.context import AttemptsContext, RunContext
from projectgen.graphs.project import build_project_graph
from projectgen.graphs.review import check_review_stages
from projectgen.graphs.state import AttemptsState, ProjectState, initial_state
from projectgen.llm import ROLES, ModelRoles
from projectgen.memory.best_repo import BestRepositoryStore
from projectgen.runs.driver import drive_within
from projectgen.runs.folder import RunFolder
from projectgen.runs.livecoder import knowledge_extractor, open_knowledge_store, write_attempt
from projectgen.runs.method_graphs import inner_graph, warm_graph
from projectgen.runs.methods import DEFAULT_METHOD, method_attempt_settings
from projectgen.runs.trace import TraceWriter

STUDIO_DIR_ENV = "PROJECTGEN_STUDIO_DIR"
STUDIO_CACHE_FOLDER = "studio"  # under `cache_root()`: outside the tree `langgraph dev` watches
STUDIO_ATTEMPTS = 4  # the attempts graph's default, LiveCoder's


class StudioInput(TypedDict):
    """What a Studio run starts from."""

    task: Annotated[str, Field(description="a bundled example name (kvstore, wordfreq) or a task folder")]


class StudioContext(TypedDict, total=False):
    """What a Studio run may set besides its input: plain values only (the server describes them)."""

    model: Annotated[str, Field(description="model spec for every role (openai:gpt-4o-mini, scripted:PATH, "
                                            "...); default: PROJECTGEN_MODEL")]
    review: Annotated[list[Literal["architecture", "skeleton"]], Field(
        description="stages whose output waits for your decision: the run pauses there (an interrupt); resume "
                    "it with {\"action\": \"approve\"}, {\"action\": \"reject\", \"feedback\": \"...\"} or "
                    "{\"action\": \"edit\", \"tree\": {...}} / {\"action\": \"edit\", \"files\": {...}}")]


class StudioAttemptsContext(StudioContext, total=False):
    """The attempts graph's context: the model, and how many attempts LiveCoder makes."""

    attempts: Annotated[int, Field(ge=1, description=f"LiveCoder's attempts (default {STUDIO_ATTEMPTS})")]


class StudioProjectState(ProjectState, total=False):
    task: str  # the task folder, resolved by "load_task"
    review_stages: list[str]  # the context's `review`, kept so that a resume builds the same graph


class StudioAttemptsState(AttemptsState, total=False):
    task: str
    review_stages: list[str]


OUTER_KEYS = ("task", "review_stages")  # the outer graph's own keys, not the inner graph's state


# --------------------------------------------------------------------------- models, tasks, folders

def models_from_env(default: str | None = None) -> ModelRoles:
    """`ModelRoles` from `default` or PROJECTGEN_MODEL (+ PROJECTGEN_MODEL_<ROLE>, PROJECTGEN_BASE_URL)."""
    default = default or os.environ.get("PROJECTGEN_MODEL")
    if not default:
        raise ProjectGenError("set PROJECTGEN_MODEL (e.g. openai:gpt-4o-mini or scripted:PATH) for langgraph dev, "
                              "or give the run's context a model")
    roles = {role: os.environ[f"PROJECTGEN_MODEL_{role.upper()}"] for role in ROLES
             if os.environ.get(f"PROJECTGEN_MODEL_{role.upper()}")}
    return ModelRoles.from_specs(default, base_url=os.environ.get("PROJECTGEN_BASE_URL"), **roles)


def studio_folder(thread_id: str) -> Path:
    """Where the attempts graph keeps one thread's stores and attempts: PROJECTGEN_STUDIO_DIR, else the cache
    folder's studio/ (blocking: it resolves the path)."""
    root = os.environ.get(STUDIO_DIR_ENV, "").strip()
    return (Path(root).expanduser() if root else cache_root() / STUDIO_CACHE_FOLDER).resolve() / thread_id


class StudioUserError(ProjectGenError, ValueError):
    """A user's mistake as the server shows it: a `ProjectGenError` and a ValueError, whose message the
    server sends to the client (it hides other errors' messages)."""


@contextmanager
def user_errors_shown() -> Iterator[None]:
    """Re-raise a `ProjectGenError` of the block as a `StudioUserError` with its one line."""
    try:
        yield
    except ProjectGenError as exc:
        if isinstance(exc, ValueError):
            raise
        raise StudioUserError(one_line(exc)) from exc


def _progress(message: str) -> None:
    logging.getLogger("projectgen.studio").info(message)


def review_stages(runtime: Runtime[Any]) -> list[str]:
    """The context's `review` stages, checked (an unknown stage fails the run with one line)."""
    return list(check_review_stages((runtime.context or {}).get("review") or ()))


async def read_task(state: dict[str, Any], runtime: Runtime[StudioContext]) -> dict[str, Any]:
    """Node "load_task": the task named by the input (read in a thread), its id and documents into the state,
    and the stages to review (kept in the state: a resume from Studio builds the graph it paused in)."""
    with user_errors_shown():
        task = await asyncio.to_thread(load_task_or_example, state["task"])
        return {"task": str(task.load_path()), "review_stages": review_stages(runtime), **initial_state(task)}


async def read_attempts_task(state: dict[str, Any], runtime: Runtime[StudioAttemptsContext]) -> dict[str, Any]:
    """Node "load_task" of the attempts graph: the task's folder and id, the first attempt, the stages to review."""
    with user_errors_shown():
        task = await asyncio.to_thread(load_task_or_example, state["task"])
        return {"task": str(task.load_path()), "task_id": task.id, "attempt": 1,
                "review_stages": review_stages(runtime)}


# --------------------------------------------------------------------------- the project graph

@dataclass
class _StudioRun:
    """A thread's graph, its context and its folder's trace (events.jsonl)."""

    graph: Any
    context: Any
    trace: TraceWriter


def _project_run(task_path: str, studio: StudioContext, thread_id: str, review: list[str]) -> _StudioRun:
    """The project graph and its `RunContext`, built from plain values, the model calls and the trace kept in
    the thread's folder (blocking: run it in a thread)."""
    task = load_task(task_path)
    settings = Settings.with_profile(task.settings_profile, None)
    graph = build_project_graph(models_from_env(studio.get("model")), settings=settings, review=review)
    folder = _thread_folder(thread_id)
    context = RunContext(task=task, runner=SandboxRunner(log=_progress), progress=_progress,
                         gateway=folder.gateway(settings, scope=thread_id))
    return _StudioRun(graph=graph, context=context, trace=folder.trace())


async def run_project_graph(state: StudioProjectState, runtime: Runtime[StudioContext],
                            config: RunnableConfig) -> dict[str, Any]:
    """Node "projectgen": ProjectGen's graph on the loaded task, driven within this node (its checkpoints nest
    in this run's)."""
    with user_errors_shown():
        run = await asyncio.to_thread(_project_run, state["task"], runtime.context or {}, _thread_id(config),
                                      state.get("review_stages") or [])
        return await _drive(run, state, config, "projectgen")


def _thread_id(config: RunnableConfig) -> str:
    return str((config.get("configurable") or {}).get("thread_id") or uuid.uuid4().hex)


def _thread_folder(thread_id: str) -> RunFolder:
    """The thread's `RunFolder` (blocking: it resolves and makes the folder)."""
    folder = RunFolder(studio_folder(thread_id))
    folder.root.mkdir(parents=True, exist_ok=True)
    return folder


async def _drive(run: _StudioRun, state: dict[str, Any], config: RunnableConfig, graph_name: str) -> dict[str, Any]:
    """The inner graph through the driver, from the outer state without the outer graph's own keys."""
    start = {key: value for key, value in state.items() if key not in OUTER_KEYS}
    return await drive_within(run.graph, start, context=run.context, config=config, trace=run.trace,
                              marker={"graph": graph_name, "task": state.get("task_id")})


def two_step_graph(name: str, state: Any, output: Any, context: Any, load: Any, run: Any) -> Any:
    """A Studio graph: START -> load_task (`load`) -> `name` (`run`, the real graph) -> END, its input a
    task name (`StudioInput`), its context plain values (`context`)."""
    graph = StateGraph(state, input_schema=StudioInput, output_schema=output, context_schema=context)
    graph.add_node("load_task", load)
    graph.add_node(name, run)
    graph.add_edge(START, "load_task")
    graph.add_edge("load_task", name)
    graph.add_edge(name, END)
    return graph.compile(name=name)


def project_graph() -> Any:
    """The graph "projectgen" of langgraph.json: load_task -> projectgen (architecture -> skeleton -> code)."""
    return two_step_graph("projectgen", StudioProjectState, ProjectState, StudioContext, read_task,
                          run_project_graph)


# --------------------------------------------------------------------------- the attempts graph

def _attempts_run(task_path: str, studio: StudioAttemptsContext, thread_id: str, review: list[str]) -> _StudioRun:
    """LiveCoder's attempts graph and its `AttemptsContext` from plain values, its stores, attempts and trace in
    the thread's folder (blocking: run it in a thread)."""
    task = load_task(task_path)
    settings = Settings.with_profile(task.settings_profile, None)
    models = models_from_env(studio.get("model"))
    agents = Agents.from_models(models, settings)
    attempt_settings = method_attempt_settings(DEFAULT_METHOD, AttemptSettings(
        attempts=studio.get("attempts", STUDIO_ATTEMPTS)), settings.profile)
    graph = build_attempts_graph(inner_graph(DEFAULT_METHOD, agents, settings, models=models, review=review),
                                 settings=attempt_settings, feedback_suite=settings.feedback_suite,
                                 warm_graph=warm_graph(DEFAULT_METHOD, agents, settings))
    folder = _thread_folder(thread_id)
    context = AttemptsContext(
        task=task, runner=SandboxRunner(log=_progress), knowledge=open_knowledge_store(folder.knowledge, None, None),
        best=BestRepositoryStore(folder.best), extractor=knowledge_extractor(models),
        gateway=folder.gateway(settings, scope=thread_id), run_id=folder.root.name, progress=_progress,
        record_attempt=lambda number, repository, record: write_attempt(folder.attempt(number), repository,
                                                                        record))
    return _StudioRun(graph=graph, context=context, trace=folder.trace())


async def run_attempts_graph(state: StudioAttemptsState, runtime: Runtime[StudioAttemptsContext],
                             config: RunnableConfig) -> dict[str, Any]:
    """Node "livecoder": LiveCoder's attempts graph on the loaded task, driven within this node (its checkpoints
    nest in this run's)."""
    with user_errors_shown():
        run = await asyncio.to_thread(_attempts_run, state["task"], runtime.context or {}, _thread_id(config),
                                      state.get("review_stages") or [])
        try:
            return await _drive(run, state, config, "livecoder")
        finally:
            await asyncio.to_thread(run.context.knowledge.close)


def attempts_graph() -> Any:
    """The graph "livecoder" of langgraph.json: load_task -> livecoder (attempts around ProjectGen)."""
    return two_step_graph("livecoder", StudioAttemptsState, AttemptsState, StudioAttemptsContext, read_attempts_task,
                          run_attempts_graph)
