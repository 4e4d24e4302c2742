"""The adapter contract's reading side, shared by every system's adapter: the environment's variables and
the task's documents, each checked (docs/external-systems.md, "The adapter contract").

Standalone on purpose: it runs with a system's own Python, in its environment, where projectgen is not
installed. An adapter imports it as ``contract``: Python puts a script's folder first on sys.path, and the
runner binds the adapters' folder into the sandbox read-only. run.json's ``adapter_sha256`` covers this file
with the adapter that imports it (`SystemEntry.adapter_sha256`), so a change here refuses a continue as a
change to the adapter does.
"""
from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
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
    """Bad input to the adapter: one line on stderr and exit code 2."""


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
