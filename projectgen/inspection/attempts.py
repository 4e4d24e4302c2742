"""One `AttemptView` per attempt: score, best so far, knowledge, tokens, cost and time.

A LiveCoder run's attempt records come from its summary, or, for a run still going (or
killed), from the records its ``learn`` events carry; their tokens and cost from the
calls of each attempt. A plain ProjectGen pipeline is one attempt (number None) scored by
its hidden unit tests.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from projectgen.inspection.attribution import effective_attempt
from projectgen.inspection.views import AttemptView, RunView
from projectgen.llm import CallRecord, UsageTotals
from projectgen.llm.pricing import CostTotal


def attempt_views(view: RunView) -> list[AttemptView]:
    """The attempts of a run, in order (needs the view's rows, knowledge and call attribution)."""
    if view.kind == "projectgen":
        return [_pipeline_attempt(view)]
    records = _attempt_records(view)
    calls_by_attempt: dict[int | None, list[CallRecord]] = {}
    for call in view.calls:
        calls_by_attempt.setdefault(effective_attempt(view, call), []).append(call)
    spans: dict[int, list[float]] = {}
    for row in view.rows:
        if row.attempt is not None and row.offset_s is not None and row.event == "node":
            spans.setdefault(row.attempt, []).append(row.offset_s)
    numbers = sorted({n for n in records if isinstance(n, int)} | {n for n in calls_by_attempt if isinstance(n, int)})
    used_counts: dict[int | None, int] = {}
    for entry in view.knowledge:
        used_counts[entry.attempt] = used_counts.get(entry.attempt, 0) + 1
    out = []
    for number in numbers:
        record = records.get(number, {})
        calls = calls_by_attempt.get(number, [])
        used = record.get("knowledge_used")
        used_count = (sum(len(v) for v in used.values() if isinstance(v, list)) if isinstance(used, Mapping)
                      else used_counts.get(number, 0))
        span = spans.get(number)
        out.append(AttemptView(
            attempt=number, score=record.get("score"), best_score=record.get("best_score"),
            best_attempt=record.get("best_attempt"), reused=bool(record.get("reused")), improved=record.get("improved"),
            check=record.get("check"), unit=record.get("unit"), stages=dict(record.get("stages") or {}),
            knowledge_added=list(record.get("knowledge_added") or []), knowledge_used=used_count,
            stopped=record.get("stopped"), tokens=UsageTotals.of(calls), cost=CostTotal.of(calls, view.prices),
            duration_s=round(max(span) - min(span), 3) if span and len(span) > 1 else None))
    return out


def _attempt_records(view: RunView) -> dict[int | None, dict[str, Any]]:
    """Attempt number -> its record: from the run's record, else merged from the ``learn`` events."""
    records: dict[int | None, dict[str, Any]] = {}
    if view.log.kind == "livecoder" and view.record is not None:
        for record in view.record.get("attempts") or []:
            if isinstance(record, Mapping):
                records[record.get("attempt")] = dict(record)
    else:
        for row in view.rows:  # a run still going (or killed): the learn events carry the records
            for record in row.data.get("attempts") or []:
                if isinstance(record, Mapping):
                    records[record.get("attempt")] = {**records.get(record.get("attempt"), {}), **record}
    return records


def _pipeline_attempt(view: RunView) -> AttemptView:
    """A plain ProjectGen run as one attempt: unit-test pass rate, stages and last check from its summary."""
    summary = view.record or {}
    stages = summary.get("stages") or {}
    unit = summary.get("unit_tests")
    unit = dict(unit) if isinstance(unit, Mapping) else None
    code_checks = (stages.get("code") or {}).get("checks") if isinstance(stages.get("code"), Mapping) else None
    last_check = dict(code_checks[-1]) if code_checks and isinstance(code_checks[-1], Mapping) else None
    return AttemptView(attempt=None, score=unit.get("pass_rate") if unit else None, stages=dict(stages), unit=unit,
                       check=last_check, stopped=summary.get("stopped"), tokens=UsageTotals.of(view.calls),
                       cost=CostTotal.of(view.calls, view.prices), duration_s=view.duration_s)
