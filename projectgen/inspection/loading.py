"""Read a run folder into a `RunView`.

`load_run(DIR)` reads any run folder: how the run ended from its run log (`read_run_log`, which also
reads folders written before the log), ``run.json``'s current status, the trace (``events.jsonl``,
none in a plain ProjectGen folder) and ``usage.jsonl``: the trace becomes timeline rows, the model
calls are attributed to them, and the attempts are summed up (see `projectgen.inspection.views` for
what the view holds).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from projectgen.errors import ProjectGenError
from projectgen.inspection.attempts import attempt_views
from projectgen.inspection.attribution import attribute_calls
from projectgen.inspection.rows import knowledge_rows, timeline_rows
from projectgen.inspection.timestamps import as_utc
from projectgen.inspection.views import RunView
from projectgen.llm import CallRecord
from projectgen.llm.pricing import CostTotal, PriceTable
from projectgen.runs.layout import RUN_MARKERS, RunLayout
from projectgen.runs.run_log import EXTERNAL_KIND, read_run_log
from projectgen.runs.trace import read_trace


def load_run(path: Path | str, prices: PriceTable | None = None) -> RunView:
    """Read a run folder (LiveCoder or plain ProjectGen) into a `RunView`."""
    path = check_run_dir(path)
    prices = prices if prices is not None else PriceTable.default()
    folder = RunLayout(path)
    manifest = _read_json(folder.manifest)
    log = read_run_log(folder)
    events = read_trace(folder.events, strict=True)
    calls = read_calls(folder.usage)
    single_pass = log.kind == "single-pass"  # run_project: one pass, no attempts
    view = RunView(path=path, kind=view_kind(log.kind), log=log, manifest=manifest,
                   events=events, calls=calls, rows=[], knowledge=[], unattributed=[], prices=prices)
    if single_pass:
        view.state_verdicts = _state_verdicts(folder.state)
    view.rows = timeline_rows(events)
    view.knowledge = knowledge_rows(view.rows)
    attribute_calls(view)
    for row in view.rows:
        row.cost = CostTotal.of(row.calls, prices)
    view.attempts = attempt_views(view)
    return view


def view_kind(log_kind: str | None) -> str:
    """How a report shows a run: a plain ProjectGen pass, the attempts graph (a LiveCoder method's run, an evolve
    run), or a protocol's unit of its own (reflect, refine, an external system), which has no attempts, selection
    or knowledge to show."""
    if log_kind == "single-pass":
        return "projectgen"
    if log_kind in ("reflect", "refine", EXTERNAL_KIND):
        return log_kind
    return "livecoder"


def check_run_dir(path: Path | str) -> Path:
    """`path` as a run folder, or a one-line `ProjectGenError` saying why it is not one."""
    path = Path(path)
    if not path.exists():
        raise ProjectGenError(f"{path}: run folder not found")
    if not path.is_dir():
        raise ProjectGenError(f"{path}: not a folder (give a run folder, e.g. runs/kvstore-...)")
    if not RunLayout(path).is_run():
        raise ProjectGenError(f"{path}: not a run folder (none of {', '.join(RUN_MARKERS)} in it)")
    return path


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
    calls.sort(key=lambda c: as_utc(c.timestamp))
    return calls


def _read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file; None when missing, a one-line `ProjectGenError` when unreadable or not an object."""
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


def _state_verdicts(path: Path) -> list[dict[str, Any]]:
    """The verdicts kept in a plain ProjectGen run's final ``state.json`` (none if it is missing or broken)."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return []
    verdicts = state.get("verdicts") if isinstance(state, dict) else None
    return [dict(v) for v in verdicts or [] if isinstance(v, Mapping)]
