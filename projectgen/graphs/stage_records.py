"""What a stage did, from its verdict and review records: iterations, acceptance, scores, checks, decisions.

The attempts graph records it per attempt and the run summaries per run, so it lives beside the graphs
that make the records (`projectgen.runs.summary` re-exports it).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from projectgen.agents.base import CheckStatus
from projectgen.llm.roles import HUMAN_JUDGE


class StageSummary(BaseModel):
    iterations: int = 0
    accepted: bool = False
    scores: list[float] = Field(default_factory=list, description="judge score of each iteration")
    checks: list[CheckStatus] = Field(default_factory=list, description="check-test result of each code round")
    reviews: list[str] = Field(default_factory=list, description="a person's decisions on the stage's output, in "
                               "order (approve, edit, reject: run --review); a rejection's revision is an iteration")


def stage_summaries(verdicts: Sequence[Mapping[str, Any]],
                    reviews: Sequence[Mapping[str, Any]] = ()) -> dict[str, StageSummary]:
    """Per stage, from its verdict records in order: iterations, last acceptance, scores, check results;
    and the decisions of its `reviews` (a person's rejection, a verdict without a score, is one of those)."""
    stages: dict[str, StageSummary] = {}
    for review in reviews:
        stages.setdefault(review["stage"], StageSummary()).reviews.append(review["action"])
    for verdict in verdicts:
        if verdict.get("judge") == HUMAN_JUDGE:
            continue
        stage = stages.setdefault(verdict["stage"], StageSummary())
        stage.iterations = max(stage.iterations, verdict["iteration"])
        stage.accepted = verdict["accepted"]
        stage.scores.append(verdict["score"])
        if verdict.get("check"):
            stage.checks.append(CheckStatus.model_validate(verdict["check"]))
    return stages
