"""`projectgen trace --json`: the timeline a person reads, as one JSON document a program can read.

The same rows, knowledge entries and calls the tables show, with numbers as numbers and no terminal
layout; run data stays as recorded (a reader escapes it for its own display).
"""
from __future__ import annotations

from typing import Any

from projectgen.inspection.attribution import effective_attempt
from projectgen.inspection.queries import call_number
from projectgen.inspection.views import KnowledgeRow, RunView, TimelineRow
from projectgen.llm import CallRecord

FORMAT_VERSION = 1


def run_facts(run: RunView) -> dict[str, Any]:
    """The header: what the run is, how it ended, what it used."""
    totals, cost = run.totals, run.cost
    return {"task_id": run.task_id, "run_id": run.run_id, "kind": run.kind_label, "method": run.method,
            "status": run.status, "duration_s": run.duration_s, "oracle": run.oracle, "selection": run.selection,
            "feedback_suite": run.feedback_suite,
            "final": run.final, "stopped": run.stopped, "calls": totals.calls, "input_tokens": totals.input_tokens,
            "output_tokens": totals.output_tokens, "tokens_estimated": bool(totals.estimated_calls),
            "cost_usd": cost.value, "priced_cost_usd": cost.usd, "unpriced_calls": cost.unpriced_calls,
            "models": sorted({c.model for c in run.calls}),
            "integrity_flags": [flag.model_dump(mode="json") for flag in run.integrity_flags()]}


def row_record(row: TimelineRow) -> dict[str, Any]:
    """One timeline row: the event, where it was, what the judges said and what its calls used."""
    return {"index": row.index, "event": row.event, "node": row.node, "attempt": row.attempt, "stage": row.stage,
            "iteration": row.iteration, "t_s": row.offset_s, "duration_s": row.duration_s,
            "judge_scores": row.scores, "accepted": row.accepted,
            "check": {"passed": row.check[0], "total": row.check[1]} if row.check else None,
            "calls": len(row.calls), "calls_by_time": row.calls_by_time, "input_tokens": row.input_tokens,
            "output_tokens": row.output_tokens, "tokens_estimated": row.tokens_estimated,
            "cost_usd": row.cost.value if row.calls else None, "detail": row.detail, "feedback": row.feedback}


def knowledge_record(entry: KnowledgeRow) -> dict[str, Any]:
    return {"attempt": entry.attempt, "kind": entry.kind, "source_attempt": entry.source_attempt,
            "score": entry.score, "similarity": entry.similarity, "text": entry.text}


def call_record(run: RunView, call: CallRecord) -> dict[str, Any]:
    """One model call with the number `trace --call N` knows it by and the row it was attributed to."""
    row = run.call_row(call)
    return {"number": call_number(run, call), "time": call.timestamp.isoformat(),
            "attempt": effective_attempt(run, call), "stage": call.stage, "role": call.role, "target": call.target,
            "iteration": call.iteration, "model": call.model, "input_tokens": call.input_tokens,
            "output_tokens": call.output_tokens, "tokens_estimated": call.tokens_estimated,
            "latency_s": call.latency_s, "error": call.error, "cost_usd": run.prices.cost_of(call),
            "row": row.index if row is not None else None, "matched_by_time": id(call) in run.call_by_time}


def trace_document(run: RunView, rows: list[TimelineRow], knowledge: list[KnowledgeRow],
                   calls: list[CallRecord] | None) -> dict[str, Any]:
    """What `trace --json` prints: the run's facts, its (filtered) rows and knowledge, and calls when asked."""
    document: dict[str, Any] = {"format_version": FORMAT_VERSION, "run": run_facts(run),
                                "rows": [row_record(row) for row in rows],
                                "knowledge": [knowledge_record(entry) for entry in knowledge],
                                "unattributed_calls": len(run.unattributed)}
    if calls is not None:
        document["calls"] = [call_record(run, call) for call in calls]
    return document
