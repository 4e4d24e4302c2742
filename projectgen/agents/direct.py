"""The baselines' generator: the whole repository in one reply (Direct), then files rewritten from
the feedback suite's test errors (Self-Reflection), as LiveCoder's paper compares against.

Both replies use the whole-file edit format (`projectgen.repository.edits`): a path line and a
fenced block per file; unsafe paths are refused by `apply_edits`, never written.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from projectgen.agents.architect import document_values
from projectgen.agents.base import ModelGateway, guidance_section
from projectgen.config import FeedbackSuite
from projectgen.datasets.task import Documents
from projectgen.llm.roles import DIRECT_ROLE, NOTES_STAGE
from projectgen.prompts import Prompt, load_prompt
from projectgen.prompts.suite_words import suite_words
from projectgen.repository.edits import EditOutcome, apply_edits, make_whole_file_reply

DIRECT_STAGE = "direct"
REFLECTION_STAGE = "self_reflection"
REFLECTION_CHARS = 2000  # a verbal reflection is a few sentences; a longer one is cut so carried ones stay small


@dataclass
class DirectGenerator:
    """Writes the whole repository from the documents in one call (role "direct"), and revises it from
    the test errors (same role, the self-reflection prompt, iteration 2, 3, ...). `suite` is the feedback
    suite the errors come from (`Settings.feedback_suite`), named in the reflection prompts."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("direct"))
    reflect_prompt: Prompt = field(default_factory=lambda: load_prompt("self_reflection"))
    verbal_prompt: Prompt = field(default_factory=lambda: load_prompt("self_reflection_verbal"))
    role: str = DIRECT_ROLE
    suite: FeedbackSuite = "check"

    async def generate(self, gateway: ModelGateway, documents: Documents, *, guidance: str = "") -> EditOutcome:
        """The repository the reply gives (its `repo`), with the blocks that could not be used."""
        messages = self.prompt.messages(**document_values(documents), guidance=guidance_section(guidance))
        reply = await gateway.ask(self.model, messages, role=self.role, stage=DIRECT_STAGE, iteration=1)
        return apply_edits({}, reply, "whole")

    async def reflect(self, gateway: ModelGateway, documents: Documents, repository: Mapping[str, str], *,
                      error_log: str, passed: int, total: int, iteration: int, guidance: str = "",
                      reflections: Sequence[str] = ()) -> EditOutcome:
        """`repository` with the files the reply rewrites replaced (the others kept); `reflections`, the
        verbal reflections of this and the earlier rounds, go with the errors."""
        listing = make_whole_file_reply(sorted(repository), repository) if repository else "(no files)"
        messages = self.reflect_prompt.messages(**document_values(documents), repository=listing,
                                                error_log=error_log or "(no log)", passed=passed, total=total,
                                                reflections=reflections_section(reflections),
                                                guidance=guidance_section(guidance), **suite_words(self.suite).values())
        reply = await gateway.ask(self.model, messages, role=self.role, stage=REFLECTION_STAGE, iteration=iteration)
        return apply_edits(repository, reply, "whole")

    async def reflect_verbally(self, gateway: ModelGateway, documents: Documents, repository: Mapping[str, str], *,
                               error_log: str, passed: int, total: int, iteration: int,
                               reflections: Sequence[str]) -> str:
        """A verbal reflection on the test errors, the earlier rounds' `reflections` shown (one call,
        stage "self_reflection_notes"): what the Self-Reflection baseline carries from round to round."""
        listing = make_whole_file_reply(sorted(repository), repository) if repository else "(no files)"
        messages = self.verbal_prompt.messages(**document_values(documents), repository=listing,
                                               error_log=error_log or "(no log)", passed=passed, total=total,
                                               reflections=reflections_section(reflections),
                                               **suite_words(self.suite).values())
        reply = await gateway.ask(self.model, messages, role=self.role, stage=NOTES_STAGE, iteration=iteration)
        return reply.strip()[:REFLECTION_CHARS]


def reflections_section(reflections: Sequence[str]) -> str:
    """The prompt section of the reflections carried so far (oldest first); "" when there are none."""
    if not reflections:
        return ""
    return "\n# Your reflections so far (oldest first)\n" + "\n".join(
        f"{number}. {text.strip()}" for number, text in enumerate(reflections, start=1)) + "\n"
