"""LiveCoder's knowledge entries: what one attempt teaches the next ones.

Field names follow the paper's schemas. A success entry records what a (partly)
passing attempt validated; a failure entry what went wrong and what later attempts
must respect. Both are extracted by an LLM from repository observations and test
feedback (`projectgen.agents.knowledge`), stored per task (`KnowledgeStore`) and
retrieved by embedding similarity to the requirement.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

KnowledgeKind = Literal["success", "failure"]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    attempt: int = Field(ge=1)
    score: float = Field(ge=0, le=1, description="the attempt's functional score (pass rate)")
    task_summary: str = ""


class SuccessKnowledge(_Entry):
    """What worked in an attempt, validated by passing tests."""

    kind: Literal["success"] = "success"
    repository_signals: list[str] = Field(default_factory=list,
                                          description="validated repository-level signals: layout, interfaces")
    functional_signals: list[str] = Field(default_factory=list,
                                          description="validated functional signals: behaviour that tests confirm")
    carry_over: list[str] = Field(default_factory=list, description="what later attempts should keep doing")

    def text(self) -> str:
        """The entry as prompt text (positive guidance) and as the text that is embedded."""
        return _render(f"Attempt {self.attempt} (score {self.score:.2f}) validated:", [
            ("Task", [self.task_summary] if self.task_summary else []),
            ("Repository", self.repository_signals), ("Behaviour", self.functional_signals),
            ("Keep", self.carry_over)])


class FailureKnowledge(_Entry):
    """What failed in an attempt and the constraints it implies."""

    kind: Literal["failure"] = "failure"
    observed_failures: list[str] = Field(default_factory=list, description="observed failure signals (tests, errors)")
    repository_failures: list[str] = Field(default_factory=list,
                                           description="repository-level failure signals: missing files, bad imports")
    carry_over_constraints: list[str] = Field(default_factory=list, description="what later attempts must avoid")

    def text(self) -> str:
        """The entry as prompt text (negative guidance) and as the text that is embedded."""
        return _render(f"Attempt {self.attempt} (score {self.score:.2f}) failed:", [
            ("Task", [self.task_summary] if self.task_summary else []),
            ("Observed", self.observed_failures), ("Repository", self.repository_failures),
            ("Avoid", self.carry_over_constraints)])


KnowledgeEntry = SuccessKnowledge | FailureKnowledge


class ExtractedKnowledge(BaseModel):
    """What the knowledge agent returns for one attempt (either part may be empty)."""

    model_config = ConfigDict(extra="ignore")

    success: SuccessKnowledge | None = None
    failure: FailureKnowledge | None = None
    source: Literal["model", "fallback"] = Field(
        default="model", description="'fallback': the reply was unreadable; built from the test feedback alone")
    note: str = Field(default="", description="why the fallback was used, if it was")

    def entries(self) -> list[KnowledgeEntry]:
        return [e for e in (self.success, self.failure) if e is not None]


def _render(head: str, parts: list[tuple[str, list[str]]]) -> str:
    lines = [head]
    for title, items in parts:
        lines += [f"- {title}: {item}" for item in items if item.strip()]
    return "\n".join(lines)
