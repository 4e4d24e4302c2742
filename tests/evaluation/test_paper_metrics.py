"""Known-answer tests: ProjectGen's #Pass SUM and AVG_weighted, recomputed from the paper's own cells.

The tables are in ../shared/paper_tables (skipped when absent); its README states the formulas
and which printed cells are typos (none of the cells used here).
"""
from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

import pytest

from projectgen.evaluation.metrics import TaskScore, loc_weighted_average, summarize

from test_support import paper_table


def half_unit(printed: str) -> float:
    """Half a unit in the last printed digit: how far a correct value may be from what was printed."""
    exponent = Decimal(printed).as_tuple().exponent
    return 0.5 * 10.0 ** exponent


def pass_groups(name: str) -> dict[tuple[str, str], dict[str, dict[str, str]]]:
    """(backbone, method) -> task (or SUM / AVG_weighted) -> row."""
    groups: dict[tuple[str, str], dict[str, dict[str, str]]] = defaultdict(dict)
    for row in paper_table(name):
        groups[(row["backbone"], row["method"])][row["task"]] = row
    return groups


@pytest.mark.parametrize("name, tasks, total_tests", [
    ("projectgen_table3_devbench_pass.csv", 10, 124),
    ("projectgen_table5_codeprojecteval_pass.csv", 18, 3348),
])
def test_sum_and_avg_weighted_of_every_method_and_backbone(name: str, tasks: int, total_tests: int) -> None:
    groups = pass_groups(name)
    assert groups, name
    for (backbone, method), rows in groups.items():
        cells = {task: row for task, row in rows.items() if task not in ("SUM", "AVG_weighted")}
        assert len(cells) == tasks, (backbone, method)
        scores = [TaskScore(task_id=task, passed=int(row["pass"]), total=int(row["tests"]), loc=int(row["loc"]))
                  for task, row in cells.items()]
        summary = summarize(scores)
        assert summary.passed == int(rows["SUM"]["pass"]), (backbone, method)
        assert summary.total == int(rows["SUM"]["tests"]) == total_tests
        printed = rows["AVG_weighted"]["pass"]
        assert abs(summary.avg_weighted - float(printed)) <= half_unit(printed), (backbone, method, summary)
        if summary.passed:  # the rate-weighted figure is a different quantity: not what the paper prints
            assert abs(summary.loc_weighted_pass_rate - float(printed)) > half_unit(printed)


def test_avg_weighted_known_examples() -> None:
    """The figures the issue quotes: DeepSeek-V3 ProjectGen on DevBench and GPT-4o ProjectGen on CodeProjectEval."""
    devbench = pass_groups("projectgen_table3_devbench_pass.csv")[("DeepSeek-V3", "ProjectGen")]
    rows = [r for t, r in devbench.items() if t not in ("SUM", "AVG_weighted")]
    assert round(loc_weighted_average((int(r["pass"]), int(r["loc"])) for r in rows), 2) == 3.78
    cpe = pass_groups("projectgen_table5_codeprojecteval_pass.csv")[("GPT-4o", "ProjectGen")]
    rows = [r for t, r in cpe.items() if t not in ("SUM", "AVG_weighted")]
    assert round(loc_weighted_average((int(r["pass"]), int(r["loc"])) for r in rows), 2) == 18.19
