"""Read a run folder back as a timeline: what each node did, what it cost, what changed.

`load_run(DIR)` reads a LiveCoder run folder (``run.json``, ``events.jsonl``,
``usage.jsonl``, ``summary.json``) or a plain ProjectGen one (``summary.json`` and
``usage.jsonl``, no trace yet) and gives a `RunView`:

- ``rows``: one `TimelineRow` per trace event (nodes, stage ends, run start/resume/end)
  with its offset from the run's start, attempt, stage, node, iteration, judge scores,
  check-test result, a one-line detail, and the model calls attributed to it with
  their tokens and cost;
- ``knowledge``: the knowledge entries given to each attempt's prompts (`KnowledgeRow`);
- ``attempts``: one `AttemptView` per attempt (score, best so far, tokens, cost);
- ``calls`` and ``unattributed``: every model call, and those no event could take.

Model calls are attributed to nodes in two passes. First by key: a node that wrote
files, a tree, or verdicts claims the calls of the matching role with the same attempt,
stage, iteration and (for file writers) target; the knowledge extraction of attempt N
(``stage="knowledge"``, ``iteration=N``) goes to that attempt's ``learn`` node. Calls
still unclaimed go to the first node event at or after the call started (same attempt
when both know it), which is right for sequential nodes and approximate inside a
parallel fan-out; such calls are counted in ``calls_by_time``.

A node's ``duration_s`` runs from the start of its first model call to its event, or,
for a node without calls, from the previous event. Offsets and durations come from the
events' wall-clock times (``t``), so a resumed run shows its real gap.

`diffs(run, attempt=None, stage=None)` returns the recorded diffs between iterations:
file diffs (skeleton and repository) and architecture-tree diffs, as written by
`projectgen.runs.trace.TraceWriter`.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from projectgen.errors import ProjectGenError
from projectgen.llm import CallRecord, UsageTotals
from projectgen.llm.pricing import CostTotal, PriceTable, is_scripted
from projectgen.runs.trace import STAGES, read_trace
from projectgen.runs import layout

# The file-writing role of each stage (files written in another stage, e.g. the skeleton
# handed to the code stage, are not a model's work there).
_FILE_ROLES = {("skeleton", "skeleton"): "skeleton", ("repository", "code"): "coder"}


# --------------------------------------------------------------------------- data


@dataclass
class TimelineRow:
    """One trace event, with the model calls attributed to it."""

    index: int
    event: str
    node: str
    attempt: int | None = None
    stage: str | None = None
    iteration: int | None = None
    offset_s: float | None = None
    time: datetime | None = None
    duration_s: float | None = None
    scores: list[float] = field(default_factory=list)
    accepted: bool | None = None
    check: tuple[int, int] | None = None
    detail: str = ""
    feedback: str = ""
    calls: list[CallRecord] = field(default_factory=list)
    calls_by_time: int = 0
    cost: CostTotal = field(default_factory=CostTotal)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def input_tokens(self) -> int:
        return sum(c.input_tokens for c in self.calls)

    @property
    def output_tokens(self) -> int:
        return sum(c.output_tokens for c in self.calls)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def tokens_estimated(self) -> bool:
        return any(c.tokens_estimated for c in self.calls)


@dataclass
class KnowledgeRow:
    """A knowledge entry given to an attempt's prompts."""

    attempt: int | None
    kind: str  # "success" | "failure"
    source_attempt: int | None
    score: float | None
    similarity: float | None
    text: str


@dataclass
class DiffEntry:
    """A recorded change between two versions of a file or of the architecture tree."""

    attempt: int | None
    stage: str | None
    node: str
    iteration: int | None
    kind: str  # "skeleton" | "repository" | "ssat"
    path: str
    diff: str
    offset_s: float | None = None

    @property
    def added(self) -> int:
        return sum(1 for line in self.diff.splitlines() if line.startswith("+") and not line.startswith("+++"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.diff.splitlines() if line.startswith("-") and not line.startswith("---"))


@dataclass
class AttemptView:
    """One LiveCoder attempt (or the single run of a ProjectGen pipeline, attempt None)."""

    attempt: int | None
    score: float | None = None
    best_score: float | None = None
    best_attempt: int | None = None
    reused: bool = False
    improved: bool | None = None
    check: dict[str, Any] | None = None
    unit: dict[str, Any] | None = None
    stages: dict[str, Any] = field(default_factory=dict)
    knowledge_added: list[str] = field(default_factory=list)
    knowledge_used: int = 0
    stopped: str | None = None
    tokens: UsageTotals = field(default_factory=UsageTotals)
    cost: CostTotal = field(default_factory=CostTotal)
    duration_s: float | None = None


@dataclass
class RunView:
    """A run folder read back; see the module docstring."""

    path: Path
    kind: str  # "livecoder" | "projectgen"
    manifest: dict[str, Any] | None
    summary: dict[str, Any] | None
    events: list[dict[str, Any]]
    calls: list[CallRecord]
    rows: list[TimelineRow]
    knowledge: list[KnowledgeRow]
    unattributed: list[CallRecord]
    prices: PriceTable
    attempts: list[AttemptView] = field(default_factory=list)
    call_rows: dict[int, int] = field(default_factory=dict)
    """id(call) -> index of the row it was attributed to."""
    call_by_time: set[int] = field(default_factory=set)
    """ids of the calls attributed by time rather than by key."""
    state_verdicts: list[dict[str, Any]] = field(default_factory=list)
    """Verdicts from a plain ProjectGen run's ``state.json`` (it has no trace)."""

    @property
    def has_trace(self) -> bool:
        return bool(self.events)

    @property
    def task_id(self) -> str:
        for source in (self.summary, self.manifest):
            if source and source.get("task_id"):
                return str(source["task_id"])
        start = next((e for e in self.events if e.get("event") == "run_start"), None)
        return str(start.get("task_id")) if start and start.get("task_id") else self.path.name

    @property
    def run_id(self) -> str | None:
        for source in (self.summary, self.manifest):
            if source and source.get("run_id"):
                return str(source["run_id"])
        return None

    @property
    def selection(self) -> str | None:
        if self.summary and self.summary.get("selection"):
            return str(self.summary["selection"])
        settings = (self.manifest or {}).get("attempt_settings") or {}
        return settings.get("selection")

    @property
    def oracle(self) -> bool:
        """Attempts were chosen with the hidden unit tests (an oracle upper bound, not a fair score)."""
        if self.summary and "oracle" in self.summary:
            return bool(self.summary["oracle"])
        return self.selection == "unit"

    @property
    def final(self) -> dict[str, Any] | None:
        if self.summary and self.summary.get("final"):
            return dict(self.summary["final"])
        end = next((e for e in reversed(self.events) if e.get("event") == "run_end"), None)
        return dict(end["final"]) if end and isinstance(end.get("final"), Mapping) else None

    @property
    def stopped(self) -> str | None:
        if self.summary and self.summary.get("stopped"):
            return str(self.summary["stopped"])
        end = next((e for e in reversed(self.events) if e.get("event") == "run_end"), None)
        return str(end["stopped"]) if end and end.get("stopped") else None

    @property
    def status(self) -> str:
        if self.manifest and self.manifest.get("status"):
            return str(self.manifest["status"])
        if self.kind == "projectgen":
            return "finished" if self.summary else "unknown"
        return "finished" if any(e.get("event") == "run_end" for e in self.events) else "running or interrupted"

    @property
    def duration_s(self) -> float | None:
        if self.summary and isinstance(self.summary.get("duration_s"), (int, float)):
            return float(self.summary["duration_s"])
        offsets = [r.offset_s for r in self.rows if r.offset_s is not None]
        return max(offsets) if offsets else None

    @property
    def totals(self) -> UsageTotals:
        return UsageTotals.of(self.calls)

    @property
    def cost(self) -> CostTotal:
        return CostTotal.of(self.calls, self.prices)

    def models(self) -> dict[str, dict[str, Any]]:
        """Per model name: calls, tokens, cost, and whether it is a scripted replay."""
        groups: dict[str, list[CallRecord]] = {}
        for call in self.calls:
            groups.setdefault(call.model, []).append(call)
        out = {}
        for name, calls in sorted(groups.items()):
            price = self.prices.price_of(name)
            out[name] = {"scripted": is_scripted(name), "roles": sorted({c.role for c in calls}),
                         "totals": UsageTotals.of(calls), "cost": CostTotal.of(calls, self.prices),
                         "price": price}
        return out

    def stage_totals(self) -> dict[str, tuple[UsageTotals, CostTotal]]:
        """Tokens and cost per stage (``knowledge`` for the extraction calls)."""
        groups: dict[str, list[CallRecord]] = {}
        for call in self.calls:
            groups.setdefault(call.stage, []).append(call)
        order = {name: i for i, name in enumerate((*STAGES, "knowledge"))}
        return {stage: (UsageTotals.of(calls), CostTotal.of(calls, self.prices))
                for stage, calls in sorted(groups.items(), key=lambda kv: (order.get(kv[0], 99), kv[0]))}

    def judge_iterations(self) -> list[dict[str, Any]]:
        """Every judge verdict in order: attempt, stage, iteration, score, accepted, check."""
        out = []
        for row in self.rows:
            for verdict in row.data.get("verdicts") or []:
                check = verdict.get("check") or None
                out.append({"attempt": row.attempt, "stage": verdict.get("stage") or row.stage,
                            "iteration": verdict.get("iteration"), "judge": verdict.get("judge"),
                            "score": verdict.get("score"), "accepted": verdict.get("accepted"),
                            "check": (check.get("passed"), check.get("total")) if isinstance(check, Mapping) else None,
                            "feedback": str(verdict.get("feedback") or "")})
        if out or self.kind != "projectgen":
            return out
        for verdict in self.state_verdicts:  # plain ProjectGen run: the final state keeps every verdict
            check = verdict.get("check") or None
            out.append({"attempt": None, "stage": verdict.get("stage"), "iteration": verdict.get("iteration"),
                        "judge": verdict.get("judge"), "score": verdict.get("score"),
                        "accepted": verdict.get("accepted"),
                        "check": (check.get("passed"), check.get("total")) if isinstance(check, Mapping) else None,
                        "feedback": str(verdict.get("feedback") or "")})
        if out or not self.summary:
            return out
        for stage, info in (self.summary.get("stages") or {}).items():  # only the summary: scores and checks
            checks = info.get("checks") or []
            for i, score in enumerate(info.get("scores") or []):
                check = checks[i] if i < len(checks) and stage == "code" else None
                last = i == len(info.get("scores") or []) - 1
                out.append({"attempt": None, "stage": stage, "iteration": i + 1, "judge": None, "score": score,
                            "accepted": bool(info.get("accepted")) if last else False,
                            "check": (check.get("passed"), check.get("total")) if check else None, "feedback": ""})
        return out

    def call_row(self, call: CallRecord) -> TimelineRow | None:
        index = self.call_rows.get(id(call))
        return self.rows[index] if index is not None else None


# --------------------------------------------------------------------------- loading


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        raise ProjectGenError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except OSError as exc:
        raise ProjectGenError(f"{path}: cannot read ({exc.strerror})") from None
    if not isinstance(data, dict):
        raise ProjectGenError(f"{path}: expected a JSON object")
    return data


def read_calls(path: Path) -> list[CallRecord]:
    """The call records of a ``usage.jsonl`` (torn or foreign lines skipped), oldest first."""
    calls = []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        if not line.strip():
            continue
        try:
            calls.append(CallRecord.model_validate_json(line))
        except ValidationError:
            continue
    calls.sort(key=lambda c: _utc(c.timestamp))
    return calls


def as_utc(moment: datetime) -> datetime:
    """A timestamp as an aware UTC datetime (naive ones are taken as UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


_utc = as_utc


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return _utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None


def check_run_dir(path: Path | str) -> Path:
    """`path` as a run folder, or a one-line `ProjectGenError` saying why it is not one."""
    path = Path(path)
    if not path.exists():
        raise ProjectGenError(f"{path}: run folder not found")
    if not path.is_dir():
        raise ProjectGenError(f"{path}: not a folder (give a run folder, e.g. runs/kvstore-...)")
    if not any((path / name).is_file() for name in layout.RUN_MARKERS):
        raise ProjectGenError(f"{path}: not a run folder (none of {', '.join(layout.RUN_MARKERS)} in it)")
    return path


def load_run(path: Path | str, prices: PriceTable | None = None) -> RunView:
    """Read a run folder (LiveCoder or plain ProjectGen) into a `RunView`."""
    path = check_run_dir(path)
    prices = prices if prices is not None else PriceTable.default()
    manifest = _read_json(path / layout.MANIFEST)
    summary = _read_json(path / layout.SUMMARY)
    events = read_trace(path / layout.EVENTS, strict=True)
    calls = read_calls(path / layout.USAGE)
    livecoder = manifest is not None or bool(events) or (summary is not None and "attempts" in summary)
    view = RunView(path=path, kind="livecoder" if livecoder else "projectgen", manifest=manifest, summary=summary,
                   events=events, calls=calls, rows=[], knowledge=[], unattributed=[], prices=prices)
    if not livecoder:
        view.state_verdicts = _state_verdicts(path / layout.STATE)
    view.rows = _rows(events)
    view.knowledge = _knowledge(view.rows)
    _attribute(view)
    for row in view.rows:
        row.cost = CostTotal.of(row.calls, prices)
    view.attempts = _attempts(view)
    return view


def _state_verdicts(path: Path) -> list[dict[str, Any]]:
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return []
    verdicts = state.get("verdicts") if isinstance(state, dict) else None
    return [dict(v) for v in verdicts or [] if isinstance(v, Mapping)]


# --------------------------------------------------------------------------- rows


def _rows(events: list[dict[str, Any]]) -> list[TimelineRow]:
    rows: list[TimelineRow] = []
    start = next((t for t in (_parse_time(e.get("t")) for e in events) if t is not None), None)
    current: dict[tuple[int | None, str], int] = {}  # (attempt, stage) -> iteration in progress
    known_attempts = {e.get("attempt") for e in events
                      if e.get("event") == "node" and e.get("stage") and isinstance(e.get("attempt"), int)}
    for index, event in enumerate(events):
        kind = str(event.get("event") or "?")
        data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
        moment = _parse_time(event.get("t"))
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
        verdicts = [v for v in data.get("verdicts") or [] if isinstance(v, Mapping)]
        edits = [e for e in data.get("edits") or [] if isinstance(e, Mapping)]
        if verdicts and isinstance(verdicts[-1].get("iteration"), int):
            row.iteration = verdicts[-1]["iteration"]
        elif edits and isinstance(edits[-1].get("iteration"), int):
            row.iteration = edits[-1]["iteration"]
        elif stage:
            row.iteration = current.get((attempt, stage))
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
        row.detail = _detail(kind, node, data, event)
        rows.append(row)
    _durations(rows)
    return rows


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
            lines = str(diff).splitlines()
            plus = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
            minus = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
            note += f", +{plus} -{minus}"
        parts.append(f"{change.get('path')} ({note})")
    return ", ".join(parts)


def _detail(kind: str, node: str, data: Mapping[str, Any], event: Mapping[str, Any]) -> str:
    parts: list[str] = []
    if kind == "run_start" or kind == "run_resumed":
        parts.append(" ".join(f"{k}={event[k]}" for k in ("task_id", "run_id", "note") if event.get(k)))
    if kind == "run_end":
        final = event.get("final")
        if isinstance(final, Mapping):
            parts.append(_final_phrase(final))
        if event.get("stopped"):
            parts.append(f"stopped: {event['stopped']}")
        return "; ".join(p for p in parts if p)
    if kind == "stage_end":
        iterations = data.get("iterations") or {}
        if node in iterations:
            parts.append(f"{iterations[node]} iteration(s)")
        return "; ".join(parts)
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
    if data.get("layer") is not None and node in ("next_layer", "plan_code"):
        parts.append(f"layer {data['layer']}")
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
    for record in data.get("attempts") or []:
        if isinstance(record, Mapping):
            text = f"attempt {record.get('attempt')}: score {_num(record.get('score'))}"
            if record.get("reused"):
                text += " (reused best)"
            if record.get("best_score") is not None:
                text += f", best {_num(record.get('best_score'))} (attempt {record.get('best_attempt')})"
            if record.get("knowledge_added"):
                text += f", knowledge added: {', '.join(map(str, record['knowledge_added']))}"
            parts.append(text)
    if isinstance(data.get("final"), Mapping):
        parts.append(_final_phrase(data["final"]))
    errors = data.get("generation_errors")
    if isinstance(errors, Mapping) and errors:
        parts.append("errors: " + "; ".join(f"{k}: {str(v).splitlines()[0] if v else ''}" for k, v in errors.items()))
    if data.get("stopped"):
        parts.append(f"stopped: {data['stopped']}")
    for verdict in data.get("verdicts") or []:
        if isinstance(verdict, Mapping) and verdict.get("files"):
            parts.append("to fix: " + ", ".join(map(str, verdict["files"])))
        if isinstance(verdict, Mapping) and verdict.get("feedback"):
            text = " ".join(str(verdict["feedback"]).split())
            parts.append("feedback: " + (text if len(text) <= 160 else text[:159] + "…"))
    return "; ".join(p for p in parts if p)


def _final_phrase(final: Mapping[str, Any]) -> str:
    return f"final: {final.get('source', '?')} attempt {final.get('attempt')} (score {_num(final.get('score'))})"


def _num(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def _durations(rows: list[TimelineRow]) -> None:
    """Provisional node durations (since the previous event); `_attribute` refines them with calls."""
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


# --------------------------------------------------------------------------- attribution


def _row_keys(row: TimelineRow) -> list[tuple[Any, ...]]:
    """(role, stage, attempt, iteration, target or None) keys of the calls this node made."""
    if row.event != "node":
        return []
    keys: list[tuple[Any, ...]] = []
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


def _attribute(view: RunView) -> None:
    index: dict[tuple[Any, ...], list[TimelineRow]] = {}
    for row in view.rows:
        for key in _row_keys(row):
            index.setdefault(key, [])
            if row not in index[key]:
                index[key].append(row)
    node_rows = [r for r in view.rows if r.event == "node" and r.time is not None]
    for call in view.calls:
        when = _utc(call.timestamp)
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
            first = min(_utc(c.timestamp) for c in row.calls)
            row.duration_s = round(max(0.0, (row.time - first).total_seconds()), 3)


def _knowledge(rows: list[TimelineRow]) -> list[KnowledgeRow]:
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


# --------------------------------------------------------------------------- attempts


def _effective_attempt(view: RunView, call: CallRecord) -> int | None:
    if call.attempt is not None:
        return call.attempt
    row = view.call_row(call)
    if row is not None and row.attempt is not None:
        return row.attempt
    return call.iteration if call.stage == "knowledge" and view.kind == "livecoder" else None


def _attempts(view: RunView) -> list[AttemptView]:
    records: dict[int | None, dict[str, Any]] = {}
    if view.summary and isinstance(view.summary.get("attempts"), list):
        for record in view.summary["attempts"]:
            if isinstance(record, Mapping):
                records[record.get("attempt")] = dict(record)
    else:
        for row in view.rows:  # a run still going (or killed): the learn events carry the records
            for record in row.data.get("attempts") or []:
                if isinstance(record, Mapping):
                    records[record.get("attempt")] = {**records.get(record.get("attempt"), {}), **record}
    calls_by_attempt: dict[int | None, list[CallRecord]] = {}
    for call in view.calls:
        calls_by_attempt.setdefault(_effective_attempt(view, call), []).append(call)
    if view.kind == "projectgen":
        stages = (view.summary or {}).get("stages") or {}
        unit = (view.summary or {}).get("unit_tests")
        unit = dict(unit) if isinstance(unit, Mapping) else None
        code_checks = (stages.get("code") or {}).get("checks") if isinstance(stages.get("code"), Mapping) else None
        last_check = dict(code_checks[-1]) if code_checks and isinstance(code_checks[-1], Mapping) else None
        return [AttemptView(attempt=None, score=unit.get("pass_rate") if unit else None, stages=dict(stages), unit=unit,
                            check=last_check,
                            stopped=(view.summary or {}).get("stopped"), tokens=UsageTotals.of(view.calls),
                            cost=CostTotal.of(view.calls, view.prices), duration_s=view.duration_s)]
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


# --------------------------------------------------------------------------- queries


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
    return sorted({r.attempt for r in run.rows if r.attempt is not None} | {a.attempt for a in run.attempts
                                                                            if a.attempt is not None})


def filter_calls(run: RunView, attempt: int | None = None, stage: str | None = None) -> list[CallRecord]:
    return [c for c in run.calls if (attempt is None or _effective_attempt(run, c) == attempt)
            and (stage is None or c.stage == stage)]


def effective_attempt(run: RunView, call: CallRecord) -> int | None:
    """The attempt a call belongs to: its tag, else the attempt of the node it was attributed to."""
    return _effective_attempt(run, call)


def iter_verdict_feedback(run: RunView) -> Iterable[tuple[TimelineRow, str]]:
    for row in run.rows:
        if row.feedback:
            yield row, row.feedback
