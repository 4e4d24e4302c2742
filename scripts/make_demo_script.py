"""Regenerate the demo's replay script: projectgen/datasets/examples/scripts/kvstore.demo.json.

The demo replays this script; it is not a model. It is written from the kvstore example's
reference code so that the run shows each loop doing its job:

- architecture: the first tree forgets `KVStore.purge_expired`; the judge scores it 6 and
  says so; the second tree has it and is accepted;
- skeleton: stubs of the tree, accepted;
- code: the first `kvstore/store.py` treats a key as live *at* its expiry instant
  (`now > expires_at`); a check test fails; the code judge names the file; the coder's
  repair (whole-file format) fixes the comparison; all check tests pass;
- LiveCoder: the knowledge agent records what attempt 1 validated; attempt 2 finds the
  historical best at full score and reuses it, so the run stops;
- the paper profile's extra calls: the architecture judge's justification per criterion, the
  paper's skeleton judge's two dimensions, and a summary of each revision for distilled memory.

Run: .venv/bin/python scripts/make_demo_script.py
"""
from __future__ import annotations

import json

from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.oracles.reference_replay import reference_python_files, reference_script
from projectgen.repository.edits import make_whole_file_reply

STORE = "kvstore/store.py"
FIXED = "return expires_at is not None and now >= expires_at"
BUGGY = "return expires_at is not None and now > expires_at"


def _without_purge(ssat: dict) -> dict:
    ssat = json.loads(json.dumps(ssat))
    for node in ssat["files"]:
        for cls in node.get("classes", []):
            if cls["name"] == "KVStore":
                cls["methods"] = [m for m in cls["methods"] if m["name"] != "purge_expired"]
    return ssat


def build() -> dict:
    task = load_task(example_task_path("kvstore"))
    files = reference_python_files(task)
    assert FIXED in files[STORE], "the reference changed; update FIXED"
    script = reference_script(task).model_dump(mode="json", exclude_none=True)
    # the demo's own knowledge entry below says what attempt 1 validated
    responses = [entry for entry in script["responses"] if entry["role"] != "knowledge"]
    script["responses"] = responses
    full_tree = next(r for r in responses if r["role"] == "architect")["content"]
    for entry in responses:
        if entry["role"] == "architect":
            entry.update(iteration=1, content=_without_purge(full_tree))
        elif entry["role"] == "architecture_judge":
            entry.update(iteration=1, content={
                "scores": {"requirement_coverage": 5, "document_consistency": 7, "interface_consistency": 8,
                           "dependency_relations": 9},
                "overall": 6,
                "reasons": "The PRD lists purge_expired() among KVStore's operations; the tree has no such method.",
                "justifications": {  # the paper's JudgeA: one per criterion
                    "requirement_coverage": "KVStore.purge_expired, an operation the PRD lists, has no place.",
                    "document_consistency": "The UML's KVStore has purge_expired(); the tree's does not.",
                    "interface_consistency": "The cli calls only methods the tree defines, with their parameters.",
                    "dependency_relations": "errors -> codec -> storage -> store -> cli: no cycle, one layering."},
                "feedback": "Add KVStore.purge_expired(self) -> int, which removes expired entries of the "
                            "namespace from storage and returns how many it removed."})
        elif entry["role"] == "coder" and entry.get("target") == STORE:
            entry.update(iteration=1, content=entry["content"].replace(FIXED, BUGGY))
    responses += [
        {"role": "architect", "iteration": 2, "content": full_tree},
        {"role": "architecture_judge", "iteration": 2, "content": {
            "scores": {"requirement_coverage": 9, "document_consistency": 9, "interface_consistency": 9,
                       "dependency_relations": 9},
            "overall": 9, "reasons": "Every operation of the PRD is placed; imports follow the layering.",
            "justifications": {
                "requirement_coverage": "Every operation of the PRD, purge_expired included, is placed.",
                "document_consistency": "Classes and methods follow the UML class diagram.",
                "interface_consistency": "Every cross-module call matches the signature it calls.",
                "dependency_relations": "errors -> codec -> storage -> store -> cli: no cycle, one layering."},
            "feedback": ""}},
        # distilled stage memory (the paper profile): one summary per revision, by stage
        {"role": "memory_summary", "stage": "architecture", "content":
            "Revision 1 of the tree: the judge found KVStore.purge_expired missing, an operation the PRD lists; "
            "it was added to kvstore/store.py's KVStore, returning how many expired entries it removed."},
        {"role": "memory_summary", "stage": "code", "content":
            "Repair of kvstore/store.py: a key was still readable at the instant it expired; _expired now "
            "treats an entry as expired when now >= expires_at."},
        {"role": "code_judge", "iteration": 1, "content": {
            "summary": "test_ttl_expiry_with_injected_clock: a key is still readable at the instant it expires.",
            "files": [{"path": STORE, "suggestion": "_expired must treat an entry as expired when now >= "
                                                    "expires_at (the PRD's expiry rule), not only after it."}]}},
        {"role": "coder", "target": STORE, "iteration": 2, "content": make_whole_file_reply([STORE], files)},
        {"role": "knowledge", "content": {
            "success": {
                "task_summary": "kvstore: a key-value store package with TTL expiry, namespaces and transactions",
                "repository_signals": ["errors -> codec -> storage -> store layering, cli on top",
                                       "KVStore exposes purge_expired() as the PRD requires"],
                "functional_signals": ["all 5 check tests pass, including TTL expiry at the exact instant"],
                "carry_over": ["treat an entry as expired when now >= expires_at"]},
            "failure": None}},
    ]
    return {"label": "kvstore demo replay (scripted, not a model)", "responses": responses}


def main() -> None:
    out = example_task_path("kvstore").parent / "scripts" / "kvstore.demo.json"
    out.write_text(json.dumps(build(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
