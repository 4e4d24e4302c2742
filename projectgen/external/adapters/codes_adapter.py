"""Adapter: CodeS, from the user's checkout of NL2Code/CodeS, writes a repository from the task's documents.

Run inside the sandbox with the system's own Python as ``python codes_adapter.py --docs DOCS --out OUT``
(the adapter contract in docs/external-systems.md), the checkout's folder in ``PROJECTGEN_SYSTEM_PATH``
(bound read-only). CodeS's released pipeline for a chat model is two scripts of its checkout, run here
unchanged: ``validation/evaluation_scripts/baselines/from_scratch_gpt35_eval.py`` (RepoSketcher, then
FileSketcher for each Python file of the sketch, then SketchFiller for each function, each one
chat-completions call to ``OPENAI_API_BASE_URL``) and ``validation/evaluation_scripts/transfer_output_to_repo.py``
(the filled functions put into the file sketches). CodeS's input is a repository's README.md: it is the
task's documents, PRD first, then UML, then the architecture design. Both scripts write only below TMPDIR;
the repository the second one writes is copied to OUT. CodeS's script sends temperature 0 itself (0.1 when it
asks again after a failed call); the bridge sends the experiment's sampling whatever a request says.
Standalone on purpose: it runs in CodeS's environment, where projectgen is not installed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from contract import (AdapterError, Settings, copy_into, documents_text, files_in, read_documents, read_settings,
                      run_adapter)

SCRIPTS = Path("validation") / "evaluation_scripts"
GENERATE = SCRIPTS / "baselines" / "from_scratch_gpt35_eval.py"
TRANSFER = SCRIPTS / "transfer_output_to_repo.py"
PROJECT = "project"  # CodeS's name for the repository it writes (a folder name in its work folders)


def read_checkout(environ: Mapping[str, str]) -> Path:
    """The checkout of CodeS (PROJECTGEN_SYSTEM_PATH), with the two scripts the run needs."""
    named = environ.get("PROJECTGEN_SYSTEM_PATH", "").strip()
    if not named:
        raise AdapterError("PROJECTGEN_SYSTEM_PATH is not set (CodeS runs from a checkout: --system-path)")
    checkout = Path(named)
    missing = [str(script) for script in (GENERATE, TRANSFER) if not (checkout / script).is_file()]
    if missing:
        raise AdapterError(f"{checkout} is not a checkout of NL2Code/CodeS: no {', '.join(missing)}")
    return checkout


def readme_text(documents: Sequence[tuple[str, str]]) -> str:
    """The README CodeS is given: every document under its own heading."""
    return documents_text(documents) + "\n"


def script_environment(settings: Settings, environ: Mapping[str, str]) -> dict[str, str]:
    """CodeS's script reads its endpoint from OPENAI_API_BASE_URL (not the OpenAI client's variable)."""
    return {**environ, "OPENAI_API_BASE_URL": settings.base_url, "OPENAI_BASE_URL": settings.base_url,
            "OPENAI_API_KEY": settings.api_key, "PYTHONDONTWRITEBYTECODE": "1"}


def pipeline_commands(checkout: Path, work: Path, model: str) -> list[list[str]]:
    """The two scripts, as CodeS's README runs them: generate the sketches and bodies, then fill the files."""
    return [
        [sys.executable, str(checkout / GENERATE), "--project", PROJECT, "--repo_dir", str(work / "input"),
         "--output_dir", str(work / "inference"), "--model", model],
        [sys.executable, str(checkout / TRANSFER), "--project", PROJECT,
         "--input_dir", str(work / "inference" / model.split("/")[-1]), "--output_dir", str(work / "repos")],
    ]


def collect(repository: Path, out: Path) -> list[str]:
    """Copy the repository CodeS wrote to OUT (`copy_into`: a path leaving it refused); the paths copied."""
    return [copy_into(out, str(relative), (repository / relative).read_bytes()) for relative in files_in(repository)]


def run(args: argparse.Namespace) -> int:
    settings = read_settings(os.environ)
    checkout = read_checkout(os.environ)
    documents = read_documents(args.docs)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / "codes"
    (work / "input" / PROJECT).mkdir(parents=True, exist_ok=True)
    (work / "input" / PROJECT / "README.md").write_text(readme_text(documents), encoding="utf-8")
    variables = script_environment(settings, os.environ)
    for command in pipeline_commands(checkout, work, settings.model):
        done = subprocess.run(command, cwd=work, env=variables, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            print(f"codes adapter: {Path(command[1]).name} exited with status {done.returncode}", file=sys.stderr)
            return 1
    args.out.mkdir(parents=True, exist_ok=True)
    written = collect(work / "repos" / PROJECT, args.out)
    print(json.dumps({"files": written}), file=sys.stderr)
    return 0 if written else 1


def main(argv: Sequence[str] | None = None) -> int:
    return run_adapter("codes", __doc__.splitlines()[0], argv, run)


if __name__ == "__main__":
    sys.exit(main())
