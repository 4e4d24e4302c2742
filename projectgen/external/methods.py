"""External systems as experiment methods: which names are methods, and what an experiment plans for them.

Why here and not in `projectgen.runs.methods`: that catalogue is projectgen's own arms (graphs inside the
attempts); an external system is no graph, and the runs package must not depend on the systems file. The
experiment layer asks this module instead: every name of `projectgen.runs.methods.METHODS` and every system
of systems.toml is a method.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from projectgen.config import AttemptSettings
from projectgen.errors import ProjectGenError
from projectgen.external.systems import SystemEntry, load_systems
from projectgen.runs.methods import METHODS, method_attempt_settings


def experiment_methods() -> tuple[str, ...]:
    """Every method an experiment can run: projectgen's own, then the external systems."""
    return (*METHODS, *load_systems())


def is_external(name: str) -> bool:
    """Whether `name` is an external system (a name of systems.toml that is not one of projectgen's methods)."""
    return name not in METHODS and name in load_systems()


def external_entries(methods: tuple[str, ...]) -> dict[str, SystemEntry]:
    """The systems among `methods`, by name (the systems file is read only when some method is not projectgen's)."""
    if all(name in METHODS for name in methods):
        return {}
    systems = load_systems()
    return {name: systems[name] for name in methods if name not in METHODS and name in systems}


def system_paths_for(methods: tuple[str, ...], given: Mapping[str, str]) -> dict[str, Path]:
    """Each checkout system's --system-path among `methods`, every external method checked runnable (no adapter
    yet, a missing or wrong checkout: one line before anything runs); a path for no such method is refused."""
    entries = external_entries(methods)
    unused = [name for name in given if name not in entries or entries[name].source != "checkout"]
    if unused:
        raise ProjectGenError(f"--system-path for {', '.join(unused)}: not a checkout system among the methods")
    paths = {name: Path(path).resolve() for name, path in given.items()}
    for name, entry in entries.items():
        entry.check_runnable(paths.get(name))
    return paths


def parse_system_paths(values: list[str], methods: tuple[str, ...]) -> dict[str, str]:
    """``--system-path`` values: ``NAME=DIR`` each, or one bare ``DIR`` when one checkout system is named."""
    checkout = [name for name, entry in external_entries(methods).items() if entry.source == "checkout"]
    paths: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep:
            if len(checkout) != 1:
                raise ProjectGenError(f"--system-path {value}: say which system it is for (NAME=DIR); checkout "
                                      f"systems among the methods: {', '.join(checkout) or 'none'}")
            name, path = checkout[0], value
        if name in paths:
            raise ProjectGenError(f"--system-path given twice for {name}")
        paths[name] = path
    return paths


def planned_attempts(name: str, attempt_settings: AttemptSettings) -> int:
    """The attempts a run of method `name` plans: an external system's run is one attempt (also one no longer in
    the systems file, whose pairs an experiment folder may still hold)."""
    if name not in METHODS:
        return 1
    return method_attempt_settings(name, attempt_settings).attempts
