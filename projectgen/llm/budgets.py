"""Budgets that stop a run before it spends too much: tokens, dollars, or several at once.

The door hands every `CallRecord` to its budget's `check` (which may raise
`BudgetExceededError`) and asks ``before_call()`` before each fresh call.
"""
from __future__ import annotations

import threading
from typing import Protocol

from projectgen.errors import ProjectGenError
from projectgen.llm.errors import BudgetExceededError
from projectgen.llm.pricing import PriceTable, format_usd
from projectgen.llm.usage import CallRecord


class Budget(Protocol):
    """Anything that can veto spending: `check` sees every record and may raise `BudgetExceededError`.

    It may also define ``before_call() -> None`` to refuse a call before it is made.
    """

    def check(self, record: CallRecord) -> None: ...


class TokenBudget:
    """Stops a run once the tokens of the calls it has checked exceed `max_tokens`."""

    def __init__(self, max_tokens: int, used: int = 0) -> None:
        """`used` carries over what a resumed run had already spent."""
        self.max_tokens = max_tokens
        self._used = used
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        with self._lock:
            return self._used

    def before_call(self) -> None:
        with self._lock:
            if self._used > self.max_tokens:
                raise BudgetExceededError(f"token budget spent: {self._used} of {self.max_tokens} tokens used")

    def check(self, record: CallRecord) -> None:
        with self._lock:
            self._used += record.total_tokens
            used = self._used
        if used > self.max_tokens:
            raise BudgetExceededError(f"token budget exceeded: {used} > {self.max_tokens} tokens "
                                      f"(last call: role={record.role}, stage={record.stage})")


class AllBudgets:
    """Several budgets at once (say tokens and dollars): a call is refused when any one refuses it.

    Every budget sees every record, so each keeps its own count even after another one trips.
    """

    def __init__(self, *budgets: Budget) -> None:
        self.budgets = tuple(budgets)

    def before_call(self) -> None:
        for budget in self.budgets:
            before_call = getattr(budget, "before_call", None)
            if before_call is not None:
                before_call()

    def check(self, record: CallRecord) -> None:
        refusal: BudgetExceededError | None = None
        for budget in self.budgets:
            try:
                budget.check(record)
            except BudgetExceededError as exc:
                refusal = refusal or exc
        if refusal is not None:
            raise refusal



class CostBudget:
    """Stops a run once the priced calls it has checked cost more than `max_usd`.

    A `Budget`. Calls whose model has no price count as 0 but are
    counted in `unpriced_calls` (and their models in `unpriced_models`) so a report can say
    the budget did not see them.
    """

    def __init__(self, max_usd: float, prices: PriceTable | None = None, spent: float = 0.0) -> None:
        """`spent` carries over what a resumed run had already cost."""
        if max_usd < 0:
            raise ProjectGenError(f"a cost budget must be 0 or more dollars, got {max_usd}")
        self.max_usd = float(max_usd)
        self.prices = prices if prices is not None else PriceTable.default()
        self._spent = float(spent)
        self._unpriced = 0
        self._unpriced_models: set[str] = set()
        self._lock = threading.Lock()

    @property
    def spent(self) -> float:
        with self._lock:
            return self._spent

    @property
    def unpriced_calls(self) -> int:
        with self._lock:
            return self._unpriced

    @property
    def unpriced_models(self) -> set[str]:
        with self._lock:
            return set(self._unpriced_models)

    def before_call(self) -> None:
        with self._lock:
            if self._spent > self.max_usd:
                raise BudgetExceededError(f"cost budget spent: {format_usd(self._spent)} of "
                                          f"{format_usd(self.max_usd)} used")

    def check(self, record: CallRecord) -> None:
        cost = self.prices.cost_of(record)
        with self._lock:
            if cost is None:
                self._unpriced += 1
                self._unpriced_models.add(record.model)
            else:
                self._spent += cost
            spent = self._spent
            unpriced = self._unpriced
        if spent > self.max_usd:
            note = f"; {unpriced} call(s) without a price not counted" if unpriced else ""
            raise BudgetExceededError(f"cost budget exceeded: {format_usd(spent)} > {format_usd(self.max_usd)} "
                                      f"(last call: role={record.role}, stage={record.stage}, "
                                      f"model={record.model}{note})")
