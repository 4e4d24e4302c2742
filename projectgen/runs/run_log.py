"""The run log (log.json): one versioned record of how a run ended, whatever its protocol.

Why: summary.json has one shape per protocol (LiveCoder's, the single pass's and evolve's `RunSummary`,
reflect's `ReflectionResult`, construct check-tests' own; refine writes none), so readers guessed the kind
from its keys. The log says its kind and holds what any reader asks of any run: the request, per sample
its scores by scorer name, usage, status, timings and the isolation its tests ran with; the protocol's own
record rides along (`record`: what summary.json holds, for the views of that protocol).

`write_run_log` is the one writer: where a run ends it writes summary.json (byte for byte as its kind always
has) and then log.json, both from the same record. `read_run_log` is the one reader: log.json, or for a
folder written before the log existed its run.json and summary.json mapped onto the same model by the same
code; a folder it cannot read is one line (`ProjectGenError`).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.llm import UsageTotals
from projectgen.runs.folder import RunFolder
from projectgen.runs.layout import RefineLayout
from projectgen.runs.manifest import RunManifest
from projectgen.runs.methods import METHODS
from projectgen.runs.request import RunRequest

# The shape of log.json; raise it when a key is renamed, removed or changes meaning (a new key with a default
# does not). A reader refuses a log of a later version rather than misread it.
RUN_LOG_VERSION = 1

# Which protocol a run is: "livecoder" (every method of `projectgen.runs.methods`), "single-pass", "evolve",
# "reflect", "refine", "check-tests", "external" (a system of `projectgen.external`), or a new protocol's own name (a text, so adding one changes nothing here).
RunKind = str

# run.json's method -> the kind of run (the methods of `projectgen.runs.methods` all run the attempts graph).
# The protocols' own names are their modules' constants (SINGLE_PASS, EVOLVE_METHOD, REFLECT_METHOD,
# REFINE_METHOD), spelled here because those modules write through this one: tests/runs/test_run_log.py
# checks that they agree.
EXTERNAL_KIND: RunKind = "external"  # an external system's run (`projectgen.external.runner` writes it)
PROTOCOL_KINDS: Mapping[str, RunKind] = MappingProxyType({"single-pass": "single-pass", "evolve": "evolve",
                                                          "reflect": "reflect", "refine": "refine"})

# Scorer names: what a sample's score measured.
UNIT = "unit"  # the hidden unit tests of the final output, counted on the tests it ran
SELECTION = "selection"  # the score LiveCoder chose its output by (its selection suite: check, or unit)
TESTS = "tests"  # reflect: the exercise's tests passed within the tries; refine: one turn's tests
WELL_FORMAT = "well_format"  # reflect: every reply parsed and applied exactly
KEPT = "kept"  # construct check-tests: a draft suite was kept


class Score(BaseModel):
    """One scorer's result on one sample."""

    value: float | None = Field(default=None, description="the headline figure, in the scorer's unit: a pass "
                                "rate or a 0/1 outcome (0-1), SketchBLEU and the non-functional figures (0-100); "
                                "None when the scorer had nothing to score")
    passed: int | None = None
    total: int | None = None
    detail: dict[str, Any] = Field(default_factory=dict, description="what else the scorer recorded")


class Sample(BaseModel):
    """One scored item of the run: its task (or exercise), or one turn of a refine run."""

    id: str
    scores: dict[str, Score] = Field(default_factory=dict, description="scorer name -> its score")


class Timings(BaseModel):
    """How long the run took and when it ended."""

    duration_s: float | None = Field(default=None, description="the last invocation's seconds, as the run "
                                     "measured them; None where it did not")
    ended_at: str | None = Field(default=None, description="UTC ISO time the log was written; None in a log "
                                 "mapped from an older folder")


class RunLog(BaseModel):
    """log.json; see the module docstring."""

    log_version: int = RUN_LOG_VERSION
    kind: RunKind | None = Field(description="which protocol ran; None for a folder that says nothing of it "
                                 "(a trace alone, as a Studio thread leaves)")
    task_id: str
    run_id: str | None = None
    method: str | None = None
    request: RunRequest | None = Field(default=None, description="run.json's request; None where the run kept "
                                       "none (construct check-tests)")
    status: str = Field(description="finished, budget-limited, failed, interrupted, running, awaiting-review, "
                        "or unknown")
    reason: str | None = None
    samples: list[Sample] = Field(default_factory=list)
    usage: UsageTotals = Field(default_factory=UsageTotals, description="every model call of the run, earlier "
                               "invocations included")
    timings: Timings = Field(default_factory=Timings)
    isolation: str | None = Field(default=None, description='what its hidden unit tests ran in, as their report '
                                  'says: "namespaces", or "none" (unprotected: the code under test could have '
                                  "faked its score); None without a unit report (reflect and refine keep none)")
    record: dict[str, Any] | None = Field(default=None, description="the protocol's own record (summary.json's "
                                          "content; a refine run's turns); None while the run has not ended")

    @property
    def ended(self) -> bool:
        """Whether the run wrote its record (its outputs are complete)."""
        return self.record is not None

    def score(self, scorer: str, sample: str | None = None) -> Score | None:
        """The score `scorer` gave `sample` (default: the run's task), or None."""
        wanted = sample if sample is not None else self.task_id
        found = next((s for s in self.samples if s.id == wanted), None)
        return found.scores.get(scorer) if found is not None else None


# ------------------------------------------------------------------ the writer


def write_run_log(folder: RunFolder, kind: RunKind, record: Mapping[str, Any], *, manifest: RunManifest | None,
                  summary: str | None = None, scores: Mapping[str, Score] | None = None) -> RunLog:
    """How the run in `folder` ended: summary.json's text (`summary`, as its kind writes it) and then log.json,
    both whole or absent. `scores` are what the caller's scorers gave the run (`projectgen.runs.output_scorers`),
    kept with its task's."""
    if summary is not None:
        write_atomic(folder.summary, summary)
    log = _build_run_log(kind, record, manifest, folder,
                         ended_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    if scores:
        task_sample = next(sample for sample in log.samples if sample.id == log.task_id)
        task_sample.scores.update(scores)
    write_atomic(folder.run_log, log.model_dump_json(indent=1) + "\n")
    return log


def _build_run_log(kind: RunKind | None, record: Mapping[str, Any] | None, manifest: RunManifest | None,
                   folder: RunFolder, *, ended_at: str | None = None) -> RunLog:
    """The log of a run of `kind` from its record and run.json; usage from its usage.jsonl, isolation from its
    unit report. The writer and the reader of older folders both build it here, so both give one log."""
    record = dict(record) if record is not None else None
    task_id = (manifest.task_id if manifest is not None else None) or _text((record or {}).get("task_id")) \
        or _text((record or {}).get("task")) or folder.root.name
    status, reason = ((manifest.status, manifest.reason) if manifest is not None else ("unknown", None))
    duration = None
    samples: list[Sample] = []
    if record is not None:
        status, reason = _ended_status(kind, record, manifest)
        samples = _samples(kind, record, task_id)
        recorded = record.get("duration_s")
        duration = float(recorded) if isinstance(recorded, (int, float)) else None
    return RunLog(
        kind=kind, task_id=task_id, run_id=manifest.run_id if manifest is not None else _text(
            (record or {}).get("run_id")),
        method=manifest.method if manifest is not None else _text((record or {}).get("method")),
        request=manifest.request() if manifest is not None else None, status=status, reason=reason,
        samples=samples, usage=UsageTotals.of(folder.usage_records()),
        timings=Timings(duration_s=duration, ended_at=ended_at), isolation=_report_isolation(folder.unit_report),
        record=record)


def _ended_status(kind: RunKind | None, record: Mapping[str, Any],
                  manifest: RunManifest | None) -> tuple[str, str | None]:
    """(status, reason) of a run that wrote its record: the record's where it keeps one (LiveCoder's, the
    single pass's), else run.json's, else finished."""
    if kind in ("livecoder", "single-pass", EXTERNAL_KIND) and isinstance(record.get("status"), str):
        return str(record["status"]), _text(record.get("reason"))
    if manifest is not None and manifest.status != "running":
        return manifest.status, manifest.reason
    return "finished", None


def _samples(kind: RunKind | None, record: Mapping[str, Any], task_id: str) -> list[Sample]:
    """The scores each kind's record holds, by scorer name."""
    scores: dict[str, Score] = {}
    if kind in ("livecoder", "single-pass", "evolve", EXTERNAL_KIND):
        if isinstance(record.get("unit_tests"), Mapping):
            scores[UNIT] = _tests_score(record["unit_tests"])
        final = record.get("final")
        if isinstance(final, Mapping):
            scores[SELECTION] = Score(value=final.get("score"), detail={
                "suite": record.get("selection"), "source": final.get("source"), "attempt": final.get("attempt")})
    elif kind == "reflect":
        scores[TESTS] = Score(value=1.0 if record["status"] == "passed" else 0.0, detail={
            "passed_at": record["passed_at"], "tries_allowed": record["tries_allowed"]})
        scores[WELL_FORMAT] = Score(value=1.0 if record["well_formed"] else 0.0)
    elif kind == "refine":
        return [Sample(id=f"{task_id}/turn-{turn['turn']}", scores={TESTS: Score(
            value=None if turn.get("passed") is None else float(bool(turn["passed"])),
            passed=turn.get("tests_passed"), total=turn.get("tests_total"), detail={"status": turn.get("status")})})
            for turn in record["turns"]]
    elif kind == "check-tests":
        scores[KEPT] = Score(value=1.0 if record["kept"] else 0.0, detail={"files": record["files"]})
    elif isinstance(record.get("scores"), Mapping):  # a protocol's own scorers (`projectgen.protocols.samples`)
        scores = {str(name): Score(value=float(value)) for name, value in record["scores"].items()}
    return [Sample(id=task_id, scores=scores)]


def _tests_score(summary: Mapping[str, Any]) -> Score:
    """A test run's score from its report's summary (`TestReport.summary()`): #Pass of the tests it ran."""
    rate = summary.get("pass_rate")
    return Score(value=float(rate) if isinstance(rate, (int, float)) else None,
                 passed=_count(summary.get("passed")), total=_count(summary.get("total")),
                 detail={k: v for k, v in summary.items() if k not in ("passed", "total", "pass_rate")})


def _report_isolation(path: Path) -> str | None:
    """The isolation a test report at `path` recorded (None without one, or one from before it was recorded)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    isolation = data.get("isolation") if isinstance(data, Mapping) else None
    return str(isolation) if isolation else None


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, str) and value else None


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# ------------------------------------------------------------------ the reader


def read_run_log(path: Path | str | RunFolder) -> RunLog:
    """The run log of the folder at `path`: its log.json, or for a folder written before the log existed its
    run.json and summary.json (or turns.json) mapped onto a `RunLog`. A run that has not ended reads with its
    run.json's status and no record. A folder it cannot read (not a run folder, a broken or unknown file, a log
    of a later version) is one line: `ProjectGenError`."""
    folder = path if isinstance(path, RunFolder) else RunFolder(Path(path))
    if folder.run_log.is_file():
        return _parse_log(folder.run_log)
    if not folder.root.is_dir() or not folder.is_run():
        raise ProjectGenError(f"{folder.root}: not a run folder (no run log, run.json or summary.json)")
    manifest = folder.read_manifest() if folder.manifest.is_file() else None
    summary = _json_object(folder.summary)
    kind = _kind(folder, manifest, summary)
    record = summary
    turns_file = RefineLayout(folder.root).turns
    if kind == "refine" and turns_file.is_file():
        turns = _json_value(turns_file)
        if not isinstance(turns, list):
            raise ProjectGenError(f"{turns_file}: not a readable run record (expected a list of turns)")
        record = {"turns": turns}
    try:
        return _build_run_log(kind, record, manifest, folder)
    except (KeyError, TypeError, ValueError, ValidationError) as exc:
        source = turns_file if kind == "refine" else folder.summary
        raise ProjectGenError(f"{source}: not a readable {kind or 'run'} record "
                              f"({type(exc).__name__}: {exc})".splitlines()[0]) from None


def _kind(folder: RunFolder, manifest: RunManifest | None, summary: Mapping[str, Any] | None) -> RunKind | None:
    """Which protocol an older folder holds: run.json's method, else (a folder without one) summary.json's
    shape; None when neither says."""
    if manifest is not None:
        if manifest.method in PROTOCOL_KINDS:
            return PROTOCOL_KINDS[manifest.method]
        if manifest.method in METHODS:
            return "livecoder"
    if summary is None:
        return None
    if "attempts" in summary:
        return "livecoder"
    if "drafts" in summary:
        return "check-tests"
    if "edit_format" in summary and "tries" in summary:
        return "reflect"
    if "stages" in summary:
        return "single-pass"
    raise ProjectGenError(f"{folder.summary}: not a run summary this projectgen knows (keys: "
                          f"{', '.join(sorted(summary)[:8]) or 'none'})")


def _parse_log(path: Path) -> RunLog:
    data = _json_object(path)
    assert data is not None
    version = data.get("log_version")
    if isinstance(version, int) and version > RUN_LOG_VERSION:
        raise ProjectGenError(f"{path}: a run log of version {version}, written by a later projectgen (this one "
                              f"reads up to {RUN_LOG_VERSION}); upgrade projectgen to read it")
    try:
        return RunLog.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"]) or "top level"
        raise ProjectGenError(f"{path}: not a readable run log ({where}: {error['msg']})") from None


def _json_object(path: Path) -> dict[str, Any] | None:
    """A JSON object file; None when missing, one line when unreadable or not an object."""
    if not path.is_file():
        return None
    data = _json_value(path)
    if not isinstance(data, dict):
        raise ProjectGenError(f"{path}: not a readable run record (expected a JSON object)")
    return data


def _json_value(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ProjectGenError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except UnicodeDecodeError as exc:
        raise ProjectGenError(f"{path}: not valid UTF-8 at byte {exc.start}") from None
    except OSError as exc:
        raise ProjectGenError(f"{path}: cannot read ({exc.strerror or exc})") from None

