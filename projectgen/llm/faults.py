"""Fault injection: a chat-model wrapper that misbehaves on purpose, to test how a graph copes.

`FaultyChatModel` wraps any LangChain chat model (a real one or a `ScriptedChatModel` replay)
and, for a configured share of calls, replaces what the model would do with a fault:

==================  ================================================================================
``rate_limit``      raises ``RateLimitError`` (HTTP 429) before the model is called
``timeout``         raises ``APITimeoutError``
``server_error``    raises ``InternalServerError`` (HTTP 500)
``auth_error``      raises ``AuthenticationError`` (HTTP 401): *not* transient, never retried
``empty``           the reply has no text
``truncated``       the reply is cut (20-80% of it kept) with ``finish_reason`` "length"
``malformed``       broken JSON (a JSON reply), or a syntax error in the first code block (a code reply)
``prose``           prose instead of the JSON or code that was asked for
``escaping_paths``  every ``*.py`` path in the reply escapes the repository (``../../pgfault_x.py``,
                    ``/etc/pgfault_x.py``, ``~/.ssh/pgfault_x.py``, ``pkg/../../../pgfault_x.py``);
                    a reply without a path gains an escaping path line before its first code block
``enormous``        the reply padded to several MB (``enormous_chars``, default 5,000,000), which the
                    door then cuts to its cap (`projectgen.llm.MAX_REPLY_CHARS`) and records
``latency``         not a share of calls but a delay before *every* call: ``latency=1.5s`` (fixed) or
                    ``latency=0.5s-2s`` (drawn per call, seeded), so an experiment's throughput against a
                    model's latency can be measured offline (benchmarks/experiment_throughput.py)
==================  ================================================================================

The three transient errors carry the class names (and status codes) that
`projectgen.llm.is_transient` retries, so the door's retries and backoff are exercised; they
are raised *before* the wrapped model is called, so nothing is spent on them. The other faults
call the wrapped model and transform its reply (tokens are re-estimated for the new text).

Decisions are seeded and deterministic, independent of call order: a call is keyed by
(seed, role, stage, target, iteration, attempt, n), where n counts the tries of that same key,
so a parallel fan-out gets the same faults in every run and a retry may succeed where its first
try failed. Spec strings (``FaultPlan.parse``) read like ``rate_limit=0.2,prose=0.1,seed=7``
(``all=0.05`` for every kind but ``auth_error``; ``roles=coder+architect``, ``stages=code`` and
``attempts=2+3`` restrict where faults land; ``max=10`` stops injecting after 10 faults;
``enormous_chars=N`` sizes the enormous replies; ``latency=A s[-B s]`` delays every call).

The wrapper describes itself as a fault-injecting wrapper around the wrapped model's description
(so a wrapped replay is still called "scripted"), while records keep the wrapped model's name,
so prices and costs stay right. ``model.injected`` lists the faults injected so far.
"""
from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from projectgen.errors import ProjectGenError
from projectgen.llm.call_slots import wrapped_config
from projectgen.llm.factory import ModelRoles
from projectgen.llm.messages import estimate_tokens, input_text, message_text
from projectgen.llm.naming import describe_model, model_name
from projectgen.llm.roles import META_ATTEMPT, META_ITERATION, META_ROLE, META_STAGE, META_TARGET, ROLES

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

ERROR_FAULTS: tuple[str, ...] = ("rate_limit", "timeout", "server_error", "auth_error")
CONTENT_FAULTS: tuple[str, ...] = ("empty", "truncated", "malformed", "prose", "escaping_paths", "enormous")
FAULT_KINDS: tuple[str, ...] = ERROR_FAULTS + CONTENT_FAULTS
TRANSIENT_FAULTS: tuple[str, ...] = ("rate_limit", "timeout", "server_error")
GLITCHES: tuple[str, ...] = TRANSIENT_FAULTS + CONTENT_FAULTS
"""What `all=RATE` and `FaultPlan.uniform` cover: everything but ``auth_error``, which is no glitch
(a rejected key is rejected every time: use ``auth_error=1`` for that)."""

ESCAPE_TEMPLATES: tuple[str, ...] = ("../../{name}", "/etc/{name}", "~/.ssh/{name}", "{folder}/../../../{name}")
ESCAPE_PREFIX = "pgfault_"
PROSE = ("Thanks for the detailed request. I have considered the requirements carefully, and I think the best "
         "approach is a clean, modular design with clear responsibilities, good error handling and thorough "
         "tests. Each part should do one thing well, and the parts should talk through small interfaces. "
         "Let me know if you would like me to go into more detail on any part of this plan.")
_FILLER_LINE = "# " + "the quick brown fox jumps over the lazy dog " * 2 + "\n"


# --------------------------------------------------------------------------- injected API errors

class InjectedFault(Exception):
    """Base of the errors a `FaultyChatModel` raises; subclasses carry real SDK class names."""

    injected = True
    status_code: int | None = None


class RateLimitError(InjectedFault):
    """Injected HTTP 429 (transient: the door retries it)."""

    status_code = 429


class APITimeoutError(InjectedFault):
    """Injected request timeout (transient)."""


class InternalServerError(InjectedFault):
    """Injected HTTP 500 (transient)."""

    status_code = 500


class AuthenticationError(InjectedFault):
    """Injected HTTP 401 (not transient: the door gives up at once)."""

    status_code = 401


_ERRORS: dict[str, tuple[type[InjectedFault], str]] = {
    "rate_limit": (RateLimitError, "Error code: 429 - rate limit reached (injected fault)"),
    "timeout": (APITimeoutError, "Request timed out. (injected fault)"),
    "server_error": (InternalServerError, "Error code: 500 - internal server error (injected fault)"),
    "auth_error": (AuthenticationError, "Error code: 401 - invalid API key (injected fault)"),
}


# --------------------------------------------------------------------------- the plan

class FaultPlan(BaseModel):
    """Which faults, how often, where: rates per kind (0-1, summing to at most 1), seeded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rates: dict[str, float] = Field(default_factory=dict, description="fault kind -> share of calls")
    seed: int = 0
    roles: tuple[str, ...] | None = Field(default=None, description="only calls of these roles (None: all)")
    stages: tuple[str, ...] | None = Field(default=None, description="only calls of these stages (None: all)")
    attempts: tuple[int, ...] | None = Field(default=None, description="only calls of these LiveCoder attempts "
                                             "(None: all; 0 is a call made outside the attempts loop)")
    max_faults: int | None = Field(default=None, ge=0, description="stop injecting after this many faults")
    enormous_chars: int = Field(default=5_000_000, ge=1, description="length of an `enormous` reply")
    latency: tuple[float, float] | None = Field(default=None, description="seconds every call waits before it is "
                                                "answered: (fixed, fixed) or a uniform (low, high) range")

    @field_validator("latency")
    @classmethod
    def _sane_latency(cls, latency: tuple[float, float] | None) -> tuple[float, float] | None:
        if latency is not None and not 0 <= latency[0] <= latency[1]:
            raise ValueError(f"latency needs 0 <= low <= high seconds, got {latency[0]:g}s-{latency[1]:g}s")
        return latency

    @field_validator("rates")
    @classmethod
    def _known_rates(cls, rates: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(rates) - set(FAULT_KINDS))
        if unknown:
            raise ValueError(f"unknown fault kind(s) {', '.join(unknown)} (kinds: {', '.join(FAULT_KINDS)})")
        for kind, rate in rates.items():
            if not 0 <= rate <= 1:
                raise ValueError(f"the rate of {kind} must be between 0 and 1, got {rate}")
        if sum(rates.values()) > 1 + 1e-9:
            raise ValueError(f"fault rates add up to {sum(rates.values()):g}; at most 1 is possible")
        return {kind: float(rates[kind]) for kind in FAULT_KINDS if rates.get(kind)}

    @model_validator(mode="after")
    def _known_roles(self) -> FaultPlan:
        unknown = sorted(set(self.roles or ()) - set(ROLES))
        if unknown:
            raise ValueError(f"unknown role(s) {', '.join(unknown)} (roles: {', '.join(ROLES)})")
        return self

    @classmethod
    def always(cls, kind: str, **options: Any) -> FaultPlan:
        """Every call (of the chosen roles/stages) gets `kind`: a model that keeps failing."""
        return cls(rates={kind: 1.0}, **options)

    @classmethod
    def uniform(cls, rate: float, kinds: Iterable[str] = GLITCHES, **options: Any) -> FaultPlan:
        """`rate` for each of `kinds` (so ``rate * len(kinds)`` of all calls are faulty)."""
        return cls(rates={kind: rate for kind in kinds}, **options)

    @classmethod
    def parse(cls, spec: str) -> FaultPlan:
        """A plan from ``KIND=RATE,...`` plus ``seed=N``, ``all=RATE``, ``roles=a+b``, ``stages=a+b``,
        ``max=N``, ``enormous_chars=N``; raises `ProjectGenError` with one line."""
        rates: dict[str, float] = {}
        options: dict[str, Any] = {}
        try:
            for item in filter(None, (part.strip() for part in spec.split(","))):
                key, sep, value = item.partition("=")
                key, value = key.strip().replace("-", "_"), value.strip()
                if not sep or not value:
                    raise ValueError(f"expected KIND=RATE, got {item!r}")
                if key == "seed":
                    options["seed"] = int(value)
                elif key == "max":
                    options["max_faults"] = int(value)
                elif key == "enormous_chars":
                    options["enormous_chars"] = int(value)
                elif key == "latency":
                    options["latency"] = parse_latency(value)
                elif key in ("roles", "stages"):
                    options[key] = tuple(v.strip() for v in value.split("+") if v.strip())
                elif key == "attempts":
                    options[key] = tuple(int(v) for v in value.split("+") if v.strip())
                elif key == "all":
                    rates.update({kind: float(value) for kind in GLITCHES})
                else:
                    rates[key] = float(value)
            return cls(rates=rates, **options)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError too
            message = exc.errors(include_url=False)[0]["msg"] if hasattr(exc, "errors") else str(exc)
            raise ProjectGenError(f"bad fault spec {spec!r}: {message.removeprefix('Value error, ')}") from None

    def describe(self) -> str:
        """``rate_limit=0.2, prose=0.1, seed 7`` (and any role/stage restriction)."""
        parts = [f"{kind}={rate:g}" for kind, rate in self.rates.items()] or ["no faults"]
        parts.append(f"seed {self.seed}")
        if self.roles:
            parts.append("roles " + "+".join(self.roles))
        if self.stages:
            parts.append("stages " + "+".join(self.stages))
        if self.attempts:
            parts.append("attempts " + "+".join(map(str, self.attempts)))
        if self.max_faults is not None:
            parts.append(f"at most {self.max_faults}")
        if self.latency is not None:
            low, high = self.latency
            parts.append(f"latency {low:g}s" + (f"-{high:g}s" if high != low else ""))
        return ", ".join(parts)

    def delay(self, *key: Any) -> float:
        """Seconds the call keyed `key` waits before it is answered (0 without a latency)."""
        if self.latency is None:
            return 0.0
        low, high = self.latency
        return low + (high - low) * self.draw("latency", *key)

    def draw(self, *key: Any) -> float:
        """A number in [0, 1) that depends only on the seed and `key`."""
        text = "|".join(str(part) for part in (self.seed, *key))
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") / 2**64

    def decide(self, role: str | None, stage: str | None, target: str | None, iteration: int, attempt: int,
               n: int) -> str | None:
        """The fault for the n-th try of this call key, or None."""
        if (self.roles is not None and role not in self.roles) or (
                self.stages is not None and stage not in self.stages) or (
                self.attempts is not None and attempt not in self.attempts):
            return None
        value = self.draw(role, stage, target, iteration, attempt, n)
        total = 0.0
        for kind, rate in self.rates.items():
            total += rate
            if value < total:
                return kind
        return None


def parse_latency(text: str) -> tuple[float, float]:
    """``1.5s`` -> (1.5, 1.5); ``0.5s-2s`` -> (0.5, 2.0) (the ``s`` may be left out)."""
    low, sep, high = text.partition("-")
    try:
        bounds = float(low.strip().removesuffix("s")), float((high if sep else low).strip().removesuffix("s"))
    except ValueError:
        raise ValueError(f"latency takes SECONDS or LOW-HIGH, e.g. 1.5s or 0.5s-2s, got {text!r}") from None
    return bounds


# --------------------------------------------------------------------------- reply transformations

_PY_PATH = re.compile(r"(?<![\w./~\\-])((?:[A-Za-z_][\w.-]*/)*[A-Za-z_]\w*\.py)\b")
_FENCE = re.compile(r"^[ \t]*(```|~~~)", re.M)


def escaping_path(path: str, index: int) -> str:
    """`path` moved out of the repository, one of `ESCAPE_TEMPLATES` by `index`."""
    folder, _, name = path.rpartition("/")
    template = ESCAPE_TEMPLATES[index % len(ESCAPE_TEMPLATES)]
    return template.format(name=ESCAPE_PREFIX + name, folder=folder or "pkg")


def escape_paths(text: str, offset: int = 0) -> str:
    """Every ``*.py`` path in `text` made to escape the repository; if there is none, an escaping
    path line goes before the first code block (where a whole-file edit names its file)."""
    counter = iter(range(offset, offset + 10**9))
    changed, count = _PY_PATH.subn(lambda m: escaping_path(m.group(1), next(counter)), text)
    if count:
        return changed
    line = escaping_path("module.py", offset) + "\n"
    fence = _FENCE.search(text)
    return text[:fence.start()] + line + text[fence.start():] if fence else line + text


def break_reply(text: str) -> str:
    """Broken JSON for a JSON reply; a syntax error in the first code block for a code reply."""
    stripped = text.lstrip()
    fence = _FENCE.search(text)
    json_like = stripped[:1] in "{[" or stripped.startswith("```json") or fence is None
    if json_like:
        start = min((p for p in (text.find("{"), text.find("[")) if p >= 0), default=-1)
        if start < 0:
            return text + '\n{"answer": <<broken>>'
        comma = text.find(",", start)  # after the first member, so the reply reads as broken JSON, not prose
        at = comma + 1 if comma >= 0 else start + 1
        return text[:at] + " <<broken>> ]] " + text[at:]
    end_of_fence_line = text.find("\n", fence.start())
    at = len(text) if end_of_fence_line < 0 else end_of_fence_line + 1
    return text[:at] + "def broken(:\n    return ((\n" + text[at:]


def pad_reply(text: str, size: int) -> str:
    """`text` grown to `size` characters with comment lines, inside its last code block if it has one."""
    missing = max(0, size - len(text))
    filler = _FILLER_LINE * (missing // len(_FILLER_LINE) + 1)
    filler = filler[:missing]
    fences = list(_FENCE.finditer(text))
    if len(fences) >= 2:  # before the closing fence of the last block
        at = fences[-1].start()
        return text[:at] + filler + ("\n" if filler and not filler.endswith("\n") else "") + text[at:]
    return text + ("\n" if text and not text.endswith("\n") else "") + filler


def transform(kind: str, text: str, draw: float, enormous_chars: int) -> str:
    """The reply text after a content fault."""
    if kind == "empty":
        return ""
    if kind == "truncated":
        keep = int(len(text) * (0.2 + 0.6 * draw))
        return text[:max(1, keep)] if text else text
    if kind == "malformed":
        return break_reply(text)
    if kind == "prose":
        return PROSE
    if kind == "escaping_paths":
        return escape_paths(text, int(draw * len(ESCAPE_TEMPLATES)))
    if kind == "enormous":
        return pad_reply(text, enormous_chars)
    raise ValueError(f"not a content fault: {kind}")


# --------------------------------------------------------------------------- the wrapper

def __getattr__(name: str) -> Any:
    """`FaultyChatModel` subclasses langchain-core's BaseChatModel; it is built on first use."""
    if name == "FaultyChatModel":
        return _faulty_chat_model_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def inject_faults(models: Any, plan: FaultPlan | str) -> Any:
    """`models` (one chat model or a `ModelRoles`) with every model wrapped in a `FaultyChatModel`.

    Models shared between roles stay shared (one wrapper each), so their fault counts are too.
    """
    plan = FaultPlan.parse(plan) if isinstance(plan, str) else plan
    cls = _faulty_chat_model_class()
    wrapped: dict[int, Any] = {}

    def wrap(model: Any) -> Any:
        if id(model) not in wrapped:
            wrapped[id(model)] = cls(wrapped=model, plan=plan)
        return wrapped[id(model)]

    if isinstance(models, ModelRoles):
        return ModelRoles(default=wrap(models.default), overrides={r: wrap(m) for r, m in models.overrides.items()})
    return wrap(models)


@functools.cache
def _faulty_chat_model_class() -> type[BaseChatModel]:
    """Define the class once, on first use (the cache holds a class definition, not run state)."""
    import asyncio
    import time

    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import PrivateAttr

    class FaultyChatModel(BaseChatModel):
        """A fault-injecting wrapper around `wrapped` (any chat model), following `plan`."""

        wrapped: Any
        plan: FaultPlan = Field(default_factory=FaultPlan)
        cache: Any = False  # a cached reply would hide the faults
        _counts: dict[tuple[Any, ...], int] = PrivateAttr(default_factory=dict)
        _injected: list[dict[str, Any]] = PrivateAttr(default_factory=list)
        _lock: Any = PrivateAttr(default_factory=threading.Lock)

        @property
        def _llm_type(self) -> str:
            return "fault-injecting wrapper"

        @property
        def _identifying_params(self) -> dict[str, Any]:
            return {"wrapped": model_name(self.wrapped), "plan": self.plan.describe()}

        @property
        def label(self) -> str:
            """How reports name it: what it is, its plan, and the wrapped model's own description."""
            return f"fault-injecting wrapper ({self.plan.describe()}) around {describe_model(self.wrapped)}"

        # How projectgen.llm names it: described as a wrapper, recorded (and priced) as the wrapped model.
        def projectgen_description(self) -> str:
            return self.label

        def projectgen_model_name(self) -> str:
            return model_name(self.wrapped)

        @property
        def injected(self) -> list[dict[str, Any]]:
            """The faults injected so far: kind, role, stage, target, iteration, attempt, try (a copy)."""
            with self._lock:
                return list(self._injected)

        def _choose(self, metadata: Mapping[str, Any]) -> tuple[str | None, float, dict[str, Any], float]:
            """The fault of this call (or None), the draw that shapes it, the call's labels, and the seconds
            it waits first (the plan's latency)."""
            call = {"role": metadata.get(META_ROLE), "stage": metadata.get(META_STAGE),
                    "target": metadata.get(META_TARGET), "iteration": int(metadata.get(META_ITERATION) or 0),
                    "attempt": int(metadata.get(META_ATTEMPT) or 0)}
            key = tuple(call.values())
            with self._lock:
                n = self._counts[key] = self._counts.get(key, 0) + 1
                kind = self.plan.decide(*key, n)
                if kind is not None and self.plan.max_faults is not None and len(
                        self._injected) >= self.plan.max_faults:
                    kind = None
                if kind is not None:
                    self._injected.append({"kind": kind, **call, "try": n})
            return kind, self.plan.draw("transform", *key, n), call, self.plan.delay(*key, n)

        def _raise(self, kind: str, call: Mapping[str, Any]) -> None:
            cls, message = _ERRORS[kind]
            where = ", ".join(f"{k}={v}" for k, v in call.items() if v not in (None, 0))
            raise cls(f"{message} [{where}]")

        def _result(self, messages: list[Any], reply: Any, kind: str | None, draw: float) -> ChatResult:
            if kind is None:
                return ChatResult(generations=[ChatGeneration(message=reply)])
            text = transform(kind, message_text(reply), draw, self.plan.enormous_chars)
            usage = dict(getattr(reply, "usage_metadata", None) or {})
            tokens_in = int(usage.get("input_tokens") or estimate_tokens(input_text(messages)))
            tokens_out = estimate_tokens(text) if text else 0
            metadata = {**(getattr(reply, "response_metadata", None) or {}), "tokens_estimated": True,
                        "projectgen_fault": kind,
                        "finish_reason": "length" if kind == "truncated" else "stop"}
            message = AIMessage(content=text, response_metadata=metadata,
                                usage_metadata={"input_tokens": tokens_in, "output_tokens": tokens_out,
                                                "total_tokens": tokens_in + tokens_out})
            return ChatResult(generations=[ChatGeneration(message=message)])

        def _generate(self, messages: list[Any], stop: list[str] | None = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:
            metadata = getattr(run_manager, "metadata", None) or {}
            kind, draw, call, delay = self._choose(metadata)
            if delay:
                time.sleep(delay)
            if kind in _ERRORS:
                self._raise(kind, call)
            reply = self.wrapped.invoke(messages, config=wrapped_config(run_manager), stop=stop, **kwargs)
            return self._result(messages, reply, kind, draw)

        async def _agenerate(self, messages: list[Any], stop: list[str] | None = None, run_manager: Any = None,
                             **kwargs: Any) -> ChatResult:
            metadata = getattr(run_manager, "metadata", None) or {}
            kind, draw, call, delay = self._choose(metadata)
            if delay:
                await asyncio.sleep(delay)
            if kind in _ERRORS:
                self._raise(kind, call)
            reply = await self.wrapped.ainvoke(messages, config=wrapped_config(run_manager), stop=stop,
                                               **kwargs)
            return self._result(messages, reply, kind, draw)

    FaultyChatModel.__module__ = __name__
    return FaultyChatModel


__all__ = [
    "APITimeoutError", "AuthenticationError", "CONTENT_FAULTS", "ERROR_FAULTS", "FAULT_KINDS", "FaultPlan",
    "GLITCHES",
    "FaultyChatModel", "InjectedFault", "InternalServerError", "RateLimitError", "TRANSIENT_FAULTS",  # noqa: F822 - built on first use by __getattr__
    "break_reply", "escape_paths", "inject_faults", "pad_reply", "parse_latency", "transform",
]
