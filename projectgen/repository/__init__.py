"""A repository is a mapping from relative POSIX path to file text.

Paths come from models and users, so every write goes through `safe_relpath`,
which refuses absolute paths, `..` and anything that would leave the root.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from projectgen.errors import ProjectGenError

Repository = dict[str, str]

SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".venv", ".pytest_cache", ".mypy_cache", "node_modules"})


def safe_relpath(path: str) -> str:
    """Normalize a repository path; raise if it is absolute, escapes the root or names a home folder (``~/``)."""
    text = path.strip().replace("\\", "/")
    if not text or text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise ProjectGenError(f"unsafe repository path {path!r}: must be relative")
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        raise ProjectGenError(f"unsafe repository path {path!r}: must stay inside the repository")
    if parts[0].startswith("~"):  # a shell, `expanduser` or a later tool would read it as a home folder
        raise ProjectGenError(f"unsafe repository path {path!r}: must not start with '~'")
    return "/".join(parts)


def load_repository(root: Path, suffixes: tuple[str, ...] | None = None) -> Repository:
    """Read every text file below `root` (skipping caches and VCS folders)."""
    root = Path(root)
    if not root.is_dir():
        raise ProjectGenError(f"{root}: repository folder not found")
    repo: Repository = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            if suffixes and not name.endswith(suffixes):
                continue
            full = Path(dirpath) / name
            try:
                repo[full.relative_to(root).as_posix()] = full.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # binary or unreadable: not part of a text repository
    return repo


def write_repository(repo: Mapping[str, str], root: Path) -> list[Path]:
    """Write files under `root`, refusing unsafe paths before anything is written."""
    root = Path(root)
    targets = [(root / safe_relpath(rel), text) for rel, text in repo.items()]
    written: list[Path] = []
    for target, text in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written
