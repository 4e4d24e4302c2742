"""Refinement's settings, typed: what a batch runs (`RefinementSettings`) and what one task run's run.json keeps of
them (`RefinementUnitSettings`, the request's ``protocol`` field, exactly as run.json has always stored it)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from projectgen.protocols.refinement.refiner import CONTEXTS, STRATEGIES, check_setting

Strategy = Literal["fh", "ce", "ci"]
Context = Literal["basic", "golden"]


def split(value: object) -> object:
    """``fh,ce`` as the CLI gives it; order kept."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return tuple(value) if isinstance(value, list) else value


class RefinementSettings(BaseModel):
    """The strategies and contexts the batch runs (each pair a folder level; golden with ci is left out, said in the
    results) and the token budget of each task run (None: none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategies: tuple[Strategy, ...] = Field(default=STRATEGIES, min_length=1)
    contexts: tuple[Context, ...] = Field(default=CONTEXTS, min_length=1)
    max_tokens: int | None = Field(default=None, ge=1)

    @field_validator("strategies", "contexts", mode="before")
    @classmethod
    def split_lists(cls, value: object) -> object:
        return split(value)


class RefinementUnitSettings(BaseModel):
    """One task run's strategy and context (run.json's ``protocol``; a resume reads them back)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: Strategy
    context: Context

    @model_validator(mode="after")
    def applies(self) -> RefinementUnitSettings:
        """Golden context with Cumulative Instruction is refused (it carries no code)."""
        check_setting(self.strategy, self.context)
        return self
