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
    from projectgen.experiments.reflection_results import ReflectRow, reflect_page, summarize_reflect

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
