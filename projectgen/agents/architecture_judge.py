"""The architecture judge: scores an SSAT against the documents on four criteria plus overall.

`criteria="paper"` asks in the paper's terms (interface consistency across modules; dependencies: no
circular ones, layering) for a justification per criterion; "projectgen" asks for one reasons field.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, field_validator

from projectgen.agents.architect import document_values, ssat_json
from projectgen.agents.base import ModelGateway, Verdict
from projectgen.config import ArchitectureCriteria
from projectgen.datasets.task import Documents
from projectgen.llm.parsing import StructuredOutputError, parse_model
from projectgen.prompts import Prompt, load_prompt
from projectgen.ssat import SSAT

CRITERIA = ("requirement_coverage", "document_consistency", "interface_consistency", "dependency_relations")


class ArchitectureReview(BaseModel):
    """The judge's reply; `overall` defaults to the mean of the criteria."""

    scores: dict[str, float] = Field(default_factory=dict)
    overall: float | None = None
    reasons: str = ""
    justifications: dict[str, str] = Field(default_factory=dict)
    feedback: str = ""

    @field_validator("scores")
    @classmethod
    def _in_range(cls, scores: dict[str, float]) -> dict[str, float]:
        return {k: min(10.0, max(0.0, float(v))) for k, v in scores.items()}

    def justified(self) -> str:
        """One line per criterion with its justification (the paper's form), a missing one said so."""
        return "\n".join(f"{name}: {self.justifications.get(name) or '(no justification given)'}"
                         for name in CRITERIA)

    def overall_score(self) -> float:
        if self.overall is not None:
            return min(10.0, max(0.0, float(self.overall)))
        return sum(self.scores.values()) / len(self.scores) if self.scores else 0.0


@dataclass
class ArchitectureJudge:
    """Accepts the SSAT when the overall score reaches the threshold. Uses no memory."""

    model: Any
    criteria: ArchitectureCriteria = "projectgen"
    prompt: Prompt | None = None  # None: the bundled prompt of `criteria`
    role: str = "architecture_judge"
    name: str = "architecture_judge"

    def __post_init__(self) -> None:
        if self.prompt is None:
            self.prompt = load_prompt("architecture_judge_paper" if self.criteria == "paper" else "architecture_judge")

    async def review(self, gateway: ModelGateway, documents: Documents, ssat: SSAT, *, iteration: int,
                     threshold: float) -> Verdict:
        messages = self.prompt.messages(**document_values(documents), ssat=ssat_json(ssat))
        reply = await gateway.ask(self.model, messages, role=self.role, stage="architecture", iteration=iteration)
        try:
            review = parse_model(reply, ArchitectureReview)
        except StructuredOutputError as exc:
            return Verdict(judge=self.name, stage="architecture", iteration=iteration, score=0, accepted=False,
                           feedback=f"The review could not be read ({exc}); the tree is kept for another round.")
        score = review.overall_score()
        return Verdict(judge=self.name, stage="architecture", iteration=iteration, score=score,
                       accepted=score >= threshold, feedback=review.feedback,
                       reasons=review.justified() if self.criteria == "paper" else review.reasons,
                       scores=review.scores)
