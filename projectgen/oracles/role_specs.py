"""The models a run's spec mapping describes: run.json's ``models``, as `projectgen run` records them.

The mapping holds ``default`` (a spec string: ``PROVIDER:MODEL``, ``scripted:PATH`` or ``reference``),
one entry per role that has its own model, and optionally ``base_url``, ``faults`` (an `--inject-faults`
spec) and the sampling overrides (``temperature``, ``top_p``, ``max_tokens``, as strings). Rebuilding the
models from it is what lets a run be continued by another process (`run --resume`, `projectgen review`).
Light to import: models are made inside the functions.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from projectgen.llm.sampling import sampling_arguments
from projectgen.llm.specs import REFERENCE_SPEC

if TYPE_CHECKING:
    from projectgen.llm.factory import ModelRoles


def models_from_specs(specs: Mapping[str, str], task: Any) -> ModelRoles:
    """The `ModelRoles` a spec mapping describes; "reference" is `task`'s reference replay."""
    from projectgen.llm import ModelRoles

    roles = dict(specs)
    default = roles.pop("default")
    base_url = roles.pop("base_url", None)
    faults = roles.pop("faults", None)
    sampling = sampling_arguments(roles)
    for key in sampling:
        roles.pop(key)
    plan = None
    if faults:
        from projectgen.llm.faults import FaultPlan

        plan = FaultPlan.parse(faults)  # a bad spec is refused before any model is made
    if REFERENCE_SPEC in (default, *roles.values()):
        models = with_reference_replay(default, roles, base_url, task, sampling)
    else:
        models = ModelRoles.from_specs(default, base_url=base_url, **sampling, **roles)
    if plan is not None:
        from projectgen.llm.faults import inject_faults

        return inject_faults(models, plan)
    return models


def with_reference_replay(default: str, roles: dict[str, str], base_url: str | None, task: Any,
                          sampling: dict[str, float | int]) -> Any:
    """`ModelRoles` where the "reference" spec is `task`'s reference replay (one object for every such role)."""
    from projectgen.llm import ModelRoles, make_chat_model
    from projectgen.oracles.reference_replay import reference_model

    made = {REFERENCE_SPEC: reference_model(task)}

    def make(spec: str):
        if spec not in made:
            made[spec] = make_chat_model(spec, base_url=base_url, **sampling)
        return made[spec]

    return ModelRoles(default=make(default), overrides={role: make(spec) for role, spec in roles.items() if spec})
