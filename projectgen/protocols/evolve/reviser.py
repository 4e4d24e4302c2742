"""The tree reviser: the architect of an evolve run, revising a finished run's tree for a change request.

It answers the architecture stage like the `Architect` (role "architect", the same prompt and
JSON tree), but from its first iteration it is shown the tree the repository was built from and
the change request, and asked to keep everything the change does not need exactly as it is:
the files whose tree nodes stay the same are kept byte for byte and cost no model call
(`projectgen.protocols.evolve.graph`). Later iterations add the judge's feedback, as the architect's do.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from projectgen.agents.architect import document_values, ssat_json
from projectgen.agents.base import ModelGateway, guidance_section, section
from projectgen.datasets.task import Documents
from projectgen.llm.parsing import find_json
from projectgen.prompts import Prompt, load_prompt
from projectgen.ssat import SSAT, validate_ssat_json

KEEP_UNCHANGED = ("Answer with the complete revised tree as one JSON object. Keep every file, class, function, "
                  "parameter, description and dependency that the change request does not need exactly as it "
                  "is: a file whose part of the tree is unchanged keeps its code and is not written again.")


@dataclass
class TreeReviser:
    """Revises `base` (the tree of the repository as it is) for `change` (the new requirement)."""

    model: Any
    base: SSAT
    change: str
    prompt: Prompt = field(default_factory=lambda: load_prompt("architect"))
    role: str = "architect"

    async def design(self, gateway: ModelGateway, documents: Documents, *, iteration: int,
                     previous: SSAT | None = None, feedback: str = "", memory: str = "",
                     guidance: str = "") -> SSAT:
        revision = (section("The architecture tree of the repository as it is now", ssat_json(self.base))
                    + section("Change request", self.change))
        if iteration > 1:
            revision += (section("Your previous revision", ssat_json(previous) if previous is not None
                                 and previous != self.base else "(your previous answer could not be used)")
                         + section("Reviewer feedback to address", feedback)
                         + section("Relevant earlier revisions", memory))
        messages = self.prompt.messages(**document_values(documents), revision=revision + "\n" + KEEP_UNCHANGED + "\n",
                                        guidance=guidance_section(guidance))
        reply = await gateway.ask(self.model, messages, role=self.role, stage="architecture", iteration=iteration)
        found = find_json(reply)
        return validate_ssat_json(reply if found.truncated else found.value)
