"""The bundled protocols' names: every folder of this package with a ``protocol.py``, found by `pkgutil` (a new
protocol edits no shared list) and without importing any (the CLI lists them in `--help`, which stays fast)."""
from __future__ import annotations

import pkgutil
from pathlib import Path

PACKAGE = "projectgen.protocols"
DEFINING_MODULE = "protocol"  # the module of a protocol folder that defines PROTOCOL


def protocol_names() -> list[str]:
    """The names of the bundled protocols (their folders), sorted."""
    folder = Path(__file__).parent
    return sorted(info.name for info in pkgutil.iter_modules([str(folder)])
                  if info.ispkg and (folder / info.name / f"{DEFINING_MODULE}.py").is_file())
