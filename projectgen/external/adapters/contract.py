"""The adapter contract, shared by every system's adapter: its reading side (the environment's variables and
the task's documents, each checked), the one way an adapter writes a file into OUT, and its command's frame
(one line and an exit status for what it refuses) (docs/external-systems.md, "The adapter contract").

Standalone on purpose: it runs with a system's own Python, in its environment, where projectgen is not
installed. An adapter imports it as ``contract``: Python puts a script's folder first on sys.path, and the
runner binds the adapters' folder into the sandbox read-only. run.json's ``adapter_sha256`` covers this file
with the adapter that imports it (`SystemEntry.adapter_sha256`), so a change here refuses a continue as a
change to the adapter does.
"""
from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

DOCUMENT_ORDER = ("prd", "uml", "architecture")  # how ProjectGen lists them: the PRD, the UML, the design


@dataclass(frozen=True)
class Settings:
    """What the adapter contract passes in the environment; a sampling value is None when the experiment's
    model sends none (a replay), and the system then keeps its own default (the bridge decides anyway)."""

    base_url: str
    api_key: str
    model: str
    temperature: float | None
    top_p: float | None
    max_tokens: int | None
    max_iterations: int


class AdapterError(Exception):
    """Bad input to the adapter: one line on stderr and exit code 2 (`run_adapter`), before the system runs."""

    status = 2


class RefusedPathError(AdapterError, ValueError):
    """A file the system named that the adapter will not write: its path leaves OUT or reaches it through a
    link. The system ran and its output is wrong, so the run fails (exit code 1). A ValueError too, as the
    openevolve evaluator reads a bad packed path."""

    status = 1


def parse_arguments(argv: Sequence[str] | None, description: str) -> argparse.Namespace:
    """The contract's command line, ``--docs DOCS --out OUT`` (paths relative to the working directory)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--docs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def read_settings(environ: Mapping[str, str]) -> Settings:
    """The contract's variables, each checked: a wrong number would silently change the run."""

    def required(name: str) -> str:
        value = environ.get(name, "").strip()
        if not value:
            raise AdapterError(f"{name} is not set")
        return value

    def number(name: str, kind: type, optional: bool) -> Any:
        text = environ.get(name, "").strip()
        if not text and optional:
            return None
        try:
            return kind(required(name))
        except ValueError:
            raise AdapterError(f"{name} is not a {kind.__name__}: {text!r}") from None

    base_url = required("OPENAI_BASE_URL").rstrip("/")
    if not base_url.endswith("/v1"):
        raise AdapterError(f"OPENAI_BASE_URL must end in /v1: {base_url!r}")
    return Settings(base_url=base_url, api_key=required("OPENAI_API_KEY"), model=required("PROJECTGEN_MODEL"),
                    temperature=number("PROJECTGEN_TEMPERATURE", float, True),
                    top_p=number("PROJECTGEN_TOP_P", float, True),
                    max_tokens=number("PROJECTGEN_MAX_TOKENS", int, True),
                    max_iterations=number("PROJECTGEN_MAX_ITERATIONS", int, False))


def document_rank(name: str) -> tuple[int, str]:
    lowered = name.lower()
    for rank, prefix in enumerate(DOCUMENT_ORDER):
        if lowered.startswith(prefix):
            return rank, lowered
    return len(DOCUMENT_ORDER), lowered


def document_paths(docs: Path) -> list[Path]:
    """The task's documents (the files directly in DOCS), PRD first, then UML, then the architecture design."""
    if not docs.is_dir():
        raise AdapterError(f"--docs is not a folder: {docs}")
    files = sorted((path for path in docs.iterdir() if path.is_file()), key=lambda path: document_rank(path.name))
    if not files:
        raise AdapterError(f"no documents in {docs}")
    return [path.resolve() for path in files]


def read_documents(docs: Path) -> list[tuple[str, str]]:
    """The task's documents as (file name, text), in `document_paths`' order."""
    return [(path.name, path.read_text(encoding="utf-8", errors="replace")) for path in document_paths(docs)]


def documents_text(documents: Sequence[tuple[str, str]]) -> str:
    """The documents as one text, each under a heading with its file name."""
    return "\n\n".join(f"## {name}\n\n{text.strip()}" for name, text in documents)


def run_adapter(name: str, description: str, argv: Sequence[str] | None,
                run: Callable[[argparse.Namespace], int]) -> int:
    """Every adapter's command: `run` over the contract's command line, what it refuses said in the one line
    `NAME adapter: ...` the runner quotes as the run's reason, with the refusal's exit status."""
    args = parse_arguments(argv, description)
    try:
        return run(args)
    except AdapterError as error:
        print(f"{name} adapter: {error}", file=sys.stderr)
        return error.status


def relative_path(name: str) -> PurePosixPath:
    """NAME as a path inside the repository (OUT), as a system names a file; RefusedPathError when it would
    leave it (absolute, `..`) or cannot be a POSIX file name (empty, a NUL byte, a backslash: a Windows
    path, which would make one file of a folder's name)."""
    pure = PurePosixPath(name)
    if not pure.parts or pure.is_absolute() or ".." in pure.parts or "\\" in name or "\x00" in name:
        raise RefusedPathError(f"not a path inside the repository: {name!r}")
    return pure


def files_in(folder: Path) -> list[PurePosixPath]:
    """The regular files below FOLDER (relative, sorted) that a system wrote there. A link is none of them,
    nor is what is below a linked folder: it could name anything the system can read."""
    return sorted(PurePosixPath(path.relative_to(folder).as_posix()) for path in folder.rglob("*")
                  if path.is_file() and not path.is_symlink())


def copy_into(out: Path, name: str, data: bytes) -> str:
    """Write DATA as the file NAME inside OUT, the one way an adapter writes there; the path written.

    Refused (RefusedPathError) when NAME leaves OUT (`relative_path`), or a folder or the file on the way is a
    link, a hard-linked file or no regular file, or a name too long to write: a system may leave a link in
    OUT before the adapter copies its output there. Each folder is opened without following a link and the
    next name looked up in it (`dir_fd`), so no check can be raced by a link made after it. OUT is made when
    missing."""
    relative = relative_path(name)
    out.mkdir(parents=True, exist_ok=True)
    longest_name, longest_path = os.pathconf(out, "PC_NAME_MAX"), os.pathconf(out, "PC_PATH_MAX")
    if any(len(os.fsencode(part)) > longest_name for part in relative.parts) \
            or len(os.fsencode(out.absolute() / relative)) >= longest_path:
        raise RefusedPathError(f"a name too long for the file system: {name[:80]!r}...")
    folder = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth, part in enumerate(relative.parts[:-1], start=1):
            try:
                os.mkdir(part, dir_fd=folder)
            except FileExistsError:
                pass
            inner = _open_in(folder, part, os.O_RDONLY | os.O_DIRECTORY, name, relative.parts[:depth])
            os.close(folder)
            folder = inner
        # O_NONBLOCK: a FIFO left under the file's name is refused at once instead of waiting for a reader
        written = _open_in(folder, relative.name, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, name, relative.parts)
        with os.fdopen(written, "wb") as file:
            found = os.fstat(file.fileno())
            if not stat.S_ISREG(found.st_mode) or found.st_nlink > 1:
                raise RefusedPathError(f"{name!r} is not written: it is in OUT already as no file of its own "
                                       "(a hard link or a special file)")
            file.truncate()
            file.write(data)
    finally:
        os.close(folder)
    return relative.as_posix()


def _open_in(folder: int, part: str, flags: int, name: str, path: tuple[str, ...]) -> int:
    """PART opened in the open FOLDER, never through a link; a refusal that names what is in the way."""
    try:
        return os.open(part, flags | os.O_NOFOLLOW, 0o666, dir_fd=folder)
    except OSError as error:
        try:
            is_link = stat.S_ISLNK(os.lstat(part, dir_fd=folder).st_mode)
        except OSError:
            is_link = False
        what = "a link" if is_link else error.strerror
        raise RefusedPathError(f"{name!r} is not written: {'/'.join(path)} in OUT: {what}") from None
