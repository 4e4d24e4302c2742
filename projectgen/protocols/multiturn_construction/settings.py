"""What a construction does besides its model (`ConstructionSettings`): the ablation, the caps, the filters'
options. run.json and the ledger record them, so a seed built under other settings is built again. The protocol's
settings (`MultiturnConstructionSettings`, what `evaluate --set` checks) are those and each seed's token cap."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from projectgen.errors import ProjectGenError
from projectgen.protocols.multiturn_construction.requirements import DECOMPOSITION_CAP
from projectgen.protocols.multiturn_construction.turns import ABLATIONS, FULL, TURN_CAP, check_ablation

MIN_FUNCTION_LINES = 10  # SR-Eval keeps seeds whose target function's body has at least 10 lines
CONTAMINATION_RULE = "union: a seed any probe model passes is dropped"  # SR-Eval's three models, any one leaks
# How the length filter counts (the paper says "lines"; this reading is ours: docs/construction.md)
LENGTH_MEASURE = "body code lines: no signature, docstring, blank or comment-only line"


@dataclass(frozen=True)
class ConstructionSettings:
    """What the construction does besides its model: the ablation, the caps, the optional filter.

    `contamination_models` are the contamination probe's model specs (SR-Eval probes three and drops a seed any of
    them passes: the union); empty, the construction model is the one probe. `docstring_instructions`: a
    repository-level seed's Decomposer starts from its target function's signature and docstring converted into
    an instruction (SR-Eval's seed preparation), not from requirement.md."""

    ablation: str = FULL
    decomposition_cap: int = DECOMPOSITION_CAP
    turn_cap: int = TURN_CAP
    contamination: bool = False
    contamination_models: tuple[str, ...] = ()
    min_function_lines: int = MIN_FUNCTION_LINES
    docstring_instructions: bool = True

    def __post_init__(self) -> None:
        check_ablation(self.ablation)
        if min(self.decomposition_cap, self.turn_cap) < 1:
            raise ProjectGenError("the decomposition and turn caps must be at least 1")
        object.__setattr__(self, "contamination_models", tuple(self.contamination_models))  # a list from run.json
        if self.contamination_models and not self.contamination:
            raise ProjectGenError("contamination models are named but the contamination check is off")
        repeated = sorted({spec for spec in self.contamination_models if self.contamination_models.count(spec) > 1})
        if repeated:
            raise ProjectGenError(f"a contamination model is named twice: {', '.join(repeated)}")

    @classmethod
    def from_protocol(cls, protocol: Mapping[str, Any]) -> ConstructionSettings:
        """The settings a run.json's `protocol()` record was made from (its descriptive entries left out)."""
        return cls(**{field.name: protocol[field.name] for field in fields(cls) if field.name in protocol})

    def protocol(self) -> dict[str, Any]:
        """run.json's and the ledger's record of them: a seed built under other settings is built again."""
        return {"ablation": self.ablation, "ablation_means": ABLATIONS[self.ablation],
                "decomposition_cap": self.decomposition_cap, "turn_cap": self.turn_cap,
                "contamination": self.contamination, "contamination_models": list(self.contamination_models),
                "contamination_rule": CONTAMINATION_RULE, "min_function_lines": self.min_function_lines,
                "length_measure": LENGTH_MEASURE, "docstring_instructions": self.docstring_instructions}


class MultiturnConstructionSettings(BaseModel):
    """The protocol's settings, typed: `ConstructionSettings`' fields, checked as it checks them (a wrong one is one
    line), and the token cap of each seed's construction (beyond it the seed is an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ablation: str = FULL
    decomposition_cap: int = Field(default=DECOMPOSITION_CAP, ge=1)
    turn_cap: int = Field(default=TURN_CAP, ge=1)
    contamination: bool = False
    contamination_models: tuple[str, ...] = ()
    min_function_lines: int = MIN_FUNCTION_LINES
    docstring_instructions: bool = True
    max_tokens: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def checked(self) -> MultiturnConstructionSettings:
        """The checks of `ConstructionSettings` (an unknown ablation, probes named with the check off, ...)."""
        try:
            self.construction()
        except ProjectGenError as error:
            raise ValueError(str(error)) from None
        return self

    def construction(self) -> ConstructionSettings:
        """The settings a seed's run records (everything but the token cap)."""
        return ConstructionSettings(**self.model_dump(exclude={"max_tokens"}))
