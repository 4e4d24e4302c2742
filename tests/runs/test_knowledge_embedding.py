"""A run's knowledge store and its embedding: run.json records it, a resume reopens the store with it, and
a run folder from before it was recorded (a hashing store, nothing in run.json) still resumes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import START, StateGraph

from projectgen.runs import Run, RunParts
from projectgen.runs import RunRequest
from projectgen.config import AttemptSettings
from projectgen.errors import ProjectGenError
from projectgen.graphs import ProjectState
from projectgen.memory import KnowledgeStore
from projectgen.memory.embedding_models import DEFAULT_EMBEDDING, EMBEDDINGS
from projectgen.memory.embeddings import HashingEmbeddings
from projectgen.memory.knowledge_entries import SuccessKnowledge
from projectgen.runs import read_manifest, Run, RunParts
from test_support import OLD_RECORD_ID, old_knowledge_store


class PowerCut(Exception):
    """The process dying in the middle of a run."""


def dying_graph(task, calls: list[int]):
    """One node that writes the reference repository, and dies the first time it runs."""

    async def write_reference(state: ProjectState) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise PowerCut("the machine went down")
        return {"repository": dict(task.reference_repository())}

    graph = StateGraph(ProjectState)
    graph.add_node("write_reference", write_reference)
    graph.add_edge(START, "write_reference")
    return graph.compile(name="dying")


def died(task, out: Path, runner, *, embeddings=None, progress=None) -> list[int]:
    """A run that dies in its first attempt; `embeddings` a name (the request's) or an object."""
    calls: list[int] = []
    named = embeddings if isinstance(embeddings, str) else None
    request = RunRequest.for_task(task, embedding=named,
                                  attempt_settings=AttemptSettings(attempts=1, measure_unit_tests=False))
    with pytest.raises(PowerCut):
        Run.open(request, out, RunParts(project_graph=dying_graph(task, calls), runner=runner, progress=progress, embeddings=None if named else embeddings)).run()
    return calls


def resume(task, out: Path, runner, calls: list[int], *, embeddings=None):
    return Run.resume(out, RunParts(project_graph=dying_graph(task, calls), runner=runner, embeddings=embeddings)).run()


def test_run_json_records_the_embedding_and_a_resume_keeps_it(task, runner, tmp_path: Path) -> None:
    out = tmp_path / "run"
    calls = died(task, out, runner, embeddings="hashing")
    assert read_manifest(out).embedding == "hashing"
    with pytest.raises(ProjectGenError, match="built with the hashing embedding, not e5; a resume keeps its embedding"):
        resume(task, out, runner, calls, embeddings="e5")
    outcome = resume(task, out, runner, calls)  # as `projectgen run --resume` does: run.json's embedding
    assert outcome.summary["final"]["score"] == 1.0 and read_manifest(out).embedding == "hashing"
    with KnowledgeStore.persistent(out / "knowledge", embeddings="hashing") as store:
        assert store.recorded_embedding()["embedding"] == "hashing"


def test_a_run_folder_from_before_resumes_with_the_hashing_embedding(task, runner, tmp_path: Path) -> None:
    out = tmp_path / "old"
    calls = died(task, out, runner)
    # What such a folder holds: a run.json without "embedding", a store of hashing vectors that says nothing.
    manifest = json.loads((out / "run.json").read_text())
    del manifest["embedding"]
    (out / "run.json").write_text(json.dumps(manifest))
    shutil.rmtree(out / "knowledge")
    entry = SuccessKnowledge(attempt=1, score=0.5, task_summary="In-memory key-value store with per-key TTL",
                             functional_signals=["get returns None once a key's ttl has expired"])
    old_knowledge_store(out / "knowledge", entry)
    assert read_manifest(out).embedding is None

    outcome = resume(task, out, runner, calls)
    assert outcome.summary["final"]["score"] == 1.0
    assert read_manifest(out).embedding == "hashing"  # now said out loud
    with KnowledgeStore.persistent(out / "knowledge", embeddings="hashing") as store:
        assert [r.id for r in store.retrieve("kvstore", task.docs.prd, "success")] == [OLD_RECORD_ID]
    if DEFAULT_EMBEDDING != "hashing" and EMBEDDINGS[DEFAULT_EMBEDDING][1] in _installed():
        # the default would have been refused: the resume really reopened it with hashing
        with pytest.raises(ProjectGenError, match="built with embedding hashing"):
            KnowledgeStore.persistent(out / "knowledge")


def _installed() -> set[str]:
    from importlib.util import find_spec

    return {package for _, package, _ in EMBEDDINGS.values() if package and find_spec(package) is not None}


def test_a_new_run_records_the_default_or_its_fallback_with_a_notice(task, runner, tmp_path: Path,
                                                                     monkeypatch) -> None:
    said: list[str] = []
    monkeypatch.setitem(EMBEDDINGS, DEFAULT_EMBEDDING, ("x", "not_installed_here", "pip install wordllama"))
    died(task, tmp_path / "fallback", runner, progress=said.append)
    assert read_manifest(tmp_path / "fallback").embedding == "hashing"
    assert [line for line in said if "knowledge:" in line] == [
        "knowledge: the not_installed_here package is not installed; retrieving with the hashing embedding "
        "instead (pip install wordllama for the default)"]


def test_an_embeddings_object_is_recorded_as_custom_and_needed_again_to_resume(task, runner, tmp_path: Path) -> None:
    out, mine = tmp_path / "custom", HashingEmbeddings(dims=256)
    calls = died(task, out, runner, embeddings=mine)
    assert read_manifest(out).embedding == "custom"
    with pytest.raises(ProjectGenError, match="built with an embeddings object given from Python; resume it with "
                       r"Run.resume\(DIR, RunParts\(embeddings="):
        resume(task, out, runner, calls)
    with pytest.raises(ProjectGenError, match="built with embedding hashing .*256 dims.*, not hashing .*1024 dims"):
        resume(task, out, runner, calls, embeddings=HashingEmbeddings())
    assert resume(task, out, runner, calls, embeddings=mine).summary["final"]["score"] == 1.0


def test_a_bad_embedding_name_is_refused_before_the_run_folder_is_made(task, runner, tmp_path: Path) -> None:
    with pytest.raises(ProjectGenError, match="unknown embedding 'bert'"):
        Run.open(RunRequest.for_task(task, embedding="bert"), tmp_path / "x", RunParts(project_graph=dying_graph(task, []), runner=runner)).run()
    assert not (tmp_path / "x").exists()
