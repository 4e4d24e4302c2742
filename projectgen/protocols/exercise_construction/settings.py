"""Exercise construction's settings, typed: the models of each role besides the batch's one model, the reference set
to decontaminate against, the draw's seed and the judges' tries."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_JUDGE_TRIES = 10  # as reflection's tries


class ExerciseConstructionSettings(BaseModel):
    """Each role's model specs (None: the batch's model; twice for the reasoning role, two drafts), the reference
    exercises (folders) new ones must not be near-duplicates of, the seed of the creative models' draw, and the tries
    of each judge's reflect run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    creative: tuple[str, ...] | None = Field(default=None, min_length=1)
    reasoning: tuple[str, ...] | None = Field(default=None, min_length=1)
    judges: tuple[str, ...] | None = Field(default=None, min_length=1)
    references: tuple[Path, ...] = ()
    rng_seed: int = 0
    judge_tries: int = Field(default=2, ge=1, le=MAX_JUDGE_TRIES)

    @field_validator("creative", "reasoning", "judges", mode="before")
    @classmethod
    def split_specs(cls, value: object) -> object:
        """``a,b`` as the CLI gives it (blank entries dropped: an empty list is refused)."""
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("references", mode="before")
    @classmethod
    def one_reference(cls, value: object) -> object:
        """One folder as a list of one."""
        return (value,) if isinstance(value, (str, Path)) else value

    def role_specs(self, model: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """(creative, reasoning, judges) specs, `model` standing in for each role not given."""
        return self.creative or (model,), self.reasoning or (model, model), self.judges or (model,)
