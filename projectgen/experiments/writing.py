"""Writing an experiment's results: results.json, results.md and results.html, each whole or not at all."""
from __future__ import annotations

from pathlib import Path

from projectgen.durable_files import write_atomic
from projectgen.experiments.html import render_html
from projectgen.experiments.results import ExperimentResults
from projectgen.experiments.tables import render_markdown
from projectgen.runs import layout


def write_results(results: ExperimentResults, out_dir: Path) -> None:
    """Write ``results.json``, ``results.md`` and ``results.html`` into the experiment folder."""
    write_atomic(out_dir / layout.RESULTS_JSON, results.model_dump_json(indent=1) + "\n")
    write_atomic(out_dir / layout.RESULTS_MD, render_markdown(results))
    write_atomic(out_dir / layout.RESULTS_HTML, render_html(results))
