"""Helpers shared by several test modules (imported by name; pytest puts tests/ on the path)."""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import io
import json
import os
import textwrap
import socket
import subprocess
import sys
import time
import types
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from projectgen.datasets.task import Documents, EnvSpec, Task, TestSuite
from projectgen.oracles.reference_replay import reference_script

__test__ = False  # not a test module, despite its name


def strict_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file, failing on the first that is not JSON (nothing may be torn); [] when absent."""
    if not path.exists():
        return []
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"{path}:{number} is not JSON: {line[:120]!r}") from None
    return rows


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def chroma_server(data_dir: Path, timeout: float = 60.0) -> Iterator[str]:
    """A local Chroma server (`chroma run`, shipped with the chromadb package) on a free port; skips without it."""
    chroma = Path(sys.executable).with_name("chroma")
    if not chroma.exists():
        pytest.skip("the chroma command is not installed")
    port = free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / "server.log"
    with open(log, "w") as sink:
        server = subprocess.Popen([str(chroma), "run", "--path", str(data_dir / "data"), "--host", "127.0.0.1",
                                   "--port", str(port)], stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"the chroma server did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def make_task(root: Path, tests: dict[str, str], env_vars: dict[str, str] | None = None) -> Task:
    """A task folder holding `unit_tests/` with the given test files."""
    for name, body in tests.items():
        path = root / "unit_tests" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body), encoding="utf-8")
    return Task(
        id=root.name, root=root, format="taskdir", docs=Documents(prd="demo"),
        suites={"unit": TestSuite(name="unit", paths=("unit_tests",))},
        env=EnvSpec(env_vars=env_vars or {}),
    )


# --------------------------------------------------------------------------- reference replays of kvstore

ATTEMPTS_KNOWLEDGE = {
    "success": {"task_summary": "kvstore", "repository_signals": ["package kvstore with store.py over storage.py"],
                "functional_signals": ["set/get and namespaces pass"], "carry_over": ["keep the storage layering"]},
    "failure": {"observed_failures": ["test_ttl_expiry_with_injected_clock fails at the expiry instant"],
                "carry_over_constraints": ["an entry expires when now >= expires_at"]},
}


def attempt_script(task) -> dict[str, Any]:
    """Reference replay where attempt 1's store.py has the expiry off-by-one (4/5 check tests)
    and attempt 2's is right; the knowledge agent answers with ATTEMPTS_KNOWLEDGE."""
    script = reference_script(task).model_dump(mode="json", exclude_none=True)
    for entry in script["responses"]:
        if entry["role"] == "coder" and entry.get("target") == "kvstore/store.py":
            fixed = entry["content"]
            entry.update(attempt=1, content=fixed.replace("now >= expires_at", "now > expires_at"))
            script["responses"].append({"role": "coder", "target": "kvstore/store.py", "attempt": 2,
                                        "content": fixed})
            break
    knowledge = next(entry for entry in script["responses"] if entry["role"] == "knowledge")
    knowledge["content"] = ATTEMPTS_KNOWLEDGE
    script["label"] = "attempts test replay (not a model)"
    return script


EXPERIMENT_KNOWLEDGE = {"success": {"task_summary": "t", "repository_signals": [], "functional_signals": [],
                         "carry_over": ["keep the layout"]},
             "failure": {"observed_failures": ["a check test fails"], "carry_over_constraints": ["fix it"]}}


def experiment_script(task, bugs: dict[str, dict[int, list[tuple[str, str]]]] | None = None, knowledge: bool = True) -> dict:
    """The reference replay; `bugs[path][attempt]` lists (old, new) edits of that file's code at that attempt."""
    data = reference_script(task).model_dump(mode="json", exclude_none=True)
    for path, variants in (bugs or {}).items():
        entry = next(e for e in data["responses"] if e["role"] == "coder" and e.get("target") == path)
        data["responses"].remove(entry)
        for attempt, edits in variants.items():
            content = entry["content"]
            for old, new in edits:
                assert old in content, old
                content = content.replace(old, new)
            data["responses"].append({"role": "coder", "target": path, "attempt": attempt, "content": content})
    answers = [entry for entry in data["responses"] if entry["role"] == "knowledge"]
    for entry in answers:
        if knowledge:
            entry["content"] = EXPERIMENT_KNOWLEDGE
        else:  # a script the knowledge agent finds no answer in: its run raises
            data["responses"].remove(entry)
    return data


# --------------------------------------------------------------------------- the papers' tables

# Every result table of the four papers as CSV, for known-answer tests: the papers' published numbers, shipped
# with the tests (tests/paper_tables, its README says where each comes from) so a clean clone checks the README's
# claims; PROJECTGEN_TEST_PAPER_TABLES names another copy.
PAPER_TABLES = Path(os.environ.get("PROJECTGEN_TEST_PAPER_TABLES") or Path(__file__).resolve().parent / "paper_tables")


def paper_table(name: str) -> list[dict[str, str]]:
    """The rows of one paper table; skips the test when the tables are absent."""
    import csv

    path = PAPER_TABLES / name
    if not path.is_file():
        pytest.skip(f"paper tables not found at {PAPER_TABLES}")
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# --------------------------------------------------------------------------- multi-turn tasks

def write_multiturn_task(root: Path, turns: list[tuple[str, str, dict[str, str]]], *, target: str = "mod.py",
                         extra_config: str = "") -> Path:
    """A function-level multi-turn task folder: per turn (requirement, reference code, {test file: body})."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "multiturn.toml").write_text(f'level = "function"\ntarget = "{target}"\n{extra_config}', encoding="utf-8")
    for number, (requirement, reference, tests) in enumerate(turns, start=1):
        folder = root / "turns" / str(number)
        (folder / "tests").mkdir(parents=True, exist_ok=True)
        (folder / "requirement.md").write_text(requirement, encoding="utf-8")
        (folder / "reference.py").write_text(textwrap.dedent(reference), encoding="utf-8")
        for name, body in tests.items():
            (folder / "tests" / name).write_text(textwrap.dedent(body), encoding="utf-8")
    return root


# --------------------------------------------------------------------------- graph test doubles

class NoSandbox:
    """Stands in for the runner where the sandbox is not the point: any use is a test failure."""

    def evaluate(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the sandbox must not be used in this test")


def recording_generator(model: Any) -> Any:
    """The default Direct/Self-Reflection generator, keeping what each reflection round was shown (`.shown`)."""
    from projectgen.agents.direct import DirectGenerator

    class RecordingGenerator(DirectGenerator):
        def __init__(self, model: Any) -> None:
            super().__init__(model)
            self.shown: list[dict[str, Any]] = []

        async def reflect(self, gateway, documents, repository, **kwargs: Any):
            self.shown.append({"repository": dict(repository), **kwargs})
            return await super().reflect(gateway, documents, repository, **kwargs)

    return RecordingGenerator(model)


OLD_RECORD_ID = "success-1-from-before"


def old_knowledge_store(path: Path, entry: Any, *, task_id: str = "kvstore", with_config: bool = True) -> None:
    """A knowledge store as projectgen left it before stores recorded their embedding: hashing vectors and
    nothing about the embedding in the collection's metadata; the adapter config names HashingEmbeddings
    (`with_config` False: no embedding function config at all, "nothing recorded"). Holds `entry` (a
    SuccessKnowledge) under the id OLD_RECORD_ID."""
    import chromadb
    from chromadb.config import Settings

    from projectgen.memory.chroma_embeddings import ChromaEmbeddingAdapter
    from projectgen.memory.embeddings import HashingEmbeddings

    hashing = HashingEmbeddings()
    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    try:
        collection = client.get_or_create_collection(
            "projectgen-knowledge", embedding_function=ChromaEmbeddingAdapter(hashing) if with_config else None,
            configuration={"hnsw": {"space": "cosine"}}, metadata={"projectgen": "knowledge", "schema_version": 1})
        collection.upsert(ids=[OLD_RECORD_ID], documents=[entry.text()], embeddings=[hashing.embed_query(entry.text())],
                          metadatas=[{"task_id": task_id, "kind": entry.kind, "attempt": entry.attempt,
                                      "score": float(entry.score), "run_id": "", "entry": entry.model_dump_json(),
                                      "schema_version": 1}])
    finally:
        client.close()


def with_pass_bodies(repository: dict[str, str]) -> dict[str, str]:
    """Every function's body replaced by `pass` (signatures, classes and module code kept)."""
    stubbed = {}
    for path, text in repository.items():
        if path.endswith(".py"):
            tree = ast.parse(text)
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    node.body = [ast.Pass()]
            text = ast.unparse(tree) + "\n"
        stubbed[path] = text
    return stubbed


def restore_sigint() -> None:
    """`preexec_fn` of a command a test interrupts with SIGINT: a job started in the background (`cmd &`, as a CI
    script may run the suite) starts with SIGINT ignored, and its children would inherit that."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def experiment_cli(*argv: str) -> tuple[int, str]:
    """`projectgen experiment ...` through the sub-command the CLI wires in, in this process; returns (exit code,
    output)."""
    from projectgen.cli.experiment import add_commands

    parser = argparse.ArgumentParser(prog="projectgen")
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["experiment", *argv])
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = args.handler(args)
    return code, buffer.getvalue()


EXTERNAL_ADAPTERS = Path(__file__).resolve().parents[1] / "projectgen" / "external" / "adapters"


def load_external_adapter(name: str) -> types.ModuleType:
    """An external system's adapter file as a module (as the openevolve evaluator loads it: registered before it
    runs), its folder first on sys.path while it loads, as when it runs as a script (it imports `contract` from
    there)."""
    spec = importlib.util.spec_from_file_location(f"adapter_under_test_{name[:-3]}", EXTERNAL_ADAPTERS / name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(EXTERNAL_ADAPTERS))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(EXTERNAL_ADAPTERS))
        sys.modules.pop("contract", None)  # the next adapter loads its own, as its own process would
    return module
