"""The scripted replay model: offline replies keyed by role and target, never by call order.

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
metadata, for LiveCoder's outer loop) and a ``stage`` (matched against
``projectgen_stage``: one script can answer a LiveRepoReflection task in both edit
formats, whose stages differ). Matching, for a call (role R, stage S, target T,
iteration I, attempt A): candidates have role R, stage S or none, target T or none,
iteration none or <= I, attempt none or <= A; the most specific wins, compared as
(has a target, has a stage, attempt, iteration), absent counting lowest. So
role+target+iteration beats role+target with the latest earlier iteration, which
beats role only.
Duplicate keys are rejected when the script loads. No match raises
`ScriptExhaustedError` naming role/target/iteration, unless a fallback is set.

The key reaches the model through LangChain's run config: the door invokes
``model.invoke(messages, config={"metadata": {"projectgen_role": ...}})`` and
``_generate`` reads ``run_manager.metadata`` (langchain-core copies the config
metadata into the run manager of every chat-model run, merged with any parent
run's metadata, e.g. inside a LangGraph node). Token usage of scripted replies
is an approximation, ``len(text) // 4 + 1`` per side, flagged as estimated.
"""
from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from projectgen.errors import ProjectGenError, first_line
from projectgen.llm.errors import ScriptExhaustedError
from projectgen.llm.messages import estimate_tokens, input_text
from projectgen.llm.roles import META_ATTEMPT, META_ITERATION, META_ROLE, META_STAGE, META_TARGET

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


class ScriptEntry(BaseModel):
    """One scripted reply and the call key it answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str
    target: str | None = None
    iteration: int | None = None
    attempt: int | None = None
    stage: str | None = None
    content: str | dict[str, Any] | list[Any]

    @property
    def text(self) -> str:
        return self.content if isinstance(self.content, str) else json.dumps(self.content, indent=2)

    @property
    def key(self) -> tuple[str, str | None, int | None, int | None, str | None]:
        return (self.role, self.target, self.iteration, self.attempt, self.stage)


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
                role, target, iteration, attempt, stage = entry.key
                raise ValueError(f"two responses for role={role!r} target={target!r} "
                                 f"iteration={iteration} attempt={attempt}"
                                 + (f" stage={stage!r}" if stage is not None else ""))
            seen.add(entry.key)
        return self

    def match(self, role: str, target: str | None, iteration: int, attempt: int,
              stage: str | None = None) -> ScriptEntry | None:
        """The most specific entry for a call (see the module docstring), or None."""
        best: ScriptEntry | None = None
        best_rank: tuple[int, int, int, int] = (-1, -1, -1, -1)
        for entry in self.responses:
            if entry.role != role or entry.target not in (None, target) or entry.stage not in (None, stage):
                continue
            if (entry.iteration is not None and entry.iteration > iteration) or (
                    entry.attempt is not None and entry.attempt > attempt):
                continue
            rank = (entry.target is not None, entry.stage is not None, -1 if entry.attempt is None else entry.attempt,
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


def answer_call(script: Script, metadata: Mapping[str, Any], *, fallback: str | None,
                label: str) -> tuple[str, dict[str, Any]]:
    """The reply text for a call labelled by its run-config `metadata`, and the call's key as the
    model's `calls` list keeps it; raises `ScriptExhaustedError` when nothing (not even `fallback`) answers."""
    role = metadata.get(META_ROLE)
    target = metadata.get(META_TARGET)
    target = None if target is None else str(target)
    iteration = int(metadata.get(META_ITERATION) or 0)
    attempt = int(metadata.get(META_ATTEMPT) or 0)
    stage = metadata.get(META_STAGE)
    stage = None if stage is None else str(stage)
    entry = script.match(str(role), target, iteration, attempt, stage) if role is not None else None
    if entry is not None:
        text = entry.text
    elif fallback is not None:
        text = fallback
    elif role is None:
        raise ScriptExhaustedError(
            f"scripted model ({label}) was called without {META_ROLE!r} metadata; call it through "
            f"projectgen.llm.call_model or pass config={{'metadata': {{{META_ROLE!r}: ...}}}}",
            role=None, target=target, iteration=iteration)
    else:
        raise ScriptExhaustedError(
            f"scripted model ({label}) has no response for role={role!r} target={target!r} "
            f"iteration={iteration}" + (f" attempt={attempt}" if attempt else "")
            + (f" stage={stage!r}" if stage is not None else "")
            + "; add an entry to the script or set a fallback",
            role=str(role), target=target, iteration=iteration)
    call = {"role": role, "target": target, "iteration": iteration, "attempt": attempt,
            "matched": entry.key if entry is not None else None}
    return text, call


def __getattr__(name: str) -> Any:
    """`ScriptedChatModel` is built on first use so that importing this module stays cheap."""
    if name == "ScriptedChatModel":
        return scripted_chat_model_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def scripted_chat_model_class() -> type[BaseChatModel]:
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
            text, call = answer_call(self.script, metadata, fallback=self.fallback, label=self.label)
            for word in stop or ():
                if word and word in text:
                    text = text[:text.index(word)]
            prompt_tokens, reply_tokens = estimate_tokens(input_text(messages)), estimate_tokens(text)
            with self._lock:
                self._calls.append(call)
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

