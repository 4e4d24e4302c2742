"""The run summary: per stage iterations, judge scores and check-test status; tokens; edits; unit tests.

Built from the final graph state and the usage records, so it can be rebuilt from a
saved ``state.json`` and ``usage.jsonl`` at any time.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from projectgen.agents.base import CheckStatus
from projectgen.llm import CallRecord, UsageTotals


class StageSummary(BaseModel):
    iterations: int = 0
    accepted: bool = False
    scores: list[float] = Field(default_factory=list, description="judge score of each iteration")
    checks: list[CheckStatus] = Field(default_factory=list, description="check-test result of each code round")


class EditSummary(BaseModel):
    """LiveRepoReflection's Well Format over the repair requests of this run."""

    requests: int = 0
    well_formed: int = 0

    @property
    def rate(self) -> float | None:
        return self.well_formed / self.requests if self.requests else None


class RunSummary(BaseModel):
    task_id: str
    models: dict[str, str] = Field(default_factory=dict, description="role -> model; replays are named as such")
    settings: dict[str, Any] = Field(default_factory=dict)
    stages: dict[str, StageSummary] = Field(default_factory=dict)
    stopped: str | None = None
    status: str = Field(default="finished", description="finished, or failed: a model kept failing (see reason)")
    reason: str | None = None
    files: int = 0
    edits: EditSummary = Field(default_factory=EditSummary)
    tokens: UsageTotals = Field(default_factory=UsageTotals)
    tokens_by_role: dict[str, UsageTotals] = Field(default_factory=dict)
    unit_tests: dict[str, Any] | None = None
    duration_s: float = 0.0


def stage_summaries(verdicts: Sequence[Mapping[str, Any]]) -> dict[str, StageSummary]:
    """Per stage, from its verdict records in order: iterations, last acceptance, scores, check results."""
    stages: dict[str, StageSummary] = {}
    for verdict in verdicts:
        stage = stages.setdefault(verdict["stage"], StageSummary())
        stage.iterations = max(stage.iterations, verdict["iteration"])
        stage.accepted = verdict["accepted"]
        stage.scores.append(verdict["score"])
        if verdict.get("check"):
            stage.checks.append(CheckStatus.model_validate(verdict["check"]))
    return stages


def summarize_run(state: Mapping[str, Any], records: Sequence[CallRecord], *, models: Mapping[str, str],
                  settings: Mapping[str, Any], unit_tests: Mapping[str, Any] | None = None,
                  duration_s: float = 0.0) -> RunSummary:
    stages = stage_summaries(state.get("verdicts") or [])
    edits = state.get("edits") or []
    by_role: dict[str, list[CallRecord]] = {}
    for record in records:
        by_role.setdefault(record.role, []).append(record)
    return RunSummary(
        task_id=state.get("task_id", ""), models=dict(models), settings=dict(settings), stages=stages,
        stopped=state.get("stopped"), files=len(state.get("repository") or {}),
        edits=EditSummary(requests=len(edits), well_formed=sum(1 for e in edits if e["well_formed"])),
        tokens=UsageTotals.of(records), tokens_by_role={r: UsageTotals.of(v) for r, v in sorted(by_role.items())},
        unit_tests=dict(unit_tests) if unit_tests is not None else None, duration_s=round(duration_s, 3),
    )
