"""SVG charts drawn as text: lines over categories, stacked bars, and judge scores per stage iteration.

No JavaScript and nothing fetched: each function returns one ``<svg>`` element to inline
in an HTML page. Labels and titles are escaped (they come from the run).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from projectgen.inspection.formatting import esc, fmt_tokens
from projectgen.runs.trace import STAGES

COLORS = {"input": "#4c78a8", "output": "#f58518", "score": "#2f9e44", "best": "#1c7ed6", "unit": "#9c36b5",
          "accepted": "#2f9e44", "rejected": "#e03131", "grid": "#e9ecef", "axis": "#868e96", "text": "#343a40",
          "threshold": "#fab005"}


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
               width: int = 520, markers: Sequence[str] = (), breaks: Sequence[int] = ()) -> str:
    """Fractions (0 to 100 %) over categories; series: (name, color, style 'line'|'dash'|'dot'|'step', values).

    A None value leaves a gap; `breaks` are indices whose point is not joined to the previous one;
    `markers` are notes printed under the category labels.
    """
    kinds = {"line": "line", "dash": "dash", "dot": "dot", "step": "dash"}
    legend, legend_h = _legend([(name, color, kinds.get(style, "line")) for name, color, style, _ in series],
                               56, width - 16)
    frame = _Frame(width, 260 + legend_h - 22, top=legend_h + 14)
    body = _axes(frame, 1.0, 0.25, lambda v: f"{v:.0%}")
    xs = _x_positions(frame, len(labels))
    for i, (x, label) in enumerate(zip(xs, labels)):
        body.append(f'<text x="{x:.1f}" y="{frame.height - frame.bottom + 16}" text-anchor="middle" class="tick">'
                    f'{esc(label)}</text>')
        if i < len(markers) and markers[i]:
            body.append(f'<text x="{x:.1f}" y="{frame.height - frame.bottom + 30}" text-anchor="middle" '
                        f'class="note">{esc(markers[i])}</text>')
    for _name, color, style, values in series:
        body += _series(frame, xs, color, style, values, breaks)
    return _svg(frame, title, body + legend)


def _series(frame: _Frame, xs: Sequence[float], color: str, style: str, values: Sequence[float | None],
            breaks: Sequence[int]) -> list[str]:
    """One series of `line_chart`: polylines (or a step path) and, for 'line' and 'dot', its points."""
    segments: list[list[tuple[float, float]]] = [[]]
    for i, (x, v) in enumerate(zip(xs, values)):
        if v is None or i in breaks:
            if segments[-1]:
                segments.append([])
        if v is not None:
            segments[-1].append((x, frame.y(min(v, 1.0), 1.0)))
    points = [p for segment in segments for p in segment]
    if not points:
        return []
    body = []
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
    return body


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
    stages = [s for s in STAGES if any(v.get("stage") == s for v in verdicts)]
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
