"""Which command a batch folder belongs to: an `--out` made by another command is refused.

Every batch command (experiment, reflect, refine, bench-reference) keeps a ledger in its folder, and
a ledger's lines mean something only to the command that wrote them: `reflect --out` onto an
experiment folder would mix the two ledgers and replace its results.json. Each command claims its
folder with a marker naming it; folders from before the marker are told apart by their config file.
"""
from __future__ import annotations

from pathlib import Path

from projectgen.errors import ProjectGenError
from projectgen.runs import layout
from projectgen.runs.layout import RunLayout

# folders written before the marker: the config file only one command writes
_CONFIG_OF = {layout.EXPERIMENT_CONFIG: "experiment", "reflect.json": "reflect"}


def folder_kind(folder: Path) -> str | None:
    """The command whose folder this is (a run folder is "run"), or None for a folder no command claimed."""
    marker = folder / layout.BATCH_KIND
    if marker.is_file():
        return marker.read_text(encoding="utf-8").strip() or None
    for name, kind in _CONFIG_OF.items():
        if (folder / name).is_file():
            return kind
    if RunLayout(folder).manifest.is_file():
        return "run"
    return None


def claim_batch_folder(folder: Path, kind: str) -> None:
    """Mark `folder` as `kind`'s, or refuse it in one line when another command made it."""
    found = folder_kind(folder)
    if found is not None and found != kind:
        raise ProjectGenError(f"{folder} was made by `projectgen {found}`, not `projectgen {kind}`: its ledger and "
                              "results are another command's; choose another --out")
    folder.mkdir(parents=True, exist_ok=True)
    if found is None:
        (folder / layout.BATCH_KIND).write_text(kind + "\n", encoding="utf-8")
