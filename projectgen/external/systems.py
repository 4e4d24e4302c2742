"""systems.toml: the external systems projectgen can run as experiment methods, one typed entry each.

Why a file and not code: adding a system (its pins, its documents, its adapter) must not touch the run
path. Each table of systems.toml is one system; `load_systems` reads and checks every entry at once,
so a typo is one line naming the system and the key, before any environment is built. An entry whose
`adapter` is empty is known but cannot run yet (`SystemEntry.not_ready` says why): naming it as a
method is refused before anything runs. ``$PROJECTGEN_SYSTEMS_FILE`` names another systems file (a
user's own systems, or a test's), whose adapters are relative to its own folder.
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from projectgen.errors import ProjectGenError

SYSTEMS_FILE = Path(__file__).resolve().parent / "systems.toml"
SYSTEMS_FILE_VARIABLE = "PROJECTGEN_SYSTEMS_FILE"
Source = Literal["pypi", "checkout"]
SOURCES: tuple[str, ...] = ("pypi", "checkout")
# The documents a system may be given: the file name it gets -> the task's `Documents` field.
DOCUMENT_FIELDS: Mapping[str, str] = MappingProxyType({
    "PRD.md": "prd", "UML_class.md": "uml_class", "UML_sequence.md": "uml_sequence",
    "architecture_design.md": "architecture_design"})
# The task's visible check tests, under DOCS/check_tests (OpenEvolve scores its programs on them while it
# evolves; the unit tests that score the result are never given).
CHECK_TESTS = "check_tests"
DEFAULT_TIMEOUT_S = 3600.0
DEFAULT_MAX_CALLS = 200
NAME = re.compile(r"^[a-z][a-z0-9-]*$")
KEYS = frozenset({"label", "source", "requirements", "requirements_file", "python", "distribution", "adapter",
                  "prepare", "documents", "max_iterations", "env", "timeout_s", "max_calls", "not_ready"})


@dataclass(frozen=True)
class SystemEntry:
    """One system of systems.toml (docs/external-systems.md describes every key)."""

    name: str
    label: str
    source: Source
    requirements: tuple[str, ...]
    requirements_file: str
    python: str
    distribution: str
    adapter: str  # relative to `root`; "" = no adapter yet
    prepare: tuple[tuple[str, ...], ...]
    documents: tuple[str, ...]
    max_iterations: int
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_calls: int = DEFAULT_MAX_CALLS
    not_ready: str = ""  # why the system cannot run yet (with an empty adapter)
    root: Path = SYSTEMS_FILE.parent  # the systems file's folder (projectgen/external/ for the bundled one)

    @property
    def adapter_path(self) -> Path:
        return self.root / self.adapter

    def adapter_sha256(self) -> str:
        """The hash of what runs as the adapter: its file, then each module of its folder it imports (the
        shared `contract.py`). run.json records it, so a change to either shows in the run's record and
        refuses a continue. An adapter that imports nothing beside it hashes as its file alone."""
        digest = hashlib.sha256(self.adapter_path.read_bytes())
        for module in sibling_imports(self.adapter_path):
            digest.update(b"\0" + module.name.encode() + b"\0" + module.read_bytes())
        return digest.hexdigest()

    def check_runnable(self, system_path: Path | None) -> None:
        """Refuse, in one line, a system that cannot run: no adapter yet, or a checkout system without
        --system-path (or with a path that is no folder)."""
        if not self.adapter:
            raise ProjectGenError(f"external system {self.name} cannot run yet: {self.not_ready or 'no adapter'}")
        if not self.adapter_path.is_file():
            raise ProjectGenError(f"external system {self.name}: its adapter {self.adapter_path} is missing")
        if self.source == "checkout":
            if system_path is None:
                raise ProjectGenError(f"external system {self.name} runs from a checkout of its repository: "
                                      f"pass --system-path DIR")
            if not system_path.is_dir():
                raise ProjectGenError(f"--system-path {system_path}: not a folder")
            if self.requirements_file and not (system_path / self.requirements_file).is_file():
                raise ProjectGenError(f"--system-path {system_path}: no {self.requirements_file} there (the "
                                      f"checkout of {self.name} names it)")


def sibling_imports(script: Path) -> list[Path]:
    """The modules beside `script` that it imports, directly or through one another, by file name: run as
    ``python SCRIPT``, its folder is first on sys.path, so these are what an ``import NAME`` loads."""
    found: dict[str, Path] = {}
    pending = [script]
    while pending:
        source = pending.pop()
        try:
            tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
        except (OSError, SyntaxError, ValueError) as exc:
            raise ProjectGenError(f"adapter module {source}: unreadable ({type(exc).__name__}: {exc})") from None
        names = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
        names |= {node.module.split(".")[0] for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and node.module and not node.level}
        for name in names:
            module = script.parent / f"{name}.py"
            if name not in found and module.is_file() and module != script:
                found[name] = module
                pending.append(module)
    return [found[name] for name in sorted(found)]


def systems_file() -> Path:
    """The systems file in use: ``$PROJECTGEN_SYSTEMS_FILE``, else the bundled one."""
    named = os.environ.get(SYSTEMS_FILE_VARIABLE)
    return Path(named).resolve() if named else SYSTEMS_FILE


def load_systems(path: Path | None = None) -> dict[str, SystemEntry]:
    """Every entry of the systems file (default: `systems_file()`), checked; a bad one is one line naming it."""
    path = path or systems_file()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ProjectGenError(f"{path}: unreadable ({exc})") from None
    return {name: _entry(path, name, table) for name, table in data.items()}


def _entry(path: Path, name: str, table: Any) -> SystemEntry:
    where = f"{path.name} [{name}]"
    if not isinstance(table, dict):
        raise ProjectGenError(f"{where}: not a table")
    if not NAME.match(name):
        raise ProjectGenError(f"{where}: a system's name is lower-case letters, digits and '-' (a method name)")
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ProjectGenError(f"{where}: unknown key(s) {', '.join(unknown)} (keys: {', '.join(sorted(KEYS))})")

    def text(key: str, default: str | None = None) -> str:
        value = table.get(key, default)
        if not isinstance(value, str):
            raise ProjectGenError(f"{where}: {key} must be a string" + ("" if default is not None else " (required)"))
        return value

    def texts(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise ProjectGenError(f"{where}: {key} must be a list of non-empty strings")
        return tuple(value)

    def number(key: str, default: float, kind: type) -> Any:
        value = table.get(key, default)
        wrong_kind = isinstance(value, bool) or not isinstance(value, int if kind is int else (int, float))
        if wrong_kind or value < 0:
            raise ProjectGenError(f"{where}: {key} must be a non-negative {kind.__name__}")
        return kind(value)

    source = text("source")
    if source not in SOURCES:
        raise ProjectGenError(f"{where}: source must be one of {', '.join(SOURCES)}, not {source!r}")
    requirements_file = text("requirements_file", "")
    if requirements_file and source != "checkout":
        raise ProjectGenError(f"{where}: requirements_file is read from a checkout (source = \"checkout\")")
    prepare = table.get("prepare", [])
    if not isinstance(prepare, list) or not all(isinstance(step, list) and step and all(
            isinstance(arg, str) for arg in step) for step in prepare):
        raise ProjectGenError(f"{where}: prepare must be a list of argument lists (each run with the env's python)")
    documents = texts("documents") or ("PRD.md",)
    unknown_documents = [name for name in documents if name not in DOCUMENT_FIELDS and name != CHECK_TESTS]
    if unknown_documents:
        raise ProjectGenError(f"{where}: unknown document(s) {', '.join(unknown_documents)} (documents: "
                              f"{', '.join([*DOCUMENT_FIELDS, CHECK_TESTS])})")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(value, str) for value in env.values()):
        raise ProjectGenError(f"{where}: env must be a table of strings")
    adapter = text("adapter")
    if adapter and (Path(adapter).is_absolute() or ".." in Path(adapter).parts or not adapter.endswith(".py")):
        raise ProjectGenError(f"{where}: adapter must be a .py file below the systems file's folder")
    not_ready = text("not_ready", "")
    if not adapter and not not_ready:
        raise ProjectGenError(f"{where}: an entry without an adapter says why (not_ready)")
    max_calls = number("max_calls", DEFAULT_MAX_CALLS, int)
    timeout = number("timeout_s", DEFAULT_TIMEOUT_S, float)
    if max_calls < 1 or timeout <= 0:
        raise ProjectGenError(f"{where}: max_calls and timeout_s must be positive")
    return SystemEntry(
        name=name, label=text("label"), source=source,  # type: ignore[arg-type]
        requirements=texts("requirements"), requirements_file=requirements_file, python=text("python", ""),
        distribution=text("distribution", ""), adapter=adapter,
        prepare=tuple(tuple(step) for step in prepare), documents=documents,
        max_iterations=number("max_iterations", 0, int), env=MappingProxyType(dict(env)), timeout_s=timeout,
        max_calls=max_calls, not_ready=not_ready, root=path.parent)


def system_names(path: Path | None = None) -> tuple[str, ...]:
    """The systems' names: each is an experiment method."""
    return tuple(load_systems(path))


def describe_system(name: str, path: Path | None = None) -> SystemEntry:
    """The entry called `name`; an unknown one is one line."""
    systems = load_systems(path)
    if name not in systems:
        raise ProjectGenError(f"unknown external system {name!r} (systems: {', '.join(systems)})")
    return systems[name]
