"""The historical-best repository store: monotonic, durable, crash-safe, path-checked."""
from __future__ import annotations

import json
import os

import pytest

from projectgen.errors import ProjectGenError
from projectgen.memory import best_repo
from projectgen.memory.best_repo import BestRepositoryStore

V1 = {"kvstore/__init__.py": "from kvstore.store import KeyValueStore\n",
      "kvstore/store.py": "class KeyValueStore:\n    pass\n"}
V2 = {"kvstore/__init__.py": "from kvstore.store import KeyValueStore\n",
      "kvstore/store.py": "class KeyValueStore:\n    def get(self, key):\n        return None\n",
      "README.md": "# kvstore\r\nWindows line endings and ünïcode survive.\r\n"}
V3 = {"kvstore/store.py": "# a full rewrite\n"}


def test_first_offer_is_stored_with_its_metadata(tmp_path):
    store = BestRepositoryStore(tmp_path / "best")
    assert store.best("kvstore") is None and not store.is_full_score("kvstore")
    assert store.offer("kvstore", V2, 0.5, 1, run_id="run-7", model="scripted", tokens=1234)
    best = store.best("kvstore")
    assert best is not None
    assert best.repository == V2  # exact text, including \r\n and non-ASCII
    assert (best.score, best.attempt, best.run_id) == (0.5, 1, "run-7")
    assert best.meta == {"model": "scripted", "tokens": 1234}
    assert best.created_at.tzinfo is not None
    pointer = json.loads((tmp_path / "best" / "kvstore" / "best.json").read_text())
    assert pointer["score"] == 0.5 and pointer["files"] == sorted(V2)


def test_best_never_regresses(tmp_path):
    store = BestRepositoryStore(tmp_path)
    assert store.offer("kvstore", V1, 0.4, 1)
    assert not store.offer("kvstore", V3, 0.4, 2)  # equal: the earlier one stays
    assert not store.offer("kvstore", V3, 0.1, 3)  # lower: rejected
    assert store.best("kvstore").attempt == 1 and store.best("kvstore").repository == V1
    assert store.offer("kvstore", V2, 0.41, 4)  # strictly higher: replaces
    best = store.best("kvstore")
    assert (best.attempt, best.score, best.repository) == (4, 0.41, V2)
    # Files of the replaced snapshot do not leak into the new one, and old snapshots are gone.
    assert store.offer("kvstore", V3, 0.9, 5)
    assert store.best("kvstore").repository == V3
    assert len(list((tmp_path / "kvstore" / "snapshots").iterdir())) == 1


def test_full_score_and_reopening(tmp_path):
    store = BestRepositoryStore(tmp_path)
    store.offer("kvstore", V1, 0.75, 1, run_id="r")
    assert not store.is_full_score("kvstore")
    store.offer("kvstore", V2, 1.0, 2, run_id="r")
    reopened = BestRepositoryStore(tmp_path)  # e.g. a resumed run in another process
    assert reopened.is_full_score("kvstore")
    assert reopened.best("kvstore").repository == V2
    assert not reopened.offer("kvstore", V3, 1.0, 3)
    assert reopened.is_full_score("kvstore", full=100.0) is False  # scores on another scale
    assert reopened.tasks() == ["kvstore"]


def test_tasks_are_kept_apart_even_with_awkward_ids(tmp_path):
    store = BestRepositoryStore(tmp_path)
    store.offer("devbench/lice", V1, 0.3, 1)
    store.offer("devbench_lice", V2, 0.2, 1)
    store.offer("../escape", V3, 0.1, 1)
    assert store.best("devbench/lice").repository == V1
    assert store.best("devbench_lice").repository == V2
    assert store.best("../escape").repository == V3
    assert all(p.parent == tmp_path for p in tmp_path.iterdir())
    assert sorted(store.tasks()) == ["../escape", "devbench/lice", "devbench_lice"]


def test_a_failure_while_writing_leaves_the_previous_best(tmp_path, monkeypatch):
    store = BestRepositoryStore(tmp_path)
    store.offer("kvstore", V1, 0.5, 1)
    real_write = best_repo.write_synced
    written: list[str] = []

    def crash_on_second_file(path, text):
        if len(written) == 1:
            raise OSError(28, "No space left on device")
        written.append(str(path))
        real_write(path, text)

    monkeypatch.setattr(best_repo, "write_synced", crash_on_second_file)
    with pytest.raises(ProjectGenError, match="No space left on device"):
        store.offer("kvstore", V2, 0.9, 2)
    monkeypatch.undo()
    assert written  # the new snapshot was half written when the failure came
    best = BestRepositoryStore(tmp_path).best("kvstore")
    assert (best.attempt, best.score, best.repository) == (1, 0.5, V1)
    assert not [p for p in (tmp_path / "kvstore").iterdir() if p.name.startswith(".tmp-")]


def test_a_crash_before_the_switch_leaves_the_previous_best(tmp_path, monkeypatch):
    store = BestRepositoryStore(tmp_path)
    store.offer("kvstore", V1, 0.5, 1)

    def killed(src, dst):  # the process dies right before best.json is replaced
        raise KeyboardInterrupt

    monkeypatch.setattr(best_repo.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        store.offer("kvstore", V2, 0.9, 2)
    monkeypatch.undo()
    task = tmp_path / "kvstore"
    assert len(list((task / "snapshots").iterdir())) == 2  # the complete new snapshot, not yet current
    best = BestRepositoryStore(tmp_path).best("kvstore")
    assert (best.attempt, best.repository) == (1, V1)
    # A hard kill can also leave a half-written temp folder; the next offer cleans up.
    (task / ".tmp-attempt9-dead").mkdir()
    (task / ".tmp-attempt9-dead" / "half.py").write_text("def f(")
    assert store.offer("kvstore", V3, 0.95, 3)
    assert store.best("kvstore").repository == V3
    assert sorted(p.name for p in task.iterdir()) == [".lock", "best.json", "snapshots"]
    assert len(list((task / "snapshots").iterdir())) == 1


@pytest.mark.parametrize("bad", ["../outside.py", "/etc/passwd", "pkg/../../outside.py", "C:/evil.py", ""])
def test_unsafe_paths_are_refused_before_anything_is_written(tmp_path, bad):
    store = BestRepositoryStore(tmp_path / "best")
    with pytest.raises(ProjectGenError, match="unsafe repository path"):
        store.offer("kvstore", {"ok.py": "x = 1\n", bad: "boom"}, 0.9, 1)
    assert store.best("kvstore") is None
    assert not (tmp_path / "outside.py").exists()
    assert not list((tmp_path / "best").rglob("*.py"))


def test_conflicting_paths_and_bad_values_are_refused(tmp_path):
    store = BestRepositoryStore(tmp_path)
    with pytest.raises(ProjectGenError, match="given twice"):
        store.offer("t", {"a/b.py": "1", "a/./b.py": "2"}, 0.5, 1)
    with pytest.raises(ProjectGenError, match="'pkg' is a file"):
        store.offer("t", {"pkg": "x", "pkg/mod.py": "y"}, 0.5, 1)
    with pytest.raises(ProjectGenError, match="finite"):
        store.offer("t", V1, float("nan"), 1)
    with pytest.raises(ProjectGenError, match="JSON"):
        store.offer("t", V1, 0.5, 1, when=object())
    with pytest.raises(ProjectGenError, match="attempt"):
        store.offer("t", V1, 0.5, -1)
    assert store.best("t") is None


def test_a_corrupt_pointer_is_a_clear_error(tmp_path):
    store = BestRepositoryStore(tmp_path)
    store.offer("kvstore", V1, 0.5, 1)
    (tmp_path / "kvstore" / "best.json").write_text("{not json")
    with pytest.raises(ProjectGenError, match=r"best.json: corrupt"):
        store.best("kvstore")
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(ProjectGenError, match="not a folder"):
        BestRepositoryStore(a_file)


def test_snapshot_files_are_durable_bytes(tmp_path):
    store = BestRepositoryStore(tmp_path)
    store.offer("kvstore", V2, 0.5, 1)
    name = json.loads((tmp_path / "kvstore" / "best.json").read_text())["snapshot"]
    readme = tmp_path / "kvstore" / "snapshots" / name / "README.md"
    assert readme.read_bytes() == V2["README.md"].encode("utf-8")
    assert os.path.isfile(tmp_path / "kvstore" / "snapshots" / name / "kvstore" / "store.py")
