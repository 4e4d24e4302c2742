"""LiveCoder's settings, typed: what `projectgen experiment`'s options fix for every run of a batch."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from projectgen.config import AttemptSettings, Settings
from projectgen.evaluation.denominators import DEFAULT_DENOMINATOR, DenominatorSetting


class LiveCoderSettings(BaseModel):
    """The methods (arms) to run, the pipeline's and the attempts' settings, each run's token cap, the knowledge
    store and its embedding, what #Tests counts, and faults injected around every model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    methods: tuple[str, ...] = Field(default=("livecoder",), min_length=1)
    settings: Settings = Field(default_factory=Settings)
    attempt_settings: AttemptSettings = Field(default_factory=AttemptSettings)
    max_tokens: int | None = Field(default=None, ge=1)
    knowledge_url: str | None = None
    embedding: str | None = None
    denominator: DenominatorSetting = DEFAULT_DENOMINATOR
    faults: str | None = None

    @field_validator("methods", mode="before")
    @classmethod
    def split_methods(cls, value: object) -> object:
        """``livecoder,direct`` as the CLI gives it."""
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value
