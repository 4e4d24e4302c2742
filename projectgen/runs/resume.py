"""What continuing a run folder takes from it: run.json, the task it names, the settings it recorded.

Shared by `projectgen run --resume DIR`, `projectgen review DIR` and `review_run`, so each refuses a folder
that cannot be continued with the same one line.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from projectgen.errors import ProjectGenError
from projectgen.runs.folder import read_manifest


def resumable_run(out_dir: Path) -> tuple[Any, Any]:
    """(run.json's `RunManifest`, the `Task`) of the run in `out_dir`."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise ProjectGenError(f"{out_dir}: run folder not found" if not out_dir.exists()
                              else f"{out_dir}: not a folder (a run folder is expected)")
    manifest = read_manifest(out_dir)
    if manifest.method == "evolve":
        raise ProjectGenError(f"{out_dir}: an evolve run; continue it with `projectgen evolve --resume {out_dir}`")
    if manifest.method in ("single-pass", "reflect", "refine"):
        raise ProjectGenError(f"{out_dir}: a {manifest.method} run; run the command that made it again to continue it")
    if not Path(manifest.task_path).exists():
        raise ProjectGenError(f"{out_dir}: the run's task folder {manifest.task_path} is gone; put it back "
                              "to resume")
    return manifest, manifest.task()
