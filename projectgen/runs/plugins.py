"""A user's own code named by a spec string: ``package.module:factory`` or ``path/to/file.py:factory``.

`load_factory` imports the module and returns the named callable with its `PluginIdentity`: the spec
and a SHA-256 of the module's file. What a run records of user code is that identity, so a folder
continued with a changed module is refused rather than mixing results of two versions of it
(`projectgen.experiments.custom_arms`). The hash covers the one file that defines the factory, not the
modules it imports.

The module form imports like ``python -m`` does: the current directory is on the path, so
``examples.custom_method:factory`` works from the repository's root. The path form loads the file under a
module name derived from its path and content, so two versions of one file never share a module.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from projectgen.errors import ProjectGenError

MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class PluginIdentity:
    """What a run records of user code: the spec it was named by, the module's file and that file's hash."""

    spec: str
    file: str
    sha256: str

    def record(self) -> dict[str, str]:
        return {"spec": self.spec, "file": self.file, "sha256": self.sha256}


def is_plugin_spec(text: str) -> bool:
    """Whether `text` names user code (``module:factory`` or ``file.py:factory``) rather than a built-in name."""
    return ":" in text


def split_spec(spec: str) -> tuple[str, str]:
    """(module or file, attribute) of a spec; a malformed spec is one line."""
    where, _, attribute = spec.strip().rpartition(":")
    if not where or not attribute.isidentifier():
        raise ProjectGenError(f"bad plugin spec {spec!r}: give package.module:factory or path/to/file.py:factory")
    return where, attribute


def load_factory(spec: str) -> tuple[Callable[[], Any], PluginIdentity]:
    """The callable `spec` names and its identity; an unknown module, file or attribute is one line."""
    where, attribute = split_spec(spec)
    if where.endswith(".py"):
        file = Path(where).resolve()
        digest = file_digest(file, spec)  # before it is loaded: its module name carries the hash
        module = load_file_module(file, digest, spec)
    else:
        module = import_module(where, spec)
        file = Path(module.__file__ or "")
        digest = file_digest(file, spec)
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ProjectGenError(f"bad plugin spec {spec!r}: {where} has no callable {attribute!r}")
    return factory, PluginIdentity(spec=spec.strip(), file=str(file), sha256=digest)


def import_module(name: str, spec: str) -> ModuleType:
    """The module `name`, importable from the current directory as under ``python -m``."""
    if not MODULE_NAME.fullmatch(name):
        raise ProjectGenError(f"bad plugin spec {spec!r}: {name!r} is neither a module name nor a .py file")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())  # after the installed packages: a local file never shadows one
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise ProjectGenError(f"bad plugin spec {spec!r}: no module named {exc.name!r}") from None
    if getattr(module, "__file__", None) is None:
        raise ProjectGenError(f"bad plugin spec {spec!r}: {name} is a namespace package, not a module file")
    return module


def load_file_module(path: Path, digest: str, spec: str) -> ModuleType:
    """The module in the file `path` (absolute) whose content has the hash `digest`, loaded once per path and
    content (its name carries both)."""
    key = hashlib.sha256(f"{path}\0{digest}".encode()).hexdigest()[:16]
    name = f"projectgen_plugin_{re.sub(r'[^A-Za-z0-9_]', '_', path.stem)}_{key}"
    if name in sys.modules:
        return sys.modules[name]
    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise ProjectGenError(f"bad plugin spec {spec!r}: {path} cannot be loaded as a module")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module  # before it runs: dataclasses and pickling look their module up by name
    try:
        found.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def file_digest(path: Path, spec: str) -> str:
    """SHA-256 of a file's bytes; a missing or unreadable file is one line."""
    if not path.is_file():
        raise ProjectGenError(f"bad plugin spec {spec!r}: no file {path}")
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ProjectGenError(f"bad plugin spec {spec!r}: cannot read {path} ({exc.strerror or exc})") from None
