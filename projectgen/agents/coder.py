"""The coder: fills one file from its skeleton, and repairs files the code judge names."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from projectgen.agents.base import ModelGateway, guidance_section, section
from projectgen.agents.skeleton import code_from_reply, needs_writing
from projectgen.config import EditFormat, FeedbackSuite
from projectgen.repository.edits import EditOutcome, apply_edits
from projectgen.prompts import Prompt, load_prompt
from projectgen.prompts.suite_words import suite_words
from projectgen.ssat import SSAT, render_file, render_stub, render_tree, ssat_from_repository

FORMAT_INSTRUCTIONS: dict[str, str] = {
    "whole": (
        "Answer with the complete new file: its path on one line, then one fenced ```python block "
        "holding the whole file."
    ),
    "search_replace": (
        "Answer with SEARCH/REPLACE blocks: the file path on one line, then a fenced block with\n"
        "<<<<<<< SEARCH\n(the exact current lines)\n=======\n(the new lines)\n>>>>>>> REPLACE\n"
        "The SEARCH part must match the current file exactly, including indentation. Use several blocks "
        "for several changes."
    ),
}


def interface_of(path: str, code: str) -> str:
    """Signatures of a filled file (its stub), so dependants see what really exists; the code if it
    does not parse."""
    try:
        return render_stub(ssat_from_repository({path: code}, "interface").file(path))
    except (KeyError, ValueError):
        return code


OVERVIEW_CHARS = 4000
"""The fill prompt shows the whole tree up to this size (about 1,000 tokens); past it, a bounded view."""
NEIGHBOURS = 6
"""In the bounded view, at most this many other files in full: the file's dependencies, then its users."""
OTHER_PATHS_CHARS = 2000
"""In the bounded view, at most this much of the remaining files' paths."""


def overview_for(ssat: SSAT, path: str) -> str:
    """The repository overview in the prompt that fills `path`.

    The whole tree while it is small. In a larger project the whole tree would make every
    prompt grow with the project, so the view is bounded: full tree lines for the file and
    up to `NEIGHBOURS` files next to it (what it depends on, then what uses it), the other
    files by path only, up to `OTHER_PATHS_CHARS` (then a count of the rest). The interfaces
    of what it imports are in the prompt in full anyway."""
    whole = render_tree(ssat)
    if len(whole) <= OVERVIEW_CHARS or not _in_tree(ssat, path):
        return whole
    node = ssat.file(path)
    users = [f.path for f in ssat.files() if node.path in f.dependencies]
    near = {node.path, *list(dict.fromkeys([*sorted(node.dependencies), *users]))[:NEIGHBOURS]}
    listed, budget = set(near), OTHER_PATHS_CHARS
    for other in ssat.files():
        if other.path not in near and budget >= len(other.path) + 1:
            listed.add(other.path)
            budget -= len(other.path) + 1
    bare = {"description": "", "dependencies": (), "globals": (), "classes": (), "functions": ()}
    view = ssat.model_copy(update={"file_nodes": tuple(
        f if f.path in near else f.model_copy(update=bare) for f in ssat.file_nodes if f.path in listed)})
    unlisted = len(ssat.file_nodes) - len(listed)
    return render_tree(view) + (f"\n({unlisted} more files not listed)" if unlisted else "")


def _in_tree(ssat: SSAT, path: str) -> bool:
    try:
        ssat.file(path)
    except KeyError:
        return False
    return True


@dataclass
class Coder:
    """Implements files. `edit_format` is the repair answer format ("whole" or "search_replace"); `suite` is
    the code judge's feedback suite (`Settings.feedback_suite`), named in the repair prompt above its errors."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("coder"))
    repair_prompt: Prompt = field(default_factory=lambda: load_prompt("repair"))
    role: str = "coder"
    suite: FeedbackSuite = "check"

    async def fill(self, gateway: ModelGateway, ssat: SSAT | None, path: str, skeleton: str, *,
                   dependencies: Mapping[str, str], iteration: int = 1, guidance: str = "") -> str:
        """The implemented file; `dependencies` maps each file it uses to that file's interface.

        A file with an empty skeleton that the tree leaves empty (a bare `__init__.py`) stays
        empty without a model call."""
        if not skeleton.strip() and (ssat is None or not _in_tree(ssat, path) or not needs_writing(ssat, path)):
            return skeleton
        deps = "\n\n".join(f"## {p}\n```python\n{code}```" for p, code in sorted(dependencies.items())) or "(none)"
        spec = render_file(ssat, path) if ssat is not None and _in_tree(ssat, path) else "(not in the tree)"
        messages = self.prompt.messages(overview=overview_for(ssat, path) if ssat is not None else "(no tree)",
                                        path=path, dependencies=deps, file_spec=spec,
                                        skeleton=skeleton.rstrip("\n"), guidance=guidance_section(guidance))
        reply = await gateway.ask_reply(self.model, messages, role=self.role, stage="code", target=path,
                                        iteration=iteration)
        return code_from_reply(reply, path)

    async def repair(self, gateway: ModelGateway, path: str, content: str, *, suggestion: str, error_log: str,
                     memory: str = "", iteration: int, edit_format: EditFormat = "whole",
                     guidance: str = "") -> EditOutcome:
        """Ask for an edit of `path` only; an edit that does not apply is in the outcome's `failed`."""
        messages = self.repair_prompt.messages(
            format_instructions=FORMAT_INSTRUCTIONS[edit_format], error_log=error_log or "(no log)",
            path=path, suggestion=suggestion or "(no specific suggestion)", content=content.rstrip("\n"),
            memory=section("Relevant earlier revisions of this file", memory), guidance=guidance_section(guidance),
            **suite_words(self.suite).values())
        reply = await gateway.ask(self.model, messages, role=self.role, stage="code", target=path,
                                  iteration=iteration)
        return apply_edits({path: content}, reply, edit_format, allowed_paths=[path])
