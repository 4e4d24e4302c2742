"""Lazy re-exports: a package names its public API without importing it.

`import projectgen` and the CLI's start-up stay fast; a name's defining module (and the
heavy libraries it needs: LangChain, LangGraph, Chroma, pydantic) is imported on first use.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module-level ``__getattr__`` and ``__dir__`` for `exports` (public name -> module)::

        __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(set(importlib.import_module(package).__dict__) | set(exports))

    return __getattr__, __dir__
