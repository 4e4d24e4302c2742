"""What construction's models draft and what it derives from a draft, shared by the construction protocols and the
check-tests tool: files by a safe path (`FilesDraft`) and the stubs of a Python solution (`python_stubs`)."""
from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field, field_validator

from projectgen.errors import ProjectGenError
from projectgen.repository import safe_relpath


def safe_path(path: str) -> str:
    """A drafted path inside its project, as a pydantic validator reports it (a ValueError at the field)."""
    try:
        return safe_relpath(path)
    except ProjectGenError as error:
        raise ValueError(str(error)) from None


def safe_paths(files: dict[str, str]) -> dict[str, str]:
    """Drafted files by their safe paths (`safe_path`)."""
    return {safe_path(path): text for path, text in files.items()}


class FilesDraft(BaseModel):
    """What a test writer or a solution writer returns: files by path in the project folder."""

    files: dict[str, str] = Field(min_length=1)

    @field_validator("files")
    @classmethod
    def _safe_paths(cls, value: dict[str, str]) -> dict[str, str]:
        return safe_paths(value)


def python_stubs(solution: Mapping[str, str], project: str) -> dict[str, str]:
    """Stubs of a Python solution's files: signatures, docstrings and `pass` bodies."""
    from projectgen.ssat import render_stub, ssat_from_repository

    python = {path: text for path, text in solution.items() if path.endswith(".py")}
    if not python:
        return {}
    tree = ssat_from_repository(python, project)
    return {node.path: render_stub(node) for node in tree.file_nodes}
