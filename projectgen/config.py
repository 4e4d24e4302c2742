"""Settings of the ProjectGen pipeline; defaults are the paper's hyperparameters.

Kept apart from the agents so one `Settings` value describes a run completely and can be
written into its summary (and, in the attempts loop, compared between runs).
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EditFormat = Literal["whole", "search_replace"]


class Settings(BaseModel):
    """How hard each stage tries and what counts as good enough."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float = Field(default=8.0, ge=0, le=10, description="judge score (0-10) a stage needs to pass")
    architecture_iterations: int = Field(default=3, ge=1, description="cap on architect revisions")
    skeleton_iterations: int = Field(default=3, ge=1, description="cap on skeleton revisions")
    code_iterations: int = Field(default=5, ge=1, description="cap on code rounds (first fill + repairs)")
    gamma: int = Field(default=2, ge=0, description="stage-memory entries a generator sees (BM25 top-gamma)")
    edit_format: EditFormat = Field(default="whole", description="how the coder answers repair requests")
    max_concurrency: int = Field(default=4, ge=1, description="model calls in flight during a fan-out")
    error_log_chars: int = Field(default=6000, ge=500, description="check-test log excerpt shown to the judge")

    def cap(self, stage: str) -> int:
        """The iteration cap of `stage` ("architecture", "skeleton" or "code")."""
        return {"architecture": self.architecture_iterations, "skeleton": self.skeleton_iterations,
                "code": self.code_iterations}[stage]
