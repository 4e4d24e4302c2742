"""The difficulty judges: each plays reflection's protocol on a staged exercise (LiveRepoReflection's own filter).

Reflection is another protocol, so it is reached through the registry (`load_protocol`) and its `play`, never
imported: this folder stays one protocol. The judge's run is reflection's own, in ``judges/<n>-<label>/`` of the
seed's folder (resumed from there when the seed was cut short); what the construction keeps of it is read from its
record (`JudgeRun`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from projectgen.errors import ProjectGenError
from projectgen.protocols.definition import PlayFn
from projectgen.protocols.registry import load_protocol

JUDGES_PLAY = "reflection"  # the protocol each judge plays
EDIT_FORMAT = "whole"


@dataclass(frozen=True)
class Judge:
    """A difficulty judge: a chat model that plays `reflect`'s protocol."""

    spec: str
    model: Any
    label: str


class JudgeRun(BaseModel):
    """What the construction reads of a judge's reflect run (its run log's record)."""

    model_config = ConfigDict(extra="ignore")

    passed_at: int | None
    tries: list[dict[str, Any]]
    calls: int
    input_tokens: int
    output_tokens: int


def judges_play() -> PlayFn:
    """Reflection's `play`, found by name (made once, before any worker starts: no import in a worker)."""
    play = load_protocol(JUDGES_PLAY).play
    if play is None:
        raise ProjectGenError(f"protocol {JUDGES_PLAY} offers no play of one sample: the judges cannot run")
    return play


def judge_run(record: Any, judge: str) -> JudgeRun:
    """A judge's record read as the construction needs it; a record of another shape is one line."""
    try:
        return JudgeRun.model_validate(record)
    except ValidationError as error:
        raise ProjectGenError(f"judge {judge}: its {JUDGES_PLAY} run's record is not one "
                              f"({error.errors()[0]['msg']})") from None
