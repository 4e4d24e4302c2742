"""Runs: one execution path for a run folder (the single ProjectGen pass and LiveCoder's attempts).

`layout` names every file of a run folder and holds where they are (a `RunLayout` per kind of folder);
`folder` opens one (`RunFolder`), `lifecycle` is the one writer of its run.json's status; `execution`
holds the steps both kinds of run share; `pipeline` is the single pass, `livecoder` the durable
attempts loop, one `Run` opened once (every method of `methods` runs through it) (`manifest`: run.json,
`checkpoints`: where LangGraph's checkpoints live); `summary` the typed, versioned summary.json;
`run_log` the run log (log.json) every run writes where it ends and `read_run_log` reads (`output_scorers`
the scores of its output it may keep); `custom_methods` a user's own method and scorer, named by a spec
string (`plugins`: ``package.module:factory`` or ``file.py:factory``, with its file's hash);
`trace` the events.jsonl trace; `locking` one process per folder; `unit` a batch unit of any protocol
through the driver (`drive_unit`: each protocol of `projectgen.protocols` runs its units through it);
`pending_review` the review.json of a
run paused for a person's review, `review` continuing it with a decision (`review_run`); `resume`
what continuing a run folder reads from it.

Names are re-exported lazily: the CLI's parser imports `methods` (the method names its `--help` lists), and an
eager import of `livecoder` here would load LangGraph into `projectgen --help`.
"""
from __future__ import annotations

from projectgen.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "run_project": "projectgen.runs.pipeline",
    "arun_project": "projectgen.runs.pipeline",
    "RunOutcome": "projectgen.runs.pipeline",
    "Run": "projectgen.runs.livecoder",
    "RunParts": "projectgen.runs.livecoder",
    "LiveCoderOutcome": "projectgen.runs.livecoder",
    "METHODS": "projectgen.runs.methods",
    "Method": "projectgen.runs.methods",
    "describe_method": "projectgen.runs.methods",
    "method_attempt_settings": "projectgen.runs.methods",
    "CustomMethod": "projectgen.runs.custom_methods",
    "Scorer": "projectgen.runs.output_scorers",
    "Score": "projectgen.runs.run_log",
    "RunManifest": "projectgen.runs.manifest",
    "Lifecycle": "projectgen.runs.lifecycle",
    "read_manifest": "projectgen.runs.folder",
    "RunFolder": "projectgen.runs.folder",
    "RunLayout": "projectgen.runs.layout",
    "RunRequest": "projectgen.runs.request",
    "run_budget": "projectgen.runs.manifest",
    "SCHEMA_VERSION": "projectgen.runs.summary",
    "RunSummary": "projectgen.runs.summary",
    "StageSummary": "projectgen.runs.summary",
    "LiveCoderSummary": "projectgen.runs.summary",
    "AttemptRecord": "projectgen.runs.summary",
    "FinalChoice": "projectgen.runs.summary",
    "RunLog": "projectgen.runs.run_log",
    "read_run_log": "projectgen.runs.run_log",
    "TraceWriter": "projectgen.runs.trace",
    "read_trace": "projectgen.runs.trace",
    "folder_lock": "projectgen.runs.locking",
    "review_run": "projectgen.runs.review",
    "read_pending_review": "projectgen.runs.pending_review",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
