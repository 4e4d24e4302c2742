"""Semantic Software Architecture Tree (SSAT): the architecture passed between stages.

The architect model writes an SSAT as JSON; the skeleton and coder stages trust it.
So every name is checked to be a Python identifier, every path to stay inside the
repository, and every piece of source text (types, defaults, bases, decorators)
to be an expression that fits wherever the stub renderer puts it: for any SSAT that
validates, `render_stub` produces code that compiles.

Modules, each with one job (each imports only those before it):
    syntax       Python syntax read into plain data (parameters, module names)
    fields       field types: one name, path or piece of source text checked
    models       the tree's shape (SSAT, FileNode, ClassNode, ...) and cross-field rules
    validation   architect output in, a valid SSAT or readable problems out
    render       stubs that compile, tree and file views for prompts
    from_source  an SSAT derived from existing Python code
    diff         what changed between two SSATs
"""
from __future__ import annotations

from projectgen.ssat.diff import diff_ssat, render_diff
from projectgen.ssat.from_source import ssat_from_repository, unparsable_files
from projectgen.ssat.models import (
    SSAT,
    Attribute,
    ClassNode,
    FileNode,
    FunctionNode,
    GlobalCode,
    ModuleNode,
    Parameter,
)
from projectgen.ssat.render import render_file, render_stub, render_tree
from projectgen.ssat.validation import SSATValidationError, validate_ssat_json

__all__ = [
    "SSAT",
    "Attribute",
    "ClassNode",
    "FileNode",
    "FunctionNode",
    "GlobalCode",
    "ModuleNode",
    "Parameter",
    "SSATValidationError",
    "diff_ssat",
    "render_diff",
    "render_file",
    "render_stub",
    "render_tree",
    "ssat_from_repository",
    "unparsable_files",
    "validate_ssat_json",
]
