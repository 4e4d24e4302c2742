"""The one results writer: a page renders alike as Markdown and HTML, and the three files are written."""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from projectgen.experiments.results_writer import (Bullets, Charts, Heading, ResultsPage, TableBlock, Text,
                                                   render_html, render_markdown, write_results)

PAGE = ResultsPage("Run on <data>", "projectgen demo", [
    Text("setting `x`"),
    Bullets(["a: one", "b: two"], lead="Models:"),
    Charts("Plots", [("curve", "<svg id='c'></svg>"), ("empty", "")]),
    Heading("Summary"),
    TableBlock((["model", "note"], [["m", "a|b"], ["n", ""]])),
    Bullets([]),
    Text("what the columns mean", note=True),
])


def test_markdown_shows_every_block_but_the_charts_each_followed_by_a_blank_line() -> None:
    assert render_markdown(PAGE) == (
        "# Run on <data>\n\nsetting `x`\n\nModels:\n- a: one\n- b: two\n\n## Summary\n\n"
        "| model | note |\n|---|---|\n| m | a\\|b |\n| n | |\n\nwhat the columns mean\n")


def test_the_page_shows_the_same_blocks_escaped_with_the_charts_that_have_a_plot() -> None:
    page = render_html(PAGE)
    assert "<title>Run on &lt;data&gt;</title>" in page and "<h1>Run on &lt;data&gt;</h1>" in page
    assert "<p>setting <code>x</code></p>" in page
    assert "<p>Models:</p><ul><li>a: one</li><li>b: two</li></ul>" in page
    assert "<h3>curve</h3><svg id='c'></svg>" in page and "empty" not in page
    assert "<td>a|b</td>" in page and "<p class='muted'>what the columns mean</p>" in page
    assert page.index("<h2>Plots</h2>") < page.index("<h2>Summary</h2>")
    assert "<footer>projectgen demo results, written " in page


class Data(BaseModel):
    rows: list[int]


def test_write_results_writes_the_data_and_both_renderings(tmp_path: Path) -> None:
    write_results(tmp_path, Data(rows=[1, 2]), PAGE)
    assert json.loads((tmp_path / "results.json").read_text()) == {"rows": [1, 2]}
    assert (tmp_path / "results.md").read_text() == render_markdown(PAGE)
    assert (tmp_path / "results.html").read_text().startswith("<!doctype html>")


def test_a_results_page_leads_with_a_warning_when_any_unit_ran_unprotected(tmp_path: Path) -> None:
    from projectgen.experiments.models import ExperimentModel
    from projectgen.protocols.reflection.results import ReflectRow, reflect_page, summarize_reflect

    def page(sandboxes: list[str]) -> str:
        rows = [ReflectRow(key=f"m/whole/t{i}", model="m", edit_format="whole", task_id=f"t{i}", language="python",
                           status="error", error="x", sandbox=sandbox) for i, sandbox in enumerate(sandboxes)]
        results = summarize_reflect("examples", str(tmp_path), 2, [ExperimentModel("m", "scripted:x")], ["whole"], rows)
        write_results(tmp_path, results, reflect_page(results))
        return (tmp_path / "results.md").read_text(encoding="utf-8")

    assert "Unprotected" not in page(["namespaces", "namespaces"])
    assert "Unprotected" not in page(["", ""])  # an older ledger says nothing either way
    shown = page(["namespaces", "none"])
    assert "**Unprotected scores:** 1 of 2 unit(s) ran their tests with isolation none" in shown
    assert shown.index("Unprotected") < shown.index("Tries per task")


CTYPES_FLAG = {"kind": "ctypes", "path": "mem.py", "line": 1, "excerpt": "import ctypes"}


def test_a_results_page_lists_the_integrity_flags_only_when_there_are_any(tmp_path: Path) -> None:
    from projectgen.experiments.models import ExperimentModel
    from projectgen.protocols.reflection.results import ReflectRow, reflect_page, summarize_reflect

    def write(tries: list[dict]) -> tuple[dict, str]:
        row = ReflectRow(key="m/whole/t", model="m", edit_format="whole", task_id="t", language="python",
                         status="failed", result={"tries": tries})
        results = summarize_reflect("examples", str(tmp_path), 2, [ExperimentModel("m", "scripted:x")], ["whole"], [row])
        write_results(tmp_path, results, reflect_page(results))
        return (json.loads((tmp_path / "results.json").read_text(encoding="utf-8")),
                (tmp_path / "results.md").read_text(encoding="utf-8"))

    _, clean = write([{"try": 1}, {"try": 2, "integrity_flags": []}])
    assert "Integrity flags" not in clean
    data, shown = write([{"try": 1, "integrity_flags": [CTYPES_FLAG]}, {"try": 2, "integrity_flags": [CTYPES_FLAG]}])
    assert data["reports"][0]["rows"][0]["result"]["tries"][1]["integrity_flags"] == [CTYPES_FLAG]
    assert "## Integrity flags" in shown and "1 flag(s) in 1 of 1 unit(s)" in shown  # both tries' flag once
    assert "| m/whole/t | ctypes | mem.py:1 | import ctypes |" in shown
    assert "<h2>Integrity flags</h2>" in (tmp_path / "results.html").read_text(encoding="utf-8")


def test_an_experiment_pair_carries_its_final_outputs_flags_to_results(tmp_path: Path) -> None:
    from projectgen.evaluation.integrity_flags import IntegrityFlag
    from projectgen.evaluation.report import TestReport
    from projectgen.experiments.figures import PairResult, final_integrity_flags
    from projectgen.experiments.models import ExperimentModel
    from projectgen.experiments.results import ExperimentResults, summarize_pairs
    from projectgen.experiments.tables import experiment_page

    run = tmp_path / "run"
    assert final_integrity_flags(run) == []  # no unit report: nothing known
    TestReport(task_id="t", suite="unit", integrity_flags=[IntegrityFlag(**CTYPES_FLAG)]).write_json(
        run / "unit_report.json")
    flags = final_integrity_flags(run)
    assert flags == [IntegrityFlag(**CTYPES_FLAG)]
    pair = PairResult(key="m/t", model="m", spec="s", task_id="t", status="finished", integrity_flags=flags)
    results = ExperimentResults(dataset="d", out_dir=str(tmp_path), settings={}, attempt_settings={},
                                models=[summarize_pairs(ExperimentModel("m", "s"), [pair], 1)])
    write_results(tmp_path, results, experiment_page(results))
    assert json.loads((tmp_path / "results.json").read_text())["models"][0]["pairs"][0]["integrity_flags"] == [
        CTYPES_FLAG]
    assert "| m/t | ctypes | mem.py:1 | import ctypes |" in (tmp_path / "results.md").read_text(encoding="utf-8")


def test_reflect_results_json_has_a_summary_row_per_language(tmp_path: Path) -> None:
    """LiveRepoReflection's tables are per language: results.json gives each language a summary row of its own
    (with its own errors), beside the All row, not only nested under reports[].figures."""
    from projectgen.experiments.models import ExperimentModel
    from projectgen.protocols.reflection.results import ReflectRow, reflect_page, summarize_reflect

    def row(task: str, language: str, passed_at: int | None, status: str = "passed") -> ReflectRow:
        result = None if status == "error" else {"passed_at": passed_at, "tries": [{"try": 1}, {"try": 2}],
                                                  "well_formed": True, "input_tokens": 10, "output_tokens": 5}
        return ReflectRow(key=f"m/whole/{task}", model="m", edit_format="whole", task_id=task, language=language,
                          status=status, result=result, error="boom" if status == "error" else None)

    rows = [row("g1", "go", 1), row("g2", "go", 2, "passed"), row("r1", "rust", None, "failed"),
            row("r2", "rust", None, "error"), row("p1", "python", 1)]
    results = summarize_reflect("examples", str(tmp_path), 2, [ExperimentModel("m", "scripted:x")], ["whole"], rows)
    write_results(tmp_path, results, reflect_page(results))
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    [every] = data["summary"]
    assert every["language"] == "All" and every["tasks"] == 4 and every["errors"] == 1
    by_language = {entry["language"]: entry for entry in data["summary_by_language"]}
    assert set(by_language) == {"go", "python", "rust"}
    assert (by_language["go"]["tasks"], by_language["go"]["pass_at_1"], by_language["go"]["pass_at_2"]) == (
        2, 50.0, 100.0)
    assert (by_language["rust"]["tasks"], by_language["rust"]["errors"], by_language["rust"]["pass_at_2"]) == (
        1, 1, 0.0)
    assert by_language["python"]["errors"] == 0 and by_language["python"]["pass_at_1"] == 100.0
