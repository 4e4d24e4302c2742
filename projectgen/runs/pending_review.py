"""review.json: the review a run paused by `run --review` waits for, and how it is put into words.

Written by the run when a reviewed stage (`projectgen.graphs.review`) pauses it, beside run.json's status
``awaiting-review``: the request (stage, attempt, iteration, the judge's verdict, the tree or skeleton and
its diff from the previous iteration) and the id of LangGraph's interrupt. A seed of `construct multiturn`
paused for a person (`projectgen.protocols.multiturn_construction.review`) writes the same record; its request says
what it is (``what``) and what ``--edit`` takes (``editable``). The checkpoint holds the same
request; this file is what `projectgen review DIR`, `trace` and `report` read without loading the graph.
"""
from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from projectgen.errors import ProjectGenError
from projectgen.runs.folder import RunFolder, read_manifest
from projectgen.runs.methods import METHODS

AWAITING_REVIEW = "awaiting-review"


REVIEW_SCHEMA_VERSION = 1  # review.json's; changes when a field changes meaning or goes away


def pending_review_record(*, attempt: int | None, interrupt_id: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """What review.json holds of the review the run waits for (`RunFolder.write_review` writes it)."""
    return {"schema_version": REVIEW_SCHEMA_VERSION, "stage": request.get("stage"), "attempt": attempt,
            "iteration": request.get("iteration"), "interrupt_id": interrupt_id, "request": dict(request)}


def read_pending_review(folder: RunFolder) -> dict[str, Any] | None:
    """The review a paused run waits for, or None when it waits for none (run.json's status says so)."""
    if folder.read_manifest().status != AWAITING_REVIEW:
        return None
    record = folder.read_review()
    if record is None:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("request"), dict):
        raise ProjectGenError(f"{folder.review}: not a review request; `projectgen run --resume {folder.root}` "
                              "writes it again")
    return record


def describe_pending(record: Mapping[str, Any]) -> str:
    """'the architecture of attempt 1 (iteration 2, accepted by its judge: score 9)'; a request that says what it is
    (``what``: a constructed task's, `projectgen.protocols.multiturn_construction.review`) in its own words."""
    request = record.get("request") or {}
    if request.get("what"):
        return str(request["what"])
    judge = request.get("judge")
    if judge is None:
        verdict = "no judge"
    elif judge.get("accepted"):
        verdict = f"accepted by its judge: score {judge.get('score'):g}"
    else:
        verdict = f"not accepted by its judge (score {judge.get('score'):g}), iteration cap reached"
    attempt = f" of attempt {record['attempt']}" if record.get("attempt") is not None else ""
    return f"the {record.get('stage')}{attempt} (iteration {record.get('iteration')}, {verdict})"


def review_commands(out_dir: Path, stage: str | None) -> list[tuple[str, str]]:
    """(what, exact command) for each way on from a paused run."""
    folder = shlex.quote(str(out_dir))
    edited = {"architecture": "tree.json", "skeleton": "skeleton.json"}.get(stage or "", f"{stage}.json")
    return [("show it", f"projectgen review {folder}"),
            ("approve", f"projectgen review {folder} --approve"),
            ("edit", f"projectgen review {folder} --json > {edited}, edit it, then "
                     f"projectgen review {folder} --edit {edited}"),
            ("reject", f"projectgen review {folder} --reject \"what to change\"")]


def awaiting_reason(out_dir: Path, record: Mapping[str, Any]) -> str:
    """run.json's one-line reason for a paused run."""
    return f"{describe_pending(record)} awaits review: projectgen review {shlex.quote(str(out_dir))}"


def editable_json(record: Mapping[str, Any]) -> str:
    """What `--edit` takes, filled with the output under review: the tree, the skeleton files, or what the request
    names ``editable`` (a constructed task's files)."""
    request = record["request"]
    if "editable" in request:
        return json.dumps(request["editable"], indent=1) + "\n"
    value = request.get("skeleton") if record.get("stage") == "skeleton" else request.get("tree")
    return json.dumps(value or {}, indent=1) + "\n"


def not_awaiting(out_dir: Path) -> str:
    """Why `review` has nothing to decide about, in one line."""
    manifest = read_manifest(out_dir)
    if not manifest.review and manifest.method in METHODS:  # a `run` without --review (a construction pauses unasked)
        return f"{out_dir}: the run reviews no stage (start one with `projectgen run ... --review architecture`)"
    return f"{out_dir}: no review is pending (the run is {manifest.status})"
