"""Queries on a loaded run: the timeline of one attempt or stage, recorded diffs, calls, attempt numbers.

`diffs(run, attempt=None, stage=None)` returns the recorded diffs between iterations:
file diffs (skeleton and repository) and architecture-tree diffs, as written by
`projectgen.runs.trace.TraceWriter`.
"""
from __future__ import annotations

from collections.abc import Mapping

from projectgen.inspection.attribution import effective_attempt
from projectgen.inspection.views import DiffEntry, RunView, TimelineRow
from projectgen.llm import CallRecord


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
