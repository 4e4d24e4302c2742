"""The run trace: one JSONL event per graph-node update, written as the run goes.

Events come from LangGraph's update stream (``stream_mode="updates", subgraphs=True``),
so every node of every stage and attempt is seen without the graph knowing about
tracing. Each event keeps what a person inspecting the run wants (judge verdicts, check
status, files written, edits, generated files refused because they are not valid Python,
knowledge given to prompts, attempt scores) and, for
files and trees, the diff against the previous version seen in the same attempt, so
``projectgen trace --diff`` can show what changed between iterations. Model calls are in
``usage.jsonl`` beside it (same clock), one line per call.

Event shape::

    {"t": "2026-11-21T13:05:01.2+00:00", "elapsed_s": 3.2, "event": "node", "path": ["run_attempt", "code"],
     "node": "judge_code", "attempt": 1, "stage": "code", "data": {...}}

plus ``{"event": "run_start" | "run_resumed" | "review_requested" | "run_end", ...}`` markers (a run
paused for a person's review writes ``review_requested`` and no ``run_end``; the process that continues
it writes ``run_resumed`` with the decision).

Each node event also carries ``update_id``, a hash of its path, node, attempt and data (diffs
left out: they depend on what the writing process had seen). After a restart the trace skips an
update it already holds: checkpoints are saved in the background, so a node whose event was
written just before a kill may run again on resume, and LangGraph replays the saved writes of an
unfinished step (marked ``__metadata__: {cached: true}`` in the stream), whose events may or may
not have been written before the kill.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import threading
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from projectgen.durable_files import append_line
from projectgen.errors import ProjectGenError
from projectgen.llm.roles import HUMAN_JUDGE
from projectgen.ssat import SSAT, diff_ssat, render_diff

STAGES = ("architecture", "skeleton", "code")
_TEXT_LIMIT = 600


def _cut(text: str, limit: int = _TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} more characters]"


def _diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))


def _without_diffs(value: Any) -> Any:
    """`value` without the "diff" and "unchanged" marks of file and tree changes."""
    if isinstance(value, Mapping):
        return {k: _without_diffs(v) for k, v in value.items() if k not in ("diff", "unchanged")}
    if isinstance(value, (list, tuple)):
        return [_without_diffs(v) for v in value]
    return value


def _namespace_names(namespace: Iterable[str]) -> list[str]:
    """('run_attempt:8f1c...', 'code:1a2b...') -> ['run_attempt', 'code']."""
    return [part.split(":", 1)[0] for part in namespace]


class TraceWriter:
    """Appends trace events to ``DIR/events.jsonl``; thread-safe, flushed per event."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._attempt: int | None = None
        self._files: dict[tuple[str, str], str] = {}  # (kind, path) -> last content seen in this attempt
        self._ssat: dict[str, Any] | None = None
        self._before: set[str] = set()  # update ids of the events written before a restart

    def resume_at(self, attempt: int | None) -> None:
        """Continue a trace after a restart: events belong to `attempt` until the next one starts, and
        updates already traced before the restart are not traced again."""
        self._attempt = attempt
        self._before = {e["update_id"] for e in read_trace(self.path) if isinstance(e.get("update_id"), str)}

    # -- writing -----------------------------------------------------------------
    def write(self, event: str, **fields: Any) -> None:
        record = {"t": datetime.now(timezone.utc).isoformat(), "elapsed_s": round(time.monotonic() - self._started, 3),
                  "event": event, **fields}
        line = json.dumps(record, default=str) + "\n"
        with self._lock:
            append_line(self.path, line, fsync=True)  # a line torn by a kill is cut off first

    def update(self, namespace: Iterable[str], chunk: Mapping[str, Any]) -> None:
        """One item of the graph's update stream: ``{node: update}`` under a subgraph namespace."""
        path = _namespace_names(namespace)
        for node, update in chunk.items():
            if node == "__metadata__" or not isinstance(update, Mapping):
                continue  # "__metadata__" marks writes replayed after a restart, not a node
            stage = next((p for p in reversed(path) if p in STAGES), None)
            if node in STAGES:
                # A stage subgraph hands back its whole state; its nodes were traced one by one already.
                self._node_event("stage_end", path, node, stage=node,
                                 data={"iterations": dict(update.get("iterations") or {})})
                continue
            data = self.summarize(update)
            if node == "plan_attempt" and isinstance(update.get("attempt"), int):
                if update["attempt"] != self._attempt:
                    self._files.clear()
                    self._ssat = None
                self._attempt = update["attempt"]
            self._node_event("node", path, node, stage=stage, data=data)

    def _node_event(self, event: str, path: list[str], node: str, **fields: Any) -> None:
        payload = json.dumps([event, path, node, self._attempt, _without_diffs(fields)], sort_keys=True, default=str)
        update_id = hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
        if update_id in self._before:
            return  # traced before a restart
        self.write(event, path=path, node=node, attempt=self._attempt, **fields, update_id=update_id)

    # -- summaries -----------------------------------------------------------------
    def summarize(self, update: Mapping[str, Any]) -> dict[str, Any]:
        """The parts of a node's update worth keeping in the trace."""
        data: dict[str, Any] = {}
        for verdict in update.get("verdicts") or []:
            if verdict.get("judge") == HUMAN_JUDGE:
                continue  # a person's rejection: traced as its review below
            data.setdefault("verdicts", []).append({
                "judge": verdict.get("judge"), "stage": verdict.get("stage"), "iteration": verdict.get("iteration"),
                "score": verdict.get("score"), "accepted": verdict.get("accepted"),
                "check": verdict.get("check"), "files": sorted(verdict.get("files") or {}),
                "feedback": _cut(verdict.get("feedback") or ""),
                **({"reasons": _cut(verdict["reasons"])} if verdict.get("reasons") else {})})
        if update.get("reviews"):
            data["reviews"] = [{k: r.get(k) for k in ("stage", "iteration", "action", "feedback", "edited")
                                if r.get(k) not in (None, "")} for r in update["reviews"]]
        if update.get("iterations"):
            data["iterations"] = dict(update["iterations"])
        for kind in ("skeleton", "repository"):
            files = update.get(kind)
            if files:
                data[kind] = self._file_changes(kind, files)
        if update.get("ssat"):
            data["ssat"] = self._ssat_change(update["ssat"])
        if update.get("edits"):
            data["edits"] = [{k: e.get(k) for k in ("path", "iteration", "format", "well_formed", "failed", "feedback",
                                                    "rejected")} for e in update["edits"]]
        if update.get("rejected"):
            data["rejected"] = [{"path": r.get("path"), "stage": r.get("stage"), "iteration": r.get("iteration"),
                                 "error": _cut(str(r.get("error") or ""))} for r in update["rejected"]]
        if update.get("memory"):
            data["memory"] = [{k: m.get(k) for k in ("stage", "iteration", "target", "passed_before", "passed_after")}
                              for m in update["memory"]]
        if update.get("generation_errors"):
            errors = {k: v for k, v in update["generation_errors"].items() if v}
            if errors:
                data["generation_errors"] = {k: _cut(v) for k, v in errors.items()}
        if "knowledge_used" in update:
            data["knowledge_used"] = update["knowledge_used"]
        if update.get("records"):
            data["attempts"] = [{k: v for k, v in r.items() if k not in ("knowledge_used", "stages")}
                                for r in update["records"]]
        for key in ("stopped", "final", "best", "layer"):
            if update.get(key) is not None:
                data[key] = update[key]
        current = update.get("current")
        if isinstance(current, Mapping) and "score" in current:
            data["score"] = current["score"]
            data["unit"] = current.get("unit")
        return data

    def _file_changes(self, kind: str, files: Mapping[str, Any]) -> list[dict[str, Any]]:
        changes = []
        for path, content in sorted(files.items()):
            if content is None:
                continue
            old = self._files.get((kind, path))
            self._files[(kind, path)] = content
            change: dict[str, Any] = {"path": path, "lines": content.count("\n")}
            if old is not None and old != content:
                change["diff"] = _diff(old, content, path)
            elif old == content:
                change["unchanged"] = True
            changes.append(change)
        return changes

    def _ssat_change(self, ssat: Mapping[str, Any]) -> dict[str, Any]:
        change: dict[str, Any] = {"files": len(ssat.get("files") or [])}
        try:
            if self._ssat is not None:
                change["diff"] = render_diff(diff_ssat(SSAT.model_validate(self._ssat), SSAT.model_validate(ssat)),
                                             max_lines=200)
        except ValueError:
            pass
        self._ssat = dict(ssat)
        return change


def read_trace(path: Path | str, *, strict: bool = False) -> list[dict[str, Any]]:
    """Events of a trace file. A line torn by a kill (the last line, or the line before a resumed run's
    ``run_resumed`` marker) is skipped. Any other line that is not a JSON object is skipped too, or with
    `strict` raises a one-line `ProjectGenError` naming it: the file was damaged, not torn."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    except OSError as exc:
        if strict:
            raise ProjectGenError(f"{path}: cannot read the trace ({exc.strerror or exc})") from None
        return []
    parsed: list[tuple[int, Any]] = []  # (line number, event or None when unreadable)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            event = None
        parsed.append((number, event if isinstance(event, dict) else None))
    events = []
    for index, (number, event) in enumerate(parsed):
        if event is not None:
            events.append(event)
            continue
        following = parsed[index + 1][1] if index + 1 < len(parsed) else None
        torn = lines[number - 1].lstrip().startswith("{") and (
            index == len(parsed) - 1 or (following is not None and following.get("event") == "run_resumed"))
        if strict and not torn:
            raise ProjectGenError(f"{path}: line {number} is not a trace event (the file is damaged; delete "
                                  "that line to read the rest)")
    return events
