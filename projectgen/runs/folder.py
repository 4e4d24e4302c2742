"""`RunFolder`: one run's folder, opened.

Where its files are is its `RunLayout` (`folder.usage`, `folder.checkpoints`, `folder.attempt(2)`:
runs/layout.py), so no other module joins a run-folder path; a reader that only needs a path makes
the layout, not a `RunFolder`. The folder is opened for a new run (`create`: refusing to
mix runs, `--force` clearing only a run's files) or for a resume (`hold`), both under the folder's
lock; and it makes what a run needs from its files: the model gateway (usage, call cache, prompts,
budgets, the door's retries and reply cap), the trace writer and the `Lifecycle`, the one writer of
run.json's status (`runs/lifecycle.py`); the driver opens the checkpoints at the path it is given.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from projectgen.agents.base import ModelGateway
from projectgen.durable_files import is_interrupted_write, remove_interrupted_writes, write_atomic
from projectgen.errors import ProjectGenError
from projectgen.llm import CallCache, PromptStore, UsageRecorder
from projectgen.repository import write_repository
from projectgen.runs import layout
from projectgen.runs.layout import RunLayout
from projectgen.runs.lifecycle import Lifecycle
from projectgen.runs.locking import folder_lock
from projectgen.runs.manifest import RunManifest, parse_manifest, run_budget
from projectgen.runs.trace import TraceWriter

if TYPE_CHECKING:
    from projectgen.config import Settings
    from projectgen.llm import Budget, CallRecord
    from projectgen.runs.request import RunRequest


@dataclass(frozen=True)
class RunFolder(RunLayout):
    """A run's folder: its files (`RunLayout`), how it is opened, what the run is made of."""

    # ------------------------------------------------------------------ opening it
    @contextmanager
    def create(self, *, force: bool) -> Iterator[RunFolder]:
        """The folder prepared for a new run (`prepare`) and held by this process until the block ends.

        With `force` on an existing folder the lock is taken first, so the files of a run still going
        there are never deleted; otherwise after, so a folder made here is removed again on failure.
        """
        with ExitStack() as locked:
            early = force and self.root.is_dir()
            if early:
                locked.enter_context(folder_lock(self.root))
            self.prepare(force=force)
            if not early:
                locked.enter_context(folder_lock(self.root))
            yield self

    @contextmanager
    def hold(self, what: str = "run") -> Iterator[RunFolder]:
        """The folder held by this process (a resume): a second process is refused with one line. What a killed
        process left of its atomic writes goes first: a resumed run ends with the files of an uninterrupted one."""
        with folder_lock(self.root, what):
            remove_interrupted_writes(self.root, layout.GENERATED)
            yield self

    @contextmanager
    def open_unit(self, request: RunRequest, run_id: str) -> Iterator[tuple[Lifecycle, bool]]:
        """A batch unit's folder, held: (its run.json's `Lifecycle`, whether the unit resumes). Made with run.json
        on the unit's first start; a batch runs a unit again in the same folder, which then resumes (a folder written
        before units had a run.json resumes from its checkpoints), unless the folder holds a run of another
        request (another model under the same name): that run's files are cleared first."""
        self.root.mkdir(parents=True, exist_ok=True)
        with self.hold():
            if self.manifest.is_file():
                recorded = self.read_manifest()
                if recorded.request().model_dump() == request.model_dump():
                    yield self.lifecycle(recorded), True
                    return
                self._remove_outputs()
            lifecycle = self.lifecycle(RunManifest(**dict(request), run_id=run_id))
            lifecycle.start()
            yield lifecycle, self.checkpoints.is_file()

    def prepare(self, *, force: bool) -> None:
        """Refuse to mix a new run into an earlier one's files unless told to, and a folder that cannot be
        written; both before anything is written or removed (a folder made here is removed again on failure)."""
        made: Path | None = None  # the topmost folder this call creates
        try:
            if self.root.exists() and not self.root.is_dir():
                raise ProjectGenError(f"{self.root} exists and is not a folder; choose another --out")
            if self.root.exists() and any(p.name != layout.LOCK for p in self.root.iterdir()) and not force:
                raise ProjectGenError(f"{self.root} is not empty; choose another --out or pass --force to replace it")
            if not self.root.exists():
                made = self.root
                while not made.parent.exists() and made.parent != made:
                    made = made.parent
                self.root.mkdir(parents=True)
            handle, probe = tempfile.mkstemp(prefix=".projectgen-write-check-", dir=self.root)
            os.close(handle)
            os.unlink(probe)
            if force:
                self._remove_outputs()
        except OSError as exc:
            if made is not None and made.is_dir():
                shutil.rmtree(made, ignore_errors=True)
            raise ProjectGenError(f"{self.root}: cannot write there ({exc.strerror or exc}); choose another --out") \
                from None

    def _remove_outputs(self) -> None:
        """What `--force` clears: the files a run writes (`layout.RUN_OUTPUTS`, and what a killed run left of
        its atomic writes), and nothing else."""
        for name in layout.RUN_OUTPUTS:
            for leftover in self.root.glob(f"{glob.escape(name)}.tmp-*"):
                if is_interrupted_write(leftover):
                    leftover.unlink()
            target = self.root / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()

    # ------------------------------------------------------------------ run.json
    def read_manifest(self) -> RunManifest:
        """run.json; a missing or unreadable one is one line for the user."""
        return parse_manifest(self.manifest, self.root)

    def lifecycle(self, manifest: RunManifest) -> Lifecycle:
        """The one writer of this folder's run.json, starting from `manifest`."""
        return Lifecycle(self.manifest, manifest)

    def write_review(self, record: Mapping[str, Any]) -> None:
        """review.json: the review a paused run waits for (`runs.pending_review` says what it holds)."""
        write_atomic(self.review, json.dumps(dict(record), indent=1, default=str) + "\n")

    def clear_review(self) -> None:
        """The run went on past its review: review.json goes."""
        self.review.unlink(missing_ok=True)

    def read_review(self) -> Any:
        """review.json as it was written (None when there is none); a file that does not parse is one line."""
        if not self.review.is_file():
            return None
        try:
            return json.loads(self.review.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProjectGenError(f"{self.review}: unreadable ({exc}); `projectgen run --resume {self.root}` "
                                  "writes it again") from None

    # ------------------------------------------------------------------ what a run is made of
    def usage_records(self) -> list[CallRecord]:
        """Every model call the run recorded, those of earlier invocations included."""
        return UsageRecorder.load(self.usage).records

    def budget(self, manifest: RunManifest) -> Budget | None:
        """The token and cost budgets run.json asks for, charged with the calls already recorded here."""
        return run_budget(manifest, UsageRecorder.load(self.usage))

    def gateway(self, settings: Settings, *, scope: str, budget: Budget | None = None,
                sync: Callable[[], None] | None = None, metadata: Mapping[str, Any] | None = None) -> ModelGateway:
        """The one door to the models for this run: every call recorded in usage.jsonl, its prompt kept in
        prompts.jsonl, answered from calls.jsonl when a killed run had completed it (`scope` keys that
        cache), charged to `budget`, retried and capped as `settings` say; `sync()` after each call."""
        return ModelGateway(recorder=UsageRecorder(self.usage), budget=budget,
                            cache=CallCache(self.calls, scope, after_put=sync), prompts=PromptStore(self.prompts),
                            metadata=dict(metadata or {}), **settings.gateway_options())

    def trace(self) -> TraceWriter:
        """The writer of events.jsonl."""
        return TraceWriter(self.events)

    # ------------------------------------------------------------------ outputs
    def write_json(self, path: Path, data: Any) -> None:
        """`data` as indented JSON at `path` (one of this folder's files), replaced in one step."""
        write_atomic(path, json.dumps(data, indent=1, default=str) + "\n")

    def write_repository(self, repository: Mapping[str, str]) -> None:
        """The run's output repository, replacing what an earlier (failed or resumed) invocation left there."""
        if self.repository.is_dir():
            shutil.rmtree(self.repository)
        write_repository(repository, self.repository)
        self.repository.mkdir(parents=True, exist_ok=True)


def read_manifest(out_dir: Path | str) -> RunManifest:
    """run.json of the run folder `out_dir` (`RunFolder.read_manifest`)."""
    return RunFolder(Path(out_dir)).read_manifest()
