"""A run report as Markdown (``report.md``): facts, tables, the changes between iterations, notes.

Every cell is escaped with `projectgen.inspection.formatting.md` (run text is untrusted).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from projectgen.inspection.contents import (
    JUDGE_HEADERS,
    KNOWLEDGE_HEADERS,
    STAGE_HEADERS,
    ReportContents,
    banners,
    report_contents,
    score_label,
    shows_attempts,
)
from projectgen.inspection.formatting import md
from projectgen.inspection.queries import diffs
from projectgen.inspection.views import RunView


def render_markdown(run: RunView, report: ReportContents | None = None) -> str:
    """The Markdown report of `run` (`report`: its contents, when already gathered)."""
    report = report or report_contents(run)
    out = [f"# {md(report.title)}", ""]
    for text in banners(run):
        label, _, rest = text.partition(": ")
        out += [f"> **{md(label)}:** {md(rest)}", ""]
    out += [f"- **{md(k)}**: {md(v)}" for k, v in report.facts]
    out.append("")
    if shows_attempts(run, report):
        out += [f"## Attempts (score: {md(score_label(run))})", "", _table(report.attempts_headers,
                                                                          report.attempts_rows), ""]
    out += ["## Models", "", _table(report.models_headers, report.models_rows) if report.models_rows
            else "No model calls recorded.", ""]
    out += ["## Tokens per stage", "", _table(STAGE_HEADERS, report.stage_rows) if report.stage_rows
            else "No model calls recorded.", ""]
    out += ["## Judge scores per stage iteration", "",
            _table(JUDGE_HEADERS, report.judge_rows, limits={7: 200}) if report.judge_rows
            else "No verdicts recorded.", ""]
    if run.kind == "livecoder":
        out += ["## Knowledge given to attempts", "",
                _table(KNOWLEDGE_HEADERS, report.knowledge_rows, limits={5: 300})
                if report.knowledge_rows else "No knowledge entries were given to any attempt.", ""]
    out += ["## Final repository: non-functional figures", ""]
    out += [_table(["figure", "value"], report.quality_rows) if report.quality_rows else "Not measured.", ""]
    changes = diffs(run)
    if changes:
        out += ["## Changes between iterations", ""]
        out += [f"- attempt {md(d.attempt)}, {md(d.stage)} iteration {md(d.iteration)}: {md(d.path)} "
                + (f"(+{d.added} -{d.removed})" if d.kind != "ssat" else f"({md(d.diff.splitlines()[0], 120)})")
                for d in changes]
        out += ["", "Full diffs: `projectgen trace DIR --diff` or report.html.", ""]
    out += ["## Notes", ""] + [f"- {md(n)}" for n in report.notes]
    out.append("")
    return "\n".join(out)


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]], limits: dict[int, int] | None = None) -> str:
    """A Markdown table; `limits` cuts the cells of some columns to that many characters."""
    limits = limits or {}
    lines = ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(md(c, limits.get(i)) for i, c in enumerate(row)) + " |")
    return "\n".join(lines)
