"""What a run folder is read into: `RunView` and its rows, attempts, knowledge entries and diffs.

A `RunView` (built by `projectgen.inspection.loading.load_run`) holds:

- ``rows``: one `TimelineRow` per trace event (nodes, stage ends, run start/resume/end)
  with its offset from the run's start, attempt, stage, node, iteration, judge scores,
  check-test result, a one-line detail, and the model calls attributed to it with
  their tokens and cost;
- ``knowledge``: the knowledge entries given to each attempt's prompts (`KnowledgeRow`);
- ``attempts``: one `AttemptView` per attempt (score, best so far, tokens, cost);
- ``calls`` and ``unattributed``: every model call, and those no event could take.

These are plain data with read-only queries; building them is the other modules' job.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from projectgen.errors import ProjectGenError
from projectgen.evaluation.integrity_flags import IntegrityFlag, unique_flags
from projectgen.llm import CallRecord, UsageTotals
from projectgen.llm.pricing import CostTotal, PriceTable, is_scripted
from projectgen.runs.layout import EvolveLayout, RunLayout
from projectgen.runs.locking import last_holder, lock_holder
from projectgen.runs.methods import describe_method
from projectgen.runs.run_log import RunLog
from projectgen.runs.trace import STAGES

# The runs a protocol makes as units of its own batch: their own words, no attempts graph behind them.
OWN_UNIT_LABELS = {"reflect": "LiveRepoReflection unit (write, then repair from the test output)",
                   "refine": "SR-Eval task run (requirements in turns)",
                   "external": "external system run behind the model bridge"}


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
        return diff_line_counts(self.diff)[0]

    @property
    def removed(self) -> int:
        return diff_line_counts(self.diff)[1]


def diff_line_kind(line: str) -> str:
    """What a unified-diff line is: "add", "del", "hunk" (an ``@@`` header) or "" (context, file headers)."""
    if line.startswith("+") and not line.startswith("+++"):
        return "add"
    if line.startswith("-") and not line.startswith("---"):
        return "del"
    return "hunk" if line.startswith("@@") else ""


def diff_line_counts(diff: str) -> tuple[int, int]:
    """(lines added, lines removed) of a unified diff, not counting its ``+++``/``---`` file headers."""
    kinds = [diff_line_kind(line) for line in diff.splitlines()]
    return kinds.count("add"), kinds.count("del")


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
    kind: str  # "livecoder" | "projectgen" | "reflect" | "refine" | "external" (`loading.view_kind`)
    log: RunLog
    """How the run ended (`projectgen.runs.run_log.read_run_log`): its kind, scores, timings; its record."""
    manifest: dict[str, Any] | None
    """run.json as it stands now: the status and pid of a run still going, which the log cannot know."""
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
    def folder(self) -> RunLayout:
        """The run's folder: where each of its files is."""
        return RunLayout(self.path)

    @property
    def has_trace(self) -> bool:
        return bool(self.events)

    @property
    def record(self) -> dict[str, Any] | None:
        """The protocol's own record of the run (summary.json's content), None while it has not ended."""
        return self.log.record

    @property
    def task_id(self) -> str:
        if self.log.request is not None or self.log.ended:
            return self.log.task_id
        start = next((e for e in self.events if e.get("event") == "run_start"), None)
        return str(start.get("task_id")) if start and start.get("task_id") else self.path.name

    def _recorded(self, key: str) -> str | None:
        """A field as the run's record keeps it, else run.json (None where neither does)."""
        for source in (self.record, self.manifest):
            if source and source.get(key):
                return str(source[key])
        return None

    @property
    def run_id(self) -> str | None:
        return self._recorded("run_id")

    @property
    def method(self) -> str | None:
        """The method the run was made with, as recorded (None in an older run or a bare pipeline folder)."""
        return self._recorded("method")

    @property
    def kind_label(self) -> str:
        """What made the run, in words: a one-pass method is not called "LiveCoder attempts" because the
        attempts graph carried it."""
        if self.log.kind == "evolve":
            return "evolve (a change to a finished run)"
        if self.kind == "projectgen":
            return "ProjectGen pipeline (one run)"
        if self.kind in OWN_UNIT_LABELS:
            return OWN_UNIT_LABELS[self.kind]
        if self.method and not self.method.startswith("livecoder"):
            try:
                return describe_method(self.method).label
            except ProjectGenError:
                return f"method {self.method}"
        return "LiveCoder attempts"

    @property
    def selection(self) -> str | None:
        if self.record and self.record.get("selection"):
            return str(self.record["selection"])
        settings = (self.manifest or {}).get("attempt_settings") or {}
        return settings.get("selection")

    @property
    def feedback_suite(self) -> str | None:
        """Whose test output the generators were given: 'check', or 'unit' (the hidden tests, LiveCoder's
        protocol without visible tests); 'check' for a run from before the setting, None without settings."""
        for source in (self.record, self.manifest):
            settings = (source or {}).get("settings")
            if isinstance(settings, Mapping):
                return str(settings.get("feedback_suite", "check"))
        return None

    @property
    def knowledge_given_selection_score(self) -> bool:
        """The knowledge agent was given each attempt's selection score (its entries carry it to later attempts):
        with selection by the hidden unit tests, their pass rate reached the generators that way."""
        settings = (self.manifest or {}).get("attempt_settings") or {}
        return bool(settings.get("success_knowledge", True) or settings.get("failure_knowledge", True))

    @property
    def recorded_settings(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The run's pipeline and attempt settings as it recorded them (summary, else run.json); None without."""
        for source in (self.record, self.manifest):
            settings = (source or {}).get("settings")
            if isinstance(settings, Mapping):
                attempt_settings = (source or {}).get("attempt_settings")
                return dict(settings), dict(attempt_settings) if isinstance(attempt_settings, Mapping) else {}
        return None

    @property
    def oracle(self) -> bool:
        """Attempts were chosen with the hidden unit tests (an oracle upper bound, not a fair score)."""
        if self.record and "oracle" in self.record:
            return bool(self.record["oracle"])
        return self.selection == "unit"

    @property
    def final(self) -> dict[str, Any] | None:
        if self.record and self.record.get("final"):
            return dict(self.record["final"])
        end = self._run_end()
        return dict(end["final"]) if end and isinstance(end.get("final"), Mapping) else None

    @property
    def stopped(self) -> str | None:
        if self.record and self.record.get("stopped"):
            return str(self.record["stopped"])
        end = self._run_end()
        return str(end["stopped"]) if end and end.get("stopped") else None

    def _run_end(self) -> dict[str, Any] | None:
        """The last ``run_end`` event (a run still going or killed has none)."""
        return next((e for e in reversed(self.events) if e.get("event") == "run_end"), None)

    @property
    def status(self) -> str:
        if self.manifest and self.manifest.get("status"):
            recorded = str(self.manifest["status"])
            if recorded == "awaiting-review":
                return f"{recorded} (decide with `projectgen review {self.path}`)"
            return self._liveness(recorded) if recorded == "running" else recorded
        if self.kind == "projectgen":
            return "finished" if self.log.ended else "unknown"
        return "finished" if any(e.get("event") == "run_end" for e in self.events) else "running or interrupted"

    def _liveness(self, recorded: str) -> str:
        """run.json says "running": check that a process still holds the run (a SIGKILL or a crash
        leaves the word behind), and say so when none does."""
        holder = lock_holder(self.path)
        if holder is not None:
            return f"{recorded} (pid {holder})" if holder > 0 else recorded
        pid = last_holder(self.path)
        who = f"pid {pid}" if pid else "its process"
        return (f"not running ({who} ended without finishing: killed or crashed; continue with "
                f"`projectgen run --resume {self.path}`)")

    def integrity_flags(self) -> list[IntegrityFlag]:
        """The integrity flags its test runs recorded, each once: the final output's test reports (unit, and an
        evolve run's check tests), a reflect run's tries and a refine run's turns (none in older runs)."""
        entries: list[Any] = []
        for path in (self.folder.unit_report, EvolveLayout(self.path).check_report):
            entries += (_read_json(path) or {}).get("integrity_flags") or []
        test_runs = {"reflect": "tries", "refine": "turns"}.get(self.log.kind or "")
        for record in ((self.record or {}).get(test_runs) or []) if test_runs else []:
            if isinstance(record, Mapping):
                entries += record.get("integrity_flags") or []
        return unique_flags(IntegrityFlag.model_validate(entry) for entry in entries)

    @property
    def injected_faults(self) -> str | None:
        """The `--inject-faults` spec the run was made with (run.json keeps it beside the models), if any."""
        models = (self.manifest or {}).get("models") or {}
        return str(models["faults"]) if isinstance(models, Mapping) and models.get("faults") else None

    @property
    def duration_s(self) -> float | None:
        if self.log.timings.duration_s is not None:
            return self.log.timings.duration_s
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
        """Every judge verdict in order: attempt, stage, iteration, judge, score, accepted, check, feedback.

        From the trace; a plain ProjectGen run (no trace) falls back to its ``state.json``
        verdicts, and then to the scores and checks in its summary.
        """
        out = [_judge_entry(verdict, row.attempt, verdict.get("stage") or row.stage)
               for row in self.rows for verdict in row.data.get("verdicts") or []]
        if out or self.kind != "projectgen":
            return out
        out = [_judge_entry(verdict, None, verdict.get("stage")) for verdict in self.state_verdicts]
        if out or not self.record:
            return out
        for stage, info in (self.record.get("stages") or {}).items():  # only the summary: scores and checks
            checks = info.get("checks") or []
            for i, score in enumerate(info.get("scores") or []):
                check = checks[i] if i < len(checks) and stage == "code" else None
                last = i == len(info.get("scores") or []) - 1
                out.append({"attempt": None, "stage": stage, "iteration": i + 1, "judge": None, "score": score,
                            "accepted": bool(info.get("accepted")) if last else False,
                            "check": (check.get("passed"), check.get("total")) if check else None, "feedback": ""})
        return out

    def call_row(self, call: CallRecord) -> TimelineRow | None:
        """The row a model call was attributed to, if any."""
        index = self.call_rows.get(id(call))
        return self.rows[index] if index is not None else None


def _judge_entry(verdict: Mapping[str, Any], attempt: int | None, stage: Any) -> dict[str, Any]:
    """One recorded verdict as a `RunView.judge_iterations` entry."""
    check = verdict.get("check") or None
    return {"attempt": attempt, "stage": stage, "iteration": verdict.get("iteration"), "judge": verdict.get("judge"),
            "score": verdict.get("score"), "accepted": verdict.get("accepted"),
            "check": (check.get("passed"), check.get("total")) if isinstance(check, Mapping) else None,
            "feedback": str(verdict.get("feedback") or "")}


def _read_json(path: Path) -> Any:
    """A run file's JSON, or None when it is absent or unreadable (a run still going, an older run)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
