"""The one door to the LLM: model factory, offline scripted model, call accounting, retries, budgets.

Every agent calls its model through `call_model` / `acall_model`, which tags the
call with run-config metadata (role, stage, target, iteration), measures latency,
records tokens in a `UsageRecorder`, retries transient failures (429, timeouts,
connection errors, 5xx) with exponential backoff, enforces an optional budget and
cuts a runaway reply at `MAX_REPLY_CHARS` (recorded as `CallRecord.cut_chars`).
`projectgen.llm.faults.FaultyChatModel` wraps any model to inject such failures.
Given a `CallCache` (durable runs), it answers a call that a killed run had completed
with the recorded reply instead of calling the model again.

Models come from `make_chat_model(spec)`:

- ``PROVIDER:MODEL`` (``openai:gpt-4o-mini``, ``deepseek:deepseek-chat``,
  ``ollama:llama3``) goes to LangChain's ``init_chat_model``; the provider's
  integration package must be installed.
- With a base URL (argument, else ``PROJECTGEN_BASE_URL``; ``OPENAI_BASE_URL``
  too for ``openai:`` specs and bare names), any spec becomes a ``ChatOpenAI`` on
  that OpenAI-compatible endpoint (vLLM, Ollama, LM Studio); a known provider
  prefix is dropped and the rest is the served model name. The key is the
  argument, else ``PROJECTGEN_API_KEY``, else ``OPENAI_API_KEY``, else a
  placeholder (local servers ignore it).
- ``scripted:PATH`` replays a script file offline (`ScriptedChatModel`).

OpenAI-style models are created with ``max_retries=0``: `call_model` is the only
retry layer, so its attempt counts and backoff are the real ones.

Scripted model
--------------
`ScriptedChatModel` answers from a script keyed by *role and target, not call
order*, so a parallel fan-out replays identically. Script file (JSON)::

    {
      "label": "kvstore demo",            # optional, shown in reports
      "fallback": null,                   # optional reply when nothing matches
      "delay_s": 0,                       # optional simulated latency per reply
      "responses": [
        {"role": "architect", "content": "..."},
        {"role": "architect", "iteration": 2, "content": "..."},
        {"role": "coder", "target": "kvstore/store.py", "iteration": 1, "content": "..."},
        {"role": "code_judge", "target": "kvstore/store.py", "content": {"score": 9}}
      ]
    }

``content`` is the reply text; a JSON object or array is sent as its JSON text.
An entry may also name an ``attempt`` (matched against ``projectgen_attempt``
metadata, for LiveCoder's outer loop). Matching, for a call (role R, target T,
iteration I, attempt A): candidates have role R, target T or none, iteration
none or <= I, attempt none or <= A; the most specific wins, compared as (has a
target, attempt, iteration), absent counting lowest. So role+target+iteration
beats role+target with the latest earlier iteration, which beats role only.
Duplicate keys are rejected when the script loads. No match raises
`ScriptExhaustedError` naming role/target/iteration, unless a fallback is set.

The key reaches the model through LangChain's run config: `call_model` invokes
``model.invoke(messages, config={"metadata": {"projectgen_role": ...}})`` and
``_generate`` reads ``run_manager.metadata`` (langchain-core copies the config
metadata into the run manager of every chat-model run, merged with any parent
run's metadata, e.g. inside a LangGraph node). Token usage of scripted replies
is an approximation, ``len(text) // 4 + 1`` per side, flagged as estimated.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field, model_validator

from projectgen.errors import ProjectGenError, error_line, first_line

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage

logger = logging.getLogger(__name__)

ROLES: tuple[str, ...] = (
    "architect", "architecture_judge", "skeleton", "skeleton_judge", "coder", "code_judge", "knowledge",
)
META_ROLE = "projectgen_role"
META_STAGE = "projectgen_stage"
META_TARGET = "projectgen_target"
META_ITERATION = "projectgen_iteration"
META_ATTEMPT = "projectgen_attempt"

# Shown in errors when langchain's own provider table cannot be read.
_FALLBACK_PROVIDERS = ("anthropic", "azure_openai", "deepseek", "google_genai", "groq", "mistralai", "ollama",
                       "openai", "xai")
# Providers whose LangChain classes take `max_retries` (the openai/anthropic SDK retry layer).
_SDK_RETRY_PROVIDERS = frozenset({"openai", "azure_openai", "anthropic", "deepseek"})
_NO_KEY_PLACEHOLDER = "not-needed"


class ModelCallError(ProjectGenError):
    """A model call failed for good (non-transient, or transient after the last retry)."""

    def __init__(self, message: str, *, record: CallRecord, cause: BaseException) -> None:
        super().__init__(message)
        self.record = record
        self.cause = cause


class BudgetExceededError(ProjectGenError):
    """A budget refused further spending; the run should stop cleanly, not retry."""


class ScriptExhaustedError(ProjectGenError):
    """The scripted model has no reply for a call; names the key so the script can be fixed."""

    def __init__(self, message: str, *, role: str | None, target: str | None, iteration: int | None) -> None:
        super().__init__(message)
        self.role = role
        self.target = target
        self.iteration = iteration


MODEL_FAILURES: tuple[type[BaseException], ...] = (ModelCallError, ScriptExhaustedError)
"""A model that keeps failing (after the door's retries, or at once when the error is not transient)."""


def model_failure_reason(exc: BaseException) -> str:
    """One line for run.json, summaries and the CLI: the error's class and its first line."""
    return f"model: {error_line(exc)}"


# --------------------------------------------------------------------------- token estimates

def estimate_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: ``len(text) // 4 + 1`` (about 4 characters a token)."""
    return len(text) // 4 + 1


def message_text(message: Any) -> str:
    """The text of a message, a (role, text) pair, a dict or a plain string."""
    if isinstance(message, str):
        return message
    if isinstance(message, tuple) and len(message) == 2:
        return str(message[1])
    content = message.get("content", "") if isinstance(message, Mapping) else getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) if isinstance(b, Mapping) else ""
                       for b in content)
    return str(content)


def input_text(messages: Any) -> str:
    """All the text of a chat-model input (a string, a prompt value or a list of messages)."""
    if isinstance(messages, str):
        return messages
    if hasattr(messages, "to_messages"):
        messages = messages.to_messages()
    if isinstance(messages, Iterable):
        return "\n".join(message_text(m) for m in messages)
    return str(messages)


# --------------------------------------------------------------------------- factory

def make_chat_model(spec: str, *, base_url: str | None = None, api_key: str | None = None,
                    temperature: float | None = 0.0, **kwargs: Any) -> BaseChatModel:
    """A chat model from a spec (see the module docstring); raises `ProjectGenError` with one clear line.

    Creating a model never touches the network; a wrong key or URL fails on the first call.
    `temperature=None` leaves the provider default (some reasoning models reject the parameter).
    """
    spec = spec.strip()
    if base_url:
        check_base_url(base_url)  # even for a spec that would not use it: a typo should not pass unseen
    provider, sep, name = spec.partition(":")
    if not spec or (sep and (not provider or not name)):
        raise ProjectGenError(f"malformed model spec {spec!r}: expected PROVIDER:MODEL, e.g. 'openai:gpt-4o-mini'")
    if provider == "scripted":
        return _scripted_chat_model_class().from_file(name, **kwargs)
    provider = provider.replace("-", "_").lower() if sep else ""
    known = known_providers()
    url = base_url or os.environ.get("PROJECTGEN_BASE_URL")
    if not url and provider in ("", "openai"):
        url = os.environ.get("OPENAI_BASE_URL")
    if url:
        check_base_url(url)
        served = name if provider in known else spec  # "llama3:8b" on an endpoint is a model name
        return _openai_compatible(spec, served, url, api_key, temperature, kwargs)
    if sep and provider not in known:
        raise ProjectGenError(f"unknown model provider {provider!r} in {spec!r} ({_providers_hint(provider, known)}; "
                              "or pass a base URL for an OpenAI-compatible endpoint)")
    if not sep:
        provider = _infer_provider(spec)
        if provider is None:
            raise ProjectGenError(f"cannot tell the provider of model {spec!r}: write it as PROVIDER:MODEL "
                                  f"({_providers_hint('', known)})")
        name = spec
    params = dict(kwargs)
    if temperature is not None:
        params["temperature"] = temperature
    if api_key:
        params["api_key"] = api_key
    if provider in _SDK_RETRY_PROVIDERS:
        params.setdefault("max_retries", 0)
    try:
        from langchain.chat_models import init_chat_model

        return init_chat_model(name, model_provider=provider, **params)
    except ImportError as exc:
        raise ProjectGenError(f"cannot create {spec!r}: {first_line(exc)} "
                              "(or serve the model behind an OpenAI-compatible base URL)") from None
    except Exception as exc:  # the SDK's own checks, e.g. a missing API key
        raise ProjectGenError(f"cannot create {spec!r}: {first_line(exc)}") from None


def _openai_compatible(spec: str, served: str, base_url: str, api_key: str | None,
                       temperature: float | None, kwargs: dict[str, Any]) -> BaseChatModel:
    try:
        from langchain_openai import ChatOpenAI
    except ImportError:
        raise ProjectGenError(f"cannot create {spec!r}: an OpenAI-compatible endpoint needs the "
                              "langchain-openai package (pip install langchain-openai)") from None
    key = (api_key or os.environ.get("PROJECTGEN_API_KEY") or os.environ.get("OPENAI_API_KEY")
           or _NO_KEY_PLACEHOLDER)
    params: dict[str, Any] = {"model": served, "base_url": base_url, "api_key": key, "max_retries": 0, **kwargs}
    if temperature is not None:
        params["temperature"] = temperature
    try:
        return ChatOpenAI(**params)
    except Exception as exc:
        raise ProjectGenError(f"cannot create {spec!r} at {base_url}: {first_line(exc)}") from None


def check_base_url(url: str) -> None:
    """A base URL must be http(s)://HOST[...]: anything else would only fail at the first call, mid-run."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in url.strip()
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        ok = False
    if not ok:
        raise ProjectGenError(f"base URL {url!r} is not an http(s) URL such as http://localhost:8000/v1")


def _providers_hint(provider: str, known: Sequence[str]) -> str:
    """'did you mean ...?' for a near miss, else the common providers (the full list is long)."""
    import difflib

    close = difflib.get_close_matches(provider, known, n=1) if provider else []
    if close:
        return f"did you mean {close[0]!r}?"
    common = [p for p in ("openai", "anthropic", "deepseek", "google_genai", "mistralai", "groq", "ollama")
              if p in known]
    more = len(known) - len(common)
    return f"known: {', '.join(common)}" + (f" and {more} more" if more > 0 else "")


def known_providers() -> tuple[str, ...]:
    """Provider prefixes LangChain's ``init_chat_model`` knows (its table is private, hence the fallback)."""
    try:
        from langchain.chat_models import base as chat_models_base

        return tuple(sorted(getattr(chat_models_base, "_BUILTIN_PROVIDERS")))
    except (ImportError, AttributeError, TypeError):
        return _FALLBACK_PROVIDERS


def _infer_provider(name: str) -> str | None:
    """The provider LangChain would guess for a bare model name ("gpt-4o" -> "openai"), or None."""
    try:
        from langchain.chat_models import base as chat_models_base

        return getattr(chat_models_base, "_attempt_infer_model_provider")(name)
    except (ImportError, AttributeError):  # private helper gone: let the caller ask for PROVIDER:MODEL
        return None


def model_name(model: Any) -> str:
    """A short name for records: ``gpt-4o-mini``, or ``scripted:LABEL`` for a replay.

    A wrapper (such as `projectgen.llm.faults.FaultyChatModel`) names itself with a
    ``projectgen_model_name()`` method: the wrapped model's name, so its calls are priced as that model's.
    """
    named = getattr(model, "projectgen_model_name", None)
    if callable(named):
        return str(named())
    if getattr(model, "_llm_type", None) == "scripted":
        return f"scripted:{model.label}"
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def describe_model(model: Any) -> str:
    """How reports name a model; a replay is always called one, never passed off as a real model.

    A wrapper describes itself with a ``projectgen_description()`` method (which should include the
    wrapped model's own description).
    """
    described = getattr(model, "projectgen_description", None)
    if callable(described):
        return str(described())
    if getattr(model, "_llm_type", None) == "scripted":
        return f"scripted model ({model.label})"
    description = f"{getattr(model, '_llm_type', type(model).__name__)} {model_name(model)}"
    url = getattr(model, "openai_api_base", None)
    return f"{description} at {url}" if url else description


# --------------------------------------------------------------------------- models per role

@dataclass(frozen=True)
class ModelRoles:
    """Which chat model serves each agent role; roles not given use `default`."""

    default: Any
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.overrides) - set(ROLES))
        if unknown:
            raise ProjectGenError(f"unknown model role(s) {', '.join(unknown)} (roles: {', '.join(ROLES)})")
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))

    @classmethod
    def from_specs(cls, default: str = "openai:gpt-4o-mini", *, base_url: str | None = None,
                   api_key: str | None = None, temperature: float | None = 0.0,
                   **roles: str | None) -> ModelRoles:
        """Build models from spec strings, e.g. ``from_specs("openai:gpt-4o-mini", coder="deepseek:deepseek-chat")``.

        A spec used by several roles yields one shared model object.
        """
        made: dict[str, Any] = {}

        def make(spec: str) -> Any:
            if spec not in made:
                made[spec] = make_chat_model(spec, base_url=base_url, api_key=api_key, temperature=temperature)
            return made[spec]

        unknown = sorted(set(roles) - set(ROLES))
        if unknown:
            raise ProjectGenError(f"unknown model role(s) {', '.join(unknown)} (roles: {', '.join(ROLES)})")
        return cls(default=make(default), overrides={r: make(s) for r, s in roles.items() if s})

    def for_role(self, role: str) -> Any:
        if role not in ROLES:
            raise ProjectGenError(f"unknown model role {role!r} (roles: {', '.join(ROLES)})")
        return self.overrides.get(role, self.default)

    __getitem__ = for_role

    def describe(self) -> dict[str, str]:
        """Role -> model description, for reports."""
        return {role: describe_model(self.for_role(role)) for role in ROLES}


# --------------------------------------------------------------------------- scripted model

class ScriptEntry(BaseModel):
    """One scripted reply and the call key it answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str
    target: str | None = None
    iteration: int | None = None
    attempt: int | None = None
    content: str | dict[str, Any] | list[Any]

    @property
    def text(self) -> str:
        return self.content if isinstance(self.content, str) else json.dumps(self.content, indent=2)

    @property
    def key(self) -> tuple[str, str | None, int | None, int | None]:
        return (self.role, self.target, self.iteration, self.attempt)


class Script(BaseModel):
    """A replay script: replies keyed by role/target/iteration(/attempt), plus an optional fallback."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str | None = None
    fallback: str | None = None
    delay_s: float = Field(default=0.0, ge=0, description="simulated latency of every reply (seconds)")
    responses: tuple[ScriptEntry, ...] = ()

    @model_validator(mode="after")
    def _unique_keys(self) -> Script:
        seen: set[tuple[Any, ...]] = set()
        for entry in self.responses:
            if entry.key in seen:
                role, target, iteration, attempt = entry.key
                raise ValueError(f"two responses for role={role!r} target={target!r} "
                                 f"iteration={iteration} attempt={attempt}")
            seen.add(entry.key)
        return self

    def match(self, role: str, target: str | None, iteration: int, attempt: int) -> ScriptEntry | None:
        """The most specific entry for a call (see the module docstring), or None."""
        best: ScriptEntry | None = None
        best_rank: tuple[int, int, int] = (-1, -1, -1)
        for entry in self.responses:
            if entry.role != role or entry.target not in (None, target):
                continue
            if (entry.iteration is not None and entry.iteration > iteration) or (
                    entry.attempt is not None and entry.attempt > attempt):
                continue
            rank = (entry.target is not None, -1 if entry.attempt is None else entry.attempt,
                    -1 if entry.iteration is None else entry.iteration)
            if best is None or rank > best_rank:
                best, best_rank = entry, rank
        return best


def load_script(source: str | Path | Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Script:
    """A `Script` from a JSON file path, a dict in the file format, or a bare list of responses."""
    where = "script"
    if isinstance(source, (str, Path)):
        path = Path(source)
        where = str(path)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProjectGenError(f"{path}: script file not found") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProjectGenError(f"{path}: not a readable JSON script ({first_line(exc)})") from None
    else:
        data = source
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        data = {"responses": list(data)}
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False, include_input=False)[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise ProjectGenError(f"{where}: invalid script at {loc}: {err['msg']}") from None


def __getattr__(name: str) -> Any:
    """`ScriptedChatModel` is built on first use so that importing this module stays cheap."""
    if name == "ScriptedChatModel":
        return _scripted_chat_model_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _scripted_chat_model_class() -> type[BaseChatModel]:
    """Define the class once, on first use: it subclasses langchain-core's BaseChatModel (a ~0.4 s import).

    The cache holds a class definition, not run state.
    """
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import PrivateAttr

    class ScriptedChatModel(BaseChatModel):
        """Offline chat model replaying a `Script`; never a real model, and reports say so via `label`."""

        script: Script
        label: str = "in-memory script"
        fallback: str | None = None
        cache: Any = False  # a global LLM cache keyed by prompt must not answer for another role/target
        _calls: list[dict[str, Any]] = PrivateAttr(default_factory=list)
        _lock: Any = PrivateAttr(default_factory=threading.Lock)

        @classmethod
        def from_file(cls, path: str | Path, **kwargs: Any) -> ScriptedChatModel:
            """Replay a JSON script file; the label says "replay of PATH" unless the script names itself."""
            script = load_script(path)
            label = f"{script.label}, replay of {path}" if script.label else f"replay of {path}"
            return cls(script=script, label=kwargs.pop("label", label),
                       fallback=kwargs.pop("fallback", script.fallback), **kwargs)

        @classmethod
        def from_responses(cls, responses: Mapping[str, Any] | Sequence[Mapping[str, Any]],
                           **kwargs: Any) -> ScriptedChatModel:
            """Replay an in-memory script (the file's dict format, or just the list of responses)."""
            script = load_script(responses)
            return cls(script=script, label=kwargs.pop("label", script.label or "in-memory script"),
                       fallback=kwargs.pop("fallback", script.fallback), **kwargs)

        @property
        def _llm_type(self) -> str:
            return "scripted"

        @property
        def _identifying_params(self) -> dict[str, Any]:
            return {"label": self.label, "responses": len(self.script.responses)}

        @property
        def calls(self) -> list[dict[str, Any]]:
            """The keys of the calls answered so far (a copy), for tests and traces."""
            with self._lock:
                return list(self._calls)

        def _generate(self, messages: list[Any], stop: list[str] | None = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:
            if self.script.delay_s:
                time.sleep(self.script.delay_s)
            return self._reply(messages, stop, getattr(run_manager, "metadata", None) or {})

        async def _agenerate(self, messages: list[Any], stop: list[str] | None = None, run_manager: Any = None,
                             **kwargs: Any) -> ChatResult:
            if self.script.delay_s:
                import asyncio

                await asyncio.sleep(self.script.delay_s)
            return self._reply(messages, stop, getattr(run_manager, "metadata", None) or {})

        def _reply(self, messages: list[Any], stop: list[str] | None, metadata: Mapping[str, Any]) -> ChatResult:
            role = metadata.get(META_ROLE)
            target = metadata.get(META_TARGET)
            target = None if target is None else str(target)
            iteration = int(metadata.get(META_ITERATION) or 0)
            attempt = int(metadata.get(META_ATTEMPT) or 0)
            entry = self.script.match(str(role), target, iteration, attempt) if role is not None else None
            if entry is not None:
                text = entry.text
            elif self.fallback is not None:
                text = self.fallback
            elif role is None:
                raise ScriptExhaustedError(
                    f"scripted model ({self.label}) was called without {META_ROLE!r} metadata; call it through "
                    f"projectgen.llm.call_model or pass config={{'metadata': {{{META_ROLE!r}: ...}}}}",
                    role=None, target=target, iteration=iteration)
            else:
                raise ScriptExhaustedError(
                    f"scripted model ({self.label}) has no response for role={role!r} target={target!r} "
                    f"iteration={iteration}" + (f" attempt={attempt}" if attempt else "")
                    + "; add an entry to the script or set a fallback",
                    role=str(role), target=target, iteration=iteration)
            for word in stop or ():
                if word and word in text:
                    text = text[:text.index(word)]
            prompt_tokens, reply_tokens = estimate_tokens(input_text(messages)), estimate_tokens(text)
            with self._lock:
                self._calls.append({"role": role, "target": target, "iteration": iteration, "attempt": attempt,
                                    "matched": entry.key if entry is not None else None})
            message = AIMessage(
                content=text,
                usage_metadata={"input_tokens": prompt_tokens, "output_tokens": reply_tokens,
                                "total_tokens": prompt_tokens + reply_tokens},
                response_metadata={"model_name": f"scripted:{self.label}", "model_provider": "scripted",
                                   "tokens_estimated": True},
            )
            return ChatResult(generations=[ChatGeneration(message=message)])

    ScriptedChatModel.__module__ = __name__
    return ScriptedChatModel


# --------------------------------------------------------------------------- call records

class CallRecord(BaseModel):
    """One call through the door: who asked, what it cost, how long it took, how it ended."""

    model_config = ConfigDict(frozen=True)

    role: str
    stage: str
    target: str | None = None
    iteration: int = 0
    attempt: int | None = Field(default=None, description="LiveCoder attempt, from the run metadata")
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_estimated: bool = False
    latency_s: float = 0.0
    """Duration of the last try."""
    elapsed_s: float = 0.0
    """The whole call, retries and backoff waits included."""
    attempts: int = 1
    error: str | None = None
    cut_chars: int = Field(default=0, description="characters of an oversized reply dropped at the door's size cap")
    timestamp: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    call_id: str | None = Field(default=None, description="the call's key in the run's `CallCache`, if any")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class UsageTotals(BaseModel):
    """Sums over a set of call records."""

    calls: int = 0
    failed_calls: int = 0
    estimated_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @classmethod
    def of(cls, records: Iterable[CallRecord]) -> UsageTotals:
        totals = cls()
        for r in records:
            totals.calls += 1
            totals.failed_calls += r.error is not None
            totals.estimated_calls += r.tokens_estimated
            totals.input_tokens += r.input_tokens
            totals.output_tokens += r.output_tokens
            totals.latency_s += r.latency_s
        return totals


class UsageRecorder:
    """Thread-safe in-memory list of `CallRecord`s, optionally appended to a JSONL file as they come."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()
        self._call_ids: set[str] | None = None  # read on the first `has`

    def record(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)
            if record.call_id is not None and self._call_ids is not None:
                self._call_ids.add(record.call_id)
            if self.path is not None:
                # One whole line under an exclusive lock (processes sharing the file never interleave);
                # a line torn by a kill is cut off first.
                from projectgen.durable_files import append_line

                append_line(self.path, record.model_dump_json() + "\n")

    def has(self, call_id: str) -> bool:
        """Whether a call with this `CallRecord.call_id` is recorded, here or (read once) in the file."""
        with self._lock:
            if self._call_ids is None:
                self._call_ids = {r.call_id for r in self._records if r.call_id is not None}
                if self.path is not None:
                    self._call_ids |= {r.call_id for r in UsageRecorder.load(self.path).records
                                       if r.call_id is not None}
            return call_id in self._call_ids

    @property
    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def totals(self) -> UsageTotals:
        return UsageTotals.of(self.records)

    def totals_by(self, key: Literal["role", "stage", "model", "target"] = "role") -> dict[str, UsageTotals]:
        groups: dict[str, list[CallRecord]] = {}
        for r in self.records:
            groups.setdefault(str(getattr(r, key)), []).append(r)
        return {name: UsageTotals.of(rs) for name, rs in sorted(groups.items())}

    @classmethod
    def load(cls, path: Path | str) -> UsageRecorder:
        """Records read back from a JSONL file (a line torn by a kill is skipped; no file, no records); the
        result has no sink."""
        recorder = cls()
        path = Path(path)
        if not path.exists():
            return recorder
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                recorder._records.append(CallRecord.model_validate_json(line))
            except ValidationError:
                continue
        return recorder


# --------------------------------------------------------------------------- call cache

class CallCache:
    """Replies of a run's completed model calls, on disk, so that a resumed run replays them.

    A durable run is checkpointed per graph node, so a node killed after one of its model calls
    had completed (the code judge after its call, the learning step between the knowledge call
    and the stores) runs again on resume. The door (`call_model` / `acall_model`) therefore
    looks each call up here first: a call with the same key (scope, i.e. the run's thread,
    role, stage, target, iteration, attempt, model and a hash of the prompt) is answered with
    the recorded reply instead of calling the model. A reply is appended (one JSON line,
    fsynced) as its call completes and before its usage record, so a kill between the two is
    repaired on replay by recording the call's usage then (`UsageRecorder.has`). Failed calls
    are not kept: they are tried again. Another prompt (say the run's code changed) is another
    key, so it is never answered from an old reply.
    """

    def __init__(self, path: Path | str, scope: str = "") -> None:
        self.path = Path(path)
        self.scope = scope
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] | None = None

    def key(self, *, role: str, stage: str, target: str | None, iteration: int, attempt: int | None,
            model: str, messages: Any) -> str:
        import hashlib

        prompt = hashlib.sha256(input_text(messages).encode("utf-8", "replace")).hexdigest()
        key = json.dumps([self.scope, role, stage, target, iteration, attempt, model, prompt])
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]

    def get(self, key: str) -> dict[str, Any] | None:
        """The recorded completion of call `key` (``content``, ``usage``, ``response_metadata``,
        ``record``), or None."""
        with self._lock:
            return self._load().get(key)

    def put(self, key: str, reply: Any, record: CallRecord) -> None:
        from projectgen.durable_files import append_line

        entry = {"key": key, "content": reply.content, "usage": getattr(reply, "usage_metadata", None),
                 "response_metadata": getattr(reply, "response_metadata", None) or {},
                 "record": record.model_dump(mode="json")}
        line = json.dumps(entry, default=str)
        with self._lock:
            append_line(self.path, line, fsync=True)
            self._load()[key] = json.loads(line)

    def __len__(self) -> int:
        with self._lock:
            return len(self._load())

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = {}
            try:
                lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
            except FileNotFoundError:
                lines = []
            for line in lines:
                try:
                    entry = json.loads(line)
                    self._entries[str(entry["key"])] = entry
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line torn by a kill: that call is made again
        return self._entries

    @staticmethod
    def reply(entry: Mapping[str, Any]) -> AIMessage:
        from langchain_core.messages import AIMessage

        return AIMessage(content=entry["content"], usage_metadata=entry.get("usage") or None,
                         response_metadata={**(entry.get("response_metadata") or {}), "replayed": True})


# --------------------------------------------------------------------------- budgets

class Budget(Protocol):
    """Anything that can veto spending: `check` sees every record and may raise `BudgetExceededError`.

    It may also define ``before_call() -> None`` to refuse a call before it is made.
    """

    def check(self, record: CallRecord) -> None: ...


class TokenBudget:
    """Stops a run once the tokens of the calls it has checked exceed `max_tokens`."""

    def __init__(self, max_tokens: int, used: int = 0) -> None:
        """`used` carries over what a resumed run had already spent."""
        self.max_tokens = max_tokens
        self._used = used
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        with self._lock:
            return self._used

    def before_call(self) -> None:
        with self._lock:
            if self._used > self.max_tokens:
                raise BudgetExceededError(f"token budget spent: {self._used} of {self.max_tokens} tokens used")

    def check(self, record: CallRecord) -> None:
        with self._lock:
            self._used += record.total_tokens
            used = self._used
        if used > self.max_tokens:
            raise BudgetExceededError(f"token budget exceeded: {used} > {self.max_tokens} tokens "
                                      f"(last call: role={record.role}, stage={record.stage})")


class AllBudgets:
    """Several budgets at once (say tokens and dollars): a call is refused when any one refuses it.

    Every budget sees every record, so each keeps its own count even after another one trips.
    """

    def __init__(self, *budgets: Budget) -> None:
        self.budgets = tuple(budgets)

    def before_call(self) -> None:
        for budget in self.budgets:
            before_call = getattr(budget, "before_call", None)
            if before_call is not None:
                before_call()

    def check(self, record: CallRecord) -> None:
        refusal: BudgetExceededError | None = None
        for budget in self.budgets:
            try:
                budget.check(record)
            except BudgetExceededError as exc:
                refusal = refusal or exc
        if refusal is not None:
            raise refusal


# --------------------------------------------------------------------------- the door

_TRANSIENT_NAMES = frozenset({
    # openai / anthropic SDKs
    "RateLimitError", "APITimeoutError", "APIConnectionError", "InternalServerError", "ServiceUnavailableError",
    "OverloadedError",
    # httpx
    "TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout", "NetworkError",
    "ConnectError", "ReadError", "WriteError", "RemoteProtocolError",
    # builtins and requests
    "TimeoutError", "ConnectionError", "Timeout",
})
_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})

MAX_REPLY_CHARS = 200_000
"""Replies longer than this are cut at the door, marked ``finish_reason: "length"``, and the record
says how much was dropped (`CallRecord.cut_chars`). About 50k tokens of visible text: more than one
file, tree or review needs and above the output limit of most models, so only a runaway or hostile
reply is cut, and it cannot fill memory or disk through the state, every checkpoint of it, the
trace and the repository that follow."""


def status_code(exc: BaseException) -> int | None:
    """The HTTP status of an API error, from `status_code`/`status`/`http_status` or its response."""
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status", "http_status"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
                return value
    return None


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: 408/409/425/429/5xx, timeouts and connection errors (also when wrapped as a cause).

    Decided from status codes and class names, so neither openai nor httpx is imported.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        status = status_code(current)
        if status is not None:
            return status in _TRANSIENT_STATUS or status >= 500
        if {cls.__name__ for cls in type(current).__mro__} & _TRANSIENT_NAMES:
            return True
        current = current.__cause__  # explicit wrapping only: an error raised while handling another is its own
    return False


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        value = headers.get("retry-after") if headers is not None else None
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


@dataclass
class _Call:
    """The bookkeeping shared by `call_model` and `acall_model`."""

    model: Any
    role: str
    stage: str
    target: str | None
    iteration: int
    retries: int
    backoff: float
    max_backoff: float
    recorder: UsageRecorder | None
    budget: Budget | None
    config: Mapping[str, Any] | None
    max_reply_chars: int | None = MAX_REPLY_CHARS
    cache: CallCache | None = None
    started: float = field(default_factory=time.perf_counter)
    timestamp: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    key: str | None = None

    def run_config(self) -> dict[str, Any]:
        config = dict(self.config or {})
        metadata = dict(config.get("metadata") or {})
        metadata.update({META_ROLE: self.role, META_STAGE: self.stage, META_ITERATION: self.iteration})
        if self.target is not None:
            metadata[META_TARGET] = self.target
        config["metadata"] = metadata
        config.setdefault("run_name", f"{self.stage}:{self.role}")
        return config

    @property
    def attempt(self) -> int | None:
        attempt = (self.config or {}).get("metadata", {}).get(META_ATTEMPT)
        return int(attempt) if attempt is not None else None

    def replayed(self, messages: Any) -> AIMessage | None:
        """The reply of this call if the run's call cache has it (recording its usage if that was lost)."""
        if self.cache is None:
            return None
        self.key = self.cache.key(role=self.role, stage=self.stage, target=self.target, iteration=self.iteration,
                                  attempt=self.attempt, model=model_name(self.model), messages=messages)
        entry = self.cache.get(self.key)
        if entry is None:
            return None
        if self.recorder is None or not self.recorder.has(self.key):
            # Killed between the cache line and the usage line: record it now (the budget checks it as before).
            self.commit(CallRecord.model_validate(entry["record"]))
        else:
            self.before()  # a resumed run's budget counts this call already: refuse as its check did
        return CallCache.reply(entry)

    def begin(self, messages: Any) -> AIMessage | None:
        """The cached reply of this call, or None once the budget has allowed a fresh call."""
        replayed = self.replayed(messages)
        if replayed is None:
            self.before()
        return replayed

    def before(self) -> None:
        before_call = getattr(self.budget, "before_call", None)
        if before_call is not None:
            before_call()

    def record(self, reply: Any = None, **fields: Any) -> CallRecord:
        record = CallRecord(role=self.role, stage=self.stage, target=self.target, iteration=self.iteration,
                            attempt=self.attempt, model=model_name(self.model),
                            elapsed_s=time.perf_counter() - self.started, timestamp=self.timestamp,
                            call_id=self.key if reply is not None else None, **fields)
        if reply is not None and self.cache is not None and self.key is not None:
            self.cache.put(self.key, reply, record)  # before the usage line: see CallCache
        return self.commit(record)

    def commit(self, record: CallRecord) -> CallRecord:
        if self.recorder is not None:
            self.recorder.record(record)
        if self.budget is not None:
            self.budget.check(record)
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
                    latency_s=latency, attempts=attempt, cut_chars=cut)
        return reply

    def capped(self, reply: Any) -> tuple[Any, int]:
        """The reply cut to `max_reply_chars` (as if the model had hit its length limit), and the
        number of characters dropped (0 when it fits)."""
        limit = self.max_reply_chars
        if limit is None:
            return reply, 0
        text = message_text(reply)
        if len(text) <= limit:
            return reply, 0
        cut = len(text) - limit
        logger.warning("model call %s/%s (target %s): reply of %d characters cut to the cap of %d", self.stage,
                       self.role, self.target, len(text), limit)
        metadata = {**(getattr(reply, "response_metadata", None) or {}), "finish_reason": "length",
                    "projectgen_cut_chars": cut}
        try:
            return reply.model_copy(update={"content": text[:limit], "response_metadata": metadata}), cut
        except AttributeError:  # not a message object: hand back the cut text
            return text[:limit], cut

    def failed(self, exc: Exception, attempt: int, latency: float) -> float:
        """The wait before the next try, or raise: the error itself if a `ProjectGenError`, else `ModelCallError`."""
        transient = is_transient(exc)
        if transient and attempt <= self.retries:
            delay = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
            hinted = _retry_after(exc)
            if hinted is not None:
                delay = max(delay, min(hinted, self.max_backoff))
            logger.warning("model call %s/%s (target %s) failed with %s; retry %d of %d in %.1fs", self.stage,
                           self.role, self.target, type(exc).__name__, attempt, self.retries, delay)
            return delay
        error = f"{type(exc).__name__}: {first_line(exc)}"
        record = self.record(latency_s=latency, attempts=attempt, error=error)
        if isinstance(exc, ProjectGenError):
            raise exc
        kind = "transient error persisted" if transient else "non-retryable error"
        where = f"role={self.role}, stage={self.stage}" + (f", target={self.target}" if self.target else "")
        raise ModelCallError(f"model call failed after {attempt} attempt(s), {kind} ({where}): {error}",
                             record=record, cause=exc) from exc


def call_model(model: Any, messages: Any, *, role: str, stage: str, target: str | None = None,
               iteration: int = 0, recorder: UsageRecorder | None = None, budget: Budget | None = None,
               retries: int = 3, backoff: float = 1.0, max_backoff: float = 30.0,
               sleep: Callable[[float], Any] = time.sleep, config: Mapping[str, Any] | None = None,
               max_reply_chars: int | None = MAX_REPLY_CHARS, cache: CallCache | None = None) -> AIMessage:
    """Invoke `model` through the one door: tag, time, record, retry transient errors, enforce the budget.

    `retries` is the number of retries after the first try (waits: backoff, 2*backoff, ... capped
    at `max_backoff`, or longer when the server sends Retry-After). `config` is merged into the run
    config (callbacks, tags, extra metadata such as ``projectgen_attempt``). A reply longer than
    `max_reply_chars` (None: no cap) is cut to it (see `MAX_REPLY_CHARS`). With a `cache`, a call
    it has completed before is answered from it (see `CallCache`). Raises `ModelCallError`
    (with `.record` and `.cause`), or a `ProjectGenError` from the model or budget as is.
    """
    call = _Call(model, role, stage, target, iteration, retries, backoff, max_backoff, recorder, budget, config,
                 max_reply_chars=max_reply_chars, cache=cache)
    replayed = call.begin(messages)
    if replayed is not None:
        return replayed
    run_config = call.run_config()
    attempt = 0
    while True:
        attempt += 1
        start = time.perf_counter()
        try:
            reply = model.invoke(messages, config=run_config)
        except Exception as exc:
            sleep(call.failed(exc, attempt, time.perf_counter() - start))
            continue
        return call.succeeded(messages, reply, attempt, time.perf_counter() - start)


async def acall_model(model: Any, messages: Any, *, role: str, stage: str, target: str | None = None,
                      iteration: int = 0, recorder: UsageRecorder | None = None, budget: Budget | None = None,
                      retries: int = 3, backoff: float = 1.0, max_backoff: float = 30.0,
                      sleep: Callable[[float], Awaitable[Any]] | None = None,
                      config: Mapping[str, Any] | None = None,
                      max_reply_chars: int | None = MAX_REPLY_CHARS, cache: CallCache | None = None) -> AIMessage:
    """The async twin of `call_model` (``model.ainvoke``; backoff awaits `sleep`, default ``asyncio.sleep``)."""
    if sleep is None:
        import asyncio  # here, not at the top: it would double the import time of this module

        sleep = asyncio.sleep
    call = _Call(model, role, stage, target, iteration, retries, backoff, max_backoff, recorder, budget, config,
                 max_reply_chars=max_reply_chars, cache=cache)
    replayed = call.begin(messages)
    if replayed is not None:
        return replayed
    run_config = call.run_config()
    attempt = 0
    while True:
        attempt += 1
        start = time.perf_counter()
        try:
            reply = await model.ainvoke(messages, config=run_config)
        except Exception as exc:
            await sleep(call.failed(exc, attempt, time.perf_counter() - start))
            continue
        return call.succeeded(messages, reply, attempt, time.perf_counter() - start)
