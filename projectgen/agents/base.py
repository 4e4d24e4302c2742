"""What every agent shares: the gateway to its model and the judges' verdict."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from projectgen.llm import (MAX_REPLY_CHARS, Budget, CallCache, CallLabels, DoorSettings, PromptStore, UsageRecorder,
                            acall_model, message_text)
from projectgen.llm.door import finish_reason
from projectgen.repository.syntax import cut_off_error

CUT_REASONS = frozenset({"length", "max_tokens"})
"""``finish_reason`` values of a reply stopped by the output cap or the context window (OpenAI-compatible
servers and Ollama say "length", Anthropic "max_tokens"), or cut by the door's size cap."""


@dataclass(frozen=True)
class Reply:
    """A reply's text and why it ended (`finish_reason`, None when the model does not say)."""

    text: str
    finish_reason: str | None = None

    @property
    def cut(self) -> bool:
        """Whether the reply stopped at the output cap (or the context window) rather than where it meant to."""
        return self.finish_reason in CUT_REASONS


class IncompleteFileError(ValueError):
    """A file's reply was cut at the output cap before the file ended; `str(err)` is the error a stage
    records for the refused file (`projectgen.repository.syntax.cut_off_error`)."""

    def __init__(self, path: str) -> None:
        super().__init__(cut_off_error())
        self.path = path


@dataclass
class ModelGateway:
    """How agents reach their models during one run: recorder, budget and extra run metadata.

    Agents hold their model and prompt; the gateway is what differs between runs (where
    usage is recorded, which budget applies, which LiveCoder attempt this is, which call
    cache answers calls a killed run had completed, where the prompts are kept). `retries`, `backoff` (seconds before the
    first retry, doubling, at most `max_backoff`) and `max_reply_chars` (longer replies are
    cut) are the door's (`acall_model`).
    """

    recorder: UsageRecorder | None = None
    budget: Budget | None = None
    retries: int = 3
    metadata: Mapping[str, Any] = field(default_factory=dict)
    backoff: float = 1.0
    max_backoff: float = 30.0
    max_reply_chars: int | None = MAX_REPLY_CHARS
    cache: CallCache | None = None
    prompts: PromptStore | None = None

    async def ask(self, model: Any, messages: Sequence[Any], *, role: str, stage: str,
                  target: str | None = None, iteration: int = 0) -> str:
        """The reply text of one model call, made through `acall_model` (the one door)."""
        reply = await self.ask_reply(model, messages, role=role, stage=stage, target=target, iteration=iteration)
        return reply.text

    async def ask_reply(self, model: Any, messages: Sequence[Any], *, role: str, stage: str,
                        target: str | None = None, iteration: int = 0) -> Reply:
        """`ask`, with why the reply ended: an agent that writes a file must not take a reply cut at the
        output cap for the whole file."""
        message = await self.reply(model, messages, role=role, stage=stage, target=target, iteration=iteration)
        return Reply(message_text(message), finish_reason(message))

    async def reply(self, model: Any, messages: Sequence[Any], *, role: str, stage: str,
                    target: str | None = None, iteration: int = 0) -> Any:
        """The reply message of one model call (its text and token usage), made through `acall_model`."""
        config = {"metadata": dict(self.metadata)} if self.metadata else None
        door = DoorSettings(recorder=self.recorder, budget=self.budget, cache=self.cache, prompts=self.prompts,
                            retries=self.retries, backoff=self.backoff, max_backoff=self.max_backoff,
                            max_reply_chars=self.max_reply_chars)
        return await acall_model(model, list(messages), CallLabels(role, stage, target, iteration), door,
                                 config=config)


class CheckStatus(BaseModel):
    """The check-test result a code verdict is based on."""

    passed: int
    total: int
    status: str
    failing: list[str] = Field(default_factory=list, description="node ids of failed/errored tests")


class Verdict(BaseModel):
    """A judge's decision on one stage iteration.

    `files` names the files to revise with what to change in each (empty = revise all).
    `stop` says more iterations cannot help (e.g. the test harness itself failed).
    """

    judge: str
    stage: str
    iteration: int
    score: float = Field(ge=0, le=10)
    accepted: bool
    feedback: str = ""
    reasons: str = ""
    scores: dict[str, float] = Field(default_factory=dict)
    files: dict[str, str] = Field(default_factory=dict)
    check: CheckStatus | None = None
    log: str = Field(default="", description="error log excerpt for the generator (code stage)")
    stop: bool = False


def combine_verdicts(verdicts: Sequence[Verdict]) -> Verdict:
    """Several judges on one stage: accepted only if all accept; lowest score; feedback and files merged."""
    if len(verdicts) == 1:
        return verdicts[0]
    first = verdicts[0]
    files: dict[str, str] = {}
    for verdict in verdicts:
        for path, suggestion in verdict.files.items():
            files[path] = f"{files[path]}\n{suggestion}" if path in files else suggestion
    feedback = "\n\n".join(f"[{v.judge}] {v.feedback}" for v in verdicts if v.feedback)
    return Verdict(
        judge="+".join(v.judge for v in verdicts), stage=first.stage, iteration=first.iteration,
        score=min(v.score for v in verdicts), accepted=all(v.accepted for v in verdicts),
        feedback=feedback, reasons="\n".join(v.reasons for v in verdicts if v.reasons),
        scores={f"{v.judge}.{k}": s for v in verdicts for k, s in v.scores.items()} or
        {v.judge: v.score for v in verdicts},
        files=files, check=next((v.check for v in verdicts if v.check is not None), None),
        log="\n\n".join(v.log for v in verdicts if v.log), stop=any(v.stop for v in verdicts),
    )


def section(title: str, text: str | None) -> str:
    """A prompt section, or "" when there is nothing to show."""
    text = (text or "").strip()
    return f"\n# {title}\n{text}\n" if text else ""


def guidance_section(guidance: str) -> str:
    """Knowledge from earlier attempts (LiveCoder), as the last prompt section; "" when there is none."""
    return section("Lessons from earlier attempts at this task", guidance)
