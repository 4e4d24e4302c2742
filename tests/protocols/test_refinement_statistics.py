"""SR-Eval's Table 1 of a multi-turn dataset (`projectgen refine --stats`), on the bundled tasks: a row per level and
language, counted from the task folders as read here from disk, and a Total row that sums and averages over all
questions. Before it, no command gave Table 1 at all."""
from __future__ import annotations

import json
import math

import pytest

from projectgen.cli import main
from projectgen.datasets.multiturn import bundled_dataset_dir, load_multiturn_dataset
from projectgen.protocols.refinement.statistics import statistics_rows


def mean(values: list[int]) -> float:
    return math.fsum(values) / len(values)


def test_a_row_per_level_and_language_and_a_total_over_every_question() -> None:
    tasks, errors = load_multiturn_dataset(bundled_dataset_dir())
    assert errors == {}
    rows = {(row.level, row.language): row for row in statistics_rows(tasks)}
    assert list(rows) == [("function", "java"), ("function", "python"), ("repository", "python"), ("Total", "")]
    # the Java task counted apart from the Python ones, from its files as they are on disk
    turns = sorted((bundled_dataset_dir() / "grades" / "turns").iterdir())
    java = rows[("function", "java")]
    assert (java.tasks, java.repos, java.questions_total) == (1, None, len(turns))
    assert java.char_question == pytest.approx(mean([len((t / "requirement.md").read_text().strip()) for t in turns]))
    assert java.line_code == pytest.approx(mean([len((t / "reference.java").read_text().splitlines()) for t in turns]))
    assert java.char_test == pytest.approx(mean([sum(len(f.read_text()) for f in (t / "tests").iterdir())
                                                 for t in turns]))
    # kvstore-cli and kvstore-counter are cut from one repository
    assert rows[("repository", "python")].repos == 1 and rows[("repository", "python")].tasks == 2
    total = rows[("Total", "")]
    groups = [row for key, row in rows.items() if key[0] != "Total"]
    assert total.tasks == sum(row.tasks for row in groups) == len(tasks)
    assert total.questions_total == sum(row.questions_total for row in groups)
    assert total.questions_avg == pytest.approx(total.questions_total / total.tasks)
    assert (total.questions_min, total.questions_max) == (min(r.questions_min for r in groups),
                                                          max(r.questions_max for r in groups))
    assert total.char_code == pytest.approx(math.fsum(r.char_code * r.questions_total for r in groups)
                                            / total.questions_total)  # a mean over every question, not over rows


def test_the_command_prints_the_table_and_its_json_without_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["refine", "--dataset", "examples", "--stats", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    document = json.loads(out)
    assert [row["level"] for row in document["rows"]] == ["function", "function", "repository", "Total"]
    assert "without the code context SR-Eval adds" in document["measures"]["question"]
    code = main(["refine", "--dataset", "examples", "--stats", "--tasks", "roman,grades"])
    out = capsys.readouterr().out
    assert code == 0 and "SR-Eval Table 1" in out and "│ repository" not in out and "│ java" in out, out
