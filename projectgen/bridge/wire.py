"""The OpenAI chat-completions wire format: a request read into what the door needs, a reply written back.

Pure functions over JSON values, no server: the bridge's handlers (`projectgen.bridge.server`) parse
with them and answer with them. What an external system sends is hostile input, so reading it is
strict: a field of the wrong type, a message without text or a feature the bridge does not carry
(tools, several choices, images) is a `BridgeRequestError` (HTTP 400), never a silently different call.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from projectgen.errors import ProjectGenError

# OpenAI's message roles -> LangChain's message types (what the door and the prompt store record). No "tool":
# tool calls are not carried, so neither are their results.
ROLES = {"system": "system", "developer": "system", "user": "human", "assistant": "ai"}
# Fields that would change what is asked or answered and that the bridge does not carry: refused, not dropped.
UNSUPPORTED = ("tools", "functions", "tool_choice", "function_call", "logprobs", "audio", "modalities")
# Sampling fields a request may send; the bridge enforces the experiment's own instead (see `ChatRequest`).
SAMPLING_FIELDS = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "frequency_penalty",
                   "presence_penalty")


class BridgeRequestError(ProjectGenError):
    """A request the bridge will not forward: HTTP 400 with this message."""


@dataclass(frozen=True)
class ChatRequest:
    """What the bridge takes from a chat-completions request.

    `messages` are ``(LangChain type, text)`` pairs, as the door hands them to the model. `stop` cuts the
    reply as the server would. Sampling is not here: the experiment's model was made with the paper's
    settings (`projectgen.llm.sampling`), and a system's own temperature, top_p or output cap is not
    forwarded (`asked_sampling` keeps what it asked: the bridge says once what it did not send)."""

    messages: tuple[tuple[str, str], ...]
    stream: bool = False
    include_usage: bool = False
    stop: tuple[str, ...] = ()
    asked_sampling: tuple[tuple[str, Any], ...] = ()


def parse_chat_request(body: Any) -> ChatRequest:
    """The request of a decoded JSON body, or `BridgeRequestError` saying what is wrong with it."""
    if not isinstance(body, Mapping):
        raise BridgeRequestError("the request body must be a JSON object")
    for name in UNSUPPORTED:
        if body.get(name) not in (None, [], False):
            raise BridgeRequestError(f"{name!r} is not supported by the projectgen model bridge")
    if body.get("n") not in (None, 1):
        raise BridgeRequestError("'n' must be 1: the bridge answers with one choice")
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise BridgeRequestError("'messages' must be a non-empty list")
    messages = tuple(_message(index, message) for index, message in enumerate(raw))
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BridgeRequestError("'stream' must be true or false")
    options = body.get("stream_options") or {}
    include_usage = bool(isinstance(options, Mapping) and options.get("include_usage") is True)
    return ChatRequest(messages=messages, stream=stream, include_usage=include_usage, stop=_stop(body.get("stop")),
                       asked_sampling=tuple((name, body[name]) for name in SAMPLING_FIELDS if name in body))


def _message(index: int, message: Any) -> tuple[str, str]:
    if not isinstance(message, Mapping):
        raise BridgeRequestError(f"messages[{index}] must be an object")
    role = message.get("role")
    if message.get("tool_calls") or message.get("function_call"):
        raise BridgeRequestError(f"messages[{index}]: tool calls are not supported by the projectgen model bridge")
    if role not in ROLES:
        raise BridgeRequestError(f"messages[{index}].role must be one of {', '.join(ROLES)}, not {role!r}")
    return ROLES[role], _text(index, message.get("content"))


def _text(index: int, content: Any) -> str:
    """A message's text: a string, or the text parts of a list (another kind of part is refused)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, Mapping) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise BridgeRequestError(f"messages[{index}].content: only text parts are supported")
            texts.append(part["text"])
        return "".join(texts)
    raise BridgeRequestError(f"messages[{index}].content must be a string or a list of text parts")


def _stop(stop: Any) -> tuple[str, ...]:
    if stop is None:
        return ()
    if isinstance(stop, str):
        return (stop,) if stop else ()
    if isinstance(stop, list) and all(isinstance(word, str) for word in stop) and len(stop) <= 4:
        return tuple(word for word in stop if word)
    raise BridgeRequestError("'stop' must be a string or a list of at most 4 strings")


def cut_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """`text` up to its first stop sequence (as an OpenAI server returns it), and whether one was found."""
    ends = [text.index(word) for word in stop if word in text]
    return (text[:min(ends)], True) if ends else (text, False)


@dataclass(frozen=True)
class ChatReply:
    """What the bridge answers one call with: the text, why it ended and the tokens the door recorded."""

    call_id: str
    model: str
    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    created: int = 0

    def usage(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens}


def openai_finish_reason(reason: str | None) -> str:
    """The door's finish reason in OpenAI's words: "length" when the reply was cut, else "stop"."""
    return "length" if reason in ("length", "max_tokens", "MAX_TOKENS") else "stop"


def completion_body(reply: ChatReply) -> dict[str, Any]:
    """A ``chat.completion`` object."""
    return {"id": reply.call_id, "object": "chat.completion", "created": reply.created or int(time.time()),
            "model": reply.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text},
                         "finish_reason": reply.finish_reason, "logprobs": None}],
            "usage": reply.usage()}


def stream_events(reply: ChatReply, include_usage: bool) -> Iterator[bytes]:
    """The reply as server-sent ``chat.completion.chunk`` events, ending with ``[DONE]``.

    The door returns whole replies (it records, caches and caps them whole), so a stream carries the reply
    in one content chunk once it is complete: a client that streams gets the same text, later than from a
    streaming server, never a different one."""
    created = reply.created or int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None, usage: dict[str, int] | None = None,
              choices: bool = True) -> bytes:
        body: dict[str, Any] = {"id": reply.call_id, "object": "chat.completion.chunk", "created": created,
                                "model": reply.model,
                                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if choices else []}
        if include_usage:
            body["usage"] = usage
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    yield chunk({"role": "assistant", "content": ""}, None)
    yield chunk({"content": reply.text}, None)
    yield chunk({}, reply.finish_reason)
    if include_usage:
        yield chunk({}, None, reply.usage(), choices=False)
    yield b"data: [DONE]\n\n"


def models_body(model: str, created: int = 0) -> dict[str, Any]:
    """The ``/v1/models`` list: the one model the bridge serves."""
    return {"object": "list", "data": [{"id": model, "object": "model", "created": created,
                                        "owned_by": "projectgen-bridge"}]}


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI error object (``{"error": {...}}``)."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
