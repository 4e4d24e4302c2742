"""The prompt store: every call's exact messages kept once per distinct prompt, named in its record."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import PrivateAttr

from projectgen.llm import (BudgetExceededError, CallLabels, DoorSettings, ModelCallError, PromptStore,
                            ScriptedChatModel, UsageRecorder, call_model, prompt_id, prompt_messages, read_prompts)

MESSAGES = [("system", "You write Python."), ("human", "Write pkg/a.py.")]


class Recording(ScriptedChatModel):
    """A scripted model keeping the messages it received, as (type, content) pairs."""

    _received: list[list[tuple[str, Any]]] = PrivateAttr(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self._received.append([(m.type, m.content) for m in messages])
        return super()._generate(messages, stop, run_manager, **kwargs)


def model() -> Recording:
    return Recording.from_responses([{"role": "coder", "content": "```python\nx = 1\n```"}])


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_messages_are_kept_as_the_model_receives_them():
    assert prompt_messages(MESSAGES) == [{"role": "system", "content": "You write Python."},
                                         {"role": "human", "content": "Write pkg/a.py."}]
    assert prompt_messages("hi") == [{"role": "human", "content": "hi"}]
    assert prompt_messages([{"role": "user", "content": "hi"}]) == [{"role": "human", "content": "hi"}]
    # the same text split differently into messages is another prompt
    assert prompt_id(prompt_messages([("system", "a\nb"), ("human", "c")])) != prompt_id(
        prompt_messages([("system", "a"), ("human", "b\nc")]))


def test_a_call_through_the_door_names_its_prompt_which_equals_what_the_model_received(tmp_path: Path):
    store, recorder, chat = PromptStore(tmp_path / "prompts.jsonl"), UsageRecorder(), model()
    call_model(chat, MESSAGES, CallLabels("coder", "code", "pkg/a.py", 1), DoorSettings(recorder=recorder,
                                                                                         prompts=store))
    (record,) = recorder.records
    stored = read_prompts(tmp_path / "prompts.jsonl")[record.prompt_id]
    assert [(m["role"], m["content"]) for m in stored] == chat._received[0]
    assert store.get(record.prompt_id) == stored


def test_an_identical_prompt_is_stored_once(tmp_path: Path):
    path = tmp_path / "prompts.jsonl"
    store, recorder = PromptStore(path), UsageRecorder()
    door = DoorSettings(recorder=recorder, prompts=store)
    for iteration in (1, 2, 3):  # three calls, one prompt
        call_model(model(), MESSAGES, CallLabels("coder", "code", "pkg/a.py", iteration), door)
    call_model(model(), [*MESSAGES, ("human", "again")], CallLabels("coder", "code", "pkg/a.py", 4), door)
    ids = [r.prompt_id for r in recorder.records]
    assert ids[0] == ids[1] == ids[2] != ids[3]
    assert [row["id"] for row in lines(path)] == [ids[0], ids[3]] and len(store) == 2


def test_a_reopened_store_adds_nothing_it_holds_and_repairs_a_torn_line(tmp_path: Path):
    path = tmp_path / "prompts.jsonl"
    first = PromptStore(path)
    kept = first.put(prompt_messages(MESSAGES))
    with open(path, "a") as handle:  # a writer killed in the middle of its line
        handle.write('{"id": "torn", "messages": [{"role": "sys')
    again = PromptStore(path)  # a resumed run
    assert kept in again and "torn" not in again
    assert again.put(prompt_messages(MESSAGES)) == kept
    other = again.put(prompt_messages([("human", "other")]))
    assert [row["id"] for row in lines(path)] == [kept, other]  # the torn line was cut off, nothing doubled


def test_a_failed_call_names_its_prompt_and_a_refused_one_stores_none(tmp_path: Path):
    from projectgen.llm.faults import FaultPlan, FaultyChatModel

    path = tmp_path / "prompts.jsonl"
    recorder = UsageRecorder()
    failing = FaultyChatModel(wrapped=model(), plan=FaultPlan.parse("auth_error=1"))
    with pytest.raises(ModelCallError):
        call_model(failing, MESSAGES, CallLabels("coder", "code", "pkg/a.py", 1),
                   DoorSettings(recorder=recorder, prompts=PromptStore(path)))
    (record,) = recorder.records
    assert record.error and record.prompt_id in read_prompts(path)

    class Spent:
        def before_call(self) -> None:
            raise BudgetExceededError("budget reached")

    with pytest.raises(BudgetExceededError):
        call_model(model(), [("human", "never asked")], CallLabels("coder", "code", "pkg/b.py", 1),
                   DoorSettings(budget=Spent(), prompts=PromptStore(path)))  # type: ignore[arg-type]
    assert len(read_prompts(path)) == 1
