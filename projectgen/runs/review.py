"""Continuing a run paused for a person's review (`run --review`) with a decision.

When a reviewed stage (`projectgen.graphs.review`) pauses a run, the run writes review.json
(`projectgen.runs.pending_review`), sets run.json's status to ``awaiting-review`` and ends its process.
`review_run(DIR, approve=True)` (or ``edit=`` a file or mapping, ``reject="feedback"``) continues the
run in the same folder, in any process: it resumes the run (`Run.resume`) with
``Command(resume=decision)``, so only what comes after the interrupt runs.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from projectgen.errors import ProjectGenError
from projectgen.runs.folder import RunFolder
from projectgen.runs.pending_review import not_awaiting, read_pending_review
from projectgen.runs.resume import resumable_run

if TYPE_CHECKING:
    from projectgen.llm import ModelRoles


# --------------------------------------------------------------------------- decisions


def make_decision(*, approve: bool = False, edit: Path | str | Mapping[str, Any] | None = None,
                  reject: str | None = None, stage: str | None = None) -> Any:
    """The `ReviewDecision` of exactly one of `approve`, `edit` (a JSON file, or its content: the whole tree
    for an architecture review, path -> text of the files to replace for any other: a skeleton, or a constructed
    task's files under review, `projectgen.protocols.multiturn_construction.review`) and `reject` (the feedback)."""
    from projectgen.graphs.review import ReviewDecision, ReviewError

    given = [name for name, value in (("approve", approve), ("edit", edit), ("reject", reject))
             if value not in (None, False)]
    if len(given) != 1:
        raise ProjectGenError("give one decision: --approve, --edit FILE.json or --reject \"feedback\""
                              + (f" (got {', '.join('--' + g for g in given)})" if given else ""))
    if approve:
        return ReviewDecision(action="approve")
    if reject is not None:
        if not reject.strip():
            raise ProjectGenError("--reject needs feedback: say what the generator should change")
        return ReviewDecision(action="reject", feedback=reject)
    content = read_edit(edit) if not isinstance(edit, Mapping) else dict(edit)
    if stage in (None, "architecture"):
        return ReviewDecision(action="edit", tree=content)
    if not all(isinstance(v, str) for v in content.values()):
        raise ReviewError(f"a {stage} edit is a JSON object of path -> file text (the files to replace)")
    return ReviewDecision(action="edit", files=content)


def read_edit(path: Path | str) -> dict[str, Any]:
    """The JSON object of an edit file; one line when it is missing or not a JSON object."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProjectGenError(f"{path}: edit file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProjectGenError(f"{path}: not a readable JSON file ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ProjectGenError(f"{path}: an edit is a JSON object (the tree, or path -> text of skeleton files)")
    return data


def check_decision(record: Mapping[str, Any], decision: Any) -> Any:
    """`decision` checked against the paused run's request (an edit validated like generated output)."""
    from projectgen.graphs.review import parse_decision

    return parse_decision(decision, record["request"])


# --------------------------------------------------------------------------- continuing the run


def review_run(out_dir: Path | str, *, approve: bool = False, edit: Path | str | Mapping[str, Any] | None = None,
               reject: str | None = None, models: ModelRoles | None = None, runner: Any = None,
               progress: Callable[[str], None] | None = None) -> Any:
    """Continue the run in `out_dir`, paused for review, with one decision; returns its `LiveCoderOutcome`
    (which may be paused again: `outcome.review`). `models` defaults to run.json's model specs (a run
    started from Python with model objects needs them given again)."""
    from projectgen.runs.livecoder import Run, RunParts

    out_dir = Path(out_dir)
    record = read_pending_review(RunFolder(out_dir))
    if record is None:
        raise ProjectGenError(not_awaiting(out_dir))
    decision = check_decision(record, make_decision(approve=approve, edit=edit, reject=reject,
                                                    stage=record.get("stage")))
    manifest, task = resumable_run(out_dir)
    if models is None:
        from projectgen.oracles.role_specs import models_from_specs

        if not manifest.models.get("default"):
            raise ProjectGenError(f"{out_dir}: the run was started from Python with model objects; pass them: "
                                  "review_run(..., models=...)")
        models = models_from_specs(manifest.models, task)
    return Run.resume(out_dir, RunParts(models=models, runner=runner, progress=progress), decision=decision).run()
