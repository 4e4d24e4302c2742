"""LiveRepoReflection's coder: writes an exercise's solution files, then repairs them from test errors.

Try 1 shows the instructions, the solution files as they stand (stubs, or "does not exist yet")
and the file list; a repair shows the current files and the cleaned test output (and what of the
last reply could not be applied). The model answers in the chosen edit format (`EDIT_FORMATS`):
``whole`` (each file's path, then the whole file in a fenced block) or ``patch`` (the paper's
Figure 4 blocks: ``<<<<<<< ORIGINAL`` / ``=======`` / ``>>>>>>> UPDATED`` under the file's name;
SEARCH/REPLACE markers are accepted too). Only the solution files may be written: an edit of
any other file (the tests, say) is a failed edit, and the reply is not well formed.

Every call goes through the gateway (the one door) labelled role ``reflection``, stage
``reflection_<format>``, target the exercise id and iteration the try, so a scripted replay
answers by task, format and try, and a resumed run replays a completed call.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from projectgen.agents.base import ModelGateway
from projectgen.datasets.exercism import Exercise
from projectgen.llm.roles import REFLECTION_ROLE
from projectgen.prompts import Prompt, load_prompt
from projectgen.repository.edits import EditOutcome, apply_edits

ReflectionFormat = Literal["whole", "patch"]
EDIT_FORMATS: tuple[ReflectionFormat, ...] = ("whole", "patch")
PARSER: dict[str, Any] = {"whole": "whole", "patch": "search_replace"}  # how `apply_edits` reads each format

FORMAT_RULES: dict[str, str] = {
    "whole": """Reply with every file you change in full: the file's path on a line of its own, then a
fenced code block holding the complete new content of that file, for example:

path/to/file.py
```python
<the whole file>
```

Files you do not give stay as they are. Give complete files, never parts of them.""",
    "patch": """Reply with edit blocks. For each change, put the file's path on a line of its own, then a
fenced block with the exact lines to replace and their replacement:

path/to/file.py
```python
<<<<<<< ORIGINAL
<the current lines, copied exactly, indentation included>
=======
<the new lines>
>>>>>>> UPDATED
```

The ORIGINAL lines must match the file exactly and in one place only; give several blocks for
several changes. To create a file, or fill an empty one, leave the ORIGINAL part empty.""",
}


def stage_of(edit_format: str) -> str:
    """The stage label of an edit format's calls (``reflection_whole``, ``reflection_patch``)."""
    return f"reflection_{edit_format}"


FENCE_LANGUAGES = {".py": "python", ".go": "go", ".rs": "rust", ".cpp": "cpp", ".cc": "cpp", ".h": "cpp",
                   ".hpp": "cpp", ".js": "javascript", ".mjs": "javascript", ".java": "java", ".json": "json",
                   ".toml": "toml", ".gradle": "groovy", ".txt": "text", ".mod": "text"}


def fence_language(path: str) -> str:
    """The code fence's language tag for a file (what the suffix says; none when it says nothing known)."""
    suffix = "." + path.rsplit(".", 1)[-1] if "." in path else ""
    return FENCE_LANGUAGES.get(suffix, "")


def show_files(exercise: Exercise, repository: Mapping[str, str]) -> str:
    """The solution files as the prompt shows them: path line, fenced content (or a note)."""
    parts = []
    for path in exercise.solution:
        text = repository.get(path)
        if text is None:
            parts.append(f"{path}\n(this file does not exist yet: create it)\n")
        else:
            fence = "````" if "```" in text else "```"
            body = text if not text or text.endswith("\n") else text + "\n"
            parts.append(f"{path}\n{fence}{fence_language(path)}\n{body}{fence}\n")
    return "\n".join(parts)


@dataclass
class ReflectionCoder:
    """Writes (try 1) and repairs (try 2, 3, ...) an exercise's solution files in one edit format."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("reflection"))
    repair_prompt: Prompt = field(default_factory=lambda: load_prompt("reflection_repair"))
    role: str = REFLECTION_ROLE

    async def write(self, gateway: ModelGateway, exercise: Exercise, repository: Mapping[str, str],
                    edit_format: ReflectionFormat) -> EditOutcome:
        """Try 1: the reply to the instructions and the files, applied to `repository`."""
        messages = self.prompt.messages(format_rules=FORMAT_RULES[edit_format], instructions=exercise.instructions,
                                        language=exercise.language_name,
                                        file_list=", ".join(exercise.solution), test_files=", ".join(exercise.tests),
                                        files=show_files(exercise, repository))
        reply = await gateway.ask(self.model, messages, role=self.role, stage=stage_of(edit_format),
                                  target=exercise.id, iteration=1)
        return apply_edits(repository, reply, PARSER[edit_format], allowed_paths=exercise.solution)

    async def repair(self, gateway: ModelGateway, exercise: Exercise, repository: Mapping[str, str],
                     edit_format: ReflectionFormat, *, test_log: str, edit_feedback: str,
                     attempt: int) -> EditOutcome:
        """Try `attempt` (2 or more): the reply to the current files and the last run's test output."""
        unapplied = f"\n# Your last reply could not be applied in full\n{edit_feedback}\n" if edit_feedback else ""
        messages = self.repair_prompt.messages(
            format_rules=FORMAT_RULES[edit_format], instructions=exercise.instructions, language=exercise.language_name,
            files=show_files(exercise, repository), test_files=", ".join(exercise.tests),
            test_log=test_log or "(no output)", edit_feedback=unapplied, file_list=", ".join(exercise.solution))
        reply = await gateway.ask(self.model, messages, role=self.role, stage=stage_of(edit_format),
                                  target=exercise.id, iteration=attempt)
        return apply_edits(repository, reply, PARSER[edit_format], allowed_paths=exercise.solution)
