"""The run summaries written as ``summary.json``: typed, and versioned by `SCHEMA_VERSION`.

`RunSummary` is the single pass's (per stage iterations, judge scores and check-test status;
tokens; edits; unit tests), built from the final graph state and the usage records, so it can
be rebuilt from a saved ``state.json`` and ``usage.jsonl`` at any time. `LiveCoderSummary` is
LiveCoder's: one `AttemptRecord` per attempt, the final choice, why the run stopped, tokens.
Readers (inspection, experiments, the CLI) read either file as plain JSON; `schema_version`
tells them which shape they hold.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from projectgen.agents.base import CheckStatus
from projectgen.graphs.stage_records import StageSummary, stage_summaries
from projectgen.llm import STAGE_ROLES, CallRecord, UsageTotals, describe_model
from projectgen.runs.manifest import RunManifest

if TYPE_CHECKING:
    from projectgen.agents import Agents

# The shape of summary.json; raise it when a key is renamed, removed or changes meaning.
SCHEMA_VERSION = 1

# The agents of a run, in the order `RunSummary.models` names them.


class EditSummary(BaseModel):
    """LiveRepoReflection's Well Format over the repair requests of this run."""

    requests: int = 0
    well_formed: int = 0

    @property
    def rate(self) -> float | None:
        return self.well_formed / self.requests if self.requests else None


class RunSummary(BaseModel):
    """The single pass's summary.json."""

    schema_version: int = SCHEMA_VERSION
    task_id: str
    models: dict[str, str] = Field(default_factory=dict, description="role -> model; replays are named as such")
    settings: dict[str, Any] = Field(default_factory=dict)
    stages: dict[str, StageSummary] = Field(default_factory=dict)
    stopped: str | None = None
    status: str = Field(default="finished", description="finished, or failed: a model kept failing (see reason)")
    reason: str | None = None
    files: int = 0
    edits: EditSummary = Field(default_factory=EditSummary)
    rejected_files: int = Field(default=0, description="generated Python files refused because they did not parse "
                                                        "(each stage iteration counts)")
    tokens: UsageTotals = Field(default_factory=UsageTotals)
    tokens_by_role: dict[str, UsageTotals] = Field(default_factory=dict)
    unit_tests: dict[str, Any] | None = None
    duration_s: float = 0.0


def summarize_run(state: Mapping[str, Any], records: Sequence[CallRecord], *, models: Mapping[str, str],
                  settings: Mapping[str, Any], unit_tests: Mapping[str, Any] | None = None,
                  duration_s: float = 0.0) -> RunSummary:
    stages = stage_summaries(state.get("verdicts") or [], state.get("reviews") or [])
    edits = state.get("edits") or []
    by_role: dict[str, list[CallRecord]] = {}
    for record in records:
        by_role.setdefault(record.role, []).append(record)
    return RunSummary(
        task_id=state.get("task_id", ""), models=dict(models), settings=dict(settings), stages=stages,
        stopped=state.get("stopped"), files=len(state.get("repository") or {}),
        edits=EditSummary(requests=len(edits), well_formed=sum(1 for e in edits if e["well_formed"])),
        rejected_files=len(state.get("rejected") or []), tokens=UsageTotals.of(records), tokens_by_role={r: UsageTotals.of(v) for r, v in sorted(by_role.items())},
        unit_tests=dict(unit_tests) if unit_tests is not None else None, duration_s=round(duration_s, 3),
    )


def describe_agents(agents: Agents) -> dict[str, str]:
    """role -> model description, for the summary (agents without a `model` are named by class)."""
    described = {}
    for role in STAGE_ROLES:
        agent = getattr(agents, role)
        model = getattr(agent, "model", None)
        described[role] = describe_model(model) if model is not None else type(agent).__name__
    return described


def called_models(records: Sequence[CallRecord]) -> dict[str, str]:
    """role -> model name, from the calls made (for graphs built without an `Agents` bundle)."""
    return {record.role: record.model for record in records}


# ------------------------------------------------------------------ LiveCoder


class FinalChoice(BaseModel):
    """Which repository a LiveCoder run gives as its output."""

    source: str = Field(description="best (historical best), reused (a full score reused), last, or none")
    attempt: int | None = None
    score: float | None = None


class AttemptRecord(BaseModel):
    """One attempt's row: the attempts graph's record (without its id) plus the attempt's tokens.

    A reused attempt and one stopped by the budget carry only some of the fields; the keys an
    attempt did not have stay out of the JSON, as the attempts graph wrote them.
    """

    model_config = ConfigDict(extra="allow")

    attempt: int
    reused: bool = False
    budget_limited: bool | None = None
    score: float | None = None
    unit: dict[str, Any] | None = Field(default=None, description="hidden unit-test summary, when measured")
    check: CheckStatus | None = Field(default=None, description="the last code verdict's check-test status")
    stages: dict[str, StageSummary] = Field(default_factory=dict)
    improved: bool | None = None
    best_score: float | None = None
    best_attempt: int | None = None
    knowledge_used: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    knowledge_added: list[str] = Field(default_factory=list)
    files: int | None = None
    rejected_files: int | None = Field(default=None, description="generated Python files refused because they did "
                                                                 "not parse (each stage iteration counts)")
    stopped: str | None = None
    tokens: UsageTotals = Field(default_factory=UsageTotals)

    @model_serializer(mode="wrap")
    def _only_keys_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        given = self.model_fields_set | set(self.model_extra or {})
        return {key: value for key, value in handler(self).items() if key in given}


class LiveCoderSummary(BaseModel):
    """LiveCoder's summary.json: per attempt score, best so far, reuse, knowledge, tokens; the final choice."""

    schema_version: int = SCHEMA_VERSION
    task_id: str
    run_id: str
    method: str = Field(default="livecoder", description="the method run (projectgen.runs.METHODS)")
    models: dict[str, str] = Field(default_factory=dict, description="role -> spec string, when known")
    selection: str = Field(default="check", description="the suite attempts are scored and chosen by")
    oracle: bool = Field(default=False, description="chosen by the hidden unit tests (an oracle setting)")
    attempts: list[AttemptRecord] = Field(default_factory=list)
    final: FinalChoice | None = None
    stopped: str | None = None
    status: str = Field(default="finished", description="finished or budget-limited (a failed run writes none)")
    reason: str | None = None
    budget_limited: bool = False
    reuse: bool = False
    attempts_run: int = Field(default=0, description="attempts generated (reused ones not counted)")
    tokens: UsageTotals = Field(default_factory=UsageTotals)
    duration_s: float = 0.0
    settings: dict[str, Any] = Field(default_factory=dict)
    attempt_settings: dict[str, Any] = Field(default_factory=dict)
    model_descriptions: dict[str, str] = Field(default_factory=dict, description="role -> model description")
    unit_tests: dict[str, Any] | None = Field(default=None, description="the final repository's hidden unit tests")

    def to_json(self) -> str:
        """The text of summary.json (written with `json.dumps`, as before the summary was typed)."""
        return json.dumps(self.model_dump(mode="json"), indent=1) + "\n"


def summarize_attempts(state: Mapping[str, Any], records: Sequence[CallRecord], manifest: RunManifest, *,
                       model_descriptions: Mapping[str, str], unit_tests: Mapping[str, Any] | None,
                       duration_s: float) -> LiveCoderSummary:
    """LiveCoder's summary from the attempts graph's final state and every call of the run."""
    rows = [AttemptRecord.model_validate(
        {**{k: v for k, v in record.items() if k != "id"},
         "tokens": UsageTotals.of(r for r in records if r.attempt == record["attempt"])})
        for record in state.get("records") or []]
    stopped = state.get("stopped")
    return LiveCoderSummary(
        task_id=manifest.task_id, run_id=manifest.run_id, method=manifest.method, models=manifest.models,
        selection=manifest.attempt_settings.selection,
        oracle=manifest.attempt_settings.selection == "unit",
        attempts=rows, final=state.get("final"), stopped=stopped,
        status="budget-limited" if stopped else "finished", reason=stopped, budget_limited=bool(stopped),
        reuse=any(row.reused for row in rows), attempts_run=sum(1 for row in rows if not row.reused),
        tokens=UsageTotals.of(records), duration_s=round(duration_s, 3), settings=manifest.settings.model_dump(),
        attempt_settings=manifest.attempt_settings.model_dump(), model_descriptions=dict(model_descriptions),
        unit_tests=dict(unit_tests) if unit_tests is not None else None)
