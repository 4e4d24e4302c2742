"""Evolve's scorers: what evolve.json records of a finished run, computed inside the run (never after it).

The check tests split into the change's and the earlier requirements' (regression tests), the kept files
compared byte for byte with the base's, and the generator calls per file (a kept file should cost none)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from projectgen.evaluation.report import TestReport
from projectgen.llm import CallRecord
from projectgen.protocols.evolve.graph import EvolutionPlan
from projectgen.protocols.evolve.task import CHECK_DIR

GENERATOR_ROLES = ("skeleton", "coder")  # the calls that write one file (judges review a stage as a whole)


class CheckCounts(BaseModel):
    passed: int = 0
    total: int = 0


def check_counts(check: TestReport, new_tests: Sequence[str]) -> dict[str, CheckCounts]:
    """``check_new`` (the change's test files) and ``check_regression`` (every other check test): passed and total,
    a collection error counting as a test that did not pass."""
    new = {f"{CHECK_DIR}/{name}" for name in new_tests}
    groups = {"check_new": CheckCounts(), "check_regression": CheckCounts()}
    for test in check.tests:
        group = groups["check_new" if test.nodeid.split("::")[0] in new else "check_regression"]
        group.total += 1
        group.passed += test.outcome.value == "passed"
    for error in check.collection_errors:
        groups["check_new" if error.nodeid.split("::")[0] in new else "check_regression"].total += 1
    return groups


def kept_files(plan: EvolutionPlan, repository: Mapping[str, str | None],
               base: Mapping[str, str]) -> dict[str, Any]:
    """Whether every file the plan keeps is byte-identical to the base's, and the ones that are not."""
    changed = sorted(path for path in plan.kept if repository.get(path) != base.get(path))
    return {"kept_identical": not changed, "changed_kept_files": changed}


def generator_calls(records: Sequence[CallRecord], plan: EvolutionPlan | None) -> dict[str, Any]:
    """The skeleton and coder calls per file, and the kept files any of them was made on."""
    calls: dict[str, int] = {}
    for call in records:
        if call.role in GENERATOR_ROLES and call.target and call.error is None:
            calls[call.target] = calls.get(call.target, 0) + 1
    return {"generator_calls": dict(sorted(calls.items())),
            "calls_on_kept_files": sorted(set(calls) & set(plan.kept if plan else []))}


def evolve_scores(state: Mapping[str, Any], plan: EvolutionPlan | None, check: TestReport | None,
                  new_tests: Sequence[str], base_repository: Mapping[str, str],
                  records: Sequence[CallRecord]) -> dict[str, Any]:
    """evolve.json's results of a run's final `state`: every scorer above that applies."""
    results: dict[str, Any] = {}
    if check is not None:
        results.update(check_counts(check, new_tests))
    if plan is not None:
        results.update(kept_files(plan, state.get("repository") or {}, base_repository))
    results.update(generator_calls(records, plan))
    return results
