"""Evolve's settings, typed: the change (its requirement's text and its check tests), the models of the roles
that differ from the run's model, the pipeline's settings, the token cap, and whether the hidden unit tests run."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from projectgen.config import Settings


class EvolveSettings(BaseModel):
    """What one evolve run asks (`evaluate`'s ``--set KEY=VALUE``; `projectgen evolve`'s options)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requirement: str = Field(default="", description="the new requirement's text (the change request); a new run "
                                                     "refuses an empty one, a continued run keeps its own")
    tests: Path | None = Field(default=None, description="the change's check tests (pytest files), run beside the "
                                                          "earlier requirements' as regression tests")
    role_models: dict[str, str] = Field(default_factory=dict, description="ROLE -> SPEC for the roles whose model "
                                                                          "is not the run's (architect, coder, ...)")
    settings: Settings | None = Field(default=None, description="the pipeline's settings; what is left unset comes "
                                                                 "from the base task's paper settings")
    max_tokens: int | None = Field(default=None, ge=1, description="stop the run beyond this many tokens")
    unit_tests: bool = Field(default=True, description="run the base task's hidden unit tests at the end")
