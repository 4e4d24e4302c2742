"""What a run report says, shared by the Markdown and the HTML rendering.

`report_contents(run)` gathers the title, the facts (task, status, final choice,
duration, calls, tokens, cost, models), the tables (attempts, models, tokens per stage,
judge iterations, knowledge given to attempts, non-functional figures of the final
repository) and the notes. Cells are plain values; each renderer escapes them. Selection
by the hidden unit tests is labelled as the oracle setting wherever a score appears.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from projectgen.config import fidelity_settings
from projectgen.errors import ProjectGenError
from projectgen.evaluation.integrity_flags import describe_counts
from projectgen.inspection.formatting import fmt_score, fmt_seconds
from projectgen.inspection.views import RunView
from projectgen.llm.naming import REFERENCE_LABEL
from projectgen.llm.pricing import PRICES_AS_OF
from projectgen.runs.methods import DEFAULT_METHOD, describe_method
from projectgen.runs.run_log import UNIT
from projectgen.runs.trace import STAGES

ATTEMPT_HEADERS = ["attempt", "score", "check tests", "unit tests (reported)", "stage iterations (judge scores)",
                   "best so far", "knowledge in", "knowledge added", "tokens", "cost", "time"]
MODEL_HEADERS = ["model", "kind", "roles", "calls", "input tokens", "output tokens", "USD per 1M in / out", "cost",
                 "description"]
STAGE_HEADERS = ["stage", "calls", "input tokens", "output tokens", "total tokens", "cost"]
JUDGE_HEADERS = ["attempt", "stage", "iteration", "judge", "score", "accepted", "check tests", "feedback"]
KNOWLEDGE_HEADERS = ["given to attempt", "kind", "from attempt", "its score", "similarity", "text"]


@dataclass
class ReportContents:
    """The facts, tables and notes of a run report, before rendering."""

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


def score_label(run: RunView) -> str:
    """What a score of this run measures (the oracle setting named as such)."""
    if run.kind == "projectgen":
        return "unit-test pass rate"
    if run.oracle:
        return "hidden unit-test pass rate (ORACLE selection)"
    return "check-test pass rate"


def report_contents(run: RunView) -> ReportContents:
    """Everything the report of `run` shows; see the module docstring."""
    models_headers, models_rows = _model_table(run)
    stage_rows = [[stage, t.calls, f"{t.input_tokens:,}", f"{t.output_tokens:,}", f"{t.total_tokens:,}", c.label()]
                  for stage, (t, c) in run.stage_totals().items()]
    knowledge_rows = [[k.attempt, k.kind, k.source_attempt, fmt_score(k.score), fmt_score(k.similarity, 3), k.text]
                      for k in run.knowledge]
    quality_rows, quality_note = _quality(run)
    return ReportContents(title=f"Run report: {run.task_id}", facts=_facts(run), attempts_headers=list(ATTEMPT_HEADERS),
                          attempts_rows=_attempt_rows(run), models_headers=models_headers, models_rows=models_rows,
                          stage_rows=stage_rows, judge_rows=_judge_rows(run), knowledge_rows=knowledge_rows,
                          quality_rows=quality_rows, notes=_notes(run, quality_note))


def shows_attempts(run: RunView, report: ReportContents) -> bool:
    """Whether the report has an attempts section: a run of the attempts graph or a ProjectGen pass has one; a
    protocol's own unit (reflect, refine, an external system) only when it recorded attempts."""
    return bool(report.attempts_rows) or run.kind in ("livecoder", "projectgen")


def banners(run: RunView) -> list[str]:
    """What a reader must know before any number of the report: set in a banner at the top."""
    out = []
    if run.oracle:
        out.append("Oracle setting: attempts were selected with the hidden unit tests; the scores are an upper "
                   "bound, not a fair result.")
    if any(m["scripted"] for m in run.models().values()):
        out.append("Scripted replay: the answers were replayed from a script, not produced by a model.")
    faults = run.injected_faults
    if faults:
        out.append(f"Fault injection: faults were injected into the model calls ({faults}); the failed calls, "
                   "retries and any early stop they caused are deliberate, not the model's or the provider's.")
    return out


def _facts(run: RunView) -> list[tuple[str, str]]:
    totals, cost = run.totals, run.cost
    facts = [("task", run.task_id)]
    if run.run_id:
        facts.append(("run id", run.run_id))
    facts.append(("kind", run.kind_label))
    if run.kind == "livecoder":
        facts.append(("method", method_fact((run.record or {}).get("method") or DEFAULT_METHOD)))
    facts.append(("status", run.status))
    if run.kind == "livecoder":
        selection = run.selection or "check"
        facts.append(("selection", f"{selection} tests" + (" — ORACLE setting: the hidden unit tests chose the "
                                                             "attempts; scores are an upper bound" if run.oracle
                                                             else " (visible check tests)")))
    # a protocol's own unit (reflect, refine, external) is fed as its protocol says, not by settings.feedback_suite
    feedback = run.feedback_suite if run.kind in ("livecoder", "projectgen") else None
    if feedback == "unit":
        facts.append(("execution feedback", "the hidden unit tests' output was given to the generators (LiveCoder's "
                                            "protocol on benchmarks without visible tests; settings.feedback_suite)"))
    elif feedback == "check" and run.selection == "unit" and run.knowledge_given_selection_score:
        facts.append(("execution feedback", "the visible check tests' output (settings.feedback_suite); the "
                                            "knowledge agent was also given each attempt's hidden unit-test pass "
                                            "rate, never their output, and its entries carry it into later "
                                            "attempts (attempt_settings.selection)"))
    elif feedback == "check":
        facts.append(("execution feedback", "the visible check tests' output only (settings.feedback_suite)"))
    recorded = run.recorded_settings if run.kind in ("livecoder", "projectgen") else None
    if recorded is not None:
        settings, attempt_settings = recorded
        chosen = fidelity_settings(settings, attempt_settings)
        facts.append(("settings (docs/fidelity.md)",
                      f"profile {settings.get('profile', 'projectgen')}; "
                      + ", ".join(f"{name} {value}" for name, value in chosen.items())))
    final = run.final
    if final:
        facts.append(("final choice", f"attempt {final.get('attempt')} ({final.get('source')}), score "
                                      f"{fmt_score(final.get('score'))} ({score_label(run)})"))
    unit = run.log.score(UNIT)
    if unit is not None and unit.total is not None:
        facts.append(("final unit tests", f"{unit.passed}/{unit.total} passed (hidden tests, reported only)"))
    if run.stopped:
        facts.append(("stopped", run.stopped))
    if flags := run.integrity_flags():
        facts.append(("integrity flags", f"{describe_counts(flags)}: known gaming moves in the code under test, "
                                         f"listed by `projectgen trace {run.path}`; they do not change the score"))
    facts.append(("duration", fmt_seconds(run.duration_s)))
    failed = f" ({totals.failed_calls} failed)" if totals.failed_calls else ""
    facts.append(("model calls", f"{totals.calls}{failed}"))
    prompted = [c for c in run.calls if c.prompt_id]
    if prompted and run.folder.prompts.is_file():
        distinct = len({c.prompt_id for c in prompted})
        facts.append(("prompts", f"the exact prompt of {len(prompted)} of {totals.calls} calls ({distinct} distinct) "
                                 f"in {run.folder.prompts.name}; `projectgen trace {run.path} --call N` prints call N's "
                                 f"(numbered by `--calls`)"))
    facts.append(("tokens", f"{totals.input_tokens:,} in + {totals.output_tokens:,} out"
                            + (" (estimated: scripted replies are counted as len/4)" if totals.estimated_calls else "")))
    facts.append(("cost", cost.label()))
    models = run.models()
    if models:
        facts.append(("models", "; ".join(_model_fact(name, info) for name, info in models.items())))
    return facts


def _model_fact(name: str, info: dict[str, Any]) -> str:
    """How the facts name a model; a replay as one (the reference replay's label says so itself)."""
    if not info["scripted"]:
        return name
    label = name[len("scripted:"):]
    return label if label == REFERENCE_LABEL else f"scripted replay (not a model): {label}"


def method_fact(name: str) -> str:
    """The method's name and label (the name alone for a method this version does not know)."""
    try:
        return f"{name}: {describe_method(name).label}"
    except ProjectGenError:
        return name


def _attempt_rows(run: RunView) -> list[list[Any]]:
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
    return rows


def _stage_index(name: str) -> int:
    return STAGES.index(name) if name in STAGES else len(STAGES)


def _model_table(run: RunView) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows of the models table (the description column only when some model has one)."""
    rows = []
    descriptions = (run.record or {}).get("model_descriptions") or {}
    for name, info in run.models().items():
        price = info["price"]
        kind = "scripted replay (not a model)" if info["scripted"] else "model"
        described = sorted({d for r, d in descriptions.items() if r in info["roles"]})
        rows.append([name, kind, ", ".join(info["roles"]), info["totals"].calls,
                     f"{info['totals'].input_tokens:,}", f"{info['totals'].output_tokens:,}",
                     "0 (replay)" if info["scripted"] else
                     (f"${price.input:g} / ${price.output:g}" if price else "n/a (no price)"),
                     info["cost"].label(), "; ".join(described)])
    headers = list(MODEL_HEADERS)
    if not any(row[-1] for row in rows):  # no descriptions recorded: drop the empty column
        headers.pop()
        rows = [row[:-1] for row in rows]
    return headers, rows


def _judge_rows(run: RunView) -> list[list[Any]]:
    rows = []
    for verdict in run.judge_iterations():
        check = verdict.get("check")
        rows.append(["run" if verdict.get("attempt") is None else verdict.get("attempt"), verdict.get("stage"),
                     verdict.get("iteration"), verdict.get("judge") or "-", fmt_score(verdict.get("score"), 1),
                     "yes" if verdict.get("accepted") else "no", f"{check[0]}/{check[1]}" if check else "-",
                     verdict.get("feedback") or ""])
    return rows


def _quality(run: RunView) -> tuple[list[list[Any]], str | None]:
    """Non-functional figures of the final repository (radon), or why they are missing."""
    repo = run.folder.repository
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


def _notes(run: RunView, quality_note: str | None) -> list[str]:
    totals, cost = run.totals, run.cost
    notes = []
    if quality_note:
        notes.append(quality_note)
    if totals.estimated_calls:
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
    return notes
