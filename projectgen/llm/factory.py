"""Chat models from spec strings, one model or one per agent role; creating one never touches the network.

Models come from `make_chat_model(spec)`:

- ``PROVIDER:MODEL`` (``openai:gpt-4o-mini``, ``deepseek:deepseek-chat``,
  ``ollama:llama3``) goes to LangChain's ``init_chat_model``; the provider's
  integration package must be installed.
- With a base URL (argument, else ``PROJECTGEN_BASE_URL``; ``OPENAI_BASE_URL``
  too for ``openai:`` specs and bare names), any spec becomes a ChatOpenAI on
  that OpenAI-compatible endpoint (vLLM, Ollama, LM Studio, llama.cpp), as such servers read it
  (`projectgen.llm.compatible`: the cap sent as ``max_tokens``, streamed usage asked for); a known provider
  prefix is dropped and the rest is the served model name. The key is the
  argument, else ``PROJECTGEN_API_KEY``, else ``OPENAI_API_KEY``, else a
  placeholder (local servers ignore it).
- ``scripted:PATH`` replays a script file offline (`ScriptedChatModel`).

OpenAI-style models are created with ``max_retries=0``: the door
(`projectgen.llm.door.call_model`) is the only retry layer, so its attempt counts and
backoff are the real ones.
"""
from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from projectgen.errors import ProjectGenError, first_line
from projectgen.llm.naming import describe_model
from projectgen.llm.roles import ROLES
from projectgen.llm.sampling import DEFAULT_TEMPERATURE, DEFAULT_TOP_P, max_output_tokens, sampling_of
from projectgen.llm.scripted import scripted_chat_model_class
from projectgen.llm.specs import REFERENCE_SPEC, SCRIPTED_PREFIX

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

# Shown in errors when langchain's own provider table cannot be read.
_FALLBACK_PROVIDERS = ("anthropic", "azure_openai", "deepseek", "google_genai", "groq", "mistralai", "ollama",
                       "openai", "xai")
# Providers whose LangChain classes take `max_retries` (the openai/anthropic SDK retry layer).
_SDK_RETRY_PROVIDERS = frozenset({"openai", "azure_openai", "anthropic", "deepseek"})
_NO_KEY_PLACEHOLDER = "not-needed"
# Providers whose LangChain classes (langchain-openai's) take an `http_async_client`: projectgen gives them
# one whose connections stay with their event loop (`projectgen.llm.http_clients`).
OPENAI_CLIENT_PROVIDERS = frozenset({"openai", "azure_openai"})
# The key each hosted provider's SDK reads when none is passed: its own message names every way to give one,
# in several lines; ours names the variable (a local server needs none: --base-url)
API_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
                     "google_genai": "GOOGLE_API_KEY", "groq": "GROQ_API_KEY", "mistralai": "MISTRAL_API_KEY"}


def make_chat_model(spec: str, *, base_url: str | None = None, api_key: str | None = None,
                    temperature: float | None = DEFAULT_TEMPERATURE, top_p: float | None = DEFAULT_TOP_P,
                    max_tokens: int | None = None, **kwargs: Any) -> BaseChatModel:
    """A chat model from a spec (see the module docstring); raises `ProjectGenError` with one clear line.

    Creating a model never touches the network; a wrong key or URL fails on the first call.
    Sampling is set explicitly (`projectgen.llm.sampling`): temperature 0, top_p 1.0 and
    `max_tokens` from the per-model table when not given; `temperature=None` or `top_p=None`
    leaves the provider default (some reasoning models reject the parameters).
    """
    spec = spec.strip()
    if base_url:
        check_base_url(base_url)  # even for a spec that would not use it: a typo should not pass unseen
    provider, sep, name = spec.partition(":")
    if not spec or (sep and (not provider or not name)):
        raise ProjectGenError(f"malformed model spec {spec!r}: expected PROVIDER:MODEL, e.g. 'openai:gpt-4o-mini'")
    if provider == "scripted":
        return scripted_chat_model_class().from_file(name, **kwargs)
    provider = provider.replace("-", "_").lower() if sep else ""
    known = known_providers()
    url = base_url or os.environ.get("PROJECTGEN_BASE_URL")
    if not url and provider in ("", "openai"):
        url = os.environ.get("OPENAI_BASE_URL")
    if url:
        check_base_url(url)
        served = name if provider in known else spec  # "llama3:8b" on an endpoint is a model name
        sampling = {"temperature": temperature, "top_p": top_p,
                    "max_tokens": max_tokens if max_tokens is not None else max_output_tokens(served)}
        return _openai_compatible(spec, served, url, api_key, sampling, kwargs)
    if sep and provider not in known:
        raise ProjectGenError(f"unknown model provider {provider!r} in {spec!r} ({_providers_hint(provider, known)}; "
                              "or pass a base URL for an OpenAI-compatible endpoint)")
    if not sep:
        provider = _infer_provider(spec)
        if provider is None:
            if difflib.get_close_matches(spec.lower(), (REFERENCE_SPEC,), n=1):
                raise ProjectGenError(f"unknown model {spec!r}: did you mean {REFERENCE_SPEC!r}? (a provider's "
                                      "model is PROVIDER:MODEL)")
            raise ProjectGenError(f"cannot tell the provider of model {spec!r}: write it as PROVIDER:MODEL "
                                  f"({_providers_hint('', known)})")
        name = spec
    params = dict(kwargs)
    sampling = {"temperature": temperature, "top_p": top_p,
                "max_tokens": max_tokens if max_tokens is not None else max_output_tokens(name)}
    params.update({key: value for key, value in sampling.items() if value is not None})
    if api_key:
        params["api_key"] = api_key
    if provider in _SDK_RETRY_PROVIDERS:
        params.setdefault("max_retries", 0)
    key_variable = API_KEY_VARIABLES.get(provider)
    if not api_key and key_variable and not os.environ.get(key_variable):
        raise ProjectGenError(f"cannot create {spec!r}: {key_variable} is not set (export it, or serve the model "
                              "behind an OpenAI-compatible --base-url)")
    try:
        if provider in OPENAI_CLIENT_PROVIDERS:
            from projectgen.llm.http_clients import openai_async_client

            openai_async_client(params)
        from langchain.chat_models import init_chat_model

        return init_chat_model(name, model_provider=provider, **params)
    except ImportError as exc:
        raise ProjectGenError(f"cannot create {spec!r}: {first_line(exc)} "
                              "(or serve the model behind an OpenAI-compatible base URL)") from None
    except Exception as exc:  # the SDK's own checks, e.g. a missing API key
        raise ProjectGenError(f"cannot create {spec!r}: {first_line(exc)}") from None


def _openai_compatible(spec: str, served: str, base_url: str, api_key: str | None,
                       sampling: dict[str, Any], kwargs: dict[str, Any]) -> BaseChatModel:
    try:
        from projectgen.llm.compatible import OpenAICompatibleChat
        from projectgen.llm.http_clients import openai_async_client
    except ImportError:
        raise ProjectGenError(f"cannot create {spec!r}: an OpenAI-compatible endpoint needs the "
                              "langchain-openai package (pip install langchain-openai)") from None
    key = (api_key or os.environ.get("PROJECTGEN_API_KEY") or os.environ.get("OPENAI_API_KEY")
           or _NO_KEY_PLACEHOLDER)
    params: dict[str, Any] = {"model": served, "base_url": base_url, "api_key": key, "max_retries": 0, **kwargs}
    params.update({name: value for name, value in sampling.items() if value is not None})
    openai_async_client(params)
    try:
        return OpenAICompatibleChat(**params)
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
    """'did you mean ...?' for a near miss (``scripted`` too), else the common providers (the full list is long)."""
    close = difflib.get_close_matches(provider, (*known, SCRIPTED_PREFIX.rstrip(":")), n=1) if provider else []
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



# --------------------------------------------------------------------------- models per role

@dataclass(frozen=True)
class ModelRoles:
    """Which chat model serves each agent role; roles not given use `default`."""

    default: Any
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_roles(self.overrides)
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))

    @classmethod
    def from_specs(cls, default: str = "openai:gpt-4o-mini", *, base_url: str | None = None,
                   api_key: str | None = None, temperature: float | None = DEFAULT_TEMPERATURE,
                   top_p: float | None = DEFAULT_TOP_P, max_tokens: int | None = None,
                   **roles: str | None) -> ModelRoles:
        """Build models from spec strings, e.g. ``from_specs("openai:gpt-4o-mini", coder="deepseek:deepseek-chat")``.

        A spec used by several roles yields one shared model object; sampling as `make_chat_model`.
        """
        made: dict[str, Any] = {}

        def make(spec: str) -> Any:
            if spec not in made:
                made[spec] = make_chat_model(spec, base_url=base_url, api_key=api_key, temperature=temperature,
                                             top_p=top_p, max_tokens=max_tokens)
            return made[spec]

        _check_roles(roles)  # before any model is made
        return cls(default=make(default), overrides={r: make(s) for r, s in roles.items() if s})

    def for_role(self, role: str) -> Any:
        if role not in ROLES:
            raise ProjectGenError(f"unknown model role {role!r} (roles: {', '.join(ROLES)})")
        return self.overrides.get(role, self.default)

    __getitem__ = for_role

    def describe(self) -> dict[str, str]:
        """Role -> model description, for reports."""
        return {role: describe_model(self.for_role(role)) for role in ROLES}

    def sampling(self) -> dict[str, dict[str, Any]]:
        """Role -> the sampling parameters its model sends (empty for a replay), for run.json."""
        return {role: sampling_of(self.for_role(role)) for role in ROLES}


def _check_roles(roles: Iterable[str]) -> None:
    unknown = sorted(set(roles) - set(ROLES))
    if unknown:
        raise ProjectGenError(f"unknown model role(s) {', '.join(unknown)} (roles: {', '.join(ROLES)})")
