"""Adapter: MetaGPT's software company (``generate_repo``) writes a repository from the task's documents.

Run inside the sandbox with the system's own Python as ``python metagpt_adapter.py --docs DOCS --out OUT``
(the adapter contract in docs/external-systems.md). MetaGPT takes its endpoint only from config2.yaml, read
when ``metagpt.config2`` is first imported: the adapter writes ``$HOME/.metagpt/config2.yaml`` (the bridge,
the model, the paper's sampling), points METAGPT_PROJECT_ROOT at TMPDIR (without it an installed MetaGPT takes
the working folder as its root and writes its workspace and logs there), and only then imports MetaGPT.
``generate_repo`` runs with the defaults of MetaGPT's command line (``metagpt IDEA``: five rounds, code review
on, no QA engineer), the documents as the idea; the repository it made (its git workdir, .git left out) is
copied into OUT. It imports nothing of projectgen, only `contract` beside it, on purpose: it runs in MetaGPT's
environment, where projectgen is not installed. Its file name is not the package's, or ``python metagpt.py``
would import itself.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import MutableMapping, Sequence
from pathlib import Path

from contract import Settings, copy_into, documents_text, files_in, read_documents, read_settings, run_adapter

IDEA_PREAMBLE = ("Implement the software project specified by the documents below (its PRD, UML and "
                 "architecture design) as a complete repository: create every source file the design "
                 "names at the paths it gives.\n\n")
PROJECT_NAME = "generated"
PROCESS_FOLDERS = ("docs", "resources")  # MetaGPT's ProjectRepo keeps its roles' documents there
CODE_SUFFIXES = (".py",)


def idea_text(documents: Sequence[tuple[str, str]]) -> str:
    return IDEA_PREAMBLE + documents_text(documents)


def config2_yaml(settings: Settings) -> str:
    """MetaGPT's config2.yaml: its one way to name an endpoint. JSON strings are valid YAML scalars, so
    every value is written with json.dumps (a key or URL with a colon or quote stays one string)."""
    values = {"api_type": "openai", "base_url": settings.base_url, "api_key": settings.api_key,
              "model": settings.model, "max_token": settings.max_tokens, "temperature": settings.temperature,
              "top_p": settings.top_p}
    return "llm:\n" + "".join(f"  {key}: {json.dumps(value)}\n" for key, value in values.items()
                              if value is not None)


def prepare_home(settings: Settings, home: Path, work: Path, environ: MutableMapping[str, str]) -> Path:
    """Write config2.yaml where MetaGPT reads it and give MetaGPT a writable root; the config's path."""
    config = home / ".metagpt" / "config2.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(config2_yaml(settings))
    work.mkdir(parents=True, exist_ok=True)
    environ["METAGPT_PROJECT_ROOT"] = str(work)
    return config


def copy_repository(workdir: Path, out: Path) -> list[str]:
    """The repository MetaGPT wrote into `out`, without its .git and without the documents of its own process
    (docs/: the idea as requirement.txt, its PRD, design and task JSON; resources/: their renderings), which
    would hand the task's documents back as part of the output (`copy_into`: a path leaving OUT refused); the
    files copied."""
    return [copy_into(out, str(relative), (workdir / relative).read_bytes()) for relative in files_in(workdir)
            if ".git" not in relative.parts and relative.parts[0] not in PROCESS_FOLDERS]


def generate(idea: str) -> Path:
    """MetaGPT's `generate_repo` as its command line runs it; the repository's folder. Imported here, after
    `prepare_home`: MetaGPT reads its config when first imported."""
    from metagpt.software_company import generate_repo

    repository = generate_repo(idea, investment=3.0, n_round=5, code_review=True, run_tests=False,
                               implement=True, project_name=PROJECT_NAME)
    return Path(repository.workdir)


def run(args: argparse.Namespace) -> int:
    settings = read_settings(os.environ)
    documents = read_documents(args.docs)
    prepare_home(settings, Path.home(), Path(os.environ.get("TMPDIR", "/tmp")) / "metagpt", os.environ)
    workdir = generate(idea_text(documents))
    args.out.mkdir(parents=True, exist_ok=True)
    copied = copy_repository(workdir, args.out)
    print(json.dumps({"workdir": str(workdir), "files": copied}), file=sys.stderr)
    if not any(name.endswith(CODE_SUFFIXES) for name in copied):
        print("metagpt adapter: MetaGPT wrote no code (its roles stopped before the engineer)", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_adapter("metagpt", __doc__.splitlines()[0], argv, run)


if __name__ == "__main__":
    sys.exit(main())
