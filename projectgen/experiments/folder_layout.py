"""Where an experiment's pairs live below its folder: one shape, ``OUT/<method>/<model-slug>/<task-id>``, for
every method; the ledger keys a pair by that path.

Experiments begun before this layout put LiveCoder's pairs (the default method's) at ``OUT/<model-slug>/<task-id>``.
Their experiment.json names no layout; such a folder keeps its layout when continued, so its finished pairs are
found in the ledger and its interrupted runs resume where they are (nothing is moved).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from projectgen.errors import ProjectGenError

PAIR_LAYOUT = "method/model/task"  # every method's pairs at OUT/<method>/<model-slug>/<task-id>
LEGACY_LAYOUT = "model/task for livecoder"  # before: LiveCoder at OUT/<model-slug>/<task-id>, others as above
LAYOUTS = (PAIR_LAYOUT, LEGACY_LAYOUT)
LEGACY_METHOD = "livecoder"  # the method the legacy layout put one level higher


def pair_key(model: str, task_id: str, method: str = LEGACY_METHOD, layout: str = PAIR_LAYOUT) -> str:
    """A unit's ledger key and folder path below the experiment folder: ``<method>/<model-slug>/<task-id>``;
    in a folder of the legacy layout, ``<model-slug>/<task-id>`` for LiveCoder."""
    if layout not in LAYOUTS:
        raise ProjectGenError(f"unknown experiment folder layout {layout!r} (known: {', '.join(LAYOUTS)})")
    if layout == LEGACY_LAYOUT and method == LEGACY_METHOD:
        return f"{model}/{task_id}"
    return f"{method}/{model}/{task_id}"


def folder_layout(config: Mapping[str, Any]) -> str:
    """The layout an experiment.json records; one written before layouts were recorded is the legacy one."""
    layout = config.get("layout", LEGACY_LAYOUT)
    if layout not in LAYOUTS:
        raise ProjectGenError(f"experiment.json names an unknown folder layout {layout!r} (known: "
                              f"{', '.join(LAYOUTS)}); was it written by a newer projectgen?")
    return layout
