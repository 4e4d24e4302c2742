"""The stage-memory summariser: one call per revision distils the judge's feedback and the diff made in
answer into a short summary, which BM25 then retrieves over (ProjectGen's distilled memory; the
`stage_memory="distilled"` setting). A model that answers nothing usable leaves the entry raw: its
summary empty, so retrieval falls back to the feedback and diff rather than to nothing."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from projectgen.agents.base import ModelGateway
from projectgen.llm.roles import MEMORY_ROLE
from projectgen.memory import MemoryEntry
from projectgen.prompts import Prompt, load_prompt

SUMMARY_CHARS = 1500  # a summary is a few sentences; a longer reply is cut, so one entry cannot flood a prompt
DIFF_CHARS = 8000


@dataclass
class MemorySummarizer:
    """Summarises one revision (role "memory_summary")."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("memory_summary"))
    role: str = MEMORY_ROLE

    async def summarize(self, gateway: ModelGateway, entry: MemoryEntry) -> MemoryEntry:
        """`entry` with its `summary` filled from one model call."""
        diff = entry.diff if len(entry.diff) <= DIFF_CHARS else entry.diff[:DIFF_CHARS] + "\n[... diff cut ...]"
        messages = self.prompt.messages(stage=entry.stage, iteration=entry.iteration,
                                        target=f", {entry.target}" if entry.target else "",
                                        feedback=entry.feedback.strip() or "(none)", diff=diff.strip() or "(none)")
        reply = await gateway.ask(self.model, messages, role=self.role, stage=entry.stage, target=entry.target,
                                  iteration=entry.iteration)
        return entry.model_copy(update={"summary": reply.strip()[:SUMMARY_CHARS]})
