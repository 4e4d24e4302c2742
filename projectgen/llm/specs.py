"""The model spec strings that are not providers' models: a replay script, or a task's reference.

Kept apart and light (nothing is imported), so the CLI can read specs at start-up.
"""
from __future__ import annotations

from pathlib import Path

SCRIPTED_PREFIX = "scripted:"
"""``scripted:PATH`` replays a script file (`projectgen.llm.ScriptedChatModel`)."""

REFERENCE_SPEC = "reference"
"""``--model reference``: each task's reference replayed (`projectgen.oracles.reference_replay.reference_model`);
run.json records it, so a resume rebuilds it."""


def absolute_script(spec: str) -> str:
    """A ``scripted:PATH`` spec with its path made absolute, so run.json resumes from any folder; any other
    spec (and ``scripted:`` without a path, which the factory refuses) as it is."""
    path = spec[len(SCRIPTED_PREFIX):] if spec.startswith(SCRIPTED_PREFIX) else ""
    if not path.strip():
        return spec
    return SCRIPTED_PREFIX + str(Path(path).expanduser().resolve())
