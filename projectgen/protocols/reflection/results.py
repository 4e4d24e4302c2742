"""A reflect batch's results: the figures per (model, edit format), and the page results.md and results.html show.

Per (model, edit format), over the units that did not end in an error: LiveRepoReflection's
Pass@1, Pass@2, Fix Weight and Well Format per language and All
(`projectgen.protocols.reflection.metrics.by_language`), the pass@k curve, tokens, and the
per-task rows behind them. Error units are counted apart and left out of every figure: a unit whose
tests the harness could not run is neither a pass nor a fail. So are "environment incomplete" units (the
exercise's reference itself cannot get its dependencies here), each named with its reason. An exercise whose
published reference is declared defective (`reflection_defects`) is named beside its rows, and each figure is given
a second time without those exercises: the raw figure stays beside it.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from projectgen.datasets.known_defects import KnownDefect
from projectgen.evaluation.integrity_flags import IntegrityFlag, unique_flags
from projectgen.experiments.models import ExperimentModel
from projectgen.experiments.results_writer import (Block, Bullets, Charts, Heading, ResultsPage, Table, TableBlock,
                                                   Text, integrity_section, series_color, unprotected_warning)
from projectgen.inspection.charts import line_chart
from projectgen.protocols.reflection.defects import read_defects
from projectgen.protocols.reflection.metrics import ALL, ReflectionFigures, TaskOutcome, by_language

REFLECT_SCHEMA_VERSION = 1
INCOMPLETE = "environment incomplete"
"""A unit's status when the exercise's reference cannot get its dependencies here: not scored, never a failure."""


class ReflectRow(BaseModel):
    """One unit's ledger line: its result (`projectgen.protocols.reflection.unit.ReflectionResult` as a dict), or why
    its work raised (status "error"), or why the exercise cannot be scored here (status `INCOMPLETE`)."""

    key: str
    model: str
    edit_format: str
    task_id: str
    language: str
    status: Literal["passed", "failed", "error", "environment incomplete"]
    error: str | None = None
    result: dict[str, Any] | None = None
    sandbox: str = Field(default="", description='the isolation its tests ran with: "namespaces", or "none" '
                         "(unprotected: the code under test could have faked the score); empty in older ledgers")
    defect: str = Field(default="", description="the exercise's declared reference defect, when one of the tests "
                        "it names did not pass here (known_defects.toml); set when results are summarized")

    def integrity_flags(self) -> list[IntegrityFlag]:
        """The integrity flags of its tries' candidates (each once: a flag every try keeps is listed once);
        none for an error or a result written before flags existed."""
        return unique_flags(IntegrityFlag.model_validate(entry) for attempt in (self.result or {}).get("tries") or []
                            for entry in attempt.get("integrity_flags") or [])

    def outcome(self) -> TaskOutcome | None:
        """The figures' view of a finished unit (None for an error or an environment-incomplete unit)."""
        if self.status in ("error", INCOMPLETE) or self.result is None:
            return None
        r = self.result
        attempts = r.get("tries") or []
        return TaskOutcome(task_id=self.task_id, language=self.language, passed_at=r.get("passed_at"),
                           tries=len(attempts), well_formed=bool(r.get("well_formed")),
                           input_tokens=int(r.get("input_tokens") or 0), output_tokens=int(r.get("output_tokens") or 0))


class ReflectReport(BaseModel):
    """One (model, edit format): its figures per language and All, and its rows."""

    model: str
    spec: str
    model_label: str
    edit_format: str
    tries: int
    errors: int
    incomplete: int = Field(default=0, description="units not scored: the exercise's environment is incomplete")
    figures: dict[str, ReflectionFigures]
    declared_defective: list[str] = Field(default_factory=list, description="scored exercises whose reference is "
                                          "declared defective (results.json `declared_defects`)")
    figures_without_declared: dict[str, ReflectionFigures] = Field(
        default_factory=dict, description="the figures over the scored exercises not declared defective")
    rows: list[ReflectRow]


class ReflectSummaryEntry(BaseModel):
    """One (model, edit format, language) in the paper's terms, in percent (All: every language of the run)."""

    model: str
    model_label: str
    edit_format: str
    language: str = Field(default=ALL, description="a language of the run, or All (every language: the test-count "
                          "weighting is the paper's, see protocols.reflection.metrics)")
    tasks: int = Field(description="tasks scored (error and environment-incomplete units left out)")
    errors: int
    environment_incomplete: int = Field(default=0, description="tasks not scored because the reference itself "
                                        "cannot get its dependencies here (named in results.json "
                                        "`environment_incomplete`)")
    pass_at_1: float
    declared_defective: int = Field(default=0, description="scored tasks whose published reference is declared "
                                    "defective (known_defects.toml): counted in pass_at_1 as they scored")
    pass_at_1_without_declared: float | None = Field(
        default=None, description="Pass@1 over the other scored tasks; None when none is left")
    pass_at_2: float | None
    fix_weight: float | None
    well_formed: float
    pass_at_k: list[float]
    input_tokens: int
    output_tokens: int


class ReflectResults(BaseModel):
    """What results.json holds; `schema_version` changes when a field changes meaning or goes away."""

    schema_version: int = REFLECT_SCHEMA_VERSION
    protocol: str = "LiveRepoReflection (generate, then repair from the test output)"
    dataset: str
    out_dir: str
    tries: int
    skipped_languages: dict[str, int] = Field(default_factory=dict, description="exercises not run, by language "
                                              "(languages without a test runner)")
    missing_toolchains: dict[str, str] = Field(
        default_factory=dict, description="language -> how many of its exercises were skipped because this "
        "machine lacks its toolchain, and what to install")
    load_errors: dict[str, str] = Field(default_factory=dict, description="exercise id -> why it does not load")
    environment_incomplete: dict[str, str] = Field(
        default_factory=dict, description="exercise id -> why it is not scored here ('environment incomplete: ...': "
        "its reference cannot get its dependencies on this machine), whatever the model")
    declared_defects: dict[str, str] = Field(
        default_factory=dict, description="exercise id -> its published reference's declared defect "
        "(known_defects.toml), for the scored exercises of the batch whose declaration holds")
    stale_declarations: dict[str, str] = Field(
        default_factory=dict, description="exercise id -> why its declaration no longer holds: the reference replay "
        "passes the tests it names (the declaration is not applied)")
    reports: list[ReflectReport]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def summary(self) -> list[ReflectSummaryEntry]:
        """One entry per (model, edit format): every language together (All)."""
        return [_summary_entry(r, ALL) for r in self.reports]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def summary_by_language(self) -> list[ReflectSummaryEntry]:
        """One entry per (model, edit format, language the run scored), as Tables 1-2 give them; errors are the
        language's error units."""
        return [_summary_entry(r, language) for r in self.reports
                for language in sorted(r.figures) if language != ALL]


def _summary_entry(report: ReflectReport, language: str) -> ReflectSummaryEntry:
    f = report.figures[language]
    errors = report.errors if language == ALL else sum(row.status == "error" and row.language == language
                                                       for row in report.rows)
    incomplete = sum(row.status == INCOMPLETE and language in (ALL, row.language) for row in report.rows)
    rest = report.figures_without_declared.get(language)
    declared = sum(row.task_id in report.declared_defective and language in (ALL, row.language) for row in report.rows)
    return ReflectSummaryEntry(
        model=report.model, model_label=report.model_label, edit_format=report.edit_format, language=language,
        tasks=f.tasks, errors=errors, environment_incomplete=incomplete, pass_at_1=f.pass_at_1,
        declared_defective=declared, pass_at_1_without_declared=rest.pass_at_1 if rest and rest.tasks else None,
        pass_at_2=f.pass_at_2, fix_weight=f.fix_weight,
        well_formed=f.well_formed, pass_at_k=f.pass_at_k, input_tokens=f.input_tokens, output_tokens=f.output_tokens)


def model_label(model: ExperimentModel, rows: Sequence[ReflectRow]) -> str:
    """How reports name the model: as its runs recorded it (a replay says it is one), else from its spec."""
    for row in rows:
        if row.result and row.result.get("model_label"):
            return str(row.result["model_label"])
    if model.is_reference:
        from projectgen.llm.naming import REFERENCE_LABEL

        return REFERENCE_LABEL
    return f"scripted replay (not a model): {model.spec}" if model.spec.startswith("scripted:") else model.spec


def summarize_reflect(dataset: str, out_dir: str, tries: int, models: Sequence[ExperimentModel],
                      formats: Sequence[str], rows: Sequence[ReflectRow], *, skipped: dict[str, int] | None = None,
                      load_errors: dict[str, str] | None = None,
                      missing_toolchains: dict[str, str] | None = None,
                      declarations: Mapping[str, KnownDefect] | None = None) -> ReflectResults:
    """The results of a batch's rows, one report per (model, edit format); `declarations`: exercise id -> its
    reference's declared defect (`reflection_defects.exercise_declarations`)."""
    declarations = dict(declarations or {})
    reading = read_defects(rows, declarations, {model.slug for model in models if model.is_reference})
    rows = [row.model_copy(update={"defect": reading.notes.get(row.key, "")}) for row in rows]
    reports = []
    for model in models:
        for fmt in formats:
            mine = sorted((r for r in rows if r.model == model.slug and r.edit_format == fmt), key=lambda r: r.task_id)
            outcomes = [o for r in mine if (o := r.outcome()) is not None]
            declared = sorted({o.task_id for o in outcomes} & reading.declared)
            rest = [o for o in outcomes if o.task_id not in reading.declared]
            reports.append(ReflectReport(model=model.slug, spec=model.spec, model_label=model_label(model, mine),
                                         edit_format=fmt, tries=tries, errors=sum(r.status == "error" for r in mine),
                                         incomplete=sum(r.status == INCOMPLETE for r in mine),
                                         figures=by_language(outcomes, tries), declared_defective=declared,
                                         figures_without_declared=by_language(rest, tries), rows=mine))
    incomplete = {r.task_id: r.error or "" for r in sorted(rows, key=lambda r: r.task_id) if r.status == INCOMPLETE}
    scored = {r.task_id for report in reports for r in report.rows if r.outcome() is not None}
    return ReflectResults(dataset=dataset, out_dir=out_dir, tries=tries, skipped_languages=dict(skipped or {}),
                          load_errors=dict(load_errors or {}), missing_toolchains=dict(missing_toolchains or {}),
                          environment_incomplete=incomplete,
                          declared_defects={task: declarations[task].defect
                                            for task in sorted(reading.declared & scored)},
                          stale_declarations=dict(sorted(reading.stale.items())), reports=reports)


# --------------------------------------------------------------------------- tables


def pct(value: float | None) -> str:
    """A percentage as the paper prints it (one decimal); "n/a" when there is none."""
    return "n/a" if value is None else f"{value:.1f}"


def summary_table(results: ReflectResults) -> Table:
    """One row per (model, edit format): the All figures, errors and tokens."""
    header = ["model", "edit format", "tasks", "Pass@1", "Pass@2", "FW", "WF", "errors", "env. incomplete",
              "tokens in", "tokens out"]
    rows = [[e.model, e.edit_format, str(e.tasks), pct(e.pass_at_1), pct(e.pass_at_2), pct(e.fix_weight),
             pct(e.well_formed), str(e.errors), str(e.environment_incomplete), f"{e.input_tokens:,}",
             f"{e.output_tokens:,}"]
            for e in results.summary]
    return header, rows


def language_summary_table(results: ReflectResults) -> Table:
    """One row per (model, edit format, language), then All: Pass@1 as scored, and without the exercises whose
    published reference is declared defective (both shown: the raw figure is never replaced)."""
    header = ["model", "edit format", "language", "tasks", "Pass@1", "declared defective", "Pass@1 without them",
              "errors", "env. incomplete"]
    return header, [[e.model, e.edit_format, e.language, str(e.tasks), pct(e.pass_at_1), str(e.declared_defective),
                     pct(e.pass_at_1_without_declared), str(e.errors), str(e.environment_incomplete)]
                    for e in summary_rows(results)]


def summary_rows(results: ReflectResults) -> list[ReflectSummaryEntry]:
    """Per (model, edit format) in the batch's order: each language's entry, then All's."""
    return [entry for r in results.reports
            for entry in [*(_summary_entry(r, lang) for lang in sorted(r.figures) if lang != ALL),
                          _summary_entry(r, ALL)]]


def language_table(results: ReflectResults) -> Table:
    """Tables 1-2's shape: per language (then All) P1, P2, WF, FW."""
    languages = sorted({lang for r in results.reports for lang in r.figures if lang != ALL}) + [ALL]
    header = ["model", "edit format"] + [f"{lang} {m}" for lang in languages for m in ("P1", "P2", "WF", "FW")]
    rows = []
    for r in results.reports:
        cells = [r.model, r.edit_format]
        for lang in languages:
            f = r.figures.get(lang)
            cells += ([pct(f.pass_at_1), pct(f.pass_at_2), pct(f.well_formed), pct(f.fix_weight)]
                      if f is not None and f.tasks else ["", "", "", ""])
        rows.append(cells)
    return header, rows


def curve_table(results: ReflectResults) -> Table:
    """One row per (model, edit format): pass@k for every k up to the tries."""
    header = ["model", "edit format"] + [f"pass@{k}" for k in range(1, results.tries + 1)]
    return header, [[r.model, r.edit_format] + [pct(v) for v in r.figures[ALL].pass_at_k] for r in results.reports]


def task_table(results: ReflectResults) -> Table:
    """One row per unit: its status, the try it passed at, its tries, well-formedness and last test count."""
    header = ["model", "edit format", "task", "language", "status", "passed at try", "tries", "well formed",
              "tests (last try)", "note"]
    rows = []
    for r in results.reports:
        for row in r.rows:
            res = row.result or {}
            last = (res.get("tries") or [{}])[-1]
            tests = f"{last.get('tests_passed')}/{last.get('tests_total')}" if "tests_total" in last else ""
            rows.append([r.model, r.edit_format, row.task_id, row.language, row.status,
                         str(res.get("passed_at") or "") if row.status in ("passed", "failed") else "",
                         str(len(res.get("tries") or [])) if res else "",
                         ("yes" if res.get("well_formed") else "no") if res else "", tests,
                         "; ".join(part for part in (row.error, row.defect) if part)])
    return header, rows


NOTES = ("Pass@k: tasks whose tests all passed by try k (Pass@2 after one repair from the test output); "
         "FW = (Pass@2 - Pass@1) / Pass@2 x 100 (0 when Pass@2 is 0); WF: tasks whose every reply parsed and "
         "applied exactly. All: the languages weighted by their number of tasks. Percentages; error units "
         "(the harness could not run the tests, or the model failed for good) are left out and retried on a "
         "continue; environment-incomplete exercises are left out and named.")


def declared_lead(count: int) -> str:
    """The line above the exercises whose published reference is declared defective."""
    return (f"Declared reference defects ({count} exercise(s), known_defects.toml: the published reference fails "
            "the tests named; counted as scored, and left out of 'Pass@1 without them'):")


def stale_lead(count: int) -> str:
    """The line above the declarations the reference replay no longer bears out."""
    return (f"Stale declarations ({count}: the reference replay passes the tests they name; not applied, correct "
            "or remove them in known_defects.toml):")


def incomplete_lead(count: int) -> str:
    """The line above the environment-incomplete exercises, wherever they are listed."""
    return (f"Environment incomplete, not scored ({count} exercise(s): what their tests or reference need cannot "
            "be had here; not a model's failure):")


def models_lines(results: ReflectResults) -> list[str]:
    """One "model folder: how reports name it" line per model."""
    seen: dict[str, str] = {}
    for r in results.reports:
        seen.setdefault(r.model, r.model_label)
    return [f"{model}: {label}" for model, label in seen.items()]


def pass_at_k_chart(results: ReflectResults) -> str:
    """The pass@k curve of every (model, edit format) that scored a task ("" when none did)."""
    # Solid for whole files, dashed for patches: equal curves stay visible on top of each other.
    series = [(f"{r.model} / {r.edit_format}", series_color(i), "dash" if r.edit_format == "patch" else "line",
               [v / 100 for v in r.figures[ALL].pass_at_k])
              for i, r in enumerate(results.reports) if r.figures[ALL].tasks]
    if not series:
        return ""
    return line_chart("pass@k: tasks passed by try k", [f"k={k}" for k in range(1, results.tries + 1)], series,
                      width=1060)


def reflect_page(results: ReflectResults) -> ResultsPage:
    """results.md and results.html: the settings and models, the pass@k curves, the tables, the notes."""
    blocks: list[Block] = [
        *unprotected_warning([row.sandbox for report in results.reports for row in report.rows]),
        Text(f"Tries per task: {results.tries}; edit formats: "
             f"{', '.join(dict.fromkeys(r.edit_format for r in results.reports))}."),
        Bullets(models_lines(results), lead="Models:")]
    if results.skipped_languages:
        blocks.append(Text("Not run (no test runner for the language): " + ", ".join(
            f"{lang} {n}" for lang, n in sorted(results.skipped_languages.items())) + "."))
    if results.missing_toolchains:
        blocks.append(Bullets([f"{lang}: {why}" for lang, why in sorted(results.missing_toolchains.items())],
                              lead="Skipped (toolchain missing on this machine):"))
    if results.load_errors:
        blocks.append(Bullets([f"{k}: {v}" for k, v in sorted(results.load_errors.items())],
                              lead="Exercises that do not load:"))
    if results.environment_incomplete:
        blocks.append(Bullets([f"{k}: {v}" for k, v in sorted(results.environment_incomplete.items())],
                              lead=incomplete_lead(len(results.environment_incomplete))))
    if results.declared_defects:
        blocks.append(Bullets([f"{k}: {v}" for k, v in sorted(results.declared_defects.items())],
                              lead=declared_lead(len(results.declared_defects))))
    if results.stale_declarations:
        blocks.append(Bullets([f"{k}: {v}" for k, v in sorted(results.stale_declarations.items())],
                              lead=stale_lead(len(results.stale_declarations))))
    blocks.append(Charts("pass@k curves", [("", pass_at_k_chart(results))]))
    for title, table in (("Summary", summary_table(results)),
                         ("Per language summary", language_summary_table(results)),
                         ("Per language (Tables 1-2's columns)", language_table(results)),
                         ("pass@k over tries", curve_table(results)), ("Per task", task_table(results))):
        blocks += [Heading(title), TableBlock(table)]
    blocks += integrity_section([(f"{r.model}/{r.edit_format}/{row.task_id}", row.integrity_flags())
                                 for r in results.reports for row in r.rows])
    blocks.append(Text(NOTES, note=True))
    return ResultsPage(f"LiveRepoReflection protocol on {results.dataset}", "projectgen reflect", blocks)
