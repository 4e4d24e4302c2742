"""`write_report(run_dir, out_dir=None)`: a run folder's ``report.md`` and ``report.html``.

Reads the run folder (`projectgen.inspection.loading.load_run`), gathers the report's
contents once (`projectgen.inspection.contents`) and renders them as Markdown
(`projectgen.inspection.markdown`) and as a self-contained HTML page
(`projectgen.inspection.html`), by default into the run folder itself.
"""
from __future__ import annotations

from pathlib import Path

from projectgen.errors import ProjectGenError
from projectgen.inspection.contents import report_contents
from projectgen.inspection.html import render_html
from projectgen.inspection.loading import load_run
from projectgen.inspection.markdown import render_markdown
from projectgen.llm.pricing import PriceTable
from projectgen.runs.layout import RunLayout


def write_report(run_dir: Path | str, out_dir: Path | str | None = None,
                 prices: PriceTable | None = None) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` for a run folder; returns their paths."""
    run = load_run(run_dir, prices=prices)
    out = Path(out_dir) if out_dir is not None else run.path
    if out.exists() and not out.is_dir():
        raise ProjectGenError(f"{out}: not a folder (--out takes a folder for report.md and report.html)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        report = report_contents(run)
        md_path, html_path = RunLayout(out).report_md, RunLayout(out).report_html
        md_path.write_text(render_markdown(run, report), encoding="utf-8")
        html_path.write_text(render_html(run, report), encoding="utf-8")
    except OSError as exc:
        raise ProjectGenError(f"{out}: cannot write the report ({exc.strerror or exc})") from None
    return md_path, html_path
