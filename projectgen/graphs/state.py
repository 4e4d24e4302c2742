"""Every graph's typed state, its reducers, and helpers that read state.

State holds only JSON-ready values (strings, numbers, lists, dicts), so any checkpoint
resumes in a new process. Things that are not data (the task folder's `Task`, the
sandbox runner, the usage recorder) travel in the runtime contexts (`projectgen.graphs.context`).

Reducers are idempotent on purpose: a stage subgraph hands its whole final state back
to the parent graph, so a plain list-append reducer would add every entry twice.
Lists therefore hold records with an ``id`` and `append_unique` keeps one per id;
dicts merge, and a ``None`` value deletes its key.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

# typing_extensions' TypedDict: pydantic (which gives LangGraph servers the graphs' JSON schemas)
# takes typing's only from Python 3.12 on
from typing_extensions import TypedDict

from projectgen.agents.base import Verdict
from projectgen.datasets.task import Documents, Task
from projectgen.memory import MemoryEntry, StageMemory, StageName
from projectgen.ssat import SSAT


def merge_dict(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge `new` into `old`; a None value deletes that key."""
    merged = dict(old or {})
    for key, value in (new or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def append_unique(old: Sequence[Mapping[str, Any]] | None, new: Sequence[Mapping[str, Any]] | None) -> list[dict]:
    """Append records, one per ``id``: a record whose id is already there replaces it in place."""
    merged = [dict(r) for r in old or ()]
    index = {r["id"]: i for i, r in enumerate(merged)}
    for record in new or ():
        if record["id"] in index:
            merged[index[record["id"]]] = dict(record)
        else:
            index[record["id"]] = len(merged)
            merged.append(dict(record))
    return merged


class ProjectState(TypedDict, total=False):
    """Everything a ProjectGen run knows; every value is JSON-ready."""

    task_id: str
    documents: dict[str, Any]  # Documents.model_dump(): texts, and `starter` (path -> text)
    ssat: dict[str, Any] | None
    skeleton: Annotated[dict[str, str], merge_dict]
    repository: Annotated[dict[str, str], merge_dict]
    iterations: Annotated[dict[str, int], merge_dict]
    verdicts: Annotated[list[dict[str, Any]], append_unique]
    memory: Annotated[list[dict[str, Any]], append_unique]
    edits: Annotated[list[dict[str, Any]], append_unique]
    generation_errors: Annotated[dict[str, str], merge_dict]
    rejected: Annotated[list[dict[str, Any]], append_unique]
    pending: Annotated[dict[str, dict[str, Any]], merge_dict]
    previous: Annotated[dict[str, Any], merge_dict]  # stage -> its output one iteration back (a review's diff)
    reviews: Annotated[list[dict[str, Any]], append_unique]  # a person's decisions (`projectgen.graphs.review`)
    guidance: str
    layers: list[list[str]]
    layer: int
    stopped: str | None
    scope: list[str] | None  # the files the skeleton and code stages may (re)write; None = all (`evolve` sets it)


def initial_state(task: Task, guidance: str = "") -> ProjectState:
    """The state a run starts from: the task's id, its requirement documents and any knowledge
    from earlier attempts (`guidance`, given to every generator)."""
    return {"task_id": task.id, "documents": task.docs.model_dump(), "ssat": None, "stopped": None,
            "guidance": guidance}


class AttemptsState(TypedDict, total=False):
    """LiveCoder's attempts graph state; `repository` is the final output once `final` is set."""

    task_id: str
    attempt: int
    guidance: str
    knowledge_used: dict[str, list[dict[str, Any]]]
    current: dict[str, Any]
    records: Annotated[list[dict[str, Any]], append_unique]
    best: dict[str, Any] | None
    best_design: dict[str, Any] | None
    final: dict[str, Any] | None
    repository: dict[str, str]
    stopped: str | None


class ReflectionState(TypedDict, total=False):
    """LiveRepoReflection's protocol on one exercise (`projectgen.protocols.reflection.graph`).

    `repository` holds the solution files by the paths the exercise names them; `tries` one record
    per try (its reply's well-formedness, then its test result); `test_log` and `edit_feedback` are
    what the next repair is told; `passed_at` is the first try whose tests all passed."""

    task_id: str
    repository: dict[str, str]
    tries: Annotated[list[dict[str, Any]], append_unique]
    test_log: str
    edit_feedback: str
    passed_at: int | None


# --------------------------------------------------------------------------- state helpers

def documents_of(state: ProjectState) -> Documents:
    return Documents.model_validate(state["documents"])


def ssat_of(state: ProjectState) -> SSAT | None:
    data = state.get("ssat")
    return SSAT.model_validate(data) if data else None


def ssat_data(ssat: SSAT) -> dict[str, Any]:
    return ssat.model_dump(mode="json", by_alias=True, exclude_defaults=True)


def iteration_of(state: ProjectState, stage: str) -> int:
    """The stage's current iteration (0 before its generator first ran)."""
    return int((state.get("iterations") or {}).get(stage, 0))


def verdict_record(verdict: Verdict) -> dict[str, Any]:
    return {"id": f"{verdict.stage}:{verdict.iteration}", **verdict.model_dump(mode="json")}


def last_verdict(state: ProjectState, stage: str) -> Verdict | None:
    """The latest verdict on `stage`, if any."""
    for record in reversed(state.get("verdicts") or []):
        if record["stage"] == stage:
            return Verdict.model_validate({k: v for k, v in record.items() if k != "id"})
    return None


def rejection_records(stage: str, iteration: int, errors: Mapping[str, str]) -> list[dict[str, Any]]:
    """The `rejected` records of generated files that did not parse (`projectgen.repository.syntax`):
    one per stage, iteration and file, with its error."""
    return [{"id": f"{stage}:{iteration}:{path}", "stage": stage, "iteration": iteration, "path": path,
             "error": error} for path, error in sorted(errors.items())]


def rejections_of(state: ProjectState, stage: str, iteration: int) -> dict[str, str]:
    """path -> syntax error of the files of `stage` refused at `iteration`."""
    return {r["path"]: r["error"] for r in state.get("rejected") or []
            if r["stage"] == stage and r["iteration"] == iteration}


def memory_record(entry: MemoryEntry) -> dict[str, Any]:
    return {"id": f"{entry.stage}:{entry.iteration}:{entry.target or ''}", **entry.model_dump(mode="json")}


def in_scope(state: ProjectState, paths: Sequence[str]) -> list[str]:
    """The `paths` the stages may (re)write: all of them unless the state sets a `scope`."""
    scope = state.get("scope")
    return list(paths) if scope is None else [p for p in paths if p in set(scope)]


def reviews_of(state: ProjectState, stage: str) -> list[dict[str, Any]]:
    """The review records of `stage` (`projectgen.graphs.review`), oldest first."""
    return [r for r in state.get("reviews") or [] if r["stage"] == stage]


def stage_memory(state: ProjectState, stage: StageName) -> StageMemory:
    entries = [MemoryEntry.model_validate({k: v for k, v in r.items() if k != "id"})
               for r in state.get("memory") or [] if r["stage"] == stage]
    return StageMemory(entries=entries)


# --------------------------------------------------------------------------- multi-turn refinement

class RefinementState(TypedDict, total=False):
    """One multi-turn task played under one strategy and context (`projectgen.protocols.refinement.graph`).

    `turn` is the turn being played (1-based); `turns` holds one record per turn played (``id`` is
    the turn number as text): the reply, the code taken from it, its tokens, and once checked
    whether it passed the turn's tests.
    """

    task_id: str
    strategy: str
    context: str
    turn: int
    last_turn: int
    turns: Annotated[list[dict[str, Any]], append_unique]


def turn_record(state: RefinementState, turn: int) -> dict[str, Any] | None:
    """The record of `turn`, if it was played."""
    return next((dict(r) for r in state.get("turns") or [] if r["turn"] == turn), None)
