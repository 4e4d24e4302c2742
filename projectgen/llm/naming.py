"""How call records and reports name a model; a replay is always named as one."""
from __future__ import annotations

from typing import Any

REFERENCE_LABEL = "reference replay (oracle, not a model)"
"""How reports name the reference replay (``--model reference``: `projectgen.oracles.reference_replay.reference_model`)."""


def model_name(model: Any) -> str:
    """A short name for records: ``gpt-4o-mini``, or ``scripted:LABEL`` for a replay.

    A wrapper (such as `projectgen.llm.faults.FaultyChatModel`) names itself with a
    ``projectgen_model_name()`` method: the wrapped model's name, so its calls are priced as that model's.
    """
    named = getattr(model, "projectgen_model_name", None)
    if callable(named):
        return str(named())
    if getattr(model, "_llm_type", None) == "scripted":
        return f"scripted:{model.label}"
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def describe_model(model: Any) -> str:
    """How reports name a model; a replay is always called one, never passed off as a real model.

    A wrapper describes itself with a ``projectgen_description()`` method (which should include the
    wrapped model's own description).
    """
    described = getattr(model, "projectgen_description", None)
    if callable(described):
        return str(described())
    if getattr(model, "_llm_type", None) == "scripted":
        # The oracle's label already says what it is.
        return model.label if model.label == REFERENCE_LABEL else f"scripted model ({model.label})"
    description = f"{getattr(model, '_llm_type', type(model).__name__)} {model_name(model)}"
    url = getattr(model, "openai_api_base", None)
    return f"{description} at {url}" if url else description

