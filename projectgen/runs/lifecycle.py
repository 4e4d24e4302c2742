"""`Lifecycle`: the one writer of run.json, so a run's status changes in one place and by one rule.

run.json is written first (what was run: enough to resume) and again at every change of how the run
stands: running again (a review decision), finished, budget-limited, awaiting-review, interrupted,
failed; each write names the pid that made it. The driver, the LiveCoder run, the single pass, evolve,
a batch unit and the construction pipeline all hold one `Lifecycle` and write through it, never run.json
itself (`tests/runs/test_lifecycle.py` keeps it so).
"""
from __future__ import annotations

import os
from pathlib import Path

from projectgen.durable_files import write_atomic
from projectgen.runs.manifest import RunManifest

INTERRUPTED_REASON = "interrupted (Ctrl-C or SIGTERM); continue with --resume"


class Lifecycle:
    """run.json of one run as it stands: written whole, in one step, each time it changes."""

    def __init__(self, path: Path, manifest: RunManifest) -> None:
        self.path = Path(path)
        self._manifest = manifest

    @property
    def manifest(self) -> RunManifest:
        """run.json as last written (or as read, before the first write)."""
        return self._manifest

    def start(self) -> RunManifest:
        """run.json as the run starts: what a killed run is resumed from."""
        self._write(self._manifest)
        return self._manifest

    def amend(self, manifest: RunManifest) -> RunManifest:
        """run.json with what a resume changed about the run (a moved model endpoint), its status kept."""
        self._write(manifest.model_copy(update={"status": self._manifest.status, "reason": self._manifest.reason,
                                                "pid": self._manifest.pid}))
        return self._manifest

    def record(self, status: str, reason: str | None) -> RunManifest:
        """run.json saying how the run stands (running, finished, failed, interrupted ...), with the pid of the
        process that says so."""
        self._write(self._manifest.model_copy(update={"status": status, "reason": reason, "pid": os.getpid()}))
        return self._manifest

    def running(self) -> RunManifest:
        """The run goes on (a paused run given its review decision)."""
        return self.record("running", None)

    def interrupted(self) -> RunManifest:
        """Ctrl-C or SIGTERM stopped it: a resume continues it."""
        return self.record("interrupted", INTERRUPTED_REASON)

    def failed(self, reason: str) -> RunManifest:
        """A model kept failing: the checkpoint holds the failed step, so a resume continues there."""
        return self.record("failed", reason)

    def _write(self, manifest: RunManifest) -> None:
        write_atomic(self.path, manifest.model_dump_json(indent=1) + "\n")
        self._manifest = manifest
