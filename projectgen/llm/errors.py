"""How a model call fails: for good (`ModelCallError`), by a budget's veto, or off the end of a script."""
from __future__ import annotations

from typing import TYPE_CHECKING

from projectgen.errors import ProjectGenError, error_line

if TYPE_CHECKING:
    from projectgen.llm.usage import CallRecord


class ModelCallError(ProjectGenError):
    """A model call failed for good (non-transient, or transient after the last retry)."""

    def __init__(self, message: str, *, record: CallRecord, cause: BaseException) -> None:
        super().__init__(message)
        self.record = record
        self.cause = cause


class BudgetExceededError(ProjectGenError):
    """A budget refused further spending; the run should stop cleanly, not retry."""


class ScriptExhaustedError(ProjectGenError):
    """The scripted model has no reply for a call; names the key so the script can be fixed."""

    def __init__(self, message: str, *, role: str | None, target: str | None, iteration: int | None) -> None:
        super().__init__(message)
        self.role = role
        self.target = target
        self.iteration = iteration


MODEL_FAILURES: tuple[type[BaseException], ...] = (ModelCallError, ScriptExhaustedError)
"""A model that keeps failing (after the door's retries, or at once when the error is not transient)."""


def model_failure_reason(exc: BaseException) -> str:
    """One line for run.json, summaries and the CLI: the error's class and its first line."""
    return f"model: {error_line(exc)}"
