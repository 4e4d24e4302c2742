"""`evaluate(protocol, dataset, models, settings, out)`: the one entry of every protocol.

The protocol is found by name (`registry.load_protocol`) or given; its settings are checked against its own
pydantic model (a wrong or unknown setting is one line); it then runs as its `batch` says, or one unit per
(model, sample) (`samples.run_samples`), over the batch engine and the driver: run the same call again and it
continues where it stopped. The per-protocol commands (`projectgen reflect`, ...) are presets of this call.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from projectgen.errors import ProjectGenError
from projectgen.experiments.models import ExperimentModel, parse_models
from projectgen.protocols.definition import BatchOptions, Evaluation, Protocol
from projectgen.protocols.registry import load_protocol
from projectgen.protocols.samples import run_samples


def typed_settings(protocol: Protocol, settings: BaseModel | Mapping[str, Any] | None) -> BaseModel:
    """The protocol's settings from its model or a mapping (CLI ``--set`` values), checked; one line when wrong."""
    if isinstance(settings, protocol.settings):
        return settings
    given = settings.model_dump() if isinstance(settings, BaseModel) else dict(settings or {})
    try:
        return protocol.settings.model_validate(given)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in error['loc']) or 'settings'}: {error['msg']}"
                             for error in exc.errors())
        raise ProjectGenError(f"protocol {protocol.name}: bad settings ({problems})") from None


def evaluate(protocol: Protocol | str, dataset: Path | str, models: Sequence[ExperimentModel | str],
             settings: BaseModel | Mapping[str, Any] | None, out: Path | str,
             options: BatchOptions | None = None) -> BaseModel:
    """Run `protocol` on `dataset` under every model with `settings`, into `out` (resumable); its results."""
    chosen = load_protocol(protocol) if isinstance(protocol, str) else protocol
    evaluation = Evaluation(dataset=Path(dataset), models=parse_models(models), settings=typed_settings(chosen, settings),
                            out=Path(out), options=options or BatchOptions())
    if chosen.batch is not None:
        return chosen.batch(evaluation)
    return run_samples(chosen, evaluation)
