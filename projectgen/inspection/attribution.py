"""Which node made each model call, and which attempt a call belongs to.

Model calls are attributed to nodes in two passes. First by key: a node that wrote
files, a tree, or verdicts claims the calls of the matching role with the same attempt,
stage, iteration and (for file writers) target; the knowledge extraction of attempt N
(``stage="knowledge"``, ``iteration=N``) goes to that attempt's ``learn`` node. Calls
still unclaimed go to the first node event at or after the call started (same attempt
when both know it), which is right for sequential nodes and approximate inside a
parallel fan-out; such calls are counted in ``calls_by_time``.

A node's ``duration_s`` then runs from the start of its first model call to its event
(a node without calls keeps its time since the previous event).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from projectgen.inspection.timestamps import as_utc
from projectgen.inspection.views import RunView, TimelineRow
from projectgen.llm import CallRecord

# The file-writing role of each stage (files written in another stage, e.g. the skeleton
# handed to the code stage, are not a model's work there).
_FILE_ROLES = {("skeleton", "skeleton"): "skeleton", ("repository", "code"): "coder"}

CallKey = tuple[Any, ...]
"""(role, stage, attempt, iteration, target or None)"""


def attribute_calls(view: RunView) -> None:
    """Give each of the view's calls to a row (by key, else by time), or list it as unattributed."""
    index: dict[CallKey, list[TimelineRow]] = {}
    for row in view.rows:
        for key in _row_keys(row):
            index.setdefault(key, [])
            if row not in index[key]:
                index[key].append(row)
    node_rows = [r for r in view.rows if r.event == "node" and r.time is not None]
    for call in view.calls:
        when = as_utc(call.timestamp)
        candidates = (index.get((call.role, call.stage, call.attempt, call.iteration, call.target))
                      or index.get((call.role, call.stage, call.attempt, call.iteration, None)) or [])
        row = next((r for r in candidates if r.time is None or r.time >= when), candidates[-1] if candidates else None)
        if row is None:
            row = next((r for r in node_rows if r.time >= when
                        and (call.attempt is None or r.attempt is None or r.attempt == call.attempt)), None)
            if row is not None:
                row.calls_by_time += 1
                view.call_by_time.add(id(call))
        if row is None:
            view.unattributed.append(call)
            continue
        row.calls.append(call)
        view.call_rows[id(call)] = row.index
    for row in view.rows:
        if row.calls and row.time is not None and row.event == "node":
            first = min(as_utc(c.timestamp) for c in row.calls)
            row.duration_s = round(max(0.0, (row.time - first).total_seconds()), 3)


def _row_keys(row: TimelineRow) -> list[CallKey]:
    """The keys of the calls this node made."""
    if row.event != "node":
        return []
    keys: list[CallKey] = []
    data = row.data
    for verdict in data.get("verdicts") or []:
        if isinstance(verdict, Mapping) and verdict.get("judge"):
            keys.append((verdict["judge"], verdict.get("stage") or row.stage, row.attempt,
                         verdict.get("iteration", row.iteration), None))
    if isinstance(data.get("ssat"), Mapping) and row.stage == "architecture":
        keys.append(("architect", "architecture", row.attempt, row.iteration, None))
    for kind, stage in _FILE_ROLES:
        if row.stage != stage:
            continue
        for change in data.get(kind) or []:
            if isinstance(change, Mapping) and not change.get("unchanged"):
                keys.append((_FILE_ROLES[(kind, stage)], stage, row.attempt, row.iteration, change.get("path")))
    for edit in data.get("edits") or []:
        if isinstance(edit, Mapping) and row.stage:
            keys.append(("coder", row.stage, row.attempt, edit.get("iteration", row.iteration), edit.get("path")))
    if row.node == "learn" and row.attempt is not None:
        # knowledge extraction of attempt N: stage "knowledge", iteration N (attempt tag may be absent)
        keys.append(("knowledge", "knowledge", row.attempt, row.attempt, None))
        keys.append(("knowledge", "knowledge", None, row.attempt, None))
    return keys


def effective_attempt(run: RunView, call: CallRecord) -> int | None:
    """The attempt a call belongs to: its tag, else the attempt of the node it was attributed to."""
    if call.attempt is not None:
        return call.attempt
    row = run.call_row(call)
    if row is not None and row.attempt is not None:
        return row.attempt
    return call.iteration if call.stage == "knowledge" and run.kind == "livecoder" else None
