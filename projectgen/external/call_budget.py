"""The call budget of an external system's run: how many model calls it may ask the bridge for.

Why a budget of calls and not only of tokens: a system that loops (an agent retrying a failing step) spends
calls whatever each costs, and the papers bound their baselines by iterations, not tokens. The door asks
``before_call()`` before every call it answers (fresh, or replayed from a killed run's call cache), so a
system started again over the same run folder is counted from its first call again and can never be
answered more than `max_calls` times in one run; a refused call is a `BudgetExceededError`, which the
bridge answers with HTTP 429 and the run records as budget-limited.
"""
from __future__ import annotations

import threading

from projectgen.llm.errors import BudgetExceededError
from projectgen.llm.usage import CallRecord


class CallBudget:
    """Answers at most `max_calls` calls; counts the ones it refused (the run's status says so)."""

    def __init__(self, max_calls: int) -> None:
        self.max_calls = max_calls
        self._asked = 0
        self._refused = 0
        self._lock = threading.Lock()

    @property
    def refused(self) -> int:
        with self._lock:
            return self._refused

    def before_call(self) -> None:
        with self._lock:
            if self._asked >= self.max_calls:
                self._refused += 1
                raise BudgetExceededError(f"call budget spent: {self.max_calls} model calls answered")
            self._asked += 1

    def check(self, record: CallRecord) -> None:
        """Counted before the call (`before_call`): a record changes nothing."""
