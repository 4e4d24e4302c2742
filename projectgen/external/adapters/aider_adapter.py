"""Adapter: aider, driven by its own command line with one message, writes a repository from the task's documents.

Run inside the sandbox with the system's own Python as ``python aider_adapter.py --docs DOCS --out OUT`` (the
adapter contract in docs/external-systems.md). It runs ``python -m aider`` in OUT the way aider's docs script
it (``--message`` sends one instruction, aider applies the edits, lints what it wrote and fixes what the
linter found, then exits; ``--yes-always`` answers its questions), with the documents added as read-only files
(``--read``). Everything aider would fetch or send is switched off on its command line (update check,
analytics, URL scraping, playwright) or answered from the package (`seed_model_prices`), and its history files
go to TMPDIR, not into the repository. It imports nothing of projectgen, only `contract` beside it, on
purpose: it runs in aider's environment, where projectgen is not installed. Its file name is not the
package's, or ``python aider.py`` would import itself as ``aider``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from contract import Settings, document_paths, read_settings, run_adapter

MESSAGE = ("Implement the software project specified by the read-only documents ({names}: its PRD, UML and "
           "architecture design) as a complete repository in the current directory: create every source "
           "file the design names, at the paths it gives, with its full implementation.")
PRICES_FILE = "model_prices_and_context_window.json"


def aider_arguments(settings: Settings, documents: Sequence[Path], history: Path) -> list[str]:
    """aider's command line (after ``python -m aider``)."""
    arguments = [
        "--model", f"openai/{settings.model}",
        "--openai-api-base", settings.base_url,
        "--openai-api-key", settings.api_key,
        "--message", MESSAGE.format(names=", ".join(path.name for path in documents)),
        "--yes-always",
        "--no-git",
        "--no-check-update", "--no-show-release-notes", "--analytics-disable",
        "--no-detect-urls", "--disable-playwright",
        "--no-show-model-warnings",
        "--no-pretty", "--no-fancy-input",
        "--encoding", "utf-8",
        "--input-history-file", str(history / "input.history"),
        "--chat-history-file", str(history / "chat.history.md"),
        "--llm-history-file", str(history / "llm.history.txt"),
    ]
    for path in documents:
        arguments += ["--read", str(path)]
    return arguments


def seed_model_prices(home: Path, bundled: Path) -> None:
    """aider looks a model up in litellm's price list, which it downloads into ~/.aider/caches once a day;
    the copy litellm ships answers instead (no model of the bridge is in it either way)."""
    cache = home / ".aider" / "caches"
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(bundled, cache / PRICES_FILE)


def remove_aider_state(out: Path) -> list[str]:
    """aider's own files in the repository (its tag cache, its .env lookups): not part of what it wrote."""
    removed = []
    for path in sorted(out.glob(".aider*")):
        shutil.rmtree(path) if path.is_dir() else path.unlink()
        removed.append(path.name)
    return removed


def bundled_prices() -> Path:
    import litellm

    return Path(litellm.__file__).parent / "model_prices_and_context_window_backup.json"


def run(args: argparse.Namespace) -> int:
    settings = read_settings(os.environ)
    documents = document_paths(args.docs)
    history = Path(os.environ.get("TMPDIR", "/tmp")) / "aider"
    history.mkdir(parents=True, exist_ok=True)
    seed_model_prices(Path.home(), bundled_prices())
    args.out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "aider", *aider_arguments(settings, documents, history)]
    status = subprocess.call(command, cwd=args.out, stdin=subprocess.DEVNULL)
    removed = remove_aider_state(args.out)
    print(json.dumps({"aider_exit": status, "removed": removed}), file=sys.stderr)
    if status == 0 and not any(path.is_file() for path in args.out.rglob("*")):
        print("aider adapter: aider ended without writing a file (no edit of its reply applied)", file=sys.stderr)
        return 1
    return status


def main(argv: Sequence[str] | None = None) -> int:
    return run_adapter("aider", __doc__.splitlines()[0], argv, run)


if __name__ == "__main__":
    sys.exit(main())
