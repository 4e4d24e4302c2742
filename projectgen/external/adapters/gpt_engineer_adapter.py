"""Adapter: gpt-engineer's SimpleAgent writes a repository from the task's documents.

Run inside the sandbox with the system's own Python as ``python gpt_engineer_adapter.py --docs DOCS --out
OUT`` (the adapter contract in docs/external-systems.md). It does what ``gpte PROJECT`` does in its default
mode (generate the code, then the entrypoint ``run.sh``) through `SimpleAgent.init`, without the CLI's parts
that need a person or the network: no execution of the entrypoint (it asks before running), no review
questionnaire (it sends answers to gpt-engineer's collector). It imports nothing of projectgen, only
`contract` beside it, on purpose: it runs in gpt-engineer's environment, where projectgen is not installed; it
imports gpt-engineer only inside `generate` (its tests import this file without the package). Its file name is
not the package's, or ``python gpt_engineer.py`` would import itself as ``gpt_engineer``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path

from contract import Settings, copy_into, documents_text, read_documents, read_settings, run_adapter

PROMPT_PREAMBLE = ("Implement the software project specified by the documents below (its PRD, UML and "
                   "architecture design) as a complete repository: create every source file the design "
                   "names at the paths it gives.\n\n")


def prompt_text(documents: Sequence[tuple[str, str]]) -> str:
    """gpt-engineer's prompt file: what its user writes in PROJECT/prompt."""
    return PROMPT_PREAMBLE + documents_text(documents)


def point_at_bridge(settings: Settings, environ: MutableMapping[str, str]) -> None:
    """gpt-engineer's AI builds LangChain's ChatOpenAI from the model name alone: the endpoint reaches it
    through the environment (OPENAI_API_BASE, as its docs say for open models); LOCAL_MODEL makes it
    report tokens instead of an OpenAI price it does not know."""
    environ["OPENAI_API_BASE"] = settings.base_url
    environ["OPENAI_BASE_URL"] = settings.base_url
    environ["OPENAI_API_KEY"] = settings.api_key
    environ["LOCAL_MODEL"] = "true"


def write_files(files: Mapping[str, str], root: Path) -> list[str]:
    """Write the generated files under `root` (`copy_into`: a path leaving it is refused); the paths written.
    A name is stripped: gpt-engineer parses it from the model's reply."""
    return [copy_into(root, str(name).strip(), content.encode("utf-8")) for name, content in files.items()]


def generate(settings: Settings, prompt: str, work: Path) -> dict[str, str]:
    """SimpleAgent.init over `prompt`: the generated files (code and run.sh). Its memory (the chat logs)
    stays in `work`, outside the repository."""
    from gpt_engineer.core.ai import AI
    from gpt_engineer.core.default.simple_agent import SimpleAgent
    from gpt_engineer.core.prompt import Prompt

    sampling = {} if settings.temperature is None else {"temperature": settings.temperature}
    agent = SimpleAgent.with_default_config(str(work), ai=AI(model_name=settings.model, **sampling))
    return dict(agent.init(Prompt(prompt)))


def run(args: argparse.Namespace) -> int:
    settings = read_settings(os.environ)
    documents = read_documents(args.docs)
    point_at_bridge(settings, os.environ)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / "gpt-engineer"
    work.mkdir(parents=True, exist_ok=True)
    files = generate(settings, prompt_text(documents), work)
    args.out.mkdir(parents=True, exist_ok=True)
    written = write_files(files, args.out)
    print(json.dumps({"files": written}), file=sys.stderr)
    return 0 if written else 1


def main(argv: Sequence[str] | None = None) -> int:
    return run_adapter("gpt-engineer", __doc__.splitlines()[0], argv, run)


if __name__ == "__main__":
    sys.exit(main())
