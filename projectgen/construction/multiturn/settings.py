"""What a construction does besides its model (`ConstructionSettings`): the ablation, the caps, the filters'
options. run.json and the ledger record them, so a seed built under other settings is built again."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from projectgen.construction.multiturn.requirements import DECOMPOSITION_CAP
from projectgen.construction.multiturn.turns import ABLATIONS, FULL, TURN_CAP, check_ablation
from projectgen.errors import ProjectGenError

MIN_FUNCTION_LINES = 10  # SR-Eval keeps seeds whose target function's body has at least 10 lines
# How the length filter counts (the paper says "lines"; this reading is ours: docs/construction.md)
LENGTH_MEASURE = "body code lines: no signature, docstring, blank or comment-only line"


@dataclass(frozen=True)
class ConstructionSettings:
    """What the construction does besides its model: the ablation, the caps, the optional filter."""

    ablation: str = FULL
    decomposition_cap: int = DECOMPOSITION_CAP
    turn_cap: int = TURN_CAP
    contamination: bool = False
    min_function_lines: int = MIN_FUNCTION_LINES

    def __post_init__(self) -> None:
        check_ablation(self.ablation)
        if min(self.decomposition_cap, self.turn_cap) < 1:
            raise ProjectGenError("the decomposition and turn caps must be at least 1")

    @classmethod
    def from_protocol(cls, protocol: Mapping[str, Any]) -> ConstructionSettings:
        """The settings a run.json's `protocol()` record was made from (its descriptive entries left out)."""
        return cls(**{field.name: protocol[field.name] for field in fields(cls) if field.name in protocol})

    def protocol(self) -> dict[str, Any]:
        """run.json's and the ledger's record of them: a seed built under other settings is built again."""
        return {"ablation": self.ablation, "ablation_means": ABLATIONS[self.ablation],
                "decomposition_cap": self.decomposition_cap, "turn_cap": self.turn_cap,
                "contamination": self.contamination, "min_function_lines": self.min_function_lines,
                "length_measure": LENGTH_MEASURE}
