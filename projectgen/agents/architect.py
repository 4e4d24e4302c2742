"""The architect: requirement documents -> SSAT, revised from judge feedback and stage memory."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from projectgen.agents.base import ModelGateway, guidance_section, section
from projectgen.datasets.task import Documents
from projectgen.llm.parsing import find_json
from projectgen.prompts import Prompt, load_prompt
from projectgen.ssat import SSAT, validate_ssat_json

NOT_GIVEN = "(not given)"


def document_values(documents: Documents) -> dict[str, str]:
    """Prompt values for the four requirement documents and the starter files ("" when none)."""
    return {
        "prd": documents.prd,
        "uml_class": documents.uml_class or NOT_GIVEN,
        "uml_sequence": documents.uml_sequence or NOT_GIVEN,
        "architecture_design": documents.architecture_design or NOT_GIVEN,
        "starter": starter_section(documents.starter),
    }


def starter_section(starter: Mapping[str, str]) -> str:
    """The task's starter files as a prompt section, or "" when it gives none (the prompt is then unchanged)."""
    if not starter:
        return ""
    files = "\n".join(f"{path}\n{fenced(path, text)}" for path, text in sorted(starter.items()))
    return section("Starter files", "The task gives these files to start from. Keep each at its path, with "
                   "every name, signature and default it defines; implement what they leave open.\n\n" + files)


def fenced(path: str, text: str) -> str:
    """A file's text in a fenced block (python for .py files)."""
    language = "python" if path.endswith(".py") else ""
    body = text if not text or text.endswith("\n") else text + "\n"
    return f"```{language}\n{body}```"


def ssat_json(ssat: SSAT) -> str:
    """The tree as the compact JSON the architect writes and the judge reads."""
    return ssat.model_dump_json(indent=1, exclude_defaults=True)


@dataclass
class Architect:
    """Designs the SSAT. Raises `StructuredOutputError`/`SSATValidationError` on an unusable reply,
    which the stage turns into feedback for the next iteration."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("architect"))
    role: str = "architect"

    async def design(self, gateway: ModelGateway, documents: Documents, *, iteration: int,
                     previous: SSAT | None = None, feedback: str = "", memory: str = "",
                     guidance: str = "") -> SSAT:
        revision = ""
        if iteration > 1:
            revision = (section("Your previous architecture tree", ssat_json(previous) if previous else
                                "(your previous answer could not be used)")
                        + section("Reviewer feedback to address", feedback)
                        + section("Relevant earlier revisions", memory)
                        + "\nAnswer with the complete revised tree as one JSON object.\n")
        messages = self.prompt.messages(**document_values(documents), revision=revision,
                                        guidance=guidance_section(guidance))
        reply = await gateway.ask(self.model, messages, role=self.role, stage="architecture", iteration=iteration)
        found = find_json(reply)  # StructuredOutputError when the reply holds no readable JSON
        # A cut-off reply is re-read from its text, so validate_ssat_json rejects it (a repaired, truncated
        # file list would silently drop part of the architecture).
        return validate_ssat_json(reply if found.truncated else found.value)
