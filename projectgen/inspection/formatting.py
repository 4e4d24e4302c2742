"""Text helpers shared by the Markdown and HTML reports (and the ``trace`` command's header).

Everything taken from a run (file names, judge feedback, knowledge texts, model names)
is untrusted text: `esc` and `md` escape it for HTML and for a Markdown table cell.
"""
from __future__ import annotations

import html
from typing import Any


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
    """A token count in short form: 950, 12.3k, 4.5M."""
    if value is None:
        return "n/a"
    value = float(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{value:.0f}"


def fmt_score(value: Any, digits: int = 2) -> str:
    """A number with `digits` decimals, or "-" for anything that is not one."""
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def fmt_seconds(value: float | None) -> str:
    """A duration: "12.3 s" under a minute, "4 min 5 s" above, "-" when unknown."""
    if value is None:
        return "-"
    if value < 60:
        return f"{value:.1f} s"
    minutes, seconds = divmod(value, 60)
    return f"{int(minutes)} min {seconds:.0f} s"
