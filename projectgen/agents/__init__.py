"""The ProjectGen agents: each is given its chat model and prompt explicitly.

Generators (`Architect`, `SkeletonWriter`, `Coder`) produce; judges
(`ArchitectureJudge`, `SkeletonJudge`, `CodeJudge`) return a `Verdict`. `Agents`
bundles one of each, so a graph builder can take them all and a user can swap one.
`protocols` says what the graphs call on each role (`ArchitectureGenerator`,
`CodeReviewer`, ...), so a user's own agent is type-checked against it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from projectgen.agents.architect import Architect
from projectgen.agents.architecture_judge import ArchitectureJudge, ArchitectureReview
from projectgen.agents.base import CheckStatus, IncompleteFileError, ModelGateway, Reply, Verdict, combine_verdicts
from projectgen.agents.code_judge import CodeJudge
from projectgen.agents.coder import Coder
from projectgen.agents.direct import DirectGenerator
from projectgen.agents.skeleton import SkeletonWriter
from projectgen.agents.skeleton_judge import SkeletonJudge, compile_errors, structure_problems
from projectgen.config import Settings
from projectgen.agents.knowledge import KnowledgeExtractor, render_guidance
from projectgen.agents.protocols import (
    ArchitectureGenerator, ArchitectureReviewer, CodeGenerator, CodeReviewer, LessonExtractor, ReflectionGenerator,
    RepositoryGenerator, RevisionSummarizer, SkeletonGenerator, SkeletonReviewer,
)
from projectgen.agents.summarizer import MemorySummarizer
from projectgen.llm.roles import MEMORY_ROLE


@dataclass(frozen=True)
class Agents:
    """One agent per role (`projectgen.llm.STAGE_ROLES` names the fields). `extra_code_judges` run
    after the code judge (all must accept)."""

    architect: ArchitectureGenerator
    architecture_judge: ArchitectureReviewer
    skeleton: SkeletonGenerator
    skeleton_judge: SkeletonReviewer
    coder: CodeGenerator
    code_judge: CodeReviewer
    extra_code_judges: tuple[CodeReviewer, ...] = field(default=())
    memory_summarizer: RevisionSummarizer | None = None  # distilled stage memory's (`Settings.stage_memory`)

    @classmethod
    def from_models(cls, models: Any, settings: Settings | None = None) -> Agents:
        """Default agents, each with the model of its role (`ModelRoles`, or one model for all); `settings`
        choose the judges' form (`architecture_criteria`, `skeleton_review`, the code judge's `feedback_suite`,
        which the coder's repair prompt names too; default the projectgen profile's)."""
        pick = models.for_role if hasattr(models, "for_role") else (lambda role: models)
        settings = settings or Settings()
        return cls(
            architect=Architect(pick("architect")),
            architecture_judge=ArchitectureJudge(pick("architecture_judge"), criteria=settings.architecture_criteria),
            skeleton=SkeletonWriter(pick("skeleton")),
            skeleton_judge=SkeletonJudge(pick("skeleton_judge"), review_mode=settings.skeleton_review),
            coder=Coder(pick("coder"), suite=settings.feedback_suite),
            code_judge=CodeJudge(pick("code_judge"), suite=settings.feedback_suite),
            memory_summarizer=MemorySummarizer(pick(MEMORY_ROLE)),
        )

    def replace(self, **changes: Any) -> Agents:
        """A copy with some agents swapped, e.g. ``agents.replace(coder=MyCoder(model))``."""
        return replace(self, **changes)


__all__ = [
    "Agents", "Architect", "ArchitectureJudge", "ArchitectureReview", "CheckStatus", "CodeJudge", "Coder",
    "DirectGenerator", "IncompleteFileError", "Reply",
    "ModelGateway", "SkeletonJudge", "SkeletonWriter", "Verdict", "combine_verdicts", "compile_errors",
    "structure_problems",
    "KnowledgeExtractor", "MemorySummarizer", "render_guidance",
    "ArchitectureGenerator", "ArchitectureReviewer", "CodeGenerator", "CodeReviewer", "LessonExtractor",
    "ReflectionGenerator", "RepositoryGenerator", "RevisionSummarizer", "SkeletonGenerator", "SkeletonReviewer",
]
