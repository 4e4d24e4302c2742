"""A refinement batch's results (`projectgen refine`): rows per task run, SR-Eval's figures, and their pages.

results.json holds `RefinementResults` (versioned by `schema_version`): its `summary` has one
entry per (model, strategy, context) with Acc(k) per turn, Avg Acc, CR and ATC (fractions 0..1,
ATC in tokens), also split by level (function, repository); `rows` has every task run turn by
turn; `validation` has what the loader found for every task (its references on their own tests,
and whether each turn's tests fail on the previous turn's reference). `refinement_page` shows the same
as tables (results.md, results.html), the page adds the Acc(k) curves.
"""
from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from projectgen.protocols.refinement.refiner import STRATEGY_NAMES
from projectgen.datasets.multiturn import TaskCheck
from projectgen.evaluation.integrity_flags import IntegrityFlag, unique_flags
from projectgen.protocols.refinement.metrics import TurnMetrics, turn_metrics
from projectgen.experiments.results_writer import (Block, Bullets, Charts, Heading, ResultsPage, Table, TableBlock,
                                                   Text, integrity_section, series_color, unprotected_warning)
from projectgen.inspection.charts import line_chart

REFINEMENT_SCHEMA_VERSION = 1
LANGUAGE_NAMES = {"python": "Python", "java": "Java"}
NOTES = ("A turn passes when the code after it passes every test of that turn (and at least as many as the "
         "turn's reference). Acc(k): passed turns k over the tasks that have a turn k; Avg Acc: the mean of the "
         "Acc(k); CR: tasks with every turn passed; ATC: mean input + output tokens per task over all its turns "
         "(SR-Eval's definitions). Every turn is played whatever the earlier turns gave. basic carries the model's "
         "own code forward, golden the previous turn's reference; Cumulative Instruction carries no code, so it "
         "runs in the basic context only. Task runs that ended in an error are left out and counted apart.")


class TurnRow(BaseModel):
    """One turn of one task run."""

    turn: int
    passed: bool
    tests_passed: int = 0
    tests_total: int = 0
    status: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    failing: list[str] = Field(default_factory=list)
    error: str | None = None
    integrity_flags: list[IntegrityFlag] = Field(
        default_factory=list, description="the turn's candidate's integrity flags (evaluation.integrity_flags: where "
        "to look, never a change of score); empty in older ledgers")


class TaskRunRow(BaseModel):
    """One task played by one model under one strategy and context (a unit of the batch)."""

    key: str
    model: str
    spec: str
    strategy: str
    context: str
    task_id: str
    level: str
    language: str = Field(default="python", description="the task's language: python or java")
    status: str = Field(description="ok, or error (the run raised: a model or budget failure)")
    turns: list[TurnRow] = Field(default_factory=list)
    error: str | None = None
    folder: str | None = None
    sandbox: str = Field(default="", description='the isolation its tests ran with: "namespaces", or "none" '
                         "(unprotected: the code under test could have faked the score); empty in older ledgers")

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def verdicts(self) -> list[bool]:
        return [turn.passed for turn in self.turns]

    @property
    def tokens(self) -> int:
        return sum(turn.input_tokens + turn.output_tokens for turn in self.turns)

    def integrity_flags(self) -> list[IntegrityFlag]:
        """Its turns' integrity flags, each once (a flag every turn keeps is listed once)."""
        return unique_flags(flag for turn in self.turns for flag in turn.integrity_flags)


class SettingSummary(BaseModel):
    """SR-Eval's figures of one (model, strategy, context): over all tasks, and per level."""

    model: str
    spec: str
    model_description: str
    strategy: str
    context: str
    tasks: int
    errors: int
    acc_per_turn: list[float]
    tasks_per_turn: list[int]
    avg_acc: float
    completion_rate: float
    atc: float
    levels: dict[str, TurnMetrics] = Field(default_factory=dict)
    languages: dict[str, dict[str, TurnMetrics]] = Field(
        default_factory=dict, description="level -> language -> its figures: SR-Eval's Tables 3 and 4 give each "
        "level's Python and Java apart (a level's own figures pool its languages); absent in older results")


class RefinementResults(BaseModel):
    """What results.json holds."""

    schema_version: int = REFINEMENT_SCHEMA_VERSION
    dataset: str
    out_dir: str
    strategies: list[str]
    contexts: list[str]
    skipped_settings: list[str] = Field(default_factory=list, description="(strategy, context) pairs not run, why")
    models: dict[str, str] = Field(default_factory=dict, description="model folder name -> how reports name it")
    summary: list[SettingSummary]
    validation: list[TaskCheck] = Field(default_factory=list)
    validation_problems: list[str] = Field(default_factory=list)
    load_errors: dict[str, str] = Field(default_factory=dict)
    rows: list[TaskRunRow]
    notes: str = NOTES


def summarize_setting(model: str, spec: str, description: str, strategy: str, context: str,
                      rows: Sequence[TaskRunRow]) -> SettingSummary:
    """The figures of one setting over its rows; error rows are counted apart."""
    scored = [row for row in rows if row.ok]
    overall = turn_metrics([row.verdicts for row in scored], [row.tokens for row in scored])
    by_level: dict[str, TurnMetrics] = {}
    by_language: dict[str, dict[str, TurnMetrics]] = {}
    for level in sorted({row.level for row in scored}):
        mine = [row for row in scored if row.level == level]
        by_level[level] = turn_metrics([row.verdicts for row in mine], [row.tokens for row in mine])
        for language in sorted({row.language for row in mine}):
            theirs = [row for row in mine if row.language == language]
            by_language.setdefault(level, {})[language] = turn_metrics([row.verdicts for row in theirs],
                                                                       [row.tokens for row in theirs])
    return SettingSummary(model=model, spec=spec, model_description=description, strategy=strategy, context=context,
                          tasks=overall.tasks, errors=len(rows) - len(scored), acc_per_turn=overall.acc_per_turn,
                          tasks_per_turn=overall.tasks_per_turn, avg_acc=overall.avg_acc,
                          completion_rate=overall.completion_rate, atc=overall.atc, levels=by_level,
                          languages=by_language)


# --------------------------------------------------------------------------- tables

def fraction(value: float | None) -> str:
    """A fraction as SR-Eval prints it (four decimals); "" when there is none."""
    return "" if value is None else f"{value:.4f}"


def setting_name(entry: SettingSummary) -> str:
    return f"{entry.strategy.upper()} ({STRATEGY_NAMES.get(entry.strategy, entry.strategy)}), {entry.context}"


def summary_table(results: RefinementResults, level: str | None = None, language: str | None = None) -> Table:
    """One row per (model, strategy, context): Acc(k), Avg Acc, CR, ATC (over all tasks, one level's, or one
    level's tasks in one language)."""
    figures = [(entry, (entry.languages.get(level, {}).get(language) if language else entry.levels.get(level))
                if level else entry) for entry in results.summary]
    turns = max((len(f.acc_per_turn) for _, f in figures if f is not None), default=0)
    header = ["model", "strategy", "context", "tasks", *(f"Acc({k})" for k in range(1, turns + 1)), "Avg Acc", "CR",
              "ATC", "errors"]
    rows = []
    for entry, f in figures:
        if f is None:
            continue
        accs = [fraction(a) for a in f.acc_per_turn] + [""] * (turns - len(f.acc_per_turn))
        rows.append([entry.model, entry.strategy.upper(), entry.context, str(f.tasks), *accs, fraction(f.avg_acc),
                     fraction(f.completion_rate), f"{f.atc:.2f}", str(entry.errors) if level is None else ""])
    return header, rows


def task_table(results: RefinementResults) -> Table:
    """One row per task: each setting's turns as a string of marks (P passed, F failed, E error)."""
    settings = [(e.model, e.strategy, e.context) for e in results.summary]
    by_key = {(r.model, r.strategy, r.context, r.task_id): r for r in results.rows}
    tasks = sorted({r.task_id for r in results.rows})
    header = ["task", *(f"{m} {s.upper()} {c}" for m, s, c in settings)]
    rows = []
    for task in tasks:
        cells = [task]
        for model, strategy, context in settings:
            row = by_key.get((model, strategy, context, task))
            if row is None:
                cells.append("")
            elif not row.ok:
                cells.append("E")
            else:
                cells.append("".join("P" if passed else "F" for passed in row.verdicts))
        rows.append(cells)
    return header, rows


def validation_table(results: RefinementResults) -> Table:
    """One row per task: its references on their own tests and the turns whose tests are not discriminative."""
    header = ["task", "turns", "references pass their tests", "tests fail on the previous reference"]
    rows = []
    for check in results.validation:
        failing = check.failing_references
        weak = check.not_discriminative
        rows.append([check.task_id, str(len(check.turns)),
                     "yes" if not failing else f"no: turn(s) {', '.join(map(str, failing))}",
                     "every turn" if not weak else f"not turn(s) {', '.join(map(str, weak))}"])
    return header, rows


def accuracy_chart(results: RefinementResults) -> str:
    """Acc(k) over the turns, one line per (model, strategy, context); golden dashed."""
    turns = max((len(e.acc_per_turn) for e in results.summary), default=0)
    if not turns:
        return ""
    series = [(f"{e.model} {e.strategy.upper()} {e.context}", series_color(i),
               "dash" if e.context == "golden" else "line",
               [*e.acc_per_turn, *([None] * (turns - len(e.acc_per_turn)))])
              for i, e in enumerate(results.summary)]
    markers = [f"{max(e.tasks_per_turn[k] if k < len(e.tasks_per_turn) else 0 for e in results.summary)} task(s)"
               for k in range(turns)]
    return line_chart("Acc(k): passed turns k / tasks that have a turn k", [f"turn {k}" for k in range(1, turns + 1)],
                      series, width=1060, markers=markers)


def refinement_page(results: RefinementResults) -> ResultsPage:
    """results.md and results.html: the models, the Acc(k) curves, the summaries (all tasks, then per level),
    the per-task marks, the errors, the validation of the tasks, the notes."""
    blocks: list[Block] = [
        *unprotected_warning([row.sandbox for row in results.rows]),
        Bullets([f"`{slug}`: {description}" for slug, description in results.models.items()]),
        Charts("Acc(k) per turn", [("", accuracy_chart(results))]),
        Heading("Summary (all tasks)"), TableBlock(summary_table(results))]
    for level, table in (("function", 3), ("repository", 4)):
        if any(level in entry.levels for entry in results.summary):
            blocks += [Heading(f"{level.capitalize()} level (SR-Eval Tables {table} and {table + 2})"),
                       TableBlock(summary_table(results, level))]
            languages = sorted({language for entry in results.summary for language in entry.languages.get(level, {})})
            if len(languages) > 1:  # the papers' tables give each language apart
                blocks += [item for language in languages
                           for item in (Heading(f"{level.capitalize()} level, {LANGUAGE_NAMES.get(language, language)}"),
                                        TableBlock(summary_table(results, level, language)))]
    blocks += [Heading("Per task (P passed, F failed, one mark per turn; E: the run ended in an error)"),
               TableBlock(task_table(results))]
    if errors := [row for row in results.rows if not row.ok]:
        blocks += [Heading("Errors"), Bullets([f"{row.key}: {row.error}" for row in errors])]
    blocks += [Heading("Validation of the tasks"), TableBlock(validation_table(results)),
               Bullets([*results.validation_problems,
                        *(f"{task}: does not load: {reason}" for task, reason in results.load_errors.items()),
                        *(f"not run: {note}" for note in results.skipped_settings)]),
               *integrity_section([(row.key, row.integrity_flags()) for row in results.rows]),
               Text(results.notes, note=True)]
    return ResultsPage(f"Stepwise requirement refinement (SR-Eval) on {results.dataset}", "projectgen refine", blocks)
