"""LiveCoder's settings, typed: what `projectgen experiment`'s options fix for every run of a batch."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from projectgen.config import AttemptSettings, Settings
from projectgen.errors import ProjectGenError
from projectgen.evaluation.denominators import DEFAULT_DENOMINATOR, DenominatorSetting
from projectgen.experiments.engine import Shard
from projectgen.llm.pricing import PriceTable


class LiveCoderSettings(BaseModel):
    """The methods (arms) to run, the pipeline's and the attempts' settings, each run's token cap, the knowledge
    store and its embedding, what #Tests counts, faults injected around every model, the user's scorers, the
    checkouts external systems run from, the prices the costs are counted at, and the share of the plan to run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    methods: tuple[str, ...] = Field(default=("livecoder",), min_length=1)
    settings: Settings = Field(default_factory=Settings)
    attempt_settings: AttemptSettings = Field(default_factory=AttemptSettings)
    max_tokens: int | None = Field(default=None, ge=1)
    knowledge_url: str | None = None
    embedding: str | None = None
    denominator: DenominatorSetting = DEFAULT_DENOMINATOR
    faults: str | None = None
    scorers: tuple[str, ...] = ()  # package.module:factory or file.py:factory of the user's scorers
    system_paths: dict[str, str] = Field(default_factory=dict)  # external system -> the checkout it runs from
    prices: Path | None = None  # a TOML or JSON price file over the list prices (None: the list prices)
    shard: Shard | None = None  # share i/N of the plan's pairs (None: every pair)

    @field_validator("methods", mode="before")
    @classmethod
    def split_methods(cls, value: object) -> object:
        """``livecoder,direct`` as the CLI gives it."""
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("shard", mode="before")
    @classmethod
    def parse_shard(cls, value: object) -> Shard | None:
        """``i/N`` as the CLI gives it, or a `Shard`, checked by `Shard.parse` (its one line, not pydantic's): a
        share outside the plan would run nothing and say nothing."""
        if value is None:
            return None
        if isinstance(value, str | Shard):
            return Shard.parse(str(value))
        raise ProjectGenError(f"--shard takes i/N with 1 <= i <= N (e.g. 1/4), got {value!r}")

    @field_validator("prices")
    @classmethod
    def readable_prices(cls, value: Path | None) -> Path | None:
        """A price file that does not read is refused here, before anything runs (`PriceTable.from_file`'s line)."""
        if value is not None:
            PriceTable.from_file(value)
        return value
