"""What each model call cost and how it went: `CallRecord`, sums of them, and a thread-safe recorder.

Every call through the door leaves one record; a run's recorder appends them to its usage
JSONL file as they come, so the reports and budgets of a resumed run see them all.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field


class CallRecord(BaseModel):
    """One call through the door: who asked, what it cost, how long it took, how it ended."""

    model_config = ConfigDict(frozen=True)

    role: str
    stage: str
    target: str | None = None
    iteration: int = 0
    attempt: int | None = Field(default=None, description="LiveCoder attempt, from the run metadata")
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_estimated: bool = False
    latency_s: float = 0.0
    """Duration of the last try."""
    elapsed_s: float = 0.0
    """The whole call, retries and backoff waits included."""
    attempts: int = 1
    error: str | None = None
    cut_chars: int = Field(default=0, description="characters of an oversized reply dropped at the door's size cap")
    finish_reason: str | None = Field(default=None, description="why the reply ended, as the server says "
                                      "(\"stop\"; \"length\": cut at the output cap or the context window, or "
                                      "at the door's size cap)")
    timestamp: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    call_id: str | None = Field(default=None, description="the call's key in the run's `CallCache`, if any")
    prompt_id: str | None = Field(default=None, description="the call's messages in the run's `PromptStore`, if any")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class UsageTotals(BaseModel):
    """Sums over a set of call records."""

    calls: int = 0
    failed_calls: int = 0
    estimated_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @classmethod
    def of(cls, records: Iterable[CallRecord]) -> UsageTotals:
        totals = cls()
        for r in records:
            totals.calls += 1
            totals.failed_calls += r.error is not None
            totals.estimated_calls += r.tokens_estimated
            totals.input_tokens += r.input_tokens
            totals.output_tokens += r.output_tokens
            totals.latency_s += r.latency_s
        return totals


class UsageRecorder:
    """Thread-safe in-memory list of `CallRecord`s, optionally appended to a JSONL file as they come."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()
        self._call_ids: set[str] | None = None  # read on the first `has`

    def record(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)
            if record.call_id is not None and self._call_ids is not None:
                self._call_ids.add(record.call_id)
            if self.path is not None:
                # One whole line under an exclusive lock (processes sharing the file never interleave);
                # a line torn by a kill is cut off first.
                from projectgen.durable_files import append_line

                append_line(self.path, record.model_dump_json() + "\n")

    def has(self, call_id: str) -> bool:
        """Whether a call with this `CallRecord.call_id` is recorded, here or (read once) in the file."""
        with self._lock:
            if self._call_ids is None:
                self._call_ids = {r.call_id for r in self._records if r.call_id is not None}
                if self.path is not None:
                    self._call_ids |= {r.call_id for r in UsageRecorder.load(self.path).records
                                       if r.call_id is not None}
            return call_id in self._call_ids

    @property
    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def totals(self) -> UsageTotals:
        return UsageTotals.of(self.records)

    def totals_by(self, key: Literal["role", "stage", "model", "target"] = "role") -> dict[str, UsageTotals]:
        groups: dict[str, list[CallRecord]] = {}
        for r in self.records:
            groups.setdefault(str(getattr(r, key)), []).append(r)
        return {name: UsageTotals.of(rs) for name, rs in sorted(groups.items())}

    @classmethod
    def load(cls, path: Path | str) -> UsageRecorder:
        """Records read back from a JSONL file (a line torn by a kill is skipped; no file, no records); the
        result has no sink."""
        recorder = cls()
        path = Path(path)
        if not path.exists():
            return recorder
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                recorder._records.append(CallRecord.model_validate_json(line))
            except ValidationError:
                continue
        return recorder

