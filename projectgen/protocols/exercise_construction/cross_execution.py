"""LiveRepoReflection's cross-execution: every generated test suite run on every generated solution.

`select_pair` reads the matrix. A pair whose run is an anomaly (timeout, build error, the harness failing)
is dropped, never counted. A suite's pass rate is the mean, over the solutions it ran on, of the share of
its tests they passed; a solution's, the mean over the suites. The suite with the *lowest* pass rate (the
most demanding) and the solution with the *highest* are kept. Programs at 0% (a suite no solution passes
any test of, a solution that passes no test of any suite) go to the human-review list: the test or the code
is wrong, and only a person can tell which. A suite at 0% is never the kept one (it would reject every
solution); the kept pair must pass in full, or the exercise goes to human review. Ties keep the drafter
listed first.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from projectgen.construction.execution import Execution


@dataclass(frozen=True)
class PairSelection:
    """What the matrix decided: the kept test suite and solution (None: no usable pair), the pass rates, the
    dropped pairs and the programs for a person to look at."""

    test: str | None
    solution: str | None
    test_rates: dict[str, float] = field(default_factory=dict)
    solution_rates: dict[str, float] = field(default_factory=dict)
    anomalies: dict[str, str] = field(default_factory=dict)  # "test x solution" -> why it was dropped
    human_review: list[str] = field(default_factory=list)  # "test <id>: ..." / "solution <id>: ..." / why no pair
    reason: str | None = None  # why no pair was kept

    def to_dict(self) -> dict[str, object]:
        return {"test": self.test, "solution": self.solution, "test_rates": self.test_rates,
                "solution_rates": self.solution_rates, "anomalies": self.anomalies,
                "human_review": self.human_review, "reason": self.reason}


def pair_key(test: str, solution: str) -> str:
    return f"{test} x {solution}"


def select_pair(tests: Sequence[str], solutions: Sequence[str],
                matrix: Mapping[tuple[str, str], Execution]) -> PairSelection:
    """The kept (test, solution) of a cross-execution matrix (see the module docstring); `matrix` maps
    (test id, solution id) to that pair's run, in the order of `tests` and `solutions`."""
    anomalies = {pair_key(t, s): run.anomaly for (t, s), run in matrix.items() if run.anomaly is not None}
    usable = {(t, s): run for (t, s), run in matrix.items() if run.anomaly is None}
    test_rates = {t: _mean([run.pass_rate for (tt, _), run in usable.items() if tt == t]) for t in tests
                  if any(tt == t for tt, _ in usable)}
    solution_rates = {s: _mean([run.pass_rate for (_, ss), run in usable.items() if ss == s]) for s in solutions
                      if any(ss == s for _, ss in usable)}
    review = [f"test {t}: no solution passes any of its tests" for t, rate in test_rates.items() if rate == 0.0]
    review += [f"solution {s}: passes no test of any suite" for s, rate in solution_rates.items() if rate == 0.0]
    candidates = [t for t in tests if test_rates.get(t, 0.0) > 0.0]
    ranked = [s for s in solutions if s in solution_rates]
    if not candidates or not ranked:
        reason = "no test suite and solution ran together without an anomaly" if not usable else \
            "no test suite passes on any solution"
        return PairSelection(None, None, test_rates, solution_rates, anomalies, [*review, reason], reason)
    test = min(candidates, key=lambda t: (test_rates[t], tests.index(t)))
    solution = max(ranked, key=lambda s: (solution_rates[s], -solutions.index(s)))
    run = usable.get((test, solution))
    if run is None or not run.all_passed:
        reason = f"the kept solution {solution} does not pass the kept test suite {test} in full"
        return PairSelection(None, None, test_rates, solution_rates, anomalies, [*review, reason], reason)
    return PairSelection(test, solution, test_rates, solution_rates, anomalies, review)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
