"""Reflection's settings, typed: what a batch runs (`ReflectionSettings`) and what one unit's run.json keeps of them
(`ReflectionUnitSettings`, the request's ``protocol`` field, exactly as run.json has always stored it)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

ReflectionEditFormat = Literal["whole", "patch"]
MAX_TRIES = 10


class ReflectionSettings(BaseModel):
    """The edit formats the batch runs (each its own folder level) and the tries per unit (1 write, then repairs)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    edit_formats: tuple[ReflectionEditFormat, ...] = Field(default=("whole",), min_length=1)
    tries: int = Field(default=2, ge=1, le=MAX_TRIES, description="the paper's 2; up to 10 for pass@k curves")

    @field_validator("edit_formats", mode="before")
    @classmethod
    def split_formats(cls, value: object) -> object:
        """``whole,patch`` as the CLI gives it; repeats dropped, order kept."""
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        return tuple(dict.fromkeys(value)) if isinstance(value, (list, tuple)) else value


class ReflectionUnitSettings(BaseModel):
    """One unit's settings: its edit format and tries (run.json's ``protocol``; a resume reads them back)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    edit_format: ReflectionEditFormat
    tries: int = Field(ge=1, le=MAX_TRIES)
