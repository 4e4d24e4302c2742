"""The architecture judge: scores an SSAT against the documents on four criteria plus overall.

`criteria="paper"` asks as ProjectGen's public code asks JudgeA (`prompts/architecture_judge_paper.md`):
requirement coverage, consistency with the provided information, interface consistency (clear,
unambiguous, not redundant names), dependency relations (no circular ones, layering), a justification per
criterion in plain text and a "Final Score" from 1 to 10; the reply is read in that form, or as JSON, and
its justifications are the architect's feedback, as the paper passes them. "projectgen" asks for a JSON
object with a score per criterion and one reasons field.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
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
# The labels of the paper's plain-text answer, per criterion.
PAPER_LABELS: Mapping[str, str] = MappingProxyType({
    "requirement_coverage": "Requirement Coverage", "document_consistency": "Consistency with Provided Information",
    "interface_consistency": "Interface Consistency", "dependency_relations": "Dependency Relations"})
_PAPER_LINE = re.compile(r"^[\s*#>-]*(" + "|".join(map(re.escape, PAPER_LABELS.values())) + r"|Final Score)\s*\**\s*:"
                         r"\s*\**\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


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

    def paper_feedback(self) -> str:
        """What the paper's architect is told: the final score and each criterion's justification, then any
        feedback the reply gave besides."""
        lines = [f"Final Score: {self.overall_score():g}",
                 *(f"- {PAPER_LABELS[name]}: {self.justifications[name]}" for name in CRITERIA
                   if self.justifications.get(name))]
        return "\n".join([*lines, *([self.feedback] if self.feedback else [])])

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
        review = paper_review(reply) if self.criteria == "paper" else None
        if review is None:
            try:
                review = parse_model(reply, ArchitectureReview)
            except StructuredOutputError as exc:
                return Verdict(judge=self.name, stage="architecture", iteration=iteration, score=0, accepted=False,
                               feedback=f"The review could not be read ({exc}); the tree is kept for another round.")
        score = review.overall_score()
        paper = self.criteria == "paper"
        return Verdict(judge=self.name, stage="architecture", iteration=iteration, score=score,
                       accepted=score >= threshold, feedback=review.paper_feedback() if paper else review.feedback,
                       reasons=review.justified() if paper else review.reasons, scores=review.scores)


def paper_review(reply: str) -> ArchitectureReview | None:
    """The paper's plain-text answer (`Requirement Coverage: ...` per criterion, `Final Score: N`), markdown
    emphasis and list marks tolerated; None when the reply has no final score in that form (it may be JSON)."""
    by_label = {label.lower(): name for name, label in PAPER_LABELS.items()}
    justifications: dict[str, str] = {}
    overall: float | None = None
    for match in _PAPER_LINE.finditer(reply):
        label, text = match.group(1).lower(), match.group(2).strip().strip("*").strip()
        if label == "final score":
            number = _NUMBER.search(text)
            overall = float(number.group()) if number else overall
        elif text:
            justifications.setdefault(by_label[label], text)
    if overall is None:
        return None
    return ArchitectureReview(overall=overall, justifications=justifications)
