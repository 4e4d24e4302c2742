"""Finding an installed Python of a pinned version, one that actually runs.

A name on PATH is not an interpreter: a pyenv shim answers `python3.12` with
"command not found" (exit 127) when that version is not selected, and a venv
built on it fails. So every candidate is run and must report the version asked
for. Candidates, in this order (the first that runs and matches wins):

1. `pythonX.Y` in every folder of PATH, in PATH order (not only the first match);
2. what `uv python find --system X.Y` names (downloads off), when uv is available;
3. pyenv's installs, `$PYENV_ROOT/versions/X.Y*/bin/pythonX.Y` (default `~/.pyenv`), newest first.

When none fits, the caller falls back to the running interpreter and says so.
"""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PROBE = "import sys; print('%d.%d.%d' % sys.version_info[:3])"
PROBE_TIMEOUT = 30.0


@dataclass(frozen=True)
class Interpreter:
    """A Python that ran and reported its version."""

    path: str
    version: str  # e.g. "3.12.1"


@dataclass
class Search:
    """The outcome of a search: the interpreter found, if any, and why each other candidate was passed over."""

    found: Interpreter | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    def explain(self) -> str:
        """The skipped candidates in one line, for a log line or an error."""
        if not self.skipped:
            return "no candidate found"
        return "skipped " + "; ".join(f"{path} ({why})" for path, why in self.skipped)


def matches(version: str, wanted: str) -> bool:
    """Whether an interpreter's "3.12.1" satisfies a pin of "3.12" or "3.12.1"."""
    return version.split(".")[: len(wanted.split("."))] == wanted.split(".")


def probe(path: str) -> tuple[str | None, str]:
    """Run `path`; (its version, "") when it runs, else (None, why not)."""
    try:
        done = subprocess.run([path, "-I", "-S", "-c", PROBE], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"did not answer within {PROBE_TIMEOUT:g}s"
    except OSError as exc:
        return None, exc.strerror or str(exc)
    version = done.stdout.strip()
    if done.returncode != 0 or not re.fullmatch(r"\d+\.\d+\.\d+", version):
        said = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or [""])[0][:120]
        return None, f"exit status {done.returncode}" + (f": {said}" if said else "")
    return version, ""


def candidates(wanted: str, *, search_path: str, uv: str | None, pyenv_root: Path) -> Iterator[str]:
    """Paths that may be Python `wanted`, in the documented order, each once."""
    major_minor = ".".join(wanted.split(".")[:2])
    name = f"python{major_minor}"
    seen: set[str] = set()

    def fresh(path: str) -> bool:
        if path in seen:
            return False
        seen.add(path)
        return True

    for folder in search_path.split(os.pathsep):
        path = os.path.join(folder or ".", name)
        if folder and os.path.isfile(path) and os.access(path, os.X_OK) and fresh(path):
            yield path
    if uv:
        try:
            done = subprocess.run([uv, "python", "find", "--system", "--no-project", wanted],
                                  capture_output=True, text=True, timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL,
                                  env=dict(os.environ, PATH=search_path, UV_PYTHON_DOWNLOADS="never"))
            found = done.stdout.strip() if done.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired):
            found = ""
        if found and fresh(found):
            yield found
    installs = sorted((pyenv_root / "versions").glob(f"{major_minor}*"), key=_version_key, reverse=True)
    for install in installs:
        path = str(install / "bin" / name)
        if os.path.isfile(path) and fresh(path):
            yield path


def _version_key(folder: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", folder.name))


def default_pyenv_root() -> Path:
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")


def find_python(wanted: str, *, uv: str | None, search_path: str | None = None,
                pyenv_root: Path | None = None) -> Search:
    """The first candidate that runs and reports version `wanted` (see the module's order)."""
    search = Search()
    for path in candidates(wanted, search_path=os.environ.get("PATH", "") if search_path is None else search_path,
                           uv=uv, pyenv_root=pyenv_root or default_pyenv_root()):
        version, why = probe(path)
        if version is None:
            search.skipped.append((path, why))
        elif not matches(version, wanted):
            search.skipped.append((path, f"it is Python {version}"))
        else:
            search.found = Interpreter(path, version)
            return search
    return search
