"""A task whose environment is incomplete is counted so wherever an experiment's figures appear: its row names
the cause, and the totals say they include it and what they are without it."""
from __future__ import annotations

from projectgen.experiments.figures import PairResult
from projectgen.experiments.models import ExperimentModel
from projectgen.experiments.results import ExperimentResults, summarize_pairs
from projectgen.experiments.tables import final_lines, pair_table, pass_table

NOTE = ("environment incomplete: model file not available offline: bert-base-uncased (vocab.txt) is not in the "
        "local Hugging Face cache")


def pair(task_id: str, passed: int, total: int, notes: list[str]) -> PairResult:
    return PairResult(key=f"m/{task_id}", model="m", spec="s", task_id=task_id, status="finished", loc=100,
                      final_unit_passed=passed, final_unit_total=total, unit_denominator="published",
                      environment_incomplete=notes)


def results_of(pairs: list[PairResult]) -> ExperimentResults:
    report = summarize_pairs(ExperimentModel("m", "s"), pairs, 1)
    fields = ExperimentResults.model_fields
    return ExperimentResults.model_construct(**{name: field.default for name, field in fields.items()
                                                if not field.is_required()}, models=[report])


def test_the_totals_say_which_tasks_are_environment_incomplete_and_the_figures_without_them() -> None:
    results = results_of([pair("TextCNN", 5, 10, [NOTE]), pair("lice", 6, 6, [])])
    final = results.models[0].final
    assert final.incomplete == ["TextCNN"]
    assert (final.passed, final.total) == (11, 16)  # the paper's #Tests stay the denominator
    assert (final.complete_passed, final.complete_total) == (6, 6)
    lines = final_lines(results.models[0])
    assert ("environment incomplete: 1 task(s) (TextCNN): tests there that no output can pass here are in SUM and "
            "AVG_weighted, not a model's failure (each row's note names the cause); over the 1 complete task(s): "
            "#Pass 6/6") in lines
    header, rows = pass_table(results)
    by_task = {row[0]: row for row in rows}
    assert header[-1] == "environment"
    assert by_task["TextCNN"][-1].startswith("incomplete: model file not available offline: bert-base-uncased")
    assert by_task["lice"][-1] == ""
    assert by_task["SUM"][-1] == "includes 1 environment-incomplete task(s)"
    assert results.summary[0].environment_incomplete == ["TextCNN"]  # results.json's summary says so too
    _, per_task = pair_table(results.models[0])
    assert {row[0]: row[-1] for row in per_task}["TextCNN"].startswith(NOTE)


def test_an_experiment_with_every_environment_complete_shows_no_such_line_or_column() -> None:
    results = results_of([pair("lice", 6, 6, [])])
    assert results.models[0].final.incomplete == []
    assert not any("environment incomplete" in line for line in final_lines(results.models[0]))
    header, _ = pass_table(results)
    assert "environment" not in header


def test_a_unit_run_cut_short_says_so_on_its_row() -> None:
    """bplustree's hidden tests timed out under load: its #Pass is marked, and the per-task note says why."""
    cut = pair("bplustree", 278, 356, []).model_copy(update={
        "unit_run_note": "the hidden unit tests timed out: 279 of 356 collected ran"})
    results = results_of([cut, pair("lice", 6, 6, [])])
    _, rows = pass_table(results)
    assert {row[0]: row[3] for row in rows}["bplustree"] == "278 (cut short)"
    assert {row[0]: row[3] for row in rows}["lice"] == "6"
    _, per_task = pair_table(results.models[0])
    assert {row[0]: row[-1] for row in per_task}["bplustree"] == "the hidden unit tests timed out: 279 of 356 collected ran"
