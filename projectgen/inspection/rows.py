"""Trace events as timeline rows: when, which attempt, stage and iteration, scores, and a one-line detail.

`timeline_rows(events)` turns the events of ``events.jsonl`` into `TimelineRow`s (without
model calls: `projectgen.inspection.attribution` adds those). Offsets and provisional
durations come from the events' wall-clock times (``t``), so a resumed run shows its
real gap. `knowledge_rows(rows)` lists the knowledge entries the rows say were given to
each attempt's prompts.
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from projectgen.inspection.timestamps import parse_time
from projectgen.inspection.views import KnowledgeRow, TimelineRow, diff_line_counts
from projectgen.repository.syntax import CUT_OFF, refusal


def timeline_rows(events: list[dict[str, Any]]) -> list[TimelineRow]:
    """One row per trace event, in trace order, with provisional durations."""
    rows: list[TimelineRow] = []
    start = next((t for t in (parse_time(e.get("t")) for e in events) if t is not None), None)
    current: dict[tuple[int | None, str], int] = {}  # (attempt, stage) -> iteration in progress
    known_attempts = {e.get("attempt") for e in events
                      if e.get("event") == "node" and e.get("stage") and isinstance(e.get("attempt"), int)}
    for index, event in enumerate(events):
        kind = str(event.get("event") or "?")
        data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
        moment = parse_time(event.get("t"))
        offset = (moment - start).total_seconds() if moment and start else event.get("elapsed_s")
        attempt = event.get("attempt") if isinstance(event.get("attempt"), int) else None
        stage = event.get("stage") if isinstance(event.get("stage"), str) else None
        node = str(event.get("node") or kind)
        if (kind == "node" and node in ("plan_attempt", "finish") and attempt is not None and known_attempts
                and attempt not in known_attempts and attempt > max(a for a in known_attempts if a is not None)):
            attempt = None  # the trace counts one attempt past the last for the closing nodes
        row = TimelineRow(index=index, event=kind, node=node, attempt=attempt, stage=stage, time=moment,
                          offset_s=round(offset, 3) if isinstance(offset, (int, float)) else None, data=dict(data))
        iterations = data.get("iterations") if isinstance(data.get("iterations"), Mapping) else {}
        if stage and isinstance(iterations.get(stage), int):
            current[(attempt, stage)] = iterations[stage]
        _read_verdicts(row, data, current.get((attempt, stage)) if stage else None)
        row.detail = event_detail(kind, node, data, event)
        rows.append(row)
    _durations(rows)
    return rows


def _read_verdicts(row: TimelineRow, data: Mapping[str, Any], iteration_in_progress: int | None) -> None:
    """Set the row's iteration, judge scores, acceptance, check result and feedback from its event data."""
    verdicts = [v for v in data.get("verdicts") or [] if isinstance(v, Mapping)]
    edits = [e for e in data.get("edits") or [] if isinstance(e, Mapping)]
    if verdicts and isinstance(verdicts[-1].get("iteration"), int):
        row.iteration = verdicts[-1]["iteration"]
    elif edits and isinstance(edits[-1].get("iteration"), int):
        row.iteration = edits[-1]["iteration"]
    elif row.stage:
        row.iteration = iteration_in_progress
    for verdict in verdicts:
        if isinstance(verdict.get("score"), (int, float)):
            row.scores.append(float(verdict["score"]))
        if verdict.get("accepted") is not None:
            row.accepted = bool(verdict["accepted"])
        check = verdict.get("check")
        if isinstance(check, Mapping) and isinstance(check.get("total"), int):
            row.check = (int(check.get("passed") or 0), int(check["total"]))
        if verdict.get("feedback"):
            row.feedback = str(verdict["feedback"])


def _durations(rows: list[TimelineRow]) -> None:
    """Provisional node durations (since the previous event); attribution refines them with calls."""
    previous: datetime | None = None
    first_of_stage: dict[tuple[int | None, str], datetime] = {}
    for row in rows:
        if row.time is None:
            continue
        if row.event == "node" and row.stage and previous is not None:
            first_of_stage.setdefault((row.attempt, row.stage), previous)
        if row.event == "stage_end" and row.stage:
            begin = first_of_stage.get((row.attempt, row.stage))
            row.duration_s = round((row.time - begin).total_seconds(), 3) if begin else None
        elif row.event == "node" and previous is not None:
            row.duration_s = round((row.time - previous).total_seconds(), 3)
        if row.event in ("run_start", "run_resumed"):
            first_of_stage.clear()
        previous = row.time


def knowledge_rows(rows: list[TimelineRow]) -> list[KnowledgeRow]:
    """The knowledge entries given to attempts' prompts, as recorded by the nodes that retrieved them."""
    out: list[KnowledgeRow] = []
    for row in rows:
        used = row.data.get("knowledge_used")
        if not isinstance(used, Mapping):
            continue
        for kind, entries in used.items():
            for entry in entries or []:
                if isinstance(entry, Mapping):
                    out.append(KnowledgeRow(attempt=row.attempt, kind=str(kind), source_attempt=entry.get("attempt"),
                                            score=entry.get("score"), similarity=entry.get("similarity"),
                                            text=str(entry.get("text") or "")))
                elif isinstance(entry, str):
                    out.append(KnowledgeRow(row.attempt, str(kind), None, None, None, entry))
    return out


# --------------------------------------------------------------------------- the one-line detail


def event_detail(kind: str, node: str, data: Mapping[str, Any], event: Mapping[str, Any]) -> str:
    """What an event did, in one line: files and tree changed, edits, scores, choices, feedback."""
    if kind == "run_end":
        return _run_end_detail(event)
    if kind == "stage_end":
        iterations = data.get("iterations") or {}
        return f"{iterations[node]} iteration(s)" if node in iterations else ""
    parts: list[str] = []
    if kind == "review_requested":
        return f"awaiting review: {event.get('stage')} iteration {event.get('iteration')}"
    if kind == "run_start" or kind == "run_resumed":
        parts.append(" ".join(f"{k}={event[k]}" for k in ("task_id", "run_id", "note") if event.get(k)))
        if event.get("review"):
            parts.append(f"review of the {event.get('stage')} (iteration {event.get('iteration')}): {event['review']}")
    parts += _change_phrases(node, data)
    parts += _outcome_phrases(node, data)
    return "; ".join(p for p in parts if p)


def _run_end_detail(event: Mapping[str, Any]) -> str:
    parts = []
    final = event.get("final")
    if isinstance(final, Mapping):
        parts.append(_final_phrase(final))
    if event.get("stopped"):
        parts.append(f"stopped: {event['stopped']}")
    return "; ".join(p for p in parts if p)


def _change_phrases(node: str, data: Mapping[str, Any]) -> list[str]:
    """What a node changed: the architecture tree, files, edits, the layer it works on."""
    parts = []
    ssat = data.get("ssat")
    if isinstance(ssat, Mapping):
        diff = ssat.get("diff")
        changed = "" if not diff else (", no changes" if str(diff).strip() == "no changes" else ", changed")
        count = ssat.get("files", "?")
        parts.append(f"tree: {count} file{'' if count == 1 else 's'}{changed}")
    for key in ("skeleton", "repository"):
        changes = [c for c in data.get(key) or [] if isinstance(c, Mapping)]
        if changes and node not in ("plan_code",):
            phrase = _file_phrase(changes)
            if phrase:
                parts.append(phrase if key == "repository" or node != "finish" else f"{key}: {phrase}")
    for edit in data.get("edits") or []:
        if isinstance(edit, Mapping):
            state = "ok" if edit.get("well_formed") and not edit.get("failed") else "did not apply"
            parts.append(f"edit {edit.get('path')} ({edit.get('format')}, {state})")
    for refused in data.get("rejected") or []:
        if isinstance(refused, Mapping):
            error = str(refused.get("error") or "").splitlines()
            why = refusal(error[0]) if error else "not valid Python"
            detail = f" ({error[0]})" if error and why != CUT_OFF else ""
            parts.append(f"not accepted, {why}: {refused.get('path')}{detail}")
    if data.get("layer") is not None and node in ("next_layer", "plan_code"):
        parts.append(f"layer {data['layer']}")
    return parts


def _file_phrase(changes: list[Mapping[str, Any]]) -> str:
    written = [c for c in changes if not c.get("unchanged")]
    if not written:
        return f"{len(changes)} file(s) unchanged" if changes else ""
    if len(written) > 2:
        changed = sum(1 for c in written if c.get("diff"))
        return f"{len(written)} files" + (f" ({changed} changed)" if changed else "")
    parts = []
    for change in written:
        note = f"{change.get('lines', '?')} lines"
        diff = change.get("diff")
        if diff:
            plus, minus = diff_line_counts(str(diff))
            note += f", +{plus} -{minus}"
        parts.append(f"{change.get('path')} ({note})")
    return ", ".join(parts)


def _outcome_phrases(node: str, data: Mapping[str, Any]) -> list[str]:
    """What a node found or decided: knowledge given, attempt scores, the final choice, errors, verdicts."""
    parts = []
    used = data.get("knowledge_used")
    if isinstance(used, Mapping):
        counts = {k: len(v) for k, v in used.items() if isinstance(v, list)}
        parts.append("knowledge given: " + (", ".join(f"{n} {k}" for k, n in counts.items() if n) or "none"))
    if "score" in data and node == "score_attempt":
        unit = data.get("unit") if isinstance(data.get("unit"), Mapping) else None
        text = f"attempt score {_num(data['score'])}"
        if unit and unit.get("total") is not None:
            text += f", unit tests {unit.get('passed')}/{unit.get('total')} (reported only)"
        parts.append(text)
    parts += [_attempt_phrase(record) for record in data.get("attempts") or [] if isinstance(record, Mapping)]
    if isinstance(data.get("final"), Mapping):
        parts.append(_final_phrase(data["final"]))
    errors = data.get("generation_errors")
    if isinstance(errors, Mapping) and errors:
        parts.append("errors: " + "; ".join(f"{k}: {str(v).splitlines()[0] if v else ''}" for k, v in errors.items()))
    if data.get("stopped"):
        parts.append(f"stopped: {data['stopped']}")
    for review in data.get("reviews") or []:
        if isinstance(review, Mapping):
            parts.append(_review_phrase(review))
    for verdict in data.get("verdicts") or []:
        if isinstance(verdict, Mapping) and verdict.get("files"):
            parts.append("to fix: " + ", ".join(map(str, verdict["files"])))
        if isinstance(verdict, Mapping) and verdict.get("feedback"):
            text = " ".join(str(verdict["feedback"]).split())
            parts.append("feedback: " + (text if len(text) <= 160 else text[:159] + "…"))
    return parts


def _review_phrase(review: Mapping[str, Any]) -> str:
    """A person's decision on a stage's output: 'review: reject (split the cli)', 'review: edit (2 files)'."""
    action = str(review.get("action") or "?")
    notes = []
    edited = review.get("edited")
    if isinstance(edited, list) and edited:
        notes.append("the tree" if edited == ["(tree)"] else f"{len(edited)} file(s): {', '.join(map(str, edited))}")
    if review.get("feedback"):
        text = " ".join(str(review["feedback"]).split())
        notes.append(text if len(text) <= 160 else text[:159] + "…")
    return f"review: {action}" + (f" ({'; '.join(notes)})" if notes else "")


def _attempt_phrase(record: Mapping[str, Any]) -> str:
    text = f"attempt {record.get('attempt')}: score {_num(record.get('score'))}"
    if record.get("reused"):
        text += " (reused best)"
    if record.get("best_score") is not None:
        text += f", best {_num(record.get('best_score'))} (attempt {record.get('best_attempt')})"
    if record.get("knowledge_added"):
        text += f", knowledge added: {', '.join(map(str, record['knowledge_added']))}"
    return text


def _final_phrase(final: Mapping[str, Any]) -> str:
    return f"final: {final.get('source', '?')} attempt {final.get('attempt')} (score {_num(final.get('score'))})"


def _num(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
