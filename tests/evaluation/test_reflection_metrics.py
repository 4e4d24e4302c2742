"""LiveRepoReflection's figures: Pass@k, Fix Weight, Well Format and the All column, against its own tables.

The tables are in ../shared/paper_tables (skipped when absent); its README gives the formulas and the
printed cells that are typos. The known-answer tests recompute every cell the formulas cover and
require the mismatches to be exactly those typos: a formula that is off fails on many cells, and
one that is right finds no others.
"""
from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

import pytest

from projectgen.protocols.reflection.metrics import (
    ALL,
    PAPER_TEST_COUNTS,
    TaskOutcome,
    by_language,
    figures,
    fix_weight,
    pass_at,
    pass_at_curve,
    weighted_all,
    well_formed_rate,
)

from test_support import paper_table

LANGUAGES = ("Python", "Java", "Cpp", "Rust", "Go", "JavaScript")
TABLES = ("liverepo_table1_fullfile.csv", "liverepo_table2_patch.csv")
# The printed cells the README lists as typos: (table, model, language, metric).
FW_TYPOS = {
    ("liverepo_table1_fullfile.csv", "Qwen3-8B-Instruct Think", "JavaScript"),
    ("liverepo_table1_fullfile.csv", "Qwen3-32B-Instruct Think", "JavaScript"),
    ("liverepo_table2_patch.csv", "GPT-4.1-mini-2025-04-14", "JavaScript"),
}
ALL_TYPOS = {
    ("liverepo_table2_patch.csv", "o1-mini-2024-09-12", "P1"),
    ("liverepo_table2_patch.csv", "Doubao-1-5-Thinking-pro-m-250415", "WF"),
}


def half_unit(printed: str) -> float:
    """Half a unit in the last printed digit (``100`` -> 0.5, ``68.1`` -> 0.05)."""
    return 0.5 * 10.0 ** Decimal(printed).as_tuple().exponent


def cells(name: str) -> dict[str, dict[tuple[str, str], str]]:
    """model -> (language, metric) -> the printed value (empty cells left out)."""
    table: dict[str, dict[tuple[str, str], str]] = defaultdict(dict)
    for row in paper_table(name):
        if row["value"]:
            table[row["model"]][(row["language"], row["metric"])] = row["value"]
    return table


def fw_interval(p1: str, p2: str) -> tuple[float, float]:
    """The FW values the printed P1 and P2 allow (each within half a unit of what is printed)."""
    if float(p2) == 0:
        return 0.0, 0.0
    p1_lo, p1_hi = float(p1) - half_unit(p1), float(p1) + half_unit(p1)
    p2_lo, p2_hi = float(p2) - half_unit(p2), float(p2) + half_unit(p2)
    low = max(0.0, fix_weight(min(p1_hi, p2_lo), p2_lo))  # FW falls with P1 and rises with P2
    return low, fix_weight(max(p1_lo, 0.0), p2_hi)


@pytest.mark.parametrize("name", TABLES)
def test_fix_weight_of_every_printed_cell_but_the_known_typos(name: str) -> None:
    checked, wrong = 0, set()
    for model, row in cells(name).items():
        for language in (*LANGUAGES, ALL):
            if (language, "FW") not in row:
                continue  # truncated in the source
            printed = row[(language, "FW")]
            low, high = fw_interval(row[(language, "P1")], row[(language, "P2")])
            checked += 1
            if not low - half_unit(printed) <= float(printed) <= high + half_unit(printed):
                wrong.add((name, model, language))
    assert checked == {"liverepo_table1_fullfile.csv": 259, "liverepo_table2_patch.csv": 274}[name]
    assert wrong == {typo for typo in FW_TYPOS if typo[0] == name}


@pytest.mark.parametrize("name", TABLES)
def test_all_is_the_test_count_weighted_mean_of_the_six_languages(name: str) -> None:
    counts = {("Cpp" if r["language"] == "C++" else r["language"]): int(r["liverepo_tests"])
              for r in paper_table("liverepo_table3_language_counts.csv") if r["language"] != "Total"}
    assert counts == PAPER_TEST_COUNTS and sum(counts.values()) == 1888
    checked, wrong = 0, set()
    for model, row in cells(name).items():
        for metric in ("P1", "P2", "WF"):
            values = {lang: float(row[(lang, metric)]) for lang in LANGUAGES}
            printed = row[(ALL, metric)]
            # Each language cell is within half a unit, so is their weighted mean; then All's own rounding.
            tolerance = max(half_unit(row[(lang, metric)]) for lang in LANGUAGES) + half_unit(printed) + 1e-9
            checked += 1
            if abs(weighted_all(values, counts) - float(printed)) > tolerance:
                wrong.add((name, model, metric))
    assert checked == {"liverepo_table1_fullfile.csv": 111, "liverepo_table2_patch.csv": 135}[name]
    assert wrong == {typo for typo in ALL_TYPOS if typo[0] == name}
    # An unweighted mean is a different figure: it misses most All cells.
    model = "Claude-3-7-Sonnet-20250219"
    plain = sum(float(cells(TABLES[0])[model][(lang, "P1")]) for lang in LANGUAGES) / 6
    assert abs(plain - float(cells(TABLES[0])[model][(ALL, "P1")])) > 0.5


def test_fix_weight_examples_from_table_1() -> None:
    """Claude-3-5-Haiku, Python: P1 11.5, P2 33.7, FW printed 65.9; FW is 0 when nothing passes."""
    assert round(fix_weight(11.5, 33.7), 1) == 65.9
    assert fix_weight(0.0, 0.0) == 0.0 and fix_weight(0.0, 23.3) == 100.0 and fix_weight(5.0, 5.0) == 0.0


def outcome(task: str, passed_at: int | None, well_formed: bool = True, language: str = "Python",
            tries: int = 2) -> TaskOutcome:
    return TaskOutcome(task_id=task, language=language, passed_at=passed_at, tries=tries, well_formed=well_formed,
                       input_tokens=10, output_tokens=5)


def test_pass_at_k_is_cumulative_and_the_figures_follow_from_it() -> None:
    runs = [outcome("a", 1), outcome("b", 2), outcome("c", None, well_formed=False), outcome("d", 4, tries=4)]
    assert pass_at(runs, 1) == 25.0 and pass_at(runs, 2) == 50.0
    assert pass_at_curve(runs, 4) == [25.0, 50.0, 50.0, 75.0]
    result = figures(runs, 4)
    assert (result.tasks, result.pass_at_1, result.pass_at_2, result.fix_weight) == (4, 25.0, 50.0, 50.0)
    assert result.well_formed == well_formed_rate(runs) == 75.0
    assert (result.input_tokens, result.output_tokens) == (40, 20)
    single = figures(runs, 1)
    assert single.pass_at_2 is None and single.fix_weight is None and single.pass_at_k == [25.0]
    empty = figures([], 2)
    assert (empty.pass_at_1, empty.pass_at_2, empty.fix_weight, empty.well_formed) == (0.0, 0.0, 0.0, 0.0)


def test_all_weights_languages_by_their_tasks_which_pools_them() -> None:
    runs = [outcome("p1", 1), outcome("p2", None), outcome("p3", 2), outcome("g1", 2, language="Go")]
    per = by_language(runs, 2)
    assert per["Go"].pass_at_1 == 0.0 and per["Go"].pass_at_2 == 100.0 and per["Go"].fix_weight == 100.0
    assert round(per["Python"].pass_at_1, 1) == 33.3 and round(per["Python"].pass_at_2, 1) == 66.7
    pooled = figures(runs, 2)
    assert per[ALL].tasks == 4
    assert per[ALL].pass_at_1 == pytest.approx(pooled.pass_at_1) == 25.0
    assert per[ALL].pass_at_2 == pytest.approx(pooled.pass_at_2) == 75.0
    assert per[ALL].fix_weight == pytest.approx(fix_weight(25.0, 75.0))
    assert per[ALL].well_formed == pytest.approx(pooled.well_formed)
    with pytest.raises(ValueError, match="no weight for Go"):
        weighted_all({"Go": 1.0}, {"Python": 1})
