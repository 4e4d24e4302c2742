"""Adapter: ChatDev 1.0, from the user's checkout (branch chatdev1.0 of OpenBMB/ChatDev), writes a repository.

Run inside the sandbox with the system's own Python as ``python chatdev_adapter.py --docs DOCS --out OUT``
(the adapter contract in docs/external-systems.md), the checkout's folder in ``PROJECTGEN_SYSTEM_PATH``
(bound read-only). It runs ChatDev's own ``run.py`` with the Default company configuration, the task's
documents (PRD first, then UML, then the architecture design) as ChatDev's task prompt, and the model
reached through ``BASE_URL`` (the variable ChatDev 1.0 reads for its OpenAI client). ChatDev writes its
software and its logs into its checkout's WareHouse/, so the checkout's code is copied to TMPDIR first
and run there; the software folder it made is copied to OUT without ChatDev's own records (its logs, its
configuration copies, meta.txt, the task prompt). ChatDev sends its own sampling (temperature 0.2, top_p
1.0, max_tokens = its context left); the bridge sends the experiment's whatever a request says. Standalone on purpose: it runs in ChatDev's environment,
where projectgen is not installed.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from contract import (AdapterError, Settings, copy_into, documents_text, files_in, read_documents, read_settings,
                      run_adapter)

NAME, ORG = "project", "projectgen"  # ChatDev's software folder: WareHouse/NAME_ORG_TIMESTAMP
# ChatDev's --model: GPT_3_5_TURBO is gpt-3.5-turbo-16k with the new OpenAI client. The name only sets
# ChatDev's own token count (tiktoken's cl100k_base, seeded offline) and its 16k context arithmetic; the
# bridge answers every name with the experiment's model and sampling.
CHATDEV_MODEL = "GPT_3_5_TURBO"
NOT_COPIED = ("WareHouse", "misc", "MultiAgentEbook", "SRDD", "readme", ".git")  # data and pictures, not code
RECORDS = ("ChatChainConfig.json", "PhaseConfig.json", "RoleConfig.json", "meta.txt")  # ChatDev's, not the software's
MAX_TASK_BYTES = 120_000  # one command-line argument (Linux takes 128 KiB at most)


def read_checkout(environ: Mapping[str, str]) -> Path:
    """The checkout of ChatDev 1.0 (PROJECTGEN_SYSTEM_PATH): its run.py and its Default company."""
    named = environ.get("PROJECTGEN_SYSTEM_PATH", "").strip()
    if not named:
        raise AdapterError("PROJECTGEN_SYSTEM_PATH is not set (ChatDev runs from a checkout: --system-path)")
    checkout = Path(named)
    needed = ("run.py", "chatdev/chat_chain.py", "CompanyConfig/Default/ChatChainConfig.json")
    missing = [name for name in needed if not (checkout / name).is_file()]
    if missing:
        raise AdapterError(f"{checkout} is not a checkout of ChatDev 1.0 (branch chatdev1.0): no {', '.join(missing)}")
    return checkout


def task_text(documents: Sequence[tuple[str, str]]) -> str:
    """ChatDev's task prompt: every document under its own heading (one argument of run.py)."""
    text = documents_text(documents)
    if len(text.encode("utf-8")) > MAX_TASK_BYTES:
        raise AdapterError(f"the documents are {len(text.encode('utf-8'))} bytes: ChatDev's --task takes at most "
                           f"{MAX_TASK_BYTES} (one command-line argument)")
    return text


def copy_code(checkout: Path, work: Path) -> Path:
    """ChatDev's code, copied where it may write (WareHouse/ and its logs go next to run.py)."""
    target = work / "chatdev"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(checkout, target, ignore=lambda folder, names: [
        name for name in names if name in NOT_COPIED and Path(folder) == checkout])
    (target / "WareHouse").mkdir()
    return target


def chatdev_command(task: str) -> list[str]:
    return [sys.executable, "run.py", "--config", "Default", "--org", ORG, "--name", NAME,
            "--model", CHATDEV_MODEL, "--task", task]


def chatdev_environment(settings: Settings, environ: Mapping[str, str]) -> dict[str, str]:
    """ChatDev 1.0 reads OPENAI_API_KEY and BASE_URL (camel/model_backend.py)."""
    return {**environ, "OPENAI_API_KEY": settings.api_key, "BASE_URL": settings.base_url,
            "PYTHONDONTWRITEBYTECODE": "1"}


def software_folder(chatdev: Path) -> Path | None:
    """The folder ChatDev wrote the software into (None when it made none)."""
    made = sorted(path for path in (chatdev / "WareHouse").glob(f"{NAME}_{ORG}_*") if path.is_dir())
    return made[-1] if made else None


def is_record(relative: PurePosixPath) -> bool:
    """ChatDev's own records in a software folder: its configuration copies, meta.txt, the log, the prompt."""
    return len(relative.parts) == 1 and (relative.name in RECORDS or relative.suffix in (".log", ".prompt"))


def collect(software: Path, out: Path) -> list[str]:
    """Copy the software ChatDev wrote to OUT (`copy_into`: a path leaving it refused), without its records;
    the paths copied."""
    return [copy_into(out, str(relative), (software / relative).read_bytes()) for relative in files_in(software)
            if not is_record(relative) and "__pycache__" not in relative.parts]


def run(args: argparse.Namespace) -> int:
    settings = read_settings(os.environ)
    checkout = read_checkout(os.environ)
    task = task_text(read_documents(args.docs))
    chatdev = copy_code(checkout, Path(os.environ.get("TMPDIR", "/tmp")))
    done = subprocess.run(chatdev_command(task), cwd=chatdev, env=chatdev_environment(settings, os.environ),
                          stdin=subprocess.DEVNULL)
    software = software_folder(chatdev)
    args.out.mkdir(parents=True, exist_ok=True)
    written = collect(software, args.out) if software is not None else []
    print(json.dumps({"files": written, "chatdev_status": done.returncode}), file=sys.stderr)
    if done.returncode != 0:  # what it wrote before it stopped is kept and scored
        print(f"chatdev adapter: run.py exited with status {done.returncode}", file=sys.stderr)
        return 1
    return 0 if written else 1


def main(argv: Sequence[str] | None = None) -> int:
    return run_adapter("chatdev", __doc__.splitlines()[0], argv, run)


if __name__ == "__main__":
    sys.exit(main())
