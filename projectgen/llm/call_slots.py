"""Model calls in flight, capped per model or endpoint across every unit of a batch.

With a real model an experiment waits on the model: a pair's thread spends seconds per call doing
nothing. A batch therefore runs many pairs at once (`projectgen.experiments.executors.LocalExecutor`,
one thread and event loop each) and caps what reaches each model here instead: `CallSlots(limit)`
lets at most `limit` calls of one model (or endpoint) be answered at a time, whichever unit makes
them. `limit_calls` wraps a unit's models so that their calls take a slot; the wrapper sits below
the door (`projectgen.llm.door`), so the budget is checked before a call waits for a slot, and a
call waiting out a 429 back-off holds none.

The slots are plain thread semaphores, one per key, shared by threads that each run their own
event loop; an async call waits for one by polling (`POLL_S`), which costs nothing next to a
model's latency and never blocks its loop.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from projectgen.errors import ProjectGenError
from projectgen.llm.naming import describe_model, model_name

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

DEFAULT_CALLS = 16
"""Calls in flight per model when the user says nothing: API providers serve far more than this per
key, and a local server queues what it cannot take at once."""
POLL_S = (0.002, 0.05)  # an async waiter's first and longest pause between tries


class CallSlots:
    """At most `limit` calls in flight per key (a model's name, or its endpoint), shared by threads."""

    def __init__(self, limit: int = DEFAULT_CALLS) -> None:
        if limit < 1:
            raise ProjectGenError(f"--max-concurrent-calls must be at least 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._slots: dict[str, threading.BoundedSemaphore] = {}

    def slot(self, key: str) -> threading.BoundedSemaphore:
        with self._lock:
            if key not in self._slots:
                self._slots[key] = threading.BoundedSemaphore(self.limit)
            return self._slots[key]

    @contextmanager
    def held(self, key: str) -> Iterator[None]:
        """A slot of `key` for a blocking call (waits for one)."""
        slot = self.slot(key)
        slot.acquire()
        try:
            yield
        finally:
            slot.release()

    @asynccontextmanager
    async def aheld(self, key: str) -> AsyncIterator[None]:
        """A slot of `key` for an async call: waits without blocking the event loop."""
        import asyncio

        slot, pause = self.slot(key), POLL_S[0]
        while not slot.acquire(blocking=False):
            await asyncio.sleep(pause)
            pause = min(pause * 2, POLL_S[1])
        try:
            yield
        finally:
            slot.release()


def endpoint_key(model: Any) -> str:
    """What one set of slots covers: the model's endpoint when it has one (a server serves every model it
    hosts from one queue), else its name."""
    url = getattr(model, "openai_api_base", None) or getattr(model, "base_url", None)
    return str(url) if isinstance(url, str) and url else model_name(model)


def limit_calls(models: Any, slots: CallSlots) -> Any:
    """`models` (one chat model or a `ModelRoles`) with every model's calls taking a slot of `slots`.

    Models shared between roles stay shared (one wrapper each)."""
    from projectgen.llm.factory import ModelRoles

    cls = _limited_chat_model_class()
    wrapped: dict[int, Any] = {}

    def wrap(model: Any) -> Any:
        if id(model) not in wrapped:
            wrapped[id(model)] = cls(wrapped=model, slots=slots, key=endpoint_key(model))
        return wrapped[id(model)]

    if isinstance(models, ModelRoles):
        return ModelRoles(default=wrap(models.default), overrides={r: wrap(m) for r, m in models.overrides.items()})
    return wrap(models)


def wrapped_config(run_manager: Any) -> dict[str, Any]:
    """The run config a wrapper hands its wrapped model: the same metadata (a replay is keyed by it) and tags."""
    config: dict[str, Any] = {"metadata": dict(getattr(run_manager, "metadata", None) or {})}
    tags = getattr(run_manager, "tags", None)
    if tags:
        config["tags"] = list(tags)
    return config


@functools.cache
def _limited_chat_model_class() -> type[BaseChatModel]:
    """Define the class once, on first use (the cache holds a class definition, not run state)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.outputs import ChatGeneration, ChatResult

    class LimitedChatModel(BaseChatModel):
        """`wrapped` (any chat model), each call holding one of `slots`' slots for `key` while it is answered."""

        wrapped: Any
        slots: Any
        key: str
        cache: Any = False

        @property
        def _llm_type(self) -> str:
            return "call-limiting wrapper"

        # Named, described and priced as the wrapped model: the cap changes when a call runs, not what it is.
        def projectgen_description(self) -> str:
            return describe_model(self.wrapped)

        def projectgen_model_name(self) -> str:
            return model_name(self.wrapped)

        def _generate(self, messages: list[Any], stop: list[str] | None = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:
            with self.slots.held(self.key):
                reply = self.wrapped.invoke(messages, config=wrapped_config(run_manager), stop=stop, **kwargs)
            return ChatResult(generations=[ChatGeneration(message=reply)])

        async def _agenerate(self, messages: list[Any], stop: list[str] | None = None, run_manager: Any = None,
                             **kwargs: Any) -> ChatResult:
            async with self.slots.aheld(self.key):
                reply = await self.wrapped.ainvoke(messages, config=wrapped_config(run_manager), stop=stop, **kwargs)
            return ChatResult(generations=[ChatGeneration(message=reply)])

    LimitedChatModel.__module__ = __name__
    return LimitedChatModel
