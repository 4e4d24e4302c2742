"""A task that does not load keeps its published #Tests in SUM, 0 passed, instead of dropping out of it."""
from __future__ import annotations

from pathlib import Path

from projectgen.experiments.experiment import record_load_errors
from projectgen.experiments.figures import PairResult
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.models import ExperimentModel
from projectgen.experiments.results import summarize_pairs
from projectgen.experiments.spec import ExperimentSpec

MODEL = ExperimentModel("reference", "reference")


def loaded_pair(task_id: str, passed: int, total: int) -> PairResult:
    return PairResult(key=f"reference/{task_id}", model="reference", spec="reference", task_id=task_id,
                      status="finished", loc=100, final_unit_passed=passed, final_unit_total=total,
                      unit_denominator="published")


def test_a_published_task_that_does_not_load_keeps_its_tests_in_sum(tmp_path: Path) -> None:
    spec = ExperimentSpec(dataset=tmp_path / "DevBench", models=(MODEL,))
    errors = {"chakin": "config.json: invalid JSON", "not-in-the-paper": "config.json: invalid JSON"}
    unloaded = record_load_errors(Ledger(tmp_path / "ledger.jsonl"), spec, errors, formats={"devbench"})
    by_task = {pair.task_id: pair for pair in unloaded}
    assert (by_task["chakin"].final_unit_passed, by_task["chakin"].final_unit_total) == (0, 1)  # Table 3: chakin 1
    assert by_task["not-in-the-paper"].final_unit_total is None  # no count to keep: an error row, exit non-zero
    report = summarize_pairs(MODEL, [loaded_pair("lice", 20, 20), *unloaded], attempts=1)
    assert (report.final.passed, report.final.total, report.final.errors) == (20, 21, 2)
    assert report.final.denominators == ["published"]


def test_under_the_reference_denominator_nothing_is_kept(tmp_path: Path) -> None:
    spec = ExperimentSpec(dataset=tmp_path / "DevBench", models=(MODEL,), denominator="reference")
    [pair] = record_load_errors(Ledger(tmp_path / "ledger.jsonl"), spec, {"chakin": "broken"}, formats={"devbench"})
    assert pair.final_unit_total is None
