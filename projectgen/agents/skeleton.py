"""The skeleton agent: one file's imports, globals, classes and `pass`-bodied signatures."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from projectgen.agents.architect import fenced
from projectgen.agents.base import IncompleteFileError, ModelGateway, Reply, guidance_section, section
from projectgen.llm.parsing import code_blocks
from projectgen.prompts import Prompt, load_prompt
from projectgen.ssat import SSAT, render_file, render_tree


PYTHON_TAGS = ("python", "py", "python3")


def code_from_reply(reply: str | Reply, path: str = "the file", language: str = "python") -> str:
    """The file in a reply: its first python (or untagged) fenced block, else the whole text; in another
    `language` (a multi-turn Java task's), its first block tagged with it (``java``) or untagged.

    A block left open at the end of a reply runs to the end (a sloppy model may forget its closing
    fence, and what it wrote is still checked as Python); but when the reply says it was cut at the
    output cap (`Reply.cut`), such a block, or an unfenced reply, is the beginning of the file only,
    and `IncompleteFileError` says so (naming `path`)."""
    cut = isinstance(reply, Reply) and reply.cut
    text = reply.text if isinstance(reply, Reply) else reply
    for block in code_blocks(text):
        if not block.info or block.info.lower() in (PYTHON_TAGS if language == "python" else (language,)):
            if cut and not block.closed:
                raise IncompleteFileError(path)
            return block.code if block.code.endswith("\n") else block.code + "\n"
    if cut:
        raise IncompleteFileError(path)
    text = text.strip("\n")
    return text + "\n" if text else ""


def needs_writing(ssat: SSAT, path: str) -> bool:
    """False for files the tree leaves empty (a bare `__init__.py`): no model call is spent on them."""
    node = ssat.file(path)
    return bool(node.description or node.imports or node.dependencies or node.globals or node.classes
                or node.functions)


def starter_file_section(starter: str | None) -> str:
    """The starter file the task gives for this path, as a prompt section ("" when none)."""
    if starter is None:
        return ""
    return section("Starter file given for this path", "Start from it: keep every name, signature and default "
                   "it defines, and add what the design above asks for.\n" + fenced(".py", starter))


@dataclass
class SkeletonWriter:
    """Writes one file's skeleton from its SSAT node and the tree overview."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("skeleton"))
    role: str = "skeleton"

    async def write(self, gateway: ModelGateway, ssat: SSAT, path: str, *, iteration: int,
                    previous: str | None = None, feedback: str = "", memory: str = "", guidance: str = "",
                    starter: str | None = None) -> str:
        """`starter`: the task's starter file at `path` (a stub to start from), if it gives one."""
        if not needs_writing(ssat, path):
            return starter or ""  # the tree leaves the file empty: its starter file as given, no model call
        revision = ""
        if iteration > 1:
            revision = (section("Your previous skeleton of this file", f"```python\n{previous}```" if previous
                                else "(none)")
                        + section("Reviewer feedback to address", feedback)
                        + section("Relevant earlier revisions", memory))
        messages = self.prompt.messages(overview=render_tree(ssat), path=path, file_spec=render_file(ssat, path),
                                        starter=starter_file_section(starter), revision=revision,
                                        guidance=guidance_section(guidance))
        reply = await gateway.ask_reply(self.model, messages, role=self.role, stage="skeleton", target=path,
                                        iteration=iteration)
        return code_from_reply(reply, path)
