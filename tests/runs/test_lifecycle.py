"""run.json has one writer, `Lifecycle`: every status change goes through it, written as run.json always was
(old folders resume; a folder written now reads the same in an older projectgen)."""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path

from projectgen.runs.folder import RunFolder
from projectgen.runs.lifecycle import INTERRUPTED_REASON, Lifecycle
from projectgen.runs.manifest import RunManifest

PACKAGE = Path(__file__).resolve().parents[2] / "projectgen"
WRITERS = {"write_atomic", "write_atomic_bytes", "write_text", "write_bytes", "write_json", "open"}


def _names_run_json(node: ast.AST, from_layout: set[str]) -> bool:
    """Whether an expression names run.json: the folder's `manifest` path, `layout.MANIFEST` (or `MANIFEST`
    imported from it: `from_layout`) or the file name."""
    for part in ast.walk(node):
        if isinstance(part, ast.Attribute) and part.attr in ("manifest", "MANIFEST"):
            return True
        if isinstance(part, ast.Name) and part.id == "MANIFEST" and part.id in from_layout:
            return True
        if isinstance(part, ast.Constant) and part.value == "run.json":
            return True
    return False


def _writes_of_run_json(path: Path) -> list[int]:
    """The lines of `path` that write run.json: a write call given its path, or a write on its path."""
    lines = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_layout = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and node.module == "projectgen.runs.layout" for alias in node.names}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name not in WRITERS:
            continue
        if name == "open" and not any(isinstance(arg, ast.Constant) and isinstance(arg.value, str) and "w" in arg.value
                                      for arg in node.args[1:2]):
            continue  # opened for reading
        target = [*node.args[:1], *(kw.value for kw in node.keywords if kw.arg in ("path", "file"))]
        on_path = isinstance(func, ast.Attribute) and name in ("write_text", "write_bytes", "open")
        if any(_names_run_json(arg, from_layout) for arg in target) or (on_path and _names_run_json(func.value,
                                                                                                   from_layout)):
            lines.append(node.lineno)
    return lines


def test_only_the_lifecycle_writes_run_json() -> None:
    writers = {f"{path.relative_to(PACKAGE.parent)}:{line}" for path in PACKAGE.rglob("*.py")
               if path.name != "lifecycle.py" for line in _writes_of_run_json(path)}
    assert writers == set(), "run.json is written outside runs/lifecycle.py (route the write through Lifecycle)"


def test_the_scan_sees_a_write_of_run_json(tmp_path: Path) -> None:
    """The scan above finds the writes it is there to forbid (else it would pass on anything)."""
    sample = tmp_path / "sample.py"
    sample.write_text("from projectgen.runs.layout import MANIFEST\nwrite_atomic(self.manifest, text)\n"
                      "folder.manifest.write_text(text)\nwrite_atomic(root / layout.MANIFEST, text)\n"
                      "read(folder.manifest)\n(root / MANIFEST).write_text(text)\n", encoding="utf-8")
    assert _writes_of_run_json(sample) == [2, 3, 4, 6]
    own = tmp_path / "own.py"  # a module's own MANIFEST constant names another file
    own.write_text('MANIFEST = "system.json"\n(root / MANIFEST).write_text(text)\n', encoding="utf-8")
    assert _writes_of_run_json(own) == []


def test_each_status_is_written_whole_with_the_writers_pid(tmp_path: Path) -> None:
    manifest = RunManifest(run_id="r1", task_path="t", task_id="t", models={"default": "scripted"})
    lifecycle = RunFolder(tmp_path).lifecycle(manifest)
    lifecycle.start()
    path = tmp_path / "run.json"
    assert path.read_text(encoding="utf-8") == manifest.model_dump_json(indent=1) + "\n"  # as run.json always was
    lifecycle.interrupted()
    assert json.loads(path.read_text(encoding="utf-8"))["reason"] == INTERRUPTED_REASON
    lifecycle.running()
    lifecycle.failed("the model kept failing")
    written = RunFolder(tmp_path).read_manifest()
    assert (written.status, written.reason, written.pid) == ("failed", "the model kept failing", os.getpid())
    assert lifecycle.manifest == written
    moved = lifecycle.amend(written.model_copy(update={"models": {"default": "openai:gpt-4o"}, "status": "running"}))
    # a resume's change (a moved endpoint) keeps the status
    assert (moved.status, moved.models) == ("failed", {"default": "openai:gpt-4o"})
    assert RunFolder(tmp_path).read_manifest() == moved
