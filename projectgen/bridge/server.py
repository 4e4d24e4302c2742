"""The model bridge: an external system's OpenAI-style calls, each one a call through projectgen's model door.

An external system (MetaGPT, an agent CLI, a fake in the tests) knows only an OpenAI base URL. The bridge
answers ``POST /v1/chat/completions`` and ``GET /v1/models`` by calling the experiment's model with
`projectgen.llm.door.acall_model`, so each call is recorded (usage.jsonl, prompts.jsonl), priced,
counted against the run's budget, capped, retried, and cached for a resumed run, exactly as the
calls of projectgen's own agents. The system chooses nothing of that: the model (whatever name it
sends), the sampling (the experiment's model was made with the paper's temperature 0, top_p 1.0 and
output cap, `projectgen.llm.sampling`; a request's own sampling fields are not forwarded) and the labels.

Each call is labelled role `BRIDGE_ROLE`, stage the system's name, target the first line of the last
user message (what was asked, for a trace and for a replay script) and iteration the number of times
this exact prompt has been asked in this run (1, 2, ...). The call cache's key is made of these and
the prompt, so a resumed run (a new bridge over the same run folder, the system started again)
replays the n-th asking of a prompt with the n-th reply, whatever the order in which concurrent
calls arrive, and a prompt never asked before goes to the model.

aiohttp is imported here only: the CLI and the rest of projectgen never import this module until a
bridge is served.
"""
from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from projectgen.bridge.wire import (
    BridgeRequestError,
    ChatReply,
    ChatRequest,
    completion_body,
    cut_at_stop,
    error_body,
    models_body,
    openai_finish_reason,
    parse_chat_request,
    stream_events,
)
from projectgen.errors import ProjectGenError, first_line
from projectgen.llm.door import DoorSettings, acall_model, finish_reason
from projectgen.llm.errors import BudgetExceededError
from projectgen.llm.messages import estimate_tokens, input_text, message_text
from projectgen.llm.naming import model_name
from projectgen.llm.prompt_store import prompt_id
from projectgen.llm.roles import EXTERNAL_ROLE, CallLabels
from projectgen.llm.sampling import sampling_of

logger = logging.getLogger(__name__)

BRIDGE_ROLE = EXTERNAL_ROLE
"""The role of every call an external system makes through the bridge."""
TARGET_CHARS = 80
MAX_REQUEST_BYTES = 16 * 1024**2
MAX_IN_FLIGHT = 16
NO_RETRY = {"x-should-retry": "false"}  # the OpenAI SDKs retry 429 and 5xx unless told not to
# A request's sampling field -> the model's setting it asks to change (`sampling_of`'s keys); a field with
# no setting here (seed, the penalties) is never sent, so asking for it always changes what the call is.
SENT_AS = {"max_completion_tokens": "max_tokens"}


@dataclass(frozen=True)
class BridgeSettings:
    """Who the calls are for and how the door treats them.

    `system`: the external system's name, the stage of its calls' labels. `door`: the run folder's
    recorder, prompt store, call cache and budget (`DoorSettings`), as for the run's own calls.
    `served_name`: the model name ``/v1/models`` lists and replies carry (default: the model's own).
    `max_in_flight`: calls the system may have at the model at once; the others wait. A budget is checked
    before each call and counts a call once it is answered, so calls already in flight can take a run
    past its budget: this bounds by how much, whatever the system fires at once. `attempt`: the attempt
    the calls belong to in the run's records (an experiment's external run is its one attempt, 1), so its
    per-attempt figures count them; None outside an attempt."""

    system: str
    door: DoorSettings
    served_name: str | None = None
    max_request_bytes: int = MAX_REQUEST_BYTES
    max_in_flight: int = MAX_IN_FLIGHT
    attempt: int | None = None

    def __post_init__(self) -> None:
        if self.max_in_flight < 1 or self.max_request_bytes < 1:
            raise ProjectGenError(f"bridge for {self.system}: max_in_flight and max_request_bytes must be at least 1")


class ModelBridge:
    """The bridge of one run: its model, its door and how often each prompt has been asked so far."""

    def __init__(self, model: Any, settings: BridgeSettings) -> None:
        self.model = model
        self.settings = settings
        self.served_name = settings.served_name or model_name(model)
        self._asked: dict[str, int] = {}  # prompt id -> times asked in this run (the bridge's event loop only)
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None  # per serving loop
        self._sampling_said = False

    def labels(self, request: ChatRequest) -> CallLabels:
        """The call's labels: this prompt's asking number in this run (counted here) and what it asks for."""
        key = prompt_id([{"role": role, "content": text} for role, text in request.messages])
        self._asked[key] = self._asked.get(key, 0) + 1
        return CallLabels(role=BRIDGE_ROLE, stage=self.settings.system, target=call_target(request),
                          iteration=self._asked[key], attempt=self.settings.attempt)

    def say_sampling(self, request: ChatRequest) -> None:
        """Say once that the system asked for sampling the bridge does not send, and what it sends (a paper's
        run of it may have used its own: the reader should know which one these calls had). Asking for what
        is sent anyway (temperature 0 when the model's is 0) changes nothing and is not said."""
        enforced = sampling_of(self.model)
        overridden = [(name, value) for name, value in request.asked_sampling
                      if enforced.get(SENT_AS.get(name, name)) != value]
        if not overridden or self._sampling_said:
            return
        self._sampling_said = True
        logger.warning("%s asked for %s; the bridge sends the experiment's model's own sampling instead: %s",
                       self.settings.system, ", ".join(f"{name}={value}" for name, value in overridden),
                       enforced or "none (a replay samples nothing)")

    def in_flight(self) -> asyncio.Semaphore:
        """The `max_in_flight` slots of the loop serving this bridge (a bridge served again gets new ones)."""
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:
            self._slots = (loop, asyncio.Semaphore(self.settings.max_in_flight))
        return self._slots[1]

    async def complete(self, request: ChatRequest) -> ChatReply:
        """The reply to one request, through the door (raises what the door raises: a budget's refusal,
        `ModelCallError`, a script's end)."""
        labels = self.labels(request)
        self.say_sampling(request)
        async with self.in_flight():
            reply = await acall_model(self.model, list(request.messages), labels, self.settings.door)
        text = message_text(reply)
        text, stopped = cut_at_stop(text, request.stop)
        usage = getattr(reply, "usage_metadata", None) or {}
        prompt_tokens = int(usage.get("input_tokens") or estimate_tokens(input_text(list(request.messages))))
        completion_tokens = int(usage.get("output_tokens") or estimate_tokens(message_text(reply)))
        reason = "stop" if stopped else openai_finish_reason(finish_reason(reply))
        return ChatReply(call_id=f"chatcmpl-{secrets.token_hex(12)}", model=self.served_name, text=text,
                         finish_reason=reason, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                         created=int(time.time()))

    def application(self) -> web.Application:
        """The aiohttp application answering the OpenAI routes (with and without the ``/v1`` prefix)."""
        app = web.Application(client_max_size=self.settings.max_request_bytes)
        for prefix in ("/v1", ""):
            app.router.add_post(f"{prefix}/chat/completions", self.handle_chat)
            app.router.add_get(f"{prefix}/models", self.handle_models)
        return app

    async def handle_models(self, _request: web.Request) -> web.Response:
        return web.json_response(models_body(self.served_name))

    async def handle_chat(self, http: web.Request) -> web.StreamResponse:
        try:
            request = parse_chat_request(json.loads(await http.read()))
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"request over the bridge's limit of {self.settings.max_request_bytes} bytes",
                          "invalid_request_error")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the request body is not JSON", "invalid_request_error")
        except BridgeRequestError as exc:
            return _error(400, str(exc), "invalid_request_error")
        try:
            reply = await self.complete(request)
        except BudgetExceededError as exc:
            return _error(429, f"projectgen bridge refused the call: {first_line(exc)}", "insufficient_quota",
                          "insufficient_quota")
        except ProjectGenError as exc:
            logger.warning("bridge call of %s failed: %s", self.settings.system, first_line(exc))
            return _error(502, f"projectgen bridge: the model call failed: {first_line(exc)}", "api_error")
        if not request.stream:
            return web.json_response(completion_body(reply))
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await stream.prepare(http)
        for event in stream_events(reply, request.include_usage):
            await stream.write(event)
        await stream.write_eof()
        return stream


def call_target(request: ChatRequest) -> str | None:
    """What a call asks for, for its record: the first line of the last user message, at most
    `TARGET_CHARS` printable characters (None when there is no user message)."""
    last = next((text for role, text in reversed(request.messages) if role == "human"), None)
    if last is None:
        return None
    line = next((line.strip() for line in last.splitlines() if line.strip()), "")
    printable = "".join(char for char in line if char.isprintable())
    return printable[:TARGET_CHARS] or None


def _error(status: int, message: str, kind: str, code: str | None = None) -> web.Response:
    return web.json_response(error_body(message, kind, code), status=status, headers=NO_RETRY)
