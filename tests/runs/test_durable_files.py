"""What a kill may leave behind, piece by piece: torn JSONL lines, completed calls of an unfinished node,
trace events written twice; and writers in parallel processes.

The whole story (SIGKILL at random moments, then resume) is tests/test_kill_resume.py.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from projectgen.durable_files import append_line
from projectgen.experiments.ledger import Ledger
from projectgen.external.call_budget import CallBudget
from projectgen.llm import (
    CallCache,
    CallLabels,
    DoorSettings,
    ScriptedChatModel,
    UsageRecorder,
    call_model,
)
from projectgen.llm.errors import BudgetExceededError
from projectgen.runs.folder import RunFolder
from projectgen.runs.trace import TraceWriter, read_trace


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]  # every line must parse


# --------------------------------------------------------------------------- interrupted atomic writes
KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from projectgen.durable_files import write_atomic
os.replace = lambda source, target: os.kill(os.getpid(), signal.SIGKILL)  # killed just before the rename
write_atomic(Path(sys.argv[1]), "new")
"""


def _killed_write(path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], capture_output=True)
    assert done.returncode == -9


def test_what_a_killed_atomic_write_left_is_gone_once_the_run_folder_is_held_again(tmp_path: Path) -> None:
    """The slow kill-and-resume test once found a `.tmp` file in a resumed run's folder that the uninterrupted
    run's did not have: a kill between `write_atomic`'s temp file and its rename."""
    root = tmp_path / "run"
    (root / "attempts" / "2").mkdir(parents=True)
    (root / "run.json").write_text("old")
    generated = root / "repository" / "notes.tmp-0123abcd"  # a model may name a file so: it stays
    generated.parent.mkdir()
    generated.write_text("mine")
    for target in (root / "run.json", root / "attempts" / "2" / "attempt.json"):
        _killed_write(target)
    assert len([p for p in root.rglob("*") if ".tmp-" in p.name]) == 3
    with RunFolder(root).hold():
        assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".tmp-" in p.name) == [
            "repository/notes.tmp-0123abcd"]
    assert (root / "run.json").read_text() == "old" and not (root / "attempts" / "2" / "attempt.json").exists()


def test_force_clears_what_a_killed_atomic_write_of_a_run_file_left(tmp_path: Path) -> None:
    root = tmp_path / "run"
    root.mkdir()
    _killed_write(root / "run.json")  # killed in its first write: no run.json, so the user starts over
    (root / "mine.tmp-0123abcd").write_text("not a run's")
    with RunFolder(root).create(force=True):
        assert sorted(p.name for p in root.iterdir() if ".tmp-" in p.name) == ["mine.tmp-0123abcd"]


# --------------------------------------------------------------------------- torn lines


def test_a_torn_last_line_is_cut_off_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    append_line(path, '{"n": 1}')
    with open(path, "a") as handle:
        handle.write('{"n": 2, "text": "killed in the mid')  # a writer died here
    append_line(path, '{"n": 3}\n')
    assert _lines(path) == [{"n": 1}, {"n": 3}]
    path.write_text('{"torn": ')  # a torn first line, no newline at all
    append_line(path, '{"n": 4}')
    assert _lines(path) == [{"n": 4}]


def test_the_usage_log_and_the_trace_stay_whole_after_a_torn_line(tmp_path: Path) -> None:
    recorder = UsageRecorder(tmp_path / "usage.jsonl")
    model = ScriptedChatModel.from_responses([{"role": "coder", "content": "x"}])
    call_model(model, "a", CallLabels("coder", "code"), DoorSettings(recorder=recorder))
    with open(recorder.path, "a") as handle:
        handle.write('{"role": "coder", "sta')
    call_model(model, "b", CallLabels("coder", "code"), DoorSettings(recorder=recorder))
    assert len(_lines(recorder.path)) == 2
    trace = TraceWriter(tmp_path / "events.jsonl")
    trace.write("run_start")
    with open(trace.path, "a") as handle:
        handle.write('{"event": "no')
    trace.write("run_end")
    assert [e["event"] for e in _lines(trace.path)] == ["run_start", "run_end"]


WRITER = """
import sys
from projectgen.experiments.ledger import Ledger
ledger = Ledger(sys.argv[1])
for i in range(200):
    ledger.append(f"{sys.argv[2]}/{i}", figures={"i": i, "pad": "x" * (i * 37 % 5000)})
"""


def test_eight_processes_appending_to_one_ledger_lose_and_tear_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"w{n}"]) for n in range(8)]
    assert [w.wait(timeout=120) for w in writers] == [0] * 8
    rows = _lines(path)
    assert len(rows) == 8 * 200 and len(Ledger(path).done()) == 8 * 200


# --------------------------------------------------------------------------- the call cache


def test_a_cached_call_is_answered_without_the_model_and_recorded_once(tmp_path: Path) -> None:
    script = [{"role": "coder", "target": "a.py", "content": "print(1)"}]
    cache_path, usage_path = tmp_path / "calls.jsonl", tmp_path / "usage.jsonl"
    first = ScriptedChatModel.from_responses(script)
    reply = call_model(first, "write a.py", CallLabels("coder", "code", "a.py", 1),
                       DoorSettings(recorder=UsageRecorder(usage_path), cache=CallCache(cache_path, "run-1")))
    assert reply.content == "print(1)" and len(first.calls) == 1

    # A restarted process: same run, same prompt -> the reply comes from the cache; no new usage line.
    again = ScriptedChatModel.from_responses(script)
    replayed = call_model(again, "write a.py", CallLabels("coder", "code", "a.py", 1),
                          DoorSettings(recorder=UsageRecorder(usage_path), cache=CallCache(cache_path, "run-1")))
    assert replayed.content == "print(1)" and replayed.response_metadata["replayed"]
    assert again.calls == [] and len(_lines(usage_path)) == 1
    assert replayed.usage_metadata == reply.usage_metadata

    # Killed between the cache line and the usage line: the replay records the call's usage then.
    usage_path.unlink()
    call_model(again, "write a.py", CallLabels("coder", "code", "a.py", 1),
               DoorSettings(recorder=UsageRecorder(usage_path), cache=CallCache(cache_path, "run-1")))
    (record,) = _lines(usage_path)
    assert again.calls == [] and record["call_id"] == _lines(cache_path)[0]["key"]

    # Another prompt, iteration or run is another call.
    for prompt, iteration, scope in (("write a.py again", 1, "run-1"), ("write a.py", 2, "run-1"),
                                     ("write a.py", 1, "run-2")):
        call_model(again, prompt, CallLabels("coder", "code", "a.py", iteration),
                   DoorSettings(cache=CallCache(cache_path, scope)))
    assert len(again.calls) == 3


def test_a_replay_whose_usage_line_was_lost_counts_against_the_call_budget(tmp_path: Path) -> None:
    """Killed between the cache line and the usage line, then started again: the replayed call was asked for, so
    an external system's call budget (which counts asks) counts it, or the rerun gets one call more."""
    script = [{"role": "external", "target": "a", "content": "one"},
              {"role": "external", "target": "b", "content": "two"}]
    cache_path, usage_path = tmp_path / "calls.jsonl", tmp_path / "usage.jsonl"
    labels = {target: CallLabels("external", "fake", target, 1) for target in ("a", "b")}
    call_model(ScriptedChatModel.from_responses(script), "a", labels["a"],
               DoorSettings(recorder=UsageRecorder(usage_path), cache=CallCache(cache_path, "run")))
    usage_path.unlink()  # the usage line lost

    again, budget = ScriptedChatModel.from_responses(script), CallBudget(1)
    door = DoorSettings(recorder=UsageRecorder(usage_path), cache=CallCache(cache_path, "run"), budget=budget)
    assert call_model(again, "a", labels["a"], door).content == "one"
    assert [record["target"] for record in _lines(usage_path)] == ["a"]  # its usage recorded on replay
    with pytest.raises(BudgetExceededError, match="call budget spent: 1 model calls answered"):
        call_model(again, "b", labels["b"], door)
    assert again.calls == [] and budget.refused == 1


def test_a_failed_call_is_not_cached(tmp_path: Path) -> None:
    from projectgen.llm import ScriptExhaustedError

    cache = CallCache(tmp_path / "calls.jsonl", "run")
    with pytest.raises(ScriptExhaustedError):
        call_model(ScriptedChatModel.from_responses([]), "hi", CallLabels("coder", "code"), DoorSettings(cache=cache))
    assert len(cache) == 0 and not (tmp_path / "calls.jsonl").exists()


class Interrupted(BaseException):
    """Stands for a kill: not an Exception, so nothing on the way catches it."""


class DyingKnowledgeStore:
    """The run's knowledge store, wrapped to die at the first `add`: after the knowledge call completed,
    inside the node that made it, before that node's checkpoint."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def add(self, *args: Any, **kwargs: Any) -> Any:
        raise Interrupted()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def test_a_node_cut_short_after_its_model_call_replays_that_call_on_resume(tmp_path: Path, monkeypatch) -> None:
    from test_support import attempt_script

    from projectgen.config import AttemptSettings, Settings
    from projectgen.datasets.examples import example_task_path
    from projectgen.datasets.loaders import load_task
    from projectgen.llm import ModelRoles
    from projectgen.runs import RunRequest, livecoder

    task = load_task(example_task_path("kvstore"))
    out = tmp_path / "run"
    request = RunRequest.for_task(task, settings=Settings(code_iterations=1),
                                  attempt_settings=AttemptSettings(attempts=2, measure_unit_tests=False))
    opened = livecoder.open_knowledge_store
    monkeypatch.setattr(livecoder, "open_knowledge_store", lambda *a: DyingKnowledgeStore(opened(*a)))
    first = ScriptedChatModel.from_responses(attempt_script(task))
    with pytest.raises(Interrupted):
        livecoder.Run.open(request, out, livecoder.RunParts(models=ModelRoles(first))).run()
    assert [c["role"] for c in first.calls].count("knowledge") == 1  # made, but `learn` never returned

    monkeypatch.setattr(livecoder, "open_knowledge_store", opened)
    second = ScriptedChatModel.from_responses(attempt_script(task))
    outcome = livecoder.Run.resume(out, livecoder.RunParts(models=ModelRoles(second))).run()
    assert outcome.summary["final"] == {"source": "best", "attempt": 2, "score": 1.0}
    assert "knowledge" not in [c["role"] for c in second.calls]  # replayed from calls.jsonl
    keys = [(c["role"], c["stage"], c["target"], c["iteration"], c["attempt"]) for c in _lines(out / "usage.jsonl")]
    assert len(keys) == len(set(keys)) and ("knowledge", "knowledge", None, 1, 1) in keys
    assert outcome.summary["attempts"][0]["knowledge_added"] == ["success", "failure"]
    assert len(_lines(out / "calls.jsonl")) == len(keys)


# --------------------------------------------------------------------------- the trace


def test_a_restarted_trace_skips_the_updates_it_already_holds(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first = TraceWriter(path)
    first.update((), {"plan_attempt": {"attempt": 1}})
    first.update(("run_attempt:1",), {"architect": {"ssat": {"files": []}, "iterations": {"architecture": 1}}})
    first.update(("run_attempt:1", "skeleton:2"), {"write_skeleton_file": {"skeleton": {"a.py": "x\n"}}})

    # Killed; the resumed graph runs the last node again, and LangGraph replays the saved writes of
    # the unfinished step, one of them never traced.
    second = TraceWriter(path)
    second.resume_at(1)
    second.update(("run_attempt:1", "skeleton:2"), {"write_skeleton_file": {"skeleton": {"a.py": "x\n"}}})
    second.update(("run_attempt:1", "skeleton:2"), {"write_skeleton_file": {"skeleton": {"b.py": "y\n"}},
                                                   "__metadata__": {"cached": True}})
    second.update(("run_attempt:1", "skeleton:2"), {"judge_skeleton": {"verdicts": []}})
    nodes = [(e["node"], e["attempt"]) for e in read_trace(path) if e["event"] == "node"]
    assert nodes == [("plan_attempt", 1), ("architect", 1), ("write_skeleton_file", 1), ("write_skeleton_file", 1),
                     ("judge_skeleton", 1)]
    # The same update in another attempt is another event.
    second.update((), {"plan_attempt": {"attempt": 2}})
    second.update(("run_attempt:1", "skeleton:2"), {"write_skeleton_file": {"skeleton": {"a.py": "x\n"}}})
    assert [e["attempt"] for e in read_trace(path) if e.get("node") == "write_skeleton_file"] == [1, 1, 2]
