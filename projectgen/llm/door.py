"""The one door to the model: every agent's call is labelled, timed, recorded, retried, capped and budgeted.

Every agent calls its model through `call_model` / `acall_model`, which tags the
call with run-config metadata (role, stage, target, iteration), measures latency,
records tokens in a `UsageRecorder`, retries transient failures (429, timeouts,
connection errors, 5xx) with exponential backoff, enforces an optional budget and
cuts a runaway reply at `MAX_REPLY_CHARS` (recorded as `CallRecord.cut_chars`).
`projectgen.llm.faults.FaultyChatModel` wraps any model to inject such failures.
Given a `CallCache` (durable runs), it answers a call that a killed run had completed
with the recorded reply instead of calling the model again. Given a `PromptStore`, it keeps
the exact messages of every call (each distinct prompt once) and names them in the call's
record (`CallRecord.prompt_id`).

Both forms run one implementation, `DoorCall.run` (a coroutine): `acall_model` awaits it
with ``model.ainvoke`` and an async sleep; `call_model` hands it plain ``model.invoke``
and a blocking sleep wrapped as coroutines that never suspend, and runs it to the end
without an event loop.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

from projectgen.errors import ProjectGenError, first_line
from projectgen.llm.budgets import Budget
from projectgen.llm.call_cache import CallCache
from projectgen.llm.errors import ModelCallError
from projectgen.llm.messages import estimate_tokens, input_text, message_text
from projectgen.llm.naming import model_name
from projectgen.llm.prompt_store import PromptStore, prompt_id, prompt_messages
from projectgen.llm.retries import is_transient, retry_delay
from projectgen.llm.roles import CallLabels
from projectgen.llm.usage import CallRecord, UsageRecorder

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage

logger = logging.getLogger(__name__)
T = TypeVar("T")
Offload = Callable[[Callable[[], T]], Awaitable[T]]
"""How a call's file-writing bookkeeping is run: ``asyncio.to_thread`` for an async caller, `inline` otherwise."""

MAX_REPLY_CHARS = 200_000
"""Replies longer than this are cut at the door, marked ``finish_reason: "length"``, and the record
says how much was dropped (`CallRecord.cut_chars`). About 50k tokens of visible text: more than one
file, tree or review needs and above the output limit of most models, so only a runaway or hostile
reply is cut, and it cannot fill memory or disk through the state, every checkpoint of it, the
trace and the repository that follow."""


@dataclass(frozen=True)
class DoorSettings:
    """How the door treats a call: where it and its prompt are recorded, which budget and call cache
    apply, how often and how patiently it is retried, and how long a reply may be (None: no cap)."""

    recorder: UsageRecorder | None = None
    budget: Budget | None = None
    cache: CallCache | None = None
    prompts: PromptStore | None = None
    retries: int = 3
    backoff: float = 1.0
    max_backoff: float = 30.0
    max_reply_chars: int | None = MAX_REPLY_CHARS


@dataclass
class DoorCall:
    """One call going through the door: its bookkeeping from the budget check to the record."""

    model: Any
    labels: CallLabels
    settings: DoorSettings
    started: float = field(default_factory=time.perf_counter)
    timestamp: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    key: str | None = None
    prompt: str | None = None

    async def run(self, messages: Any, invoke: Callable[[], Awaitable[Any]],
                  sleep: Callable[[float], Awaitable[Any]], offload: Offload) -> AIMessage:
        """The reply: replayed from the call cache, or from `invoke`, tried again after `sleep`
        while the error is transient and retries are left. The bookkeeping that writes files (prompt
        store, call cache, usage) runs through `offload`: in a thread for an async caller, whose event
        loop must not block (a server's fails the run), inline for a blocking one."""
        replayed = await offload(lambda: self.begin(messages))
        if replayed is not None:
            return replayed
        attempt = 0
        while True:
            attempt += 1
            start = time.perf_counter()
            try:
                reply = await invoke()
            except Exception as exc:
                latency = time.perf_counter() - start
                await sleep(await offload(lambda: self.failed(exc, attempt, latency)))
                continue
            latency = time.perf_counter() - start
            return await offload(lambda: self.succeeded(messages, reply, attempt, latency))

    def begin(self, messages: Any) -> AIMessage | None:
        """The cached reply of this call, or None once the budget has allowed a fresh call; either way
        the prompt is in the prompt store from here on."""
        replayed = self.replayed(messages)
        if replayed is None:
            self.before()
        self.remember(messages)
        return replayed

    def remember(self, messages: Any) -> None:
        """Put the call's messages in the prompt store (once per distinct prompt), for its record."""
        store = self.settings.prompts
        if store is None:
            return
        try:
            stored = prompt_messages(messages)
        except (TypeError, ValueError, NotImplementedError):  # a form LangChain cannot read: keep its text
            stored = [{"role": "input", "content": input_text(messages)}]
        self.prompt = store.put(stored, prompt_id(stored))

    def replayed(self, messages: Any) -> AIMessage | None:
        """The reply of this call if the run's call cache has it (recording its usage if that was lost)."""
        cache = self.settings.cache
        if cache is None:
            return None
        self.key = cache.key(self.labels, model_name(self.model), messages)
        entry = cache.get(self.key)
        if entry is None:
            return None
        recorder = self.settings.recorder
        if recorder is None or not recorder.has(self.key):
            # Killed between the cache line and the usage line: record it now (what was paid is on record
            # whatever follows; the spending budgets check it as before).
            self.commit(CallRecord.model_validate(entry["record"]))
        # Asked again either way: a budget of asks (`CallBudget`) counts it, and a spent budget refuses it as
        # its check did, so a rerun is answered no more often than the first run would have been.
        self.before()
        return CallCache.reply(entry)

    def before(self) -> None:
        before_call = getattr(self.settings.budget, "before_call", None)
        if before_call is not None:
            before_call()

    def record(self, reply: Any = None, **fields: Any) -> CallRecord:
        labels = self.labels
        record = CallRecord(role=labels.role, stage=labels.stage, target=labels.target, iteration=labels.iteration,
                            attempt=labels.attempt, model=model_name(self.model),
                            elapsed_s=time.perf_counter() - self.started, timestamp=self.timestamp,
                            call_id=self.key if reply is not None else None, prompt_id=self.prompt, **fields)
        if reply is not None and self.settings.cache is not None and self.key is not None:
            self.settings.cache.put(self.key, reply, record)  # before the usage line: see CallCache
        return self.commit(record)

    def commit(self, record: CallRecord) -> CallRecord:
        if self.settings.recorder is not None:
            self.settings.recorder.record(record)
        if self.settings.budget is not None:
            self.settings.budget.check(record)
        return record

    def succeeded(self, messages: Any, reply: Any, attempt: int, latency: float) -> Any:
        usage = getattr(reply, "usage_metadata", None)
        estimated = bool((getattr(reply, "response_metadata", None) or {}).get("tokens_estimated"))
        if usage:
            tokens_in, tokens_out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        else:
            tokens_in, tokens_out = estimate_tokens(input_text(messages)), estimate_tokens(message_text(reply))
            estimated = True
        reply, cut = self.capped(reply)  # the cache keeps what the agents saw
        self.record(reply, input_tokens=tokens_in, output_tokens=tokens_out, tokens_estimated=estimated,
                    latency_s=latency, attempts=attempt, cut_chars=cut, finish_reason=finish_reason(reply))
        return reply

    def capped(self, reply: Any) -> tuple[Any, int]:
        """The reply cut to `max_reply_chars` (as if the model had hit its length limit), and the
        number of characters dropped (0 when it fits)."""
        limit = self.settings.max_reply_chars
        if limit is None:
            return reply, 0
        text = message_text(reply)
        if len(text) <= limit:
            return reply, 0
        cut = len(text) - limit
        logger.warning("model call %s/%s (target %s): reply of %d characters cut to the cap of %d", self.labels.stage,
                       self.labels.role, self.labels.target, len(text), limit)
        metadata = {**(getattr(reply, "response_metadata", None) or {}), "finish_reason": "length",
                    "projectgen_cut_chars": cut}
        try:
            return reply.model_copy(update={"content": text[:limit], "response_metadata": metadata}), cut
        except AttributeError:  # not a message object: hand back the cut text
            return text[:limit], cut

    def failed(self, exc: Exception, attempt: int, latency: float) -> float:
        """The wait before the next try, or raise: the error itself if a `ProjectGenError`, else `ModelCallError`."""
        settings, labels = self.settings, self.labels
        transient = is_transient(exc)
        if transient and attempt <= settings.retries:
            delay = retry_delay(exc, attempt, settings.backoff, settings.max_backoff)
            logger.warning("model call %s/%s (target %s) failed with %s; retry %d of %d in %.1fs", labels.stage,
                           labels.role, labels.target, type(exc).__name__, attempt, settings.retries, delay)
            return delay
        error = f"{type(exc).__name__}: {first_line(exc)}"
        record = self.record(latency_s=latency, attempts=attempt, error=error)
        if isinstance(exc, ProjectGenError):
            raise exc
        kind = "transient error persisted" if transient else "non-retryable error"
        where = f"role={labels.role}, stage={labels.stage}" + (f", target={labels.target}" if labels.target else "")
        raise ModelCallError(f"model call failed after {attempt} attempt(s), {kind} ({where}): {error}",
                             record=record, cause=exc) from exc


def finish_reason(reply: Any) -> str | None:
    """Why a reply ended, from its response metadata (OpenAI-style ``finish_reason``, Ollama's ``done_reason``,
    Anthropic's ``stop_reason``), or None when the model does not say."""
    metadata = getattr(reply, "response_metadata", None) or {}
    for key in ("finish_reason", "done_reason", "stop_reason"):
        value = metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def call_model(model: Any, messages: Any, labels: CallLabels, door: DoorSettings | None = None, *,
               config: Mapping[str, Any] | None = None, sleep: Callable[[float], Any] = time.sleep) -> AIMessage:
    """Invoke `model` through the one door: tag, time, record, retry transient errors, enforce the budget.

    `labels` say who is asking (role, stage, target, iteration; the attempt, when not given, comes from
    ``config["metadata"]``); `door` says how the call is treated (recorder, budget, call cache,
    retries and backoff, reply cap: see `DoorSettings`). `config` is merged into the run config
    (callbacks, tags, extra metadata). Raises `ModelCallError` (with `.record` and `.cause`), or a
    `ProjectGenError` from the model or budget as is.
    """
    labels, run_config = labels.in_run(config)

    async def invoke() -> Any:
        return model.invoke(messages, config=run_config)

    async def pause(seconds: float) -> None:
        sleep(seconds)

    return run_to_end(DoorCall(model, labels, door or DoorSettings()).run(messages, invoke, pause, inline))


async def acall_model(model: Any, messages: Any, labels: CallLabels, door: DoorSettings | None = None, *,
                      config: Mapping[str, Any] | None = None,
                      sleep: Callable[[float], Awaitable[Any]] | None = None) -> AIMessage:
    """The async form of `call_model` (``model.ainvoke``; backoff awaits `sleep`, default ``asyncio.sleep``)."""
    import asyncio  # here, not at the top: it would double the import time of this module

    if sleep is None:
        sleep = asyncio.sleep
    labels, run_config = labels.in_run(config)

    def invoke() -> Awaitable[Any]:
        return model.ainvoke(messages, config=run_config)

    return await DoorCall(model, labels, door or DoorSettings()).run(messages, invoke, sleep, asyncio.to_thread)


async def inline(work: Callable[[], T]) -> T:
    """`work` done at once, for a blocking caller (the `Offload` of `call_model`)."""
    return work()


def run_to_end(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never suspends (everything it awaits is plain, blocking work),
    computed here without an event loop, so it works in any thread, also one running a loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a blocking door call suspended: it awaited something that was not plain blocking work")
