"""The one writer of a batch's results: results.json from its data, results.md and results.html from one page.

`experiment`, `reflect` and `refine` each describe their results as a `ResultsPage`: a title and blocks
(headings, text, bullet lists, tables as data, charts). Both documents are rendered from that page, so
a table or a note shows alike in the Markdown and on the self-contained HTML page (inline CSS and SVG,
no scripts; charts exist only there), and every command writes its three files the same way, each whole
or not at all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from projectgen.durable_files import write_atomic
from projectgen.evaluation.integrity_flags import IntegrityFlag
from projectgen.inspection.formatting import esc
from projectgen.inspection.html import REPORT_CSS
from projectgen.runs import layout

# One color per series of a chart, in order (colorblind-safe Tableau 10).
SERIES_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac")


def series_color(index: int) -> str:
    """The color of a chart's series number `index` (the colors repeat after ten)."""
    return SERIES_COLORS[index % len(SERIES_COLORS)]


Table = tuple[list[str], list[list[str]]]
"""A table as data: its header cells and its rows of cells."""


@dataclass(frozen=True)
class Heading:
    """A section's title (## in Markdown, h2 on the page)."""

    text: str


@dataclass(frozen=True)
class Text:
    """A paragraph; a note is shown muted on the page. Backticks mark code, as in Markdown."""

    text: str
    note: bool = False


@dataclass(frozen=True)
class Bullets:
    """A bullet list, optionally led by a line (``Models:``) that stays right above it."""

    items: list[str]
    lead: str = ""


@dataclass(frozen=True)
class TableBlock:
    table: Table


@dataclass(frozen=True)
class Charts:
    """Plots (SVG) under their heading, each with an optional title: the page only, Markdown has no plots."""

    heading: str
    charts: list[tuple[str, str]]


Block = Heading | Text | Bullets | TableBlock | Charts


def unprotected_warning(sandboxes: list[str]) -> list[Block]:
    """The warning every results page leads with when any unit's tests ran without isolation."""
    unprotected = sum(1 for sandbox in sandboxes if sandbox == "none")
    if not unprotected:
        return []
    return [Text(f"**Unprotected scores:** {unprotected} of {len(sandboxes)} unit(s) ran their tests with "
                 "isolation none (no namespaces): the code under test could have faked those scores "
                 "(docs/sandbox.md).")]


INTEGRITY_ROWS_SHOWN = 200  # a page lists at most this many flags; results.json holds every one


def integrity_section(units: list[tuple[str, list[IntegrityFlag]]]) -> list[Block]:
    """The "Integrity flags" section of a results page: one row per flag of each unit (its label first), or
    nothing when no unit has a flag. Flags never change a score: they say where a researcher should look."""
    rows = [[label, flag.kind, flag.where(), flag.excerpt] for label, flags in units for flag in flags]
    if not rows:
        return []
    flagged = sum(1 for _, flags in units if flags)
    blocks: list[Block] = [
        Heading("Integrity flags"),
        Text(f"{len(rows)} flag(s) in {flagged} of {len(units)} unit(s): constructs in the code under test that are "
             "known moves for gaming a test run (docs/sandbox.md, Integrity flags). They do not change any score; "
             "they say where to look.", note=True),
        TableBlock((["unit", "kind", "where", "excerpt"], rows[:INTEGRITY_ROWS_SHOWN]))]
    if len(rows) > INTEGRITY_ROWS_SHOWN:
        blocks.append(Text(f"... and {len(rows) - INTEGRITY_ROWS_SHOWN} more flag(s) in results.json.", note=True))
    return blocks


@dataclass(frozen=True)
class ResultsPage:
    """What results.md and results.html show: `command` names the footer (``projectgen reflect results``)."""

    title: str
    command: str
    blocks: list[Block] = field(default_factory=list)


def markdown_table(table: Table) -> list[str]:
    """The lines of a Markdown table (an empty cell stays one space wide; a pipe in a cell is escaped)."""
    header, rows = table

    def line(cells: list[str]) -> str:
        return "|" + "|".join(f" {cell.replace('|', chr(92) + '|')} " if cell else " " for cell in cells) + "|"

    return [line(header), "|" + "---|" * len(header), *(line(row) for row in rows)]


def markdown_block(block: Block) -> list[str]:
    """A block's Markdown lines (none for charts)."""
    if isinstance(block, Heading):
        return [f"## {block.text}"]
    if isinstance(block, Text):
        return [block.text]
    if isinstance(block, Bullets):
        return [*([block.lead] if block.lead else []), *(f"- {item}" for item in block.items)]
    if isinstance(block, TableBlock):
        return markdown_table(block.table)
    return []


def render_markdown(page: ResultsPage) -> str:
    """results.md: the title, then each block followed by a blank line (empty blocks left out)."""
    lines = [f"# {page.title}", ""]
    for block in page.blocks:
        if body := markdown_block(block):
            lines += [*body, ""]
    return "\n".join(lines)


def inline(text: str) -> str:
    """Escaped text whose `code` spans become <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(text))


def html_table(table: Table) -> str:
    """A table of escaped cells."""
    header, rows = table
    out = ["<table><tr>" + "".join(f"<th>{esc(c)}</th>" for c in header) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows]
    return "\n".join(out + ["</table>"])


def html_block(block: Block) -> str:
    """A block as HTML ("" when there is nothing to show)."""
    if isinstance(block, Heading):
        return f"<h2>{esc(block.text)}</h2>"
    if isinstance(block, Text):
        return f"<p class='muted'>{inline(block.text)}</p>" if block.note else f"<p>{inline(block.text)}</p>"
    if isinstance(block, Bullets):
        if not block.items:
            return f"<p>{inline(block.lead)}</p>" if block.lead else ""
        return ((f"<p>{inline(block.lead)}</p>" if block.lead else "")
                + "<ul>" + "".join(f"<li>{inline(item)}</li>" for item in block.items) + "</ul>")
    if isinstance(block, TableBlock):
        return f"<div class='scroll'>\n{html_table(block.table)}\n</div>"
    shown = [(title, chart) for title, chart in block.charts if chart]
    if not shown:
        return ""
    return (f"<h2>{esc(block.heading)}</h2><div class='charts'>"
            + "".join(f"<div class='card wide'>{f'<h3>{esc(title)}</h3>' if title else ''}{chart}</div>"
                      for title, chart in shown) + "</div>")


def render_html(page: ResultsPage) -> str:
    """results.html: the same blocks on one self-contained page, with the charts."""
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{esc(page.title)}</title>"
             f"<style>{REPORT_CSS}</style></head><body><main>", f"<h1>{esc(page.title)}</h1>"]
    parts += [html for block in page.blocks if (html := html_block(block))]
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f"<footer>{esc(page.command)} results, written {stamp}; results.md and results.json hold every "
                 "figure.</footer></main></body></html>")
    return "\n".join(parts)


def write_results(out_dir: Path, results: BaseModel, page: ResultsPage) -> None:
    """results.json (the data), results.md and results.html (the page) in a batch's folder."""
    write_atomic(out_dir / layout.RESULTS_JSON, results.model_dump_json(indent=1) + "\n")
    write_atomic(out_dir / layout.RESULTS_MD, render_markdown(page))
    write_atomic(out_dir / layout.RESULTS_HTML, render_html(page))
