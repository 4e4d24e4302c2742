"""Evolve's plan (what a tree diff redoes and keeps), the stages' scope, and the tree reviser's prompt."""
from __future__ import annotations

import asyncio

from projectgen.agents.base import ModelGateway, Verdict
from projectgen.protocols.evolve.reviser import TreeReviser
from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.graphs.code import repair_jobs
from projectgen.protocols.evolve.graph import evolve_replay, plan_evolution, revised_tree
from projectgen.graphs.skeleton import fan_out
from projectgen.graphs.state import ssat_data, verdict_record
from projectgen.llm.scripted import scripted_chat_model_class
from projectgen.oracles.reference_replay import reference_python_files, reference_ssat

KVSTORE = load_task(example_task_path("kvstore"))
BEFORE = reference_python_files(KVSTORE)
BASE = reference_ssat(KVSTORE, BEFORE)
NEW_ERROR = "\n\nclass ReadOnlyError(KVStoreError):\n    \"\"\"A write to a read-only store.\"\"\"\n"


def test_a_new_file_touches_only_itself():
    after = {**BEFORE, "kvstore/extra.py": "from .store import KVStore\n\n\ndef size(store: KVStore) -> int:\n"
                                           "    return len(store)\n"}
    plan = plan_evolution(BASE, revised_tree(BASE, after), BEFORE)
    assert (plan.added, plan.changed, plan.removed, plan.importers) == (["kvstore/extra.py"], [], [], [])
    assert plan.redo == ["kvstore/extra.py"] and plan.kept == sorted(BEFORE)
    assert "+ file kvstore/extra.py" in plan.diff_text


def test_a_changed_file_is_redone_with_the_files_that_import_it():
    after = {**BEFORE, "kvstore/errors.py": BEFORE["kvstore/errors.py"] + NEW_ERROR}
    plan = plan_evolution(BASE, revised_tree(BASE, after, changed=["kvstore/errors.py"]), BEFORE)
    assert plan.changed == ["kvstore/errors.py"] and plan.touched == ["kvstore/errors.py"]
    # every module that imports kvstore.errors (relative imports included), and nothing else
    assert plan.importers == ["kvstore/__init__.py", "kvstore/cli.py", "kvstore/codec.py", "kvstore/storage.py",
                              "kvstore/store.py"]
    assert plan.redo == ["kvstore/__init__.py", "kvstore/cli.py", "kvstore/codec.py", "kvstore/errors.py",
                         "kvstore/storage.py", "kvstore/store.py"]
    assert plan.kept == ["kvstore/__main__.py"]
    assert "class ReadOnlyError" in plan.diff_text or "ReadOnlyError" in plan.diff_text


def test_a_removed_file_goes_and_the_file_that_imported_it_is_rewritten():
    after = {p: t for p, t in BEFORE.items() if p != "kvstore/__main__.py"}
    plan = plan_evolution(BASE, revised_tree(BASE, after), BEFORE)
    assert plan.removed == ["kvstore/__main__.py"] and plan.redo == [] and "kvstore/__main__.py" not in plan.kept
    after = {p: t for p, t in BEFORE.items() if p != "kvstore/cli.py"}
    after["kvstore/__main__.py"] = 'raise SystemExit("kvstore has no command line any more")\n'
    plan = plan_evolution(BASE, revised_tree(BASE, after, changed=["kvstore/__main__.py"]), BEFORE)
    assert plan.removed == ["kvstore/cli.py"] and plan.changed == ["kvstore/__main__.py"]
    assert plan.redo == ["kvstore/__main__.py"] and "kvstore/cli.py" not in plan.kept


def test_an_unchanged_tree_redoes_nothing():
    plan = plan_evolution(BASE, BASE, BEFORE)
    assert plan.touched == [] and plan.redo == [] and plan.kept == sorted(BEFORE)


def test_the_stages_write_only_the_files_in_scope():
    state = {"ssat": ssat_data(BASE), "iterations": {"skeleton": 1}, "scope": ["kvstore/store.py"],
             "documents": {"prd": "kvstore"}}
    sends = fan_out(state, gamma=2)
    assert [send.arg["path"] for send in sends] == ["kvstore/store.py"]
    assert len(fan_out({**state, "scope": None}, gamma=2)) == len(BEFORE)
    verdict = Verdict(judge="code_judge", stage="code", iteration=1, score=5, accepted=False, feedback="fix",
                      files={"kvstore/cli.py": "out of scope", "kvstore/store.py": "in scope"})
    repair = {"iterations": {"code": 2}, "verdicts": [verdict_record(verdict)], "repository": dict(BEFORE),
              "scope": ["kvstore/store.py"]}
    assert [send.arg["path"] for send in repair_jobs(repair, gamma=2)] == ["kvstore/store.py"]
    only_outside = verdict.model_copy(update={"files": {"kvstore/cli.py": "out of scope"}})
    jobs = repair_jobs({**repair, "verdicts": [verdict_record(only_outside)]}, gamma=2)
    assert [send.arg["path"] for send in jobs] == ["kvstore/store.py"]  # the scope's files get the feedback
    assert {s.arg["path"] for s in repair_jobs({**repair, "scope": None}, gamma=2)} == {"kvstore/cli.py",
                                                                                      "kvstore/store.py"}


def test_the_tree_reviser_shows_the_base_tree_and_the_change_from_the_first_iteration():
    after = {**BEFORE, "kvstore/extra.py": "X = 1\n"}
    script = evolve_replay(BASE, BEFORE, after, label="test")
    model = scripted_chat_model_class().from_responses(script)
    seen = []
    reviser = TreeReviser(model, base=BASE, change="Add kvstore/extra.py holding X = 1.")
    original = model.__class__._reply

    def spy(self, messages, stop, metadata):
        seen.append("\n".join(str(m.content) for m in messages))
        return original(self, messages, stop, metadata)

    model.__class__._reply = spy
    try:
        tree = asyncio.run(reviser.design(ModelGateway(), KVSTORE.docs, iteration=1, previous=BASE))
        asyncio.run(reviser.design(ModelGateway(), KVSTORE.docs, iteration=2, previous=tree, feedback="name it"))
    finally:
        model.__class__._reply = original
    assert tree.file("kvstore/extra.py") and {f.path for f in tree.files()} == set(after)
    first, second = seen
    assert "The architecture tree of the repository as it is now" in first and "kvstore/store.py" in first
    assert "Add kvstore/extra.py holding X = 1." in first and "keeps its code and is not written again" in first
    assert "Reviewer feedback to address" not in first
    assert "Your previous revision" in second and "name it" in second
