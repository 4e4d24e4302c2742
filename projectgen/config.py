"""Settings of the ProjectGen pipeline; defaults are the paper's hyperparameters.

Kept apart from the agents so one `Settings` value describes a run completely and can be
written into its summary (and, in the attempts loop, compared between runs).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

EditFormat = Literal["whole", "search_replace"]
# How a judge's score is held against the threshold. ProjectGen's architecture judge accepts a tree whose
# score *exceeds* the threshold (8); "at_least" accepts a score equal to it (projectgen before 0.2).
ThresholdRule = Literal["exceeds", "at_least"]



def cache_root() -> Path:
    """Where projectgen keeps what it can rebuild (test environments, fetched benchmarks):
    `$PROJECTGEN_CACHE_DIR`, else the XDG cache folder's projectgen/."""
    explicit = os.environ.get("PROJECTGEN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "projectgen"

class Settings(BaseModel):
    """How hard each stage tries and what counts as good enough."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float = Field(default=8.0, ge=0, le=10, description="judge score (0-10) a stage needs to pass")
    threshold_rule: ThresholdRule = Field(default="exceeds", description="'exceeds': a score must be above the "
                                          "threshold (the paper's rule); 'at_least': equal to it is enough")
    architecture_iterations: int = Field(default=3, ge=1, description="cap on architect revisions")
    skeleton_iterations: int = Field(default=3, ge=1, description="cap on skeleton revisions")
    code_iterations: int = Field(default=5, ge=1, description="cap on code rounds (first fill + repairs)")
    gamma: int = Field(default=2, ge=0, description="stage-memory entries a generator sees (BM25 top-gamma)")
    edit_format: EditFormat = Field(default="whole", description="how the coder answers repair requests")
    max_concurrency: int = Field(default=4, ge=1, description="model calls in flight during a fan-out")
    error_log_chars: int = Field(default=6000, ge=500, description="check-test log excerpt shown to the judge")
    retries: int = Field(default=3, ge=0, description="retries of a model call after a transient error")
    retry_backoff: float = Field(default=1.0, ge=0, description="seconds before the first retry (doubling, "
                                 "at most 30; a server's Retry-After can ask for longer)")
    max_reply_chars: int = Field(default=200_000, ge=1000, description="a longer model reply is cut to this "
                                 "many characters and the cut recorded (projectgen.llm.MAX_REPLY_CHARS)")

    def gateway_options(self) -> dict[str, Any]:
        """The `ModelGateway` fields these settings decide."""
        return {"retries": self.retries, "backoff": self.retry_backoff, "max_reply_chars": self.max_reply_chars}

    @classmethod
    def with_profile(cls, profile: Mapping[str, Any], settings: Settings | None = None) -> Settings:
        """`settings` with the fields it leaves unset taken from `profile` (a task's paper settings,
        `Task.settings_profile`): what a user sets always wins, and a field set nowhere keeps its default."""
        given = settings.model_dump(exclude_unset=True) if settings is not None else {}
        return cls(**{**profile, **given})

    def accepts(self, score: float) -> bool:
        """Whether a judge's score passes the threshold under the threshold rule."""
        return score > self.threshold if self.threshold_rule == "exceeds" else score >= self.threshold

    def cap(self, stage: str) -> int:
        """The iteration cap of `stage` ("architecture", "skeleton" or "code")."""
        return {"architecture": self.architecture_iterations, "skeleton": self.skeleton_iterations,
                "code": self.code_iterations}[stage]


ScoreSuite = Literal["check", "unit"]


class AttemptSettings(BaseModel):
    """LiveCoder's outer loop: attempts, what drives selection, and the paper's ablations."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attempts: int = Field(default=4, ge=1, description="attempts per task (the paper's A)")
    selection: ScoreSuite = Field(
        default="check", description="tests whose pass rate picks the best attempt: 'check' (visible) or "
        "'unit' (hidden: the paper's oracle setting, labelled as such in reports)")
    success_knowledge: bool = Field(default=True, description="extract and inject success knowledge")
    failure_knowledge: bool = Field(default=True, description="extract and inject failure knowledge")
    historical_best: bool = Field(default=True, description="keep the best repository; off = output the last attempt")
    warm_start: bool = Field(default=False, description="later attempts reuse the best attempt's tree and skeleton")
    knowledge_k: int = Field(default=3, ge=0, description="entries of each kind retrieved per attempt")
    full_score: float = Field(default=1.0, gt=0, le=1, description="a best at or above this is reused as is")
    measure_unit_tests: bool = Field(default=True, description="run the hidden unit tests of every attempt for "
                                     "reporting (never shown to the generators)")
