"""The papers' figures that an experiment's results hold: ProjectGen's Figure 4 (project scale against
performance), ProjectGen's Figure 5 (error types of the failing unit tests) and LiveCoder's Figure 5 (error
categories), as tables in results.md/json and plots on results.html.

Everything is read from the pairs as the experiment recorded them: #LOC and #Pass from the ledger, error types
from each final output's unit test report (`evaluation.error_types`); nothing runs again. Neither paper's text
defines its Figure 5's breakdown where it could be found, so these are the closest documented thing
(docs/fidelity.md).
"""
from __future__ import annotations

from collections.abc import Sequence

from projectgen.evaluation.error_types import CATEGORY_ORDER, by_category, merged
from projectgen.experiments.figures import PairResult
from projectgen.experiments.results import ExperimentResults, ModelReport
from projectgen.experiments.results_writer import Block, Heading, Table, TableBlock, Text, series_color
from projectgen.inspection.charts import line_chart, stacked_bars

CHART_TYPES = 8
"""Error types a chart shows by name; the rarer ones are stacked as one "other types"."""


def pass_rate(pair: PairResult) -> float | None:
    """A scored pair's final #Pass / #Tests; None for an error pair or one without unit tests."""
    if not pair.ok or not pair.final_unit_total:
        return None
    return (pair.final_unit_passed or 0) / pair.final_unit_total


def scale_order(results: ExperimentResults) -> list[tuple[str, int | None]]:
    """Every task of the experiment with its #LOC weight, smallest project first (ties by id; no #LOC last)."""
    loc: dict[str, int | None] = {}
    for report in results.models:
        for pair in report.pairs:
            if loc.get(pair.task_id) is None:
                loc[pair.task_id] = pair.loc
    return sorted(loc.items(), key=lambda item: (item[1] is None, item[1] or 0, item[0]))


def scale_table(results: ExperimentResults) -> Table | None:
    """ProjectGen Figure 4 as a table: per task (by #LOC) each arm's final #Pass/#Tests and pass rate."""
    reports = [r for r in results.models if any(pass_rate(p) is not None for p in r.pairs)]
    if not reports:
        return None
    by_report = [{p.task_id: p for p in r.pairs} for r in reports]
    rows = []
    for task, loc in scale_order(results):
        cells = []
        for pairs in by_report:
            pair = pairs.get(task)
            rate = pass_rate(pair) if pair is not None else None
            cells.append("error" if pair is not None and not pair.ok else "" if rate is None else
                         f"{pair.final_unit_passed}/{pair.final_unit_total} ({rate:.1%})")
        rows.append([task, "" if loc is None else str(loc), *cells])
    return ["task", "#LOC", *(r.column for r in reports)], rows


def scale_chart(results: ExperimentResults) -> str:
    """ProjectGen Figure 4 as a plot: the final unit pass rate of each arm over the tasks, smallest first."""
    order = scale_order(results)
    series = []
    for index, report in enumerate(results.models):
        pairs = {p.task_id: p for p in report.pairs}
        values = [pass_rate(pairs[task]) if task in pairs else None for task, _ in order]
        if any(value is not None for value in values):
            series.append((report.column, series_color(index), "line", values))
    if not series:
        return ""
    return line_chart("Final unit pass rate by project scale (tasks by #LOC, smallest first)",
                      [task for task, _ in order], series, width=1060,
                      markers=["" if loc is None else f"{loc} LOC" for _, loc in order])


def arm_collection_errors(report: ModelReport) -> dict[str, int]:
    """An arm's uncollected unit test modules per error type over its scored pairs."""
    return merged(p.collection_error_types for p in report.pairs if p.ok)


def _share(count: int, total: int) -> str:
    return f"{count} ({count / total:.1%})" if total else str(count)


def counts_table(first: str, order: Sequence[str], columns: Sequence[tuple[str, dict[str, int]]]) -> Table:
    """Rows `order` (then a total row) of each column's counts, with each count's share of its column."""
    totals = [sum(counts.values()) for _, counts in columns]
    rows = [[name, *(_share(counts.get(name, 0), total) for (_, counts), total in zip(columns, totals))]
            for name in order]
    rows.append(["failing tests", *(str(total) for total in totals)])
    return [first, *(name for name, _ in columns)], rows


def error_type_tables(results: ExperimentResults) -> tuple[Table, Table] | None:
    """ProjectGen Figure 5 (per exception class, most frequent first) and LiveCoder Figure 5 (per category) over
    each arm's failing unit tests; None when no arm recorded error types."""
    columns = [(r.column, types) for r in results.models if (types := r.error_types) is not None]
    if not columns:
        return None
    everything = merged(counts for _, counts in columns)
    types = sorted(everything, key=lambda name: (-everything[name], name))
    categories = [(name, by_category(counts)) for name, counts in columns]
    used = [label for label in CATEGORY_ORDER if any(label in counts for _, counts in categories)]
    return counts_table("error type", types, columns), counts_table("error category", used, categories)


def error_type_chart(results: ExperimentResults) -> str:
    """Failing unit tests per arm, stacked by error type (the `CHART_TYPES` most frequent by name)."""
    columns = [(r.column, types) for r in results.models if (types := r.error_types) is not None]
    everything = merged(counts for _, counts in columns)
    if not everything:
        return ""
    named = sorted(everything, key=lambda name: (-everything[name], name))[:CHART_TYPES]
    stacks = [(name, series_color(index), [float(counts.get(name, 0)) for _, counts in columns])
              for index, name in enumerate(named)]
    rest = [float(sum(count for name, count in counts.items() if name not in named)) for _, counts in columns]
    if any(rest):
        stacks.append(("other types", "#bab0ac", rest))
    return stacked_bars("Failing unit tests by error type", [name for name, _ in columns], stacks, width=1060,
                        y_title="failing tests")


def paper_figure_blocks(results: ExperimentResults) -> list[Block]:
    """The results page's sections for ProjectGen's Figures 4 and 5 and LiveCoder's Figure 5 (none without
    figures to show)."""
    blocks: list[Block] = []
    if scale := scale_table(results):
        blocks += [Heading("Project scale and performance (ProjectGen Figure 4)"),
                   Text("Per task, smallest project first: the final output's #Pass/#Tests and pass rate. #LOC is "
                        "the weight AVG_weighted uses (published where the paper gives one)."), TableBlock(scale)]
    if tables := error_type_tables(results):
        by_type, by_category_table = tables
        blocks += [Heading("Error types of the failing unit tests (ProjectGen Figure 5)"),
                   Text("Per arm, the final outputs' failing unit tests by the exception pytest reported for each "
                        "(read from their unit test reports; share of the arm's failing tests). The paper's own "
                        "breakdown is not defined in its text: this is the closest documented one "
                        "(docs/fidelity.md)."), TableBlock(by_type)]
        collected = [(r.column, arm_collection_errors(r)) for r in results.models]
        if any(counts for _, counts in collected):
            blocks.append(Text("Test modules that did not collect (their tests fail unrun; a module counts once): "
                               + "; ".join(f"{name}: " + ", ".join(f"{kind} {count}" for kind, count in
                                                                    sorted(counts.items()))
                                           for name, counts in collected if counts)))
        blocks += [Heading("Error categories (LiveCoder Figure 5)"),
                   Text("The same failing tests grouped by category (evaluation.error_types.CATEGORIES: wrong "
                        "result = AssertionError; missing module or name; interface mismatch = AttributeError, "
                        "TypeError; ...)."), TableBlock(by_category_table)]
    return blocks


def paper_figure_charts(results: ExperimentResults) -> list[tuple[str, str]]:
    """The plots of those figures for results.html (empty ones are left out by the page)."""
    return [("Final unit pass rate by project scale (ProjectGen Figure 4)", scale_chart(results)),
            ("Failing unit tests by error type (ProjectGen Figure 5)", error_type_chart(results))]
