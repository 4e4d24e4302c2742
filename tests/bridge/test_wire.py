"""Reading an external system's request strictly: what the bridge cannot carry is refused with a reason,
never dropped (a call without its tools, or one choice of several, would be another call than asked)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from projectgen.bridge.wire import BridgeRequestError, ChatReply, parse_chat_request, stream_events

USER = {"role": "user", "content": "hi"}


def test_a_request_becomes_the_doors_messages_and_keeps_what_sampling_it_asked() -> None:
    request = parse_chat_request({
        "model": "x", "temperature": 0.7, "stop": "END",
        "messages": [{"role": "developer", "content": "be brief"},
                     {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                     {"role": "assistant", "content": None}]})
    assert request.messages == (("system", "be brief"), ("human", "ab"), ("ai", ""))
    assert request.stop == ("END",)
    assert request.asked_sampling == (("temperature", 0.7),)


@pytest.mark.parametrize(("body", "why"), [
    ({"messages": [USER], "tools": [{"type": "function"}]}, "'tools' is not supported"),
    ({"messages": [USER], "n": 2}, "'n' must be 1"),
    ({"messages": []}, "non-empty list"),
    ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
    ({"messages": [USER, {"role": "tool", "content": "42", "tool_call_id": "c"}]}, "messages[1].role"),
    ({"messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}]}, "tool calls are not"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}, "only text parts"),
    ({"messages": [{"role": "user", "content": 5}]}, "string or a list"),
    ({"messages": [USER], "stop": ["a", "b", "c", "d", "e"]}, "at most 4"),
    ({"messages": [USER], "stream": "yes"}, "'stream' must be"),
    (["not", "an", "object"], "JSON object"),
])
def test_what_the_bridge_cannot_carry_is_refused(body: Any, why: str) -> None:
    with pytest.raises(BridgeRequestError) as refused:
        parse_chat_request(body)
    assert why in str(refused.value)


def test_a_stream_carries_the_whole_reply_then_done() -> None:
    reply = ChatReply(call_id="c", model="m", text="x = 1", finish_reason="length", prompt_tokens=3,
                      completion_tokens=2, created=1)
    events = [event.decode() for event in stream_events(reply, include_usage=True)]
    assert events[-1] == "data: [DONE]\n\n"
    chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]) == "x = 1"
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "length"
    assert chunks[-1]["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
