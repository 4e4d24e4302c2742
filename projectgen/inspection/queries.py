"""Queries on a loaded run: the timeline of one attempt or stage, recorded diffs, calls, attempt numbers,
and the prompt of one call.

`diffs(run, attempt=None, stage=None)` returns the recorded diffs between iterations:
file diffs (skeleton and repository) and architecture-tree diffs, as written by
`projectgen.runs.trace.TraceWriter`. `call_prompt(run, n)` returns call n's messages from the run's
prompt store (``prompts.jsonl``) and its reply from the call cache (``calls.jsonl``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from projectgen.errors import ProjectGenError
from projectgen.inspection.attribution import effective_attempt
from projectgen.inspection.views import DiffEntry, RunView, TimelineRow
from projectgen.llm import CallCache, CallRecord, read_prompts



def timeline(run: RunView, attempt: int | None = None, stage: str | None = None) -> list[TimelineRow]:
    """The rows of one attempt and/or stage (run markers kept when no stage is asked for).

    ``stage="knowledge"`` selects the nodes that gave knowledge to an attempt or extracted it.
    """
    rows = []
    for row in run.rows:
        if attempt is not None and row.attempt != attempt and not (stage is None and row.event != "node"
                                                                    and row.event != "stage_end"):
            continue
        if stage == "knowledge":  # no graph stage: the nodes that retrieved or extracted knowledge
            if "knowledge_used" not in row.data and not any(c.stage == "knowledge" for c in row.calls):
                continue
        elif stage is not None and row.stage != stage:
            continue
        rows.append(row)
    return rows


def diffs(run: RunView, attempt: int | None = None, stage: str | None = None) -> list[DiffEntry]:
    """The recorded diffs between iterations (files and the architecture tree), in trace order."""
    out: list[DiffEntry] = []
    for row in run.rows:
        if row.event != "node":
            continue
        if (attempt is not None and row.attempt != attempt) or (stage is not None and row.stage != stage):
            continue
        ssat = row.data.get("ssat")
        if isinstance(ssat, Mapping) and ssat.get("diff"):
            out.append(DiffEntry(row.attempt, row.stage, row.node, row.iteration, "ssat", "architecture tree",
                                 str(ssat["diff"]), row.offset_s))
        for kind in ("skeleton", "repository"):
            for change in row.data.get(kind) or []:
                if isinstance(change, Mapping) and change.get("diff"):
                    out.append(DiffEntry(row.attempt, row.stage, row.node, row.iteration, kind,
                                         str(change.get("path")), str(change["diff"]), row.offset_s))
    return out


def attempt_numbers(run: RunView) -> list[int]:
    """The numbered attempts the run has (in its trace or its attempt records)."""
    return sorted({r.attempt for r in run.rows if r.attempt is not None} | {a.attempt for a in run.attempts
                                                                            if a.attempt is not None})


def filter_calls(run: RunView, attempt: int | None = None, stage: str | None = None) -> list[CallRecord]:
    """The model calls of one attempt and/or stage, oldest first."""
    return [c for c in run.calls if (attempt is None or effective_attempt(run, c) == attempt)
            and (stage is None or c.stage == stage)]


@dataclass
class CallPrompt:
    """What call `number` (1-based, in the order of `RunView.calls`) was asked and answered."""

    number: int
    call: CallRecord
    messages: list[dict[str, Any]] | None
    """The exact messages the model received; None when the run kept no prompt for the call."""
    reply: str | None
    """The reply as the agents saw it (from the call cache); None when not kept (a failed call, a run
    without a cache)."""


def call_number(run: RunView, call: CallRecord) -> int:
    """The number `call_prompt` knows `call` by (its place among the run's calls, from 1)."""
    return next(i for i, c in enumerate(run.calls, 1) if c is call)


def call_prompt(run: RunView, number: int) -> CallPrompt:
    """Call `number`'s prompt and reply; a one-line `ProjectGenError` when the run has no such call."""
    if not 1 <= number <= len(run.calls):
        have = f"calls 1-{len(run.calls)}" if run.calls else "no recorded calls"
        raise ProjectGenError(f"{run.path}: no call {number} in this run (it has {have}; see trace --calls)")
    call = run.calls[number - 1]
    messages = read_prompts(run.folder.prompts, {call.prompt_id}).get(call.prompt_id or "") \
        if call.prompt_id else None
    entry = CallCache(run.folder.calls).get(call.call_id) if call.call_id else None
    reply = entry.get("content") if entry else None
    return CallPrompt(number=number, call=call, messages=messages,
                      reply=reply if isinstance(reply, str) or reply is None else str(reply))
