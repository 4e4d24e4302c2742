"""A run keeps the exact prompt of every call (prompts.jsonl), once per distinct prompt, across a resume;
`projectgen trace DIR --call N` prints it."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import PrivateAttr

from projectgen.llm import ModelRoles
from projectgen.runs import RunRequest
from projectgen.config import AttemptSettings, Settings
from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.llm import META_ATTEMPT, META_ITERATION, META_ROLE, META_TARGET, ScriptedChatModel
from projectgen.runs import layout, livecoder

from test_support import attempt_script


class Recording(ScriptedChatModel):
    """A scripted model keeping, per call key, the messages it received as (type, content) pairs."""

    _received: dict[tuple, list[tuple[str, Any]]] = PrivateAttr(default_factory=dict)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        meta = getattr(run_manager, "metadata", None) or {}
        key = (meta.get(META_ROLE), meta.get(META_TARGET), meta.get(META_ITERATION) or 0, meta.get(META_ATTEMPT))
        self._received[key] = [(m.type, m.content) for m in messages]
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


class Interrupted(BaseException):
    """Stands for a kill: not an Exception, so nothing on the way catches it."""


class DyingKnowledgeStore:
    """The run's knowledge store, dying at its first `add`: after the knowledge call, before its checkpoint."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def add(self, *args: Any, **kwargs: Any) -> Any:
        raise Interrupted()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def call_key(row: dict[str, Any]) -> tuple:
    return (row["role"], row["target"], row["iteration"], row["attempt"])


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two attempts, killed after attempt 1's knowledge call (inside the node that made it), then resumed."""
    task = load_task(example_task_path("kvstore"))
    out = tmp_path_factory.mktemp("prompts") / "run"
    request = RunRequest.for_task(task, settings=Settings(code_iterations=1),
                                  attempt_settings=AttemptSettings(attempts=2, measure_unit_tests=False))
    monkeypatch = pytest.MonkeyPatch()
    opened = livecoder.open_knowledge_store
    monkeypatch.setattr(livecoder, "open_knowledge_store", lambda *a: DyingKnowledgeStore(opened(*a)))
    first = Recording.from_responses(attempt_script(task))
    with pytest.raises(Interrupted):
        livecoder.Run.open(request, out, livecoder.RunParts(models=ModelRoles(first))).run()
    monkeypatch.undo()
    before = rows(out / layout.PROMPTS)
    second = Recording.from_responses(attempt_script(task))
    outcome = livecoder.Run.resume(out, livecoder.RunParts(models=ModelRoles(second))).run()
    return {"out": out, "before": before, "received": {**first._received, **second._received},
            "second": second, "outcome": outcome}


def test_every_recorded_call_has_the_prompt_the_model_received(resumed_run) -> None:
    out = resumed_run["out"]
    usage = rows(out / layout.USAGE)
    prompts = {row["id"]: row["messages"] for row in rows(out / layout.PROMPTS)}
    assert resumed_run["outcome"].summary["final"] == {"source": "best", "attempt": 2, "score": 1.0}
    assert {call_key(r) for r in usage} == set(resumed_run["received"])  # every call made is recorded once
    for row in usage:
        stored = prompts[row["prompt_id"]]
        assert [(m["role"], m["content"]) for m in stored] == resumed_run["received"][call_key(row)]


def test_a_resume_neither_duplicates_nor_loses_a_prompt(resumed_run) -> None:
    out = resumed_run["out"]
    after = rows(out / layout.PROMPTS)
    ids = [row["id"] for row in after]
    assert len(ids) == len(set(ids))  # the replayed knowledge call's prompt was not stored again
    assert after[:len(resumed_run["before"])] == resumed_run["before"]  # what was there stays as it was
    assert "knowledge" not in [c["role"] for c in resumed_run["second"].calls]  # replayed, not asked again
    assert set(ids) == {row["prompt_id"] for row in rows(out / layout.USAGE)}  # nothing missing, nothing extra


def _trace(argv: list[str]) -> int:
    from projectgen.cli.inspect import add_commands

    parser = argparse.ArgumentParser(prog="projectgen")
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.handler(args)


def test_trace_prints_a_calls_prompt_and_reply(resumed_run, capsys) -> None:
    from projectgen.errors import ProjectGenError
    from projectgen.inspection import call_prompt, load_run

    out = resumed_run["out"]
    run = load_run(out)
    number = next(i for i, c in enumerate(run.calls, 1) if c.role == "coder" and c.target == "kvstore/store.py")
    assert _trace(["trace", str(out), "--calls"]) == 0
    assert f"│ {number:>2} │" in capsys.readouterr().out  # the number --call takes
    assert _trace(["trace", str(out), "--call", str(number)]) == 0
    printed = capsys.readouterr().out
    asked = call_prompt(run, number)
    assert f"call {number}: attempt 1, stage code, role coder, target kvstore/store.py" in printed
    assert "message 1: system" in printed and "message 2: human" in printed
    for message in asked.messages:
        assert all(line.strip() in printed for line in message["content"].splitlines()[:40])
    assert asked.reply and "now > expires_at" in asked.reply and "reply" in printed
    with pytest.raises(ProjectGenError, match=f"no call 999 in this run \\(it has calls 1-{len(run.calls)}"):
        _trace(["trace", str(out), "--call", "999"])


def test_the_report_says_where_the_prompts_are(resumed_run) -> None:
    from projectgen.inspection import load_run, report_contents

    facts = dict(report_contents(load_run(resumed_run["out"])).facts)
    assert "prompts.jsonl" in facts["prompts"] and "--call N" in facts["prompts"]
