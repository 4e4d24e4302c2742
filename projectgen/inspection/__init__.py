"""Look into a run folder: load it, read its timeline, and write a Markdown and an HTML report.

Modules, each with one job:

- `views`: the data a run folder is read into (`RunView`, `TimelineRow`, `AttemptView`,
  `KnowledgeRow`, `DiffEntry`);
- `loading`: `load_run` (and `check_run_dir`, `read_calls`);
- `rows`: trace events as timeline rows with a one-line detail; `attribution`: which
  node made each model call; `attempts`: one view per attempt; `timestamps`: UTC times;
- `queries`: queries on a loaded run (`timeline`, `diffs`, `filter_calls`, `attempt_numbers`,
  `call_prompt`: what one call was asked and answered);
- `contents`: what a report says; `markdown`, `html`: its two renderings; `charts`: the
  SVG charts; `formatting`: escaping and number formats; `report`: `write_report`;
  `trace_json`: the document `trace --json` prints.
"""
from __future__ import annotations

from projectgen.inspection.attribution import effective_attempt
from projectgen.inspection.contents import ReportContents, report_contents
from projectgen.inspection.formatting import esc, fmt_score, fmt_seconds, fmt_tokens, md
from projectgen.inspection.html import render_html
from projectgen.inspection.loading import check_run_dir, load_run, read_calls
from projectgen.inspection.markdown import render_markdown
from projectgen.inspection.report import write_report
from projectgen.inspection.queries import (CallPrompt, attempt_numbers, call_number, call_prompt, diffs, filter_calls,
                                          timeline)
from projectgen.inspection.timestamps import as_utc
from projectgen.inspection.views import AttemptView, DiffEntry, KnowledgeRow, RunView, TimelineRow

__all__ = [
    "AttemptView", "CallPrompt", "DiffEntry", "KnowledgeRow", "ReportContents", "RunView", "TimelineRow", "as_utc",
    "attempt_numbers", "call_number", "call_prompt", "check_run_dir", "diffs", "effective_attempt", "esc", "filter_calls", "fmt_score",
    "fmt_seconds", "fmt_tokens", "load_run", "md", "read_calls", "render_html", "render_markdown",
    "report_contents", "timeline", "write_report",
]
