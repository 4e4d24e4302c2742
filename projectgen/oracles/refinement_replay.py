"""Replay scripts for multi-turn refinement (`projectgen refine`): the reference oracle and per-strategy replies.

A refinement call is labelled role ``refiner``, target = the task id, iteration = the turn, so an
ordinary `Script` answers it (keyed by role and target, never by call order). Two helpers:

- `reference_turn_script(task_id, references)`: every turn answered with that turn's reference
  file, the oracle behind ``refine --model reference`` (labelled `REFERENCE_LABEL`).
- `specialise_script(script, strategy, context)`: a recorded script may hold replies that differ
  by prompting strategy and context setting, because a model answers differently when it is shown
  different prompts. Such an entry names its target ``TASK@STRATEGY`` or ``TASK@STRATEGY/CONTEXT``
  (e.g. ``kvstore-cli@ce/basic``); the script one (strategy, context) run replays keeps, for each
  call key, its most specific entry (strategy and context, then strategy, then none) and renames
  its target back to ``TASK``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from projectgen.errors import ProjectGenError
from projectgen.llm.naming import REFERENCE_LABEL
from projectgen.llm.roles import REFINER_ROLE
from projectgen.llm.scripted import Script, ScriptEntry, load_script
from projectgen.repository.edits import fenced_code



def reference_turn_script(task_id: str, references: Sequence[str], *, label: str = REFERENCE_LABEL,
                          language: str = "python") -> Script:
    """A script answering turn k of `task_id` with `references[k - 1]` (the target file, or function, after turn k:
    `MultiTurnTask.answer`), in a block tagged with the task's `language`."""
    return load_script({"label": label, "responses": [
        {"role": REFINER_ROLE, "target": task_id, "iteration": number, "content": fenced_code(code, language)}
        for number, code in enumerate(references, start=1)]})


def split_target(target: str | None) -> tuple[str | None, str | None, str | None]:
    """``TASK@STRATEGY/CONTEXT`` -> (task, strategy, context); the parts not given are None."""
    if target is None or "@" not in target:
        return target, None, None
    task, _, qualifier = target.partition("@")
    strategy, _, context = qualifier.partition("/")
    if not task or not strategy:
        raise ProjectGenError(f"script target {target!r}: expected TASK@STRATEGY or TASK@STRATEGY/CONTEXT")
    return task, strategy, context or None


def specialise_script(script: Script, strategy: str, context: str) -> Script:
    """The replies one (strategy, context) run replays: per call key the most specific entry, targets plain."""
    chosen: dict[tuple[Any, ...], tuple[int, ScriptEntry]] = {}
    for entry in script.responses:
        task, wanted_strategy, wanted_context = split_target(entry.target)
        if wanted_strategy is not None and wanted_strategy != strategy:
            continue
        if wanted_context is not None and wanted_context != context:
            continue
        rank = (wanted_strategy is not None) + (wanted_context is not None)
        key = (entry.role, task, entry.iteration, entry.attempt)
        if key not in chosen or rank > chosen[key][0]:
            chosen[key] = (rank, entry.model_copy(update={"target": task}))
    label = f"{script.label or 'replay'} ({strategy}, {context})"
    return Script(label=label, fallback=script.fallback, delay_s=script.delay_s,
                  responses=tuple(entry for _, entry in chosen.values()))
