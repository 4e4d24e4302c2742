"""`projectgen trace DIR` and `projectgen report DIR`: look into a finished (or running) run folder.

As elsewhere in the CLI, imports happen inside the commands, and a user mistake (a folder
that is not a run, an attempt the run does not have, a bad price file) raises
`ProjectGenError`: one line on stderr, exit code 2.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from projectgen.cli.exit_codes import EXIT_OK
from projectgen.cli.options import add_prices_option, positive_int, prices_from_args
from projectgen.cli.tables import make_console

TRACE_STAGES = ("architecture", "skeleton", "code", "knowledge")
DIFF_STYLES = {"add": "green", "del": "red", "hunk": "cyan", "": ""}


def add_commands(subparsers) -> None:
    """Add `trace` and `report` to the CLI's sub-parsers."""
    trace = subparsers.add_parser(
        "trace", help="show a run's timeline: nodes, judge scores, check tests, tokens and cost",
        description="The timeline of a run folder from its trace (events.jsonl) and model calls (usage.jsonl): "
                    "one row per graph node with its attempt, stage, iteration, judge score, check-test result, "
                    "the tokens and cost of its model calls, and what it changed.")
    trace.add_argument("run_dir", type=Path, metavar="DIR", help="a run folder (projectgen run --out DIR)")
    trace.add_argument("--diff", action="store_true",
                       help="print the recorded diffs between iterations (files and architecture tree) instead")
    trace.add_argument("--attempt", type=positive_int, default=None, metavar="N", help="only attempt N")
    trace.add_argument("--stage", choices=TRACE_STAGES, default=None, help="only one stage")
    trace.add_argument("--calls", action="store_true",
                       help="also list every model call (numbered) and the node it went to")
    trace.add_argument("--json", action="store_true",
                       help="print the timeline (and with --calls the calls) as one JSON document instead of tables")
    trace.add_argument("--call", type=positive_int, default=None, metavar="N",
                       help="print the exact prompt (every message) of call N of --calls, and its reply, instead")
    add_prices_option(trace)
    trace.set_defaults(handler=cmd_trace)

    report = subparsers.add_parser(
        "report", help="write a Markdown and a self-contained HTML report of a run",
        description="Write report.md and report.html (inline CSS and SVG charts, no scripts, nothing fetched): "
                    "scores per attempt, tokens and cost, judge scores per stage iteration, models, knowledge "
                    "and the final repository's maintainability index.")
    report.add_argument("run_dir", type=Path, metavar="DIR", help="a run folder (projectgen run --out DIR)")
    report.add_argument("--out", type=Path, default=None, metavar="DIR", help="output folder (default: DIR itself)")
    add_prices_option(report)
    report.set_defaults(handler=cmd_report)


def _prices(args: argparse.Namespace):
    return prices_from_args(getattr(args, "prices", None))[0]


def cmd_report(args: argparse.Namespace) -> int:
    from projectgen.inspection import write_report

    md_path, html_path = write_report(args.run_dir, args.out, prices=_prices(args))
    console = make_console()
    console.print(f"report: {md_path}", highlight=False, markup=False)
    console.print(f"report: {html_path}", highlight=False, markup=False)
    return EXIT_OK


def cmd_trace(args: argparse.Namespace) -> int:
    from projectgen.errors import ProjectGenError
    from projectgen.inspection import attempt_numbers, diffs, filter_calls, load_run, timeline

    run = load_run(args.run_dir, prices=_prices(args))
    console = make_console(piped_width=TRACE_PIPED_WIDTH)
    if args.attempt is not None:
        known = attempt_numbers(run)
        if args.attempt not in known:
            have = (f"attempts {', '.join(map(str, known))}" if known else "no numbered attempts")
            raise ProjectGenError(f"{args.run_dir}: no attempt {args.attempt} in this run (it has {have})")
    if args.json:
        if args.diff or args.call is not None:
            raise ProjectGenError("trace --json prints the timeline and calls; leave out --diff and --call")
        from projectgen.inspection.trace_json import trace_document

        knowledge = [k for k in run.knowledge if args.attempt is None or k.attempt == args.attempt]
        document = trace_document(run, timeline(run, args.attempt, args.stage), knowledge,
                                  filter_calls(run, args.attempt, args.stage) if args.calls else None)
        print(json.dumps(document, indent=1, default=str))
        return EXIT_OK
    if args.call is not None:
        from projectgen.inspection import call_prompt

        prompt = call_prompt(run, args.call)
        _print_header(console, run)
        _print_prompt(console, prompt)
        return EXIT_OK
    _print_header(console, run)
    if args.diff:
        _print_diffs(console, run, diffs(run, args.attempt, args.stage))
        return EXIT_OK
    if not run.has_trace:
        console.print(_clean(f"no trace events recorded in {run.path} (no events.jsonl: a ProjectGen pipeline run "
                             "folder, or a run that has not started); stage summary from summary.json and "
                             "usage.jsonl:"), highlight=False, markup=False)
        _print_stage_summary(console, run)
    else:
        rows = timeline(run, args.attempt, args.stage)
        _print_timeline(console, rows)
        _print_knowledge(console, run, args.attempt)
    if run.has_trace and run.unattributed and args.attempt is None and args.stage is None:
        console.print(f"[yellow]{len(run.unattributed)} model call(s) matched no trace event[/yellow] "
                      "(made after the last event, e.g. a killed run); see --calls", highlight=False)
    if args.calls:
        _print_calls(console, run, filter_calls(run, args.attempt, args.stage))
    return EXIT_OK


# --------------------------------------------------------------------------- printing


def _clean(text: str) -> str:
    """Run data is untrusted: control characters (terminal escapes) are shown, not sent to the terminal."""
    if text.isprintable():
        return text
    return "".join(ch if ch in "\n\t" or ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)


def _text(value, style: str = ""):
    """Plain text for rich (no markup is read from run data), cleaned of control characters."""
    from rich.text import Text

    return Text(_clean("" if value is None else str(value)), style=style)


def _print_header(console, run) -> None:
    from projectgen.llm.pricing import is_scripted
    from projectgen.inspection import fmt_score, fmt_seconds

    totals, cost = run.totals, run.cost
    parts = [run.task_id]
    if run.run_id:
        parts.append(f"run {run.run_id}")
    evolve = run.log.kind == "evolve"
    parts.append(run.kind_label)
    parts.append(run.status)
    parts.append(fmt_seconds(run.duration_s))
    parts.append(f"{totals.calls} calls, {totals.total_tokens:,} tokens"
                 + (" (estimated)" if totals.estimated_calls else ""))
    parts.append(f"cost {cost.label()}")
    console.print(_clean(" · ".join(parts)), highlight=False, markup=False)
    models = sorted({c.model for c in run.calls})
    if models:
        named = [("scripted replay, not a model: " + m.split(":", 1)[1]) if is_scripted(m) else m for m in models]
        console.print(_clean("models: " + "; ".join(named)), highlight=False, markup=False)
    final = run.final
    if final:
        oracle = " [ORACLE: selected with the hidden unit tests]" if run.oracle else ""
        console.print(_clean(f"final: attempt {final.get('attempt')} ({final.get('source')}), score "
                             f"{fmt_score(final.get('score'))}{oracle}"), highlight=False, markup=False)
    if run.feedback_suite == "unit":
        console.print("execution feedback: the hidden unit tests' output was given to the generators "
                      "(settings.feedback_suite)", highlight=False, markup=False)
    if run.stopped:
        console.print(_clean(f"stopped: {run.stopped}"), highlight=False, markup=False)
    if evolve:
        _print_evolution(console, run)
    _print_integrity_flags(console, run.integrity_flags())


def _print_integrity_flags(console, flags) -> None:
    """The run's integrity flags, one line each (nothing without any): where to look, never a change of score."""
    if not flags:
        return
    console.print(f"integrity flags: {len(flags)} (known gaming moves in the code under test; they do not change "
                  "the score, docs/sandbox.md)", highlight=False, markup=False)
    for flag in flags:
        console.print(_text(f"  {flag.kind:<20} {flag.where()}  {flag.excerpt}"), highlight=False)


def _print_evolution(console, run) -> None:
    """An evolve run's start, its tree diff and what it redid and kept (its `evolve_plan` trace event)."""
    start = next((e for e in run.events if e.get("event") in ("run_start", "run_resumed") and e.get("base_run")), {})
    if start:
        console.print(_clean(f"evolved from: {start['base_run']}"), highlight=False, markup=False)
    plan = next((e for e in reversed(run.events) if e.get("event") == "evolve_plan"), None)
    if plan is None:
        console.print("tree diff: not planned yet (the architecture stage has not finished)", highlight=False)
        return
    console.print("tree diff (the base run's tree -> the revised tree):", highlight=False)
    for line in str(plan.get("diff_text") or "no changes").splitlines():
        console.print(_text(f"  {line}"), highlight=False)
    redo = ", ".join(plan.get("redo") or []) or "nothing"
    importers = ", ".join(plan.get("importers") or []) or "none"
    console.print(_clean(f"redone: {redo} (importers: {importers}); removed: "
                         f"{', '.join(plan.get('removed') or []) or 'none'}; kept byte for byte: {plan.get('kept')} "
                         "file(s)"), highlight=False, markup=False)


TIMELINE_COLUMNS = (("t (s)", "right"), ("att", "right"), ("stage", "left"), ("node", "left"), ("it", "right"),
                    ("judge", "right"), ("check", "right"), ("tokens", "right"), ("cost", "right"),
                    ("dur (s)", "right"), ("detail", "left"))
TRACE_PIPED_WIDTH = 160  # a file or a pager gets the table folded to this, not one line as wide as its longest detail
DETAIL_MIN_WIDTH = 36  # below this the detail column is unreadable: rows then carry it on a line of their own


def _timeline_cells(row) -> dict[str, Any]:
    """One row's cells by column name, as rich Text (run data is never read as markup)."""
    if row.event != "node":
        style = "bold" if row.event in ("run_start", "run_resumed", "run_end") else "dim"
        detail = _text(row.detail, style)
        node = _text(f"end of {row.node}" if row.event == "stage_end" else row.event, style)
    else:
        detail, node = _text(row.detail), _text(row.node)
    tokens = (("~" if row.tokens_estimated else "") + f"{row.total_tokens:,}") if row.calls else ""
    if row.calls_by_time:
        tokens += "*"
    return {
        "t (s)": _text(f"{row.offset_s:.2f}" if row.offset_s is not None else ""),
        "att": _text(row.attempt if row.attempt is not None else ""), "stage": _text(row.stage or ""), "node": node,
        "it": _text(row.iteration if row.iteration is not None else ""),
        "judge": _text(", ".join(f"{s:g}" for s in row.scores), "green" if row.accepted else "red" if row.scores else ""),
        "check": _text(f"{row.check[0]}/{row.check[1]}" if row.check else "",
                       "green" if row.check and row.check[0] == row.check[1] else "yellow" if row.check else ""),
        "tokens": _text(tokens),
        # a replay costs nothing: "$0" on every row says nothing the header does not
        "cost": _text(row.cost.label() if row.calls and row.cost.label() != "$0" else ""),
        "dur (s)": _text(f"{row.duration_s:.2f}" if row.duration_s is not None else ""), "detail": detail}


def _print_timeline(console, rows) -> None:
    """The timeline as a table of the columns some row fills. When the terminal leaves the detail column too
    narrow to read, each row is one line of the other columns and its detail follows on its own, indented."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    cells = [_timeline_cells(row) for row in rows]
    columns = [(name, justify) for name, justify in TIMELINE_COLUMNS
               if name in ("t (s)", "node", "detail") or any(c[name].plain for c in cells)]
    widths = {name: max([len(name), *(c[name].cell_len for c in cells)]) for name, _ in columns}
    detail_apart = console.width - sum(widths[name] + 2 for name, _ in columns if name != "detail") < DETAIL_MIN_WIDTH
    if not detail_apart:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True,
                      header_style="bold")
        for name, justify in columns:
            table.add_column(name, justify=justify, overflow="fold", no_wrap=name != "detail")
        for c in cells:
            table.add_row(*(c[name] for name, _ in columns))
        console.print(table)
    else:
        console.print(_fixed_line({name: Text(name, style="bold") for name, _ in columns}, columns, widths),
                      highlight=False)
        for c in cells:
            console.print(_fixed_line(c, columns, widths), highlight=False)
            if c["detail"].plain:
                console.print(Text("    ").append_text(c["detail"]), highlight=False)
    if any(r.tokens_estimated for r in rows):
        console.print("[dim]~ estimated token counts (no provider usage); * calls matched by time, not by key[/dim]")


def _fixed_line(values: dict[str, Any], columns: list[tuple[str, str]], widths: dict[str, int]):
    """One timeline row without its detail, each cell padded to its column's width."""
    from rich.text import Text

    out = Text()
    for name, justify in columns:
        if name == "detail":
            continue
        cell = values[name].copy()
        if justify == "right":
            cell.pad_left(widths[name] - cell.cell_len)
        else:
            cell.pad_right(widths[name] - cell.cell_len)
        out.append_text(cell)
        out.append("  ")
    out.rstrip()
    return out


def _print_knowledge(console, run, attempt) -> None:
    from rich.table import Table

    entries = [k for k in run.knowledge if attempt is None or k.attempt == attempt]
    if not entries:
        return
    table = Table(title="knowledge given to attempts", header_style="bold")
    for name in ("to attempt", "kind", "from attempt", "its score", "similarity", "text"):
        table.add_column(name, overflow="fold")
    for k in entries:
        table.add_row(_text(k.attempt), _text(k.kind), _text(k.source_attempt),
                      _text(f"{k.score:.2f}" if isinstance(k.score, (int, float)) else ""),
                      _text(f"{k.similarity:.3f}" if isinstance(k.similarity, (int, float)) else ""),
                      _text(" / ".join(line.strip() for line in k.text.splitlines() if line.strip())))
    console.print(table)


def _print_stage_summary(console, run) -> None:
    from rich.table import Table

    table = Table(header_style="bold")
    for name in ("stage", "iteration", "judge", "score", "accepted", "check"):
        table.add_column(name)
    for verdict in run.judge_iterations():
        check = verdict.get("check")
        table.add_row(_text(verdict.get("stage")), _text(verdict.get("iteration")), _text(verdict.get("judge") or ""),
                      _text(verdict.get("score")), _text("yes" if verdict.get("accepted") else "no"),
                      _text(f"{check[0]}/{check[1]}" if check else ""))
    if table.row_count:
        console.print(table)
    tokens = Table(title="tokens per stage", header_style="bold")
    for name in ("stage", "calls", "input", "output", "cost"):
        tokens.add_column(name, justify="left" if name == "stage" else "right")
    for stage, (totals, cost) in run.stage_totals().items():
        tokens.add_row(_text(stage), _text(totals.calls), _text(f"{totals.input_tokens:,}"),
                       _text(f"{totals.output_tokens:,}"), _text(cost.label()))
    if tokens.row_count:
        console.print(tokens)


def _print_diffs(console, run, entries) -> None:
    from rich.rule import Rule
    from rich.text import Text

    from projectgen.inspection.views import diff_line_kind

    if not run.has_trace:
        console.print("no diffs: this run folder has no trace (events.jsonl)", highlight=False)
        return
    if not entries:
        console.print("no recorded diffs (no file or tree changed between iterations in the selection)",
                      highlight=False)
        return
    for entry in entries:
        counts = f" (+{entry.added} -{entry.removed})" if entry.kind != "ssat" else ""
        console.print(Rule(_text(f"attempt {entry.attempt} · {entry.stage} iteration {entry.iteration} · "
                                 f"{entry.path}{counts} · {entry.node}"), align="left"))
        text = Text()
        for line in entry.diff.splitlines():
            style = DIFF_STYLES[diff_line_kind(line)]
            text.append(_clean(line) + "\n", style=style)
        console.print(text, end="")


def _print_calls(console, run, calls) -> None:
    from rich.table import Table

    from projectgen.inspection import as_utc, call_number, effective_attempt
    from projectgen.llm.pricing import format_usd, is_scripted

    start = next((r.time for r in run.rows if r.time is not None), None)
    if start is None and calls:
        start = min(as_utc(c.timestamp) for c in calls)
    table = Table(title="model calls (trace --call N shows call N's prompt)", header_style="bold")
    for name, justify in (("#", "right"), ("t (s)", "right"), ("att", "right"), ("stage", "left"), ("role", "left"),
                          ("target", "left"), ("it", "right"), ("model", "left"), ("in", "right"), ("out", "right"),
                          ("latency", "right"), ("cost", "right"), ("node", "left")):
        table.add_column(name, justify=justify, overflow="fold")
    for call in calls:
        offset = (as_utc(call.timestamp) - start).total_seconds() if start is not None else None
        row = run.call_row(call)
        node = "" if row is None else f"#{row.index} {row.node}" + (" (by time)" if id(call) in run.call_by_time
                                                                      else "")
        cost = run.prices.cost_of(call)
        attempt = effective_attempt(run, call)
        table.add_row(_text(call_number(run, call)), _text(f"{offset:.2f}" if offset is not None else ""),
                      _text(attempt if attempt is not None else ""), _text(call.stage), _text(call.role),
                      _text(call.target or ""), _text(call.iteration),
                      _text("scripted replay" if is_scripted(call.model) else call.model),
                      _text(("~" if call.tokens_estimated else "") + f"{call.input_tokens:,}"),
                      _text(("~" if call.tokens_estimated else "") + f"{call.output_tokens:,}"),
                      _text(f"{call.latency_s:.2f}s" + (" ERR" if call.error else "")), _text(format_usd(cost)),
                      _text(node or ("(no event)" if run.has_trace else "")))
    console.print(table)


def _print_prompt(console, prompt) -> None:
    """One call: who asked, then each message of its prompt verbatim, then its reply."""
    from rich.rule import Rule

    call = prompt.call
    where = ", ".join(f"{name} {value}" for name, value in (
        ("attempt", call.attempt), ("stage", call.stage), ("role", call.role), ("target", call.target),
        ("iteration", call.iteration)) if value is not None)
    console.print(_clean(f"call {prompt.number}: {where}; model {call.model}; {call.input_tokens:,} tokens in, "
                         f"{call.output_tokens:,} out" + (f"; failed: {call.error}" if call.error else "")),
                  highlight=False, markup=False)
    if prompt.messages is None:
        console.print(_clean("no prompt recorded for this call (the run kept none: recorded before prompts were "
                             f"kept, or without a run folder); prompt id {call.prompt_id or '-'}"),
                      highlight=False, markup=False)
    else:
        console.print(_clean(f"prompt {call.prompt_id} ({len(prompt.messages)} messages)"), highlight=False,
                      markup=False)
        for index, message in enumerate(prompt.messages, 1):
            console.print(Rule(_text(f"message {index}: {message.get('role')}"), align="left"))
            content = message.get("content")
            console.print(_text(content if isinstance(content, str) else json.dumps(content, indent=1)),
                          soft_wrap=True)
    if prompt.reply is not None:
        console.print(Rule(_text("reply"), align="left"))
        console.print(_text(prompt.reply), soft_wrap=True)
