"""The sampling parameters every real model is created with: temperature, top_p and the output cap.

Provider defaults differ and can cut a long architecture tree or file short (an output cap of 4k
tokens, a top_p below 1), so they are never left to the provider: temperature 0 and top_p 1.0
(greedy, as the ProjectGen paper runs its backbones) and the maximum output length the paper
gives its models (8k tokens for DeepSeek-V3, 16k for GPT-4o), looked up by model name in
`MAX_OUTPUT_TOKENS`. Each can be overridden (`make_chat_model(..., max_tokens=...)`, the CLI's
`--temperature`, `--top-p`, `--max-output-tokens`), and a run records what its models were made
with in run.json (`sampling_of`).
"""
from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

DEFAULT_TEMPERATURE = 0.0
DEFAULT_TOP_P = 1.0
# (model-name pattern, output cap in tokens); the first match wins. The first four are the papers'
# backbones; the last line is for every other model (a cap that the common chat APIs accept).
MAX_OUTPUT_TOKENS: tuple[tuple[str, int], ...] = (
    ("deepseek-chat", 8192),  # DeepSeek-V3 behind DeepSeek's API (ProjectGen: 8k)
    ("deepseek-v3*", 8192),
    ("gpt-4o-mini*", 16384),
    ("gpt-4o*", 16384),  # ProjectGen: 16k
    ("*", 8192),
)
SAMPLING_KEYS = ("temperature", "top_p", "max_tokens")


def max_output_tokens(model_name: str) -> int:
    """The output cap for a model name (a served name or the part after ``PROVIDER:``)."""
    name = model_name.strip().lower()
    return next(cap for pattern, cap in MAX_OUTPUT_TOKENS if fnmatchcase(name, pattern))


def sampling_of(model: Any) -> dict[str, Any]:
    """What a model object will send: its temperature, top_p and output cap (through fault-injecting
    wrappers); empty for a replay, which samples nothing."""
    while getattr(model, "wrapped", None) is not None:
        model = model.wrapped
    values = {key: getattr(model, key, None) for key in SAMPLING_KEYS}
    return values if any(value is not None for value in values.values()) else {}


def sampling_by_role(models: Any, roles: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Role -> what its model sends, for a `ModelRoles` or one model serving every role."""
    pick = models.for_role if hasattr(models, "for_role") else (lambda role: models)
    return {role: sampling_of(pick(role)) for role in roles}


def sampling_arguments(specs: dict[str, str]) -> dict[str, float | int]:
    """`ModelRoles.from_specs` keyword arguments from the sampling entries of a spec mapping (run.json's)."""
    return {key: (int(specs[key]) if key == "max_tokens" else float(specs[key]))
            for key in SAMPLING_KEYS if key in specs}
