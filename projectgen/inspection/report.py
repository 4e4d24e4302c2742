"""Run reports: Markdown and one self-contained HTML page with inline SVG charts.

`write_report(run_dir, out_dir=None)` reads a run folder (`projectgen.inspection.run_view.load_run`)
and writes ``report.md`` and ``report.html`` (default: into the run folder). The HTML
page has inline CSS and SVG drawn here (no JavaScript, nothing fetched), so it can be
mailed or archived as one file. Charts: attempt score with the best-so-far line (and the
hidden unit-test pass rate, reported only), tokens and cost per attempt, tokens per
stage, judge scores per stage iteration. Tables: attempts, final choice, models
(scripted replays labelled as such), tokens per stage, judge iterations, knowledge given
to attempts, and the maintainability index of the final repository (radon MI, a
non-functional figure). Selection by the hidden unit tests is labelled as the oracle
setting wherever a score appears.

Everything taken from the run (file names, judge feedback, knowledge texts, model names)
is untrusted text: it is escaped in both outputs.
"""
from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from projectgen.errors import ProjectGenError
from projectgen.inspection.run_view import RunView, diffs, load_run
from projectgen.llm.pricing import PRICES_AS_OF, PriceTable
from projectgen.runs import layout

STAGE_ORDER = ("architecture", "skeleton", "code")
COLORS = {"input": "#4c78a8", "output": "#f58518", "score": "#2f9e44", "best": "#1c7ed6", "unit": "#9c36b5",
          "accepted": "#2f9e44", "rejected": "#e03131", "grid": "#e9ecef", "axis": "#868e96", "text": "#343a40",
          "threshold": "#fab005"}


# --------------------------------------------------------------------------- text helpers


def esc(value: Any) -> str:
    """HTML-escape any value (quotes too, so it is safe in attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def md(value: Any, limit: int | None = None) -> str:
    """A Markdown table cell: HTML-escaped (renderers pass raw HTML through), one line, pipes escaped."""
    text = "" if value is None else str(value)
    text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    text = html.escape(text, quote=False)
    for char in ("\\", "|", "`", "*", "[", "]"):
        text = text.replace(char, "\\" + char)
    return text


def fmt_tokens(value: float | int | None) -> str:
    if value is None:
        return "n/a"
    value = float(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{value:.0f}"


def fmt_score(value: Any, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 60:
        return f"{value:.1f} s"
    minutes, seconds = divmod(value, 60)
    return f"{int(minutes)} min {seconds:.0f} s"


def _md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], limits: dict[int, int] | None = None) -> str:
    limits = limits or {}
    lines = ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(md(c, limits.get(i)) for i, c in enumerate(row)) + " |")
    return "\n".join(lines)


def _html_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[int] = (),
                cls: str = "", wrap: Sequence[int] = ()) -> str:
    """A table of escaped cells; `numeric` columns align right, `wrap` columns may break anywhere (long ids)."""

    def kind(i: int) -> str:
        return "num" if i in numeric else "wrap" if i in wrap else ""

    head = "".join(f'<th class="{kind(i)}">{esc(h)}</th>' for i, h in enumerate(headers))
    body = []
    for row in rows:
        cells = "".join(f'<td class="{kind(i)}">{esc(c)}</td>' for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


# --------------------------------------------------------------------------- SVG charts


def _nice_max(value: float) -> tuple[float, float]:
    """An axis maximum >= value and a tick step (1, 2 or 5 times a power of ten)."""
    if value <= 0:
        return 1.0, 0.25
    raw = value / 4
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        step = factor * power
        if step * 4 >= value:
            return step * math.ceil(value / step), step
    return value, value / 4


@dataclass
class _Frame:
    width: int
    height: int
    left: int = 56
    right: int = 16
    top: int = 34
    bottom: int = 44

    @property
    def plot_w(self) -> float:
        return self.width - self.left - self.right

    @property
    def plot_h(self) -> float:
        return self.height - self.top - self.bottom

    def y(self, value: float, y_max: float) -> float:
        return self.top + self.plot_h * (1 - (value / y_max if y_max else 0))


def _svg(frame: _Frame, title: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {frame.width} {frame.height}" '
            f'class="chart" role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>'
            + "".join(body) + "</svg>")


def _axes(frame: _Frame, y_max: float, step: float, label_fn, y_title: str = "") -> list[str]:
    out = []
    value = 0.0
    while value <= y_max + 1e-9:
        y = frame.y(value, y_max)
        out.append(f'<line x1="{frame.left}" y1="{y:.1f}" x2="{frame.width - frame.right}" y2="{y:.1f}" '
                   f'stroke="{COLORS["grid"]}"/>')
        out.append(f'<text x="{frame.left - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
                   f'{esc(label_fn(value))}</text>')
        value += step
    out.append(f'<line x1="{frame.left}" y1="{frame.top + frame.plot_h:.1f}" x2="{frame.width - frame.right}" '
               f'y2="{frame.top + frame.plot_h:.1f}" stroke="{COLORS["axis"]}"/>')
    if y_title:
        out.append(f'<text x="12" y="{frame.top + frame.plot_h / 2:.1f}" class="axis-title" '
                   f'transform="rotate(-90 12 {frame.top + frame.plot_h / 2:.1f})" text-anchor="middle">'
                   f'{esc(y_title)}</text>')
    return out


_LEGEND_CHAR_W = 6.4  # average glyph width of the 11.5px legend font, for layout


def _legend(items: Sequence[tuple[str, str, str]], left: float, right_edge: float) -> tuple[list[str], int]:
    """Legend entries laid out in rows that fit; returns (elements, height used from the top).

    items: (label, color, kind) with kind 'box', 'line', 'dash' or 'dot'.
    """
    out: list[str] = []
    x, y = float(left), 10.0
    for label, color, kind in items:
        item_w = 24 + _LEGEND_CHAR_W * len(label)
        if x > left and x + item_w > right_edge:
            x, y = float(left), y + 18
        if kind == "box":
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="12" height="12" fill="{color}"/>')
        else:
            dash = {"dash": ' stroke-dasharray="6 3"', "dot": ' stroke-dasharray="2 3"'}.get(kind, "")
            out.append(f'<line x1="{x:.1f}" y1="{y + 6:.1f}" x2="{x + 14:.1f}" y2="{y + 6:.1f}" stroke="{color}" '
                       f'stroke-width="2.5"{dash}/>')
        out.append(f'<text x="{x + 18:.1f}" y="{y + 10:.1f}" class="legend">{esc(label)}</text>')
        x += item_w + 14
    return out, int(y + 12)


def _x_positions(frame: _Frame, count: int) -> list[float]:
    if count <= 0:
        return []
    slot = frame.plot_w / count
    return [frame.left + slot * (i + 0.5) for i in range(count)]


def line_chart(title: str, labels: Sequence[str], series: Sequence[tuple[str, str, str, Sequence[float | None]]],
               y_max: float = 1.0, step: float = 0.25, percent: bool = True, width: int = 520,
               height: int = 260, markers: Sequence[str] = (), breaks: Sequence[int] = ()) -> str:
    """Lines over categories; series: (name, color, style 'line'|'dash'|'dot'|'step', values or None).

    A None value leaves a gap; `breaks` are indices whose point is not joined to the previous one.
    """
    kinds = {"line": "line", "dash": "dash", "dot": "dot", "step": "dash"}
    legend, legend_h = _legend([(name, color, kinds.get(style, "line")) for name, color, style, _ in series],
                               56, width - 16)
    frame = _Frame(width, height + legend_h - 22, top=legend_h + 14)
    body = _axes(frame, y_max, step, (lambda v: f"{v:.0%}") if percent else (lambda v: f"{v:g}"))
    xs = _x_positions(frame, len(labels))
    for i, (x, label) in enumerate(zip(xs, labels)):
        body.append(f'<text x="{x:.1f}" y="{frame.height - frame.bottom + 16}" text-anchor="middle" class="tick">'
                    f'{esc(label)}</text>')
        if i < len(markers) and markers[i]:
            body.append(f'<text x="{x:.1f}" y="{frame.height - frame.bottom + 30}" text-anchor="middle" '
                        f'class="note">{esc(markers[i])}</text>')
    for name, color, style, values in series:
        segments: list[list[tuple[float, float]]] = [[]]
        for i, (x, v) in enumerate(zip(xs, values)):
            if v is None or i in breaks:
                if segments[-1]:
                    segments.append([])
            if v is not None:
                segments[-1].append((x, frame.y(min(v, y_max), y_max)))
        points = [p for segment in segments for p in segment]
        if not points:
            continue
        if style == "step" and len(points) > 1:
            path = [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
            for (x0, y0), (x1, y1) in zip(points, points[1:]):
                path.append(f"H{x1:.1f}V{y1:.1f}")
            body.append(f'<path d="{"".join(path)}" fill="none" stroke="{color}" stroke-width="2" '
                        f'stroke-dasharray="6 3"/>')
        else:
            dash = {"dash": ' stroke-dasharray="6 3"', "dot": ' stroke-dasharray="2 3"'}.get(style, "")
            for segment in segments:
                if len(segment) > 1:
                    coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in segment)
                    body.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2.5"'
                                f'{dash}/>')
        if style in ("line", "dot"):
            radius = 4.5 if style == "line" else 3
            for x, y in points:
                body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{color}"/>')
    return _svg(frame, title, body + legend)


def stacked_bars(title: str, labels: Sequence[str], stacks: Sequence[tuple[str, str, Sequence[float]]],
                 notes: Sequence[str] = (), width: int = 520, height: int = 260, y_title: str = "tokens") -> str:
    """Stacked vertical bars per category; `notes` are printed above each bar (e.g. its cost)."""
    legend, legend_h = _legend([(name, color, "box") for name, color, _ in stacks], 56, width - 16)
    frame = _Frame(width, height + legend_h - 22, top=legend_h + 14)
    totals = [sum(values[i] for _, _, values in stacks) for i in range(len(labels))]
    y_max, step = _nice_max(max(totals, default=0) * 1.12)
    body = _axes(frame, y_max, step, fmt_tokens, y_title)
    xs = _x_positions(frame, len(labels))
    bar = min(56.0, frame.plot_w / max(len(labels), 1) * 0.6)
    for i, (x, label) in enumerate(zip(xs, labels)):
        base = 0.0
        for name, color, values in stacks:
            value = values[i]
            if value <= 0:
                continue
            y_top, y_bottom = frame.y(base + value, y_max), frame.y(base, y_max)
            body.append(f'<rect x="{x - bar / 2:.1f}" y="{y_top:.1f}" width="{bar:.1f}" '
                        f'height="{max(y_bottom - y_top, 0.5):.1f}" fill="{color}"><title>{esc(label)} {esc(name)}: '
                        f'{value:,.0f}</title></rect>')
            base += value
        body.append(f'<text x="{x:.1f}" y="{frame.height - frame.bottom + 16}" text-anchor="middle" class="tick">'
                    f'{esc(label)}</text>')
        top = frame.y(totals[i], y_max)
        note = notes[i] if i < len(notes) else ""
        text = (fmt_tokens(totals[i]) + (f" · {note}" if note else "")) if totals[i] else note
        body.append(f'<text x="{x:.1f}" y="{top - 5:.1f}" text-anchor="middle" class="bar-note">{esc(text)}</text>')
    return _svg(frame, title, body + legend)


def judge_chart(title: str, verdicts: Sequence[dict[str, Any]], threshold: float | None, width: int = 1060,
                height: int = 250) -> str:
    """Small multiples, one panel per stage: judge score (0-10) of every iteration, per attempt."""
    stages = [s for s in STAGE_ORDER if any(v.get("stage") == s for v in verdicts)]
    stages += sorted({str(v.get("stage")) for v in verdicts} - set(stages))
    if not stages:
        return ""
    items = [("accepted", COLORS["accepted"], "box"), ("sent back", COLORS["rejected"], "box")]
    if threshold is not None:
        items.append((f"threshold {threshold:g}", COLORS["threshold"], "dash"))
    legend, legend_h = _legend(items, 44, width - 14)
    panel_w = width / len(stages)
    body: list[str] = []
    multi_attempt = len({v.get("attempt") for v in verdicts}) > 1
    for p, stage in enumerate(stages):
        offset = p * panel_w
        frame = _Frame(int(panel_w), height, left=44, right=14, top=legend_h + 34, bottom=40)
        points = [v for v in verdicts if v.get("stage") == stage and isinstance(v.get("score"), (int, float))]
        group = [f'<g transform="translate({offset:.1f},0)">']
        group += _axes(frame, 10.0, 2.0, lambda v: f"{v:g}")
        group.append(f'<text x="{frame.left}" y="{legend_h + 20}" class="panel-title">{esc(stage)}</text>')
        if threshold is not None:
            y = frame.y(threshold, 10.0)
            group.append(f'<line x1="{frame.left}" y1="{y:.1f}" x2="{frame.width - frame.right}" y2="{y:.1f}" '
                         f'stroke="{COLORS["threshold"]}" stroke-width="1.5" stroke-dasharray="5 3"/>')
        xs = _x_positions(frame, len(points))
        label_every = max(1, math.ceil(len(points) / max(1, frame.plot_w // 34)))
        previous: tuple[Any, float, float] | None = None
        for i, (x, verdict) in enumerate(zip(xs, points)):
            y = frame.y(max(0.0, min(float(verdict["score"]), 10.0)), 10.0)
            if previous is not None and previous[0] == verdict.get("attempt"):
                group.append(f'<line x1="{previous[1]:.1f}" y1="{previous[2]:.1f}" x2="{x:.1f}" y2="{y:.1f}" '
                             f'stroke="{COLORS["axis"]}" stroke-width="1.5"/>')
            previous = (verdict.get("attempt"), x, y)
            color = COLORS["accepted"] if verdict.get("accepted") else COLORS["rejected"]
            check = verdict.get("check")
            tip = (f"attempt {verdict.get('attempt')}, iteration {verdict.get('iteration')}: score "
                   f"{verdict['score']:g}" + (f", check {check[0]}/{check[1]}" if check else ""))
            group.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{color}"><title>{esc(tip)}</title></circle>')
            if i % label_every == 0:
                label = (f"A{verdict.get('attempt')}·{verdict.get('iteration')}" if multi_attempt
                         else f"it {verdict.get('iteration')}")
                group.append(f'<text x="{x:.1f}" y="{frame.height - frame.bottom + 16}" text-anchor="middle" '
                             f'class="tick">{esc(label)}</text>')
        group.append("</g>")
        body += group
    return _svg(_Frame(width, height), title, body + legend)


# --------------------------------------------------------------------------- report model


@dataclass
class _Report:
    run: RunView
    title: str
    facts: list[tuple[str, str]]
    attempts_headers: list[str]
    attempts_rows: list[list[Any]]
    models_headers: list[str]
    models_rows: list[list[Any]]
    stage_rows: list[list[Any]]
    judge_rows: list[list[Any]]
    knowledge_rows: list[list[Any]]
    quality_rows: list[list[Any]]
    notes: list[str]


def _score_label(run: RunView) -> str:
    if run.kind == "projectgen":
        return "unit-test pass rate"
    if run.oracle:
        return "hidden unit-test pass rate (ORACLE selection)"
    return "check-test pass rate"


def _quality(run: RunView) -> tuple[list[list[Any]], str | None]:
    repo = run.path / layout.REPOSITORY
    if not repo.is_dir():
        return [], "no repository/ folder: maintainability not measured"
    try:
        from projectgen.evaluation.metrics import repository_stats

        stats = repository_stats(repo)
    except Exception as exc:  # radon missing or a file system problem: say so, do not fail the report
        return [], f"maintainability not measured: {type(exc).__name__}: {exc}"
    if not stats.python_files:
        return [], "the final repository has no Python files: maintainability not measured"
    rows = [["maintainability index (radon MI, mean over files, 0-100)", f"{stats.mean_maintainability_index:.1f}"],
            ["mean cyclomatic complexity (functions and methods)", f"{stats.mean_cyclomatic_complexity:.2f}"],
            ["Python files", stats.python_files], ["lines of code", stats.loc], ["functions", stats.functions]]
    if stats.unparsable_files:
        rows.append(["files radon could not parse (left out of the means)",
                     ", ".join(stats.unparsable_paths[:10])])
    return rows, None


def _build(run: RunView) -> _Report:
    totals, cost = run.totals, run.cost
    estimated = totals.estimated_calls > 0
    facts = [("task", run.task_id)]
    if run.run_id:
        facts.append(("run id", run.run_id))
    facts.append(("kind", "LiveCoder attempts" if run.kind == "livecoder" else "ProjectGen pipeline (one run)"))
    facts.append(("status", run.status))
    if run.kind == "livecoder":
        selection = run.selection or "check"
        facts.append(("selection", f"{selection} tests" + (" — ORACLE setting: the hidden unit tests chose the "
                                                             "attempts; scores are an upper bound" if run.oracle
                                                             else " (visible check tests)")))
    final = run.final
    if final:
        facts.append(("final choice", f"attempt {final.get('attempt')} ({final.get('source')}), score "
                                      f"{fmt_score(final.get('score'))} ({_score_label(run)})"))
    unit = (run.summary or {}).get("unit_tests")
    if isinstance(unit, dict) and unit.get("total") is not None:
        facts.append(("final unit tests", f"{unit.get('passed')}/{unit.get('total')} passed (hidden tests, "
                                          f"reported only)"))
    if run.stopped:
        facts.append(("stopped", run.stopped))
    facts.append(("duration", fmt_seconds(run.duration_s)))
    failed = f" ({totals.failed_calls} failed)" if totals.failed_calls else ""
    facts.append(("model calls", f"{totals.calls}{failed}"))
    facts.append(("tokens", f"{totals.input_tokens:,} in + {totals.output_tokens:,} out"
                            + (" (estimated: scripted replies are counted as len/4)" if estimated else "")))
    facts.append(("cost", cost.label()))
    models = run.models()
    if models:
        facts.append(("models", "; ".join(("scripted replay (not a model): " + name[len("scripted:"):])
                                          if info["scripted"] else name for name, info in models.items())))

    headers = ["attempt", "score", "check tests", "unit tests (reported)", "stage iterations (judge scores)",
               "best so far", "knowledge in", "knowledge added", "tokens", "cost", "time"]
    rows = []
    for attempt in run.attempts:
        stages = "; ".join(
            f"{name} {info.get('iterations', '?')} ({', '.join(f'{s:g}' for s in info.get('scores') or [])})"
            for name, info in sorted(attempt.stages.items(), key=lambda kv: _stage_index(kv[0]))
            if isinstance(info, dict))
        check = attempt.check if isinstance(attempt.check, dict) else None
        unit_row = attempt.unit if isinstance(attempt.unit, dict) else None
        label = "run" if attempt.attempt is None else str(attempt.attempt)
        score = "reused best" if attempt.reused else fmt_score(attempt.score)
        best = (f"{fmt_score(attempt.best_score)} (#{attempt.best_attempt})" if attempt.best_score is not None
                else "-")
        rows.append([label, score, f"{check['passed']}/{check['total']}" if check else "-",
                     f"{unit_row.get('passed')}/{unit_row.get('total')}" if unit_row else "-", stages or "-", best,
                     attempt.knowledge_used if run.kind == "livecoder" else "-",
                     ", ".join(attempt.knowledge_added) or "-", f"{attempt.tokens.total_tokens:,}",
                     attempt.cost.label(), fmt_seconds(attempt.duration_s)])

    models_rows = []
    descriptions = (run.summary or {}).get("model_descriptions") or {}
    for name, info in models.items():
        price = info["price"]
        kind = "scripted replay (not a model)" if info["scripted"] else "model"
        described = sorted({d for r, d in descriptions.items() if r in info["roles"]})
        models_rows.append([name, kind, ", ".join(info["roles"]), info["totals"].calls,
                            f"{info['totals'].input_tokens:,}", f"{info['totals'].output_tokens:,}",
                            "0 (replay)" if info["scripted"] else
                            (f"${price.input:g} / ${price.output:g}" if price else "n/a (no price)"),
                            info["cost"].label(), "; ".join(described)])

    models_headers = list(MODEL_HEADERS)
    if not any(row[-1] for row in models_rows):  # no descriptions recorded: drop the empty column
        models_headers.pop()
        models_rows = [row[:-1] for row in models_rows]
    stage_rows = [[stage, t.calls, f"{t.input_tokens:,}", f"{t.output_tokens:,}", f"{t.total_tokens:,}", c.label()]
                  for stage, (t, c) in run.stage_totals().items()]
    judge_rows = []
    for verdict in run.judge_iterations():
        check = verdict.get("check")
        judge_rows.append(["run" if verdict.get("attempt") is None else verdict.get("attempt"), verdict.get("stage"),
                           verdict.get("iteration"), verdict.get("judge") or "-", fmt_score(verdict.get("score"), 1),
                           "yes" if verdict.get("accepted") else "no", f"{check[0]}/{check[1]}" if check else "-",
                           verdict.get("feedback") or ""])
    knowledge_rows = [[k.attempt, k.kind, k.source_attempt, fmt_score(k.score), fmt_score(k.similarity, 3), k.text]
                      for k in run.knowledge]
    quality_rows, quality_note = _quality(run)
    notes = []
    if quality_note:
        notes.append(quality_note)
    if estimated:
        notes.append(f"{totals.estimated_calls} of {totals.calls} calls have estimated token counts "
                     "(no usage from the provider; scripted replies are estimated as len/4).")
    if cost.unpriced_calls:
        unpriced = ", ".join(sorted(cost.unpriced_models))
        notes.append(f"{cost.unpriced_calls} call(s) to models without a price ({unpriced})"
                     " are shown as n/a and left out of the cost; add their prices with a price file.")
    notes.append(f"Prices: list prices as of {PRICES_AS_OF} unless overridden; scripted replays cost 0.")
    if not run.has_trace:
        notes.append("No trace events recorded (no events.jsonl): per-node timeline and diffs are unavailable.")
    if run.unattributed:
        notes.append(f"{len(run.unattributed)} model call(s) could not be matched to a trace event.")
    return _Report(run=run, title=f"Run report: {run.task_id}", facts=facts, attempts_headers=headers,
                   attempts_rows=rows, models_headers=models_headers, models_rows=models_rows,
                   stage_rows=stage_rows, judge_rows=judge_rows,
                   knowledge_rows=knowledge_rows, quality_rows=quality_rows, notes=notes)


def _stage_index(name: str) -> int:
    return STAGE_ORDER.index(name) if name in STAGE_ORDER else len(STAGE_ORDER)


MODEL_HEADERS = ["model", "kind", "roles", "calls", "input tokens", "output tokens", "USD per 1M in / out", "cost",
                 "description"]
STAGE_HEADERS = ["stage", "calls", "input tokens", "output tokens", "total tokens", "cost"]
JUDGE_HEADERS = ["attempt", "stage", "iteration", "judge", "score", "accepted", "check tests", "feedback"]
KNOWLEDGE_HEADERS = ["given to attempt", "kind", "from attempt", "its score", "similarity", "text"]


# --------------------------------------------------------------------------- Markdown


def render_markdown(run: RunView, report: _Report | None = None) -> str:
    report = report or _build(run)
    out = [f"# {md(report.title)}", ""]
    if run.oracle:
        out += ["> **Oracle setting:** attempts were selected with the hidden unit tests; the scores are an upper "
                "bound, not a fair result.", ""]
    out += [f"- **{md(k)}**: {md(v)}" for k, v in report.facts]
    out += ["", f"## Attempts (score: {md(_score_label(run))})", "",
            _md_table(report.attempts_headers, report.attempts_rows), ""]
    out += ["## Models", "", _md_table(report.models_headers, report.models_rows) if report.models_rows
            else "No model calls recorded.", ""]
    out += ["## Tokens per stage", "", _md_table(STAGE_HEADERS, report.stage_rows) if report.stage_rows
            else "No model calls recorded.", ""]
    out += ["## Judge scores per stage iteration", "",
            _md_table(JUDGE_HEADERS, report.judge_rows, limits={7: 200}) if report.judge_rows
            else "No verdicts recorded.", ""]
    if run.kind == "livecoder":
        out += ["## Knowledge given to attempts", "",
                _md_table(KNOWLEDGE_HEADERS, report.knowledge_rows, limits={5: 300})
                if report.knowledge_rows else "No knowledge entries were given to any attempt.", ""]
    out += ["## Final repository: non-functional figures", ""]
    out += [_md_table(["figure", "value"], report.quality_rows) if report.quality_rows else "Not measured.", ""]
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


# --------------------------------------------------------------------------- HTML


_CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;color:#212529;background:#f8f9fa;
margin:0;padding:24px}
main{max-width:1120px;margin:0 auto}
h1{font-size:24px;margin:0 0 12px}
h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid #dee2e6;padding-bottom:4px}
.banner{background:#fff3bf;border:1px solid #fab005;padding:8px 12px;border-radius:6px;margin:8px 0 16px;
font-weight:600}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:#fff;border:1px solid #dee2e6;
border-radius:6px;padding:12px 16px;margin:0}
dl.facts dt{font-weight:600;color:#495057}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.charts{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:16px}
.card{background:#fff;border:1px solid #dee2e6;border-radius:6px;padding:10px 12px}
.card.wide{grid-column:1/-1}
.card h3{font-size:14px;margin:0 0 6px;color:#495057}
svg.chart{width:100%;height:auto;display:block}
svg .tick{font-size:11px;fill:#495057}
svg .note{font-size:10px;fill:#868e96}
svg .legend{font-size:11.5px;fill:#343a40}
svg .bar-note{font-size:11px;fill:#343a40}
svg .axis-title{font-size:11px;fill:#495057}
svg .panel-title{font-size:13px;font-weight:600;fill:#343a40}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px}
th,td{border:1px solid #dee2e6;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f1f3f5;overflow-wrap:normal;word-break:normal;hyphens:none}
td.num,th.num{text-align:right;white-space:nowrap}
td.wrap{overflow-wrap:anywhere}
table.timeline td{font-size:12px}
details{background:#fff;border:1px solid #dee2e6;border-radius:6px;padding:6px 10px;margin:6px 0}
summary{cursor:pointer;font-weight:600}
pre.diff{font:12px/1.35 "DejaVu Sans Mono",Menlo,Consolas,monospace;background:#f8f9fa;padding:8px;overflow-x:auto;
margin:6px 0;white-space:pre}
pre.diff .add{color:#2b8a3e;background:#ebfbee}
pre.diff .del{color:#c92a2a;background:#fff5f5}
pre.diff .hunk{color:#1971c2}
ul.notes{margin:0;padding-left:20px}
.muted{color:#868e96}
footer{margin-top:28px;color:#868e96;font-size:12px}
"""


def _diff_html(text: str) -> str:
    lines = []
    for line in text.splitlines():
        cls = ("add" if line.startswith("+") and not line.startswith("+++") else
               "del" if line.startswith("-") and not line.startswith("---") else
               "hunk" if line.startswith("@@") else "")
        lines.append(f'<span class="{cls}">{esc(line)}</span>' if cls else esc(line))
    return "\n".join(lines)


def _charts(run: RunView) -> list[tuple[str, str, bool]]:
    """(title, svg, wide) of each chart that has data; half-width charts come in pairs."""
    half: list[tuple[str, Any]] = []  # (title, draw(width) -> svg)
    wide: list[tuple[str, str]] = []
    attempts = [a for a in run.attempts if a.attempt is not None]
    if attempts:
        labels = [f"#{a.attempt}" for a in attempts]
        scores = [None if a.reused else a.score for a in attempts]
        best, running = [], None
        for a in attempts:
            if a.best_score is not None:
                running = a.best_score
            elif a.score is not None and not a.reused:
                running = a.score if running is None else max(running, a.score)
            best.append(running)
        unit = [a.unit.get("pass_rate") if isinstance(a.unit, dict) and not a.reused else None for a in attempts]
        series = [("score", COLORS["score"], "line", scores), ("best so far", COLORS["best"], "step", best)]
        if any(u is not None for u in unit) and not run.oracle:
            series.append(("unit tests (reported only)", COLORS["unit"], "dot", unit))
        markers = ["reused" if a.reused else ("budget" if a.stopped else "") for a in attempts]
        title = f"Score per attempt ({_score_label(run)})"
        half.append((title, lambda w, t=title: line_chart(t, labels, series, markers=markers, width=w)))
        notes = ["reused" if a.reused else (a.cost.label(short=True) if a.tokens.calls else "") for a in attempts]
        stacks = [("input tokens", COLORS["input"], [a.tokens.input_tokens for a in attempts]),
                  ("output tokens", COLORS["output"], [a.tokens.output_tokens for a in attempts])]
        half.append(("Tokens and cost per attempt",
                     lambda w: stacked_bars("Tokens and cost per attempt", labels, stacks, notes=notes, width=w)))
    stages = run.stage_totals()
    if stages:
        names = list(stages)
        stage_stacks = [("input tokens", COLORS["input"], [stages[n][0].input_tokens for n in names]),
                        ("output tokens", COLORS["output"], [stages[n][0].output_tokens for n in names])]
        stage_notes = [stages[n][1].label(short=True) for n in names]
        half.append(("Tokens and cost per stage",
                     lambda w: stacked_bars("Tokens and cost per stage", names, stage_stacks, notes=stage_notes,
                                            width=w)))
    verdicts = run.judge_iterations()
    checks = [v for v in verdicts if v.get("check") and v["check"][1]]
    if checks:
        multi = len({v.get("attempt") for v in checks}) > 1
        check_labels = [f"A{v.get('attempt')}·{v.get('iteration')}" if multi else f"it {v.get('iteration')}"
                        for v in checks]
        rates = [v["check"][0] / v["check"][1] for v in checks]
        breaks = [i for i in range(1, len(checks)) if checks[i].get("attempt") != checks[i - 1].get("attempt")]
        half.append(("Check tests passed per code iteration", lambda w: line_chart(
            "Check tests passed per code iteration", check_labels,
            [("check tests passed", COLORS["best"], "line", rates)], width=w, breaks=breaks)))
    if verdicts:
        threshold = None
        settings = (run.summary or {}).get("settings") or (run.manifest or {}).get("settings") or {}
        if isinstance(settings.get("threshold"), (int, float)):
            threshold = float(settings["threshold"])
        wide.append(("Judge scores per stage iteration (0-10)",
                     judge_chart("Judge scores per stage iteration", verdicts, threshold)))
    charts: list[tuple[str, str, bool]] = []
    for i, (title, draw) in enumerate(half):
        alone = i == len(half) - 1 and len(half) % 2 == 1
        charts.append((title, draw(1060 if alone else 520), alone))
    charts += [(title, svg, True) for title, svg in wide]
    return charts


def render_html(run: RunView, report: _Report | None = None) -> str:
    report = report or _build(run)
    parts = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
             "img-src data:\">",
             f"<title>{esc(report.title)}</title><style>{_CSS}</style></head><body><main>",
             f"<h1>{esc(report.title)}</h1>"]
    if run.oracle:
        parts.append('<div class="banner">Oracle setting: attempts were selected with the hidden unit tests; '
                     'the scores are an upper bound, not a fair result.</div>')
    if any(m["scripted"] for m in run.models().values()):
        parts.append('<div class="banner">Scripted replay: the answers were replayed from a script, not produced '
                     'by a model.</div>')
    parts.append('<dl class="facts">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in report.facts)
                 + "</dl>")
    charts = _charts(run)
    if charts:
        parts.append('<h2 id="charts">Charts</h2><div class="charts">')
        for title, svg, wide in charts:
            parts.append(f'<div class="card{" wide" if wide else ""}"><h3>{esc(title)}</h3>{svg}</div>')
        parts.append("</div>")
    parts.append(f"<h2 id=\"attempts\">Attempts <span class=\"muted\">(score: {esc(_score_label(run))})</span></h2>")
    parts.append('<div class="scroll">' + _html_table(report.attempts_headers, report.attempts_rows,
                                                      numeric=(1, 8, 9, 10)) + "</div>")
    parts.append("<h2 id='models'>Models</h2>")
    parts.append('<div class="scroll">' + _html_table(report.models_headers, report.models_rows, numeric=(3, 4, 5, 7),
                                                      wrap=(8,))
                 + "</div>" if report.models_rows else "<p>No model calls recorded.</p>")
    parts.append("<h2 id='stages'>Tokens per stage</h2>")
    parts.append(_html_table(STAGE_HEADERS, report.stage_rows, numeric=(1, 2, 3, 4, 5)) if report.stage_rows
                 else "<p>No model calls recorded.</p>")
    parts.append("<h2 id='judges'>Judge scores per stage iteration</h2>")
    parts.append(_html_table(JUDGE_HEADERS, report.judge_rows, numeric=(4,), wrap=(7,)) if report.judge_rows
                 else "<p>No verdicts recorded.</p>")
    if run.kind == "livecoder":
        parts.append("<h2 id='knowledge'>Knowledge given to attempts</h2>")
        parts.append(_html_table(KNOWLEDGE_HEADERS, report.knowledge_rows, numeric=(3, 4), wrap=(5,))
                     if report.knowledge_rows
                     else "<p>No knowledge entries were given to any attempt.</p>")
    parts.append("<h2 id='quality'>Final repository: non-functional figures</h2>")
    parts.append(_html_table(["figure", "value"], report.quality_rows, numeric=(1,)) if report.quality_rows
                 else "<p>Not measured.</p>")
    changes = diffs(run)
    if changes:
        parts.append("<h2 id='changes'>Changes between iterations</h2>")
        for d in changes:
            head = (f"attempt {d.attempt} · {d.stage} iteration {d.iteration} · {d.path}"
                    + (f" (+{d.added} −{d.removed})" if d.kind != "ssat" else f" ({d.diff.splitlines()[0][:120]})"))
            parts.append(f'<details><summary>{esc(head)}</summary><pre class="diff">{_diff_html(d.diff)}</pre>'
                         "</details>")
    if run.rows:
        parts.append("<h2 id='timeline'>Timeline</h2><details><summary>"
                     f"{len(run.rows)} trace events</summary><div class=\"scroll\">")
        parts.append(_html_table(
            ["t (s)", "attempt", "stage", "node", "iter", "judge", "check", "tokens", "cost", "dur (s)", "detail"],
            [[f"{r.offset_s:.2f}" if r.offset_s is not None else "", r.attempt if r.attempt is not None else "",
              r.stage or "", r.node, r.iteration or "", ", ".join(f"{s:g}" for s in r.scores),
              f"{r.check[0]}/{r.check[1]}" if r.check else "", f"{r.total_tokens:,}" if r.calls else "",
              r.cost.label() if r.calls else "", f"{r.duration_s:.2f}" if r.duration_s is not None else "",
              r.detail] for r in run.rows], numeric=(0, 7, 8, 9), cls="timeline", wrap=(10,)))
        parts.append("</div></details>")
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    parts.append(f'<h2 id="notes">Notes</h2><ul class="notes">{notes}</ul>')
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f"<footer>Generated by projectgen report from {esc(run.path)} on {esc(generated)}.</footer>")
    parts.append("</main></body></html>")
    return "\n".join(parts)


# --------------------------------------------------------------------------- entry point


def write_report(run_dir: Path | str, out_dir: Path | str | None = None,
                 prices: PriceTable | None = None) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` for a run folder; returns their paths."""
    run = load_run(run_dir, prices=prices)
    out = Path(out_dir) if out_dir is not None else run.path
    if out.exists() and not out.is_dir():
        raise ProjectGenError(f"{out}: not a folder (--out takes a folder for report.md and report.html)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        report = _build(run)
        md_path, html_path = out / layout.REPORT_MD, out / layout.REPORT_HTML
        md_path.write_text(render_markdown(run, report), encoding="utf-8")
        html_path.write_text(render_html(run, report), encoding="utf-8")
    except OSError as exc:
        raise ProjectGenError(f"{out}: cannot write the report ({exc.strerror or exc})") from None
    return md_path, html_path
