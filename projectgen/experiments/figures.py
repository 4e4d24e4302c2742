"""The figures of one task x model pair: one ledger line, one row of the per-task table.

`pair_from_run` reads them from a finished LiveCoder run folder: its run log (`read_run_log`: status,
the attempts, the scores its run recorded), tokens and cost from ``usage.jsonl``. Cost uses
`projectgen.llm.pricing.PriceTable` (list prices, or a price file); a call whose model has no
price is counted apart and its cost shown as "n/a", never guessed. Scripted replays cost 0.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from projectgen.config import fidelity_settings
from projectgen.datasets.published import task_weight
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.denominators import (DEFAULT_DENOMINATOR, DenominatorSetting, UnitCounts, counted,
                                                nothing_produced)
from projectgen.evaluation.error_types import collection_error_types, failing_error_types
from projectgen.evaluation.expectations import expected_counts
from projectgen.evaluation.integrity_flags import IntegrityFlag
from projectgen.evaluation.report import TestReport
from projectgen.experiments.folder_layout import pair_key
from projectgen.experiments.models import ExperimentModel
from projectgen.llm.pricing import format_usd
from projectgen.runs.folder import RunFolder
from projectgen.runs.layout import RunLayout
from projectgen.runs.output_scorers import (
    ATTEMPT_MAINTAINABILITY, EXPECTED_UNIT, NON_FUNCTIONAL, SKETCHBLEU, SKETCHBLEU_VERSION, NonFunctional, SketchBLEU,
    repository_maintainability,
)
from projectgen.runs.run_log import EXTERNAL_KIND, UNIT, RunLog, Score, read_run_log

PairStatus = Literal["finished", "budget-limited", "error"]
FINISHED: tuple[str, ...] = ("finished", "budget-limited")


class CostFigures(BaseModel):
    """USD of a set of calls; calls whose model has no price are counted apart, never guessed."""

    usd: float = 0.0
    priced_calls: int = 0
    unpriced_calls: int = 0

    @property
    def value(self) -> float | None:
        """The sum when every call had a price, else None."""
        return self.usd if self.unpriced_calls == 0 else None

    def __add__(self, other: CostFigures) -> CostFigures:
        return CostFigures(usd=self.usd + other.usd, priced_calls=self.priced_calls + other.priced_calls,
                           unpriced_calls=self.unpriced_calls + other.unpriced_calls)

    def label(self) -> str:
        if self.priced_calls == 0 and self.unpriced_calls == 0:
            return "-"
        if self.priced_calls == 0:
            return "n/a"
        text = format_usd(self.usd)
        return text if not self.unpriced_calls else f"{text} + n/a ({self.unpriced_calls} calls)"


class TokenFigures(BaseModel):
    """Calls and tokens of a set of calls."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenFigures) -> TokenFigures:
        return TokenFigures(calls=self.calls + other.calls, input_tokens=self.input_tokens + other.input_tokens,
                            output_tokens=self.output_tokens + other.output_tokens)


class AttemptFigures(BaseModel):
    """One attempt of one run, as LiveCoder recorded it."""

    attempt: int
    kind: Literal["generated", "reused", "budget"] = Field(
        description="generated a repository / reused the full-score best / stopped by the token budget")
    score: float | None = Field(default=None, description="the selection score (check tests unless oracle)")
    unit_passed: int | None = None
    unit_total: int | None = None
    best_attempt: int | None = Field(default=None, description="the historical best after this attempt")
    maintainability: float | None = Field(default=None, description="radon's mean maintainability index (0-100) "
                                          "of the attempt's repository (LiveCoder's maintainability figure)")
    maintainability_vs: float | None = Field(default=None, description="the same by the Visual Studio formula "
                                             "LiveCoder cites (`evaluation.metrics.maintainability_index_vs`)")
    tokens: TokenFigures = Field(default_factory=TokenFigures)
    cost: CostFigures = Field(default_factory=CostFigures)


class PairResult(BaseModel):
    """One task x model pair: one ledger line, one row of the per-task table."""

    key: str
    method: str = "livecoder"
    model: str
    spec: str
    task_id: str
    status: PairStatus
    error: str | None = None
    loc: int | None = Field(default=None, description="the task's #LOC weight (projectgen.datasets.published)")
    loc_source: str | None = Field(default=None, description="where the #LOC weight came from")
    profile: str | None = Field(default=None, description="the settings profile the run used ('paper' or "
                                "'projectgen', projectgen.config.SETTINGS_PROFILES); None in older ledgers")
    attempts_planned: int | None = None
    selection: str | None = Field(default=None, description="how the run chose its output among its attempts, as "
                                  "it recorded it: 'check' (the task's check tests), 'unit' (the hidden unit tests: "
                                  "an oracle setting); None in older ledgers")
    feedback_suite: str | None = Field(default=None, description="whose test output the generators were given as "
                                       "execution feedback, as the run recorded it: 'check' or 'unit' (the hidden "
                                       "tests, LiveCoder's protocol on benchmarks without visible tests); None in "
                                       "older ledgers")
    fidelity_settings: dict[str, Any] = Field(
        default_factory=dict, description="the other settings docs/fidelity.md names (threshold and its rules, "
        "gamma, iteration caps, JudgeA's and JudgeS's forms, stage memory, carried reflections, edit format, "
        "knowledge after the last attempt), as the run recorded them (projectgen.config.fidelity_settings); "
        "empty for an external system's run (they steer projectgen's methods only) and in older ledgers")
    historical_best: bool = True
    unit_measured: bool = True
    attempts: list[AttemptFigures] = Field(default_factory=list)
    final: dict[str, Any] | None = None
    final_unit_passed: int | None = Field(default=None, description="#Pass of the final output's unit tests")
    final_unit_total: int | None = Field(default=None, description="#Tests: the expected unit tests (what the "
                                         "reference collects, skips left out), or the tests run when unknown")
    unit_denominator: str | None = Field(default=None, description="what final_unit_total counts: 'published' "
                                         "(the paper's #Tests), 'expected' (the reference's tests), 'declared' (the task's "
                                         "frozen total) or 'run' (the tests the output ran); evaluation.denominators")
    sketchbleu: float | None = Field(default=None, description="SketchBLEU (0-100), mode 'repaired', of the final "
                                     "output against the reference (ProjectGen Tables 4 and 6); None without a "
                                     "reference or the extra")
    sketchbleu_codes: float | None = Field(default=None, description="SketchBLEU (0-100), mode 'codes' (CodeS's "
                                           "arithmetic on the file set `sketchbleu_codes_files` names, on DevBench "
                                           "and CodeProjectEval what ProjectGen's script computed, with merged "
                                           "dataflow sources in source order where CodeS's follow the hash seed); "
                                           "None also when CodeS's value is undefined (a side without functions); "
                                           "absent in older results")
    sketchbleu_codes_files: str | None = Field(default=None, description="what `sketchbleu_codes` compared: "
                                               "'projectgen-script' (DevBench, CodeProjectEval: the folders "
                                               "ProjectGen's calc_sketchbleu.py scores, the whole task folder against "
                                               "the output with the task's tests copied in, as the paper printed) or "
                                               "'reference-sources' (other formats: the reference's source files "
                                               "against the output repository); None in older results, whose codes "
                                               "figure took the source files (evaluation.sketchbleu_folders)")
    non_functional: dict[str, float | None] | None = Field(
        default=None, description="LiveCoder Table 1's non-functional figures (%) of the final output against the "
        "reference: the five dimensions and their AHP combination (RAL-Bench tasks; evaluation.nonfunctional)")
    resource_measure: str | None = Field(
        default=None, description="how `non_functional`'s resource memory was measured: 'peak-rss' (the largest "
        "peak RSS of a test process, read by the sandbox; RAL-Bench averages sampled RSS); None without figures "
        "or in older results (whose resource was not measured)")
    maintainability_measure: str | None = Field(
        default=None, description="which maintainability index `non_functional`'s maintainability compared: "
        "'visual-studio-mi' (the formula LiveCoder cites); None without figures, and in older results, whose "
        "figure took radon's MI")
    difficulty: str | None = Field(default=None, description="the benchmark's difficulty label of the task "
                                   "(NL2Repo-Bench: LiveCoder Table 2's buckets)")
    scores: dict[str, float | None] = Field(
        default_factory=dict, description="the experiment's custom scorers' values of the final output, by scorer "
        "name (`--scorer`; projectgen.runs.custom_methods), as the run's log holds them; None where a scorer "
        "recorded no value, absent where it did not apply")
    tokens: TokenFigures = Field(default_factory=TokenFigures)
    cost: CostFigures = Field(default_factory=CostFigures)
    duration_s: float | None = None
    run_dir: str | None = None
    how: str = Field(default="run", description="run / resumed / collected (from a finished folder) / ledger")
    sandbox: str = Field(default="", description='the isolation its tests ran with: "namespaces", or "none" '
                         "(unprotected: the code under test could have faked the score); empty in older ledgers")
    integrity_flags: list[IntegrityFlag] = Field(
        default_factory=list, description="the final output's integrity flags, from its unit test report "
        "(evaluation.integrity_flags: where to look, never a change of score); empty in older ledgers")
    unit_run_note: str | None = Field(
        default=None, description="why the final output's unit tests did not all run (timed out, stopped, not "
        "collected), from its unit test report: a #Pass cut short says so on its row; None in older ledgers")
    run_note: str | None = Field(
        default=None, description="how an external system's run ended when not cleanly (it failed, ran out of "
        "time, or the bridge refused a call), from its run log: its output is scored all the same")
    environment_incomplete: list[str] = Field(
        default_factory=list, description="why the task's environment here is not its benchmark's, from the final "
        "unit test report (evaluation.assets): the task is counted 'environment incomplete', its shortfall not a "
        "model's failure; empty in older ledgers")
    error_types: dict[str, int] | None = Field(
        default=None, description="exception class -> the final output's failing unit tests that met it, read from "
        "its unit test report (evaluation.error_types: ProjectGen's and LiveCoder's Figure 5); None without a "
        "report and in older ledgers")
    collection_error_types: dict[str, int] | None = Field(
        default=None, description="exception class -> unit test modules the final output's run could not collect "
        "(a module counts once: its tests are unknown); None as `error_types`")

    @property
    def ok(self) -> bool:
        return self.status in FINISHED

    @property
    def attempts_run(self) -> int:
        return sum(1 for a in self.attempts if a.kind == "generated")

    @property
    def reused_at(self) -> int | None:
        return next((a.attempt for a in self.attempts if a.kind == "reused"), None)


def pair_from_run(run_dir: Path, *, model: ExperimentModel, task: Task, prices: Any = None,
                  how: str = "run", runner: Any = None, method: str = "livecoder",
                  denominator: DenominatorSetting = DEFAULT_DENOMINATOR, scorers: Sequence[str] = ()) -> PairResult:
    """A finished run folder's figures: from its run log, tokens and cost from usage.jsonl.

    Tokens are counted from usage.jsonl (every call of the run, also those made before a
    resume), not from the summary, whose counts cover only the calls of its last process. The scores
    against the task's reference (expected unit tests, SketchBLEU, non-functional) are the log's where
    the run recorded them (`projectgen.runs.output_scorers`); a folder whose run did not (written
    before, or run without the scorers) is scored here, its unit tests with a sandbox `runner`
    (`final_unit_scores`). `scorers` names the custom scorers whose values the row carries (`scores`).
    """
    weight = task_weight(task)
    folder = RunFolder(run_dir)
    log = read_run_log(folder)
    if log.kind not in ("livecoder", EXTERNAL_KIND) or log.record is None:
        raise ProjectGenError(f"{run_dir}: not a finished LiveCoder or external system's run (its log says {log.kind or 'no kind'}, "
                              f"{log.status})")
    summary = log.record
    if prices is None:
        from projectgen.llm.pricing import PriceTable

        prices = PriceTable.default()
    records = folder.usage_records()
    by_attempt: dict[int | None, list[Any]] = {}
    for record in records:
        by_attempt.setdefault(record.attempt, []).append(record)

    def tokens(calls: Sequence[Any]) -> TokenFigures:
        return TokenFigures(calls=len(calls), input_tokens=sum(c.input_tokens for c in calls),
                            output_tokens=sum(c.output_tokens for c in calls))

    def cost(calls: Sequence[Any]) -> CostFigures:
        total = prices.total(calls)
        return CostFigures(usd=total.usd, priced_calls=total.priced_calls, unpriced_calls=total.unpriced_calls)

    attempts = []
    maintainability = attempt_maintainability(run_dir, log)
    for row in summary.get("attempts") or []:
        number = int(row["attempt"])
        kind = "reused" if row.get("reused") else "budget" if row.get("budget_limited") else "generated"
        unit = row.get("unit") or {}
        calls = by_attempt.get(number, [])
        attempts.append(AttemptFigures(
            attempt=number, kind=kind, score=row.get("score"),
            unit_passed=unit.get("passed") if unit else None, unit_total=unit.get("total") if unit else None,
            best_attempt=row.get("best_attempt"), tokens=tokens(calls), cost=cost(calls),
            **(maintainability(number) if kind == "generated" else {})))
    attempt_settings = summary.get("attempt_settings") or {}
    passed, total, counts = final_unit_scores(run_dir, task, runner, log.score(UNIT), denominator,
                                              recorded=log.score(EXPECTED_UNIT))
    return PairResult(
        key=pair_key(model.slug, task.id, method), method=method, model=model.slug, spec=model.spec, task_id=task.id,
        status="budget-limited" if log.status == "budget-limited" else "finished", loc=weight.loc,
        loc_source=weight.source,
        profile=run_profile(summary),
        attempts_planned=attempt_settings.get("attempts"), selection=attempt_settings.get("selection"),
        feedback_suite=run_feedback_suite(summary),
        fidelity_settings=({} if log.kind == EXTERNAL_KIND  # projectgen's pipeline settings steer no other system
                           else fidelity_settings(summary.get("settings") or {}, attempt_settings)),
        historical_best=attempt_settings.get("historical_best", True),
        unit_measured=attempt_settings.get("measure_unit_tests", True), attempts=attempts,
        final=summary.get("final"), final_unit_passed=passed, final_unit_total=total, unit_denominator=counts,
        **final_sketchbleu(run_dir, task, log), **final_non_functional(run_dir, task, runner, log),
        difficulty=task.difficulty if task.format == "nl2repobench" else None,
        tokens=tokens(records), cost=cost(records), integrity_flags=final_integrity_flags(run_dir),
        environment_incomplete=final_environment_notes(run_dir), unit_run_note=final_unit_run_note(run_dir),
        **final_error_types(run_dir), scores=custom_scores(log, scorers),
        duration_s=log.timings.duration_s, run_dir=str(run_dir), how=how,
        run_note=log.reason if log.kind == EXTERNAL_KIND else None)


def custom_scores(log: RunLog, scorers: Sequence[str]) -> dict[str, float | None]:
    """Scorer name -> the value the run's log holds for it, for the named scorers that scored the run."""
    return {name: score.value for name in scorers if (score := log.score(name)) is not None}


def run_profile(summary: dict[str, Any]) -> str | None:
    """The settings profile a run's summary records; a summary written before profiles existed ran the
    projectgen profile's behaviour (None when it records no settings at all)."""
    settings = summary.get("settings")
    return settings.get("profile", "projectgen") if isinstance(settings, dict) else None


def run_feedback_suite(summary: dict[str, Any]) -> str | None:
    """Whose test output was the run's execution feedback; a summary written before the setting existed gave
    the check tests' (None when it records no settings at all)."""
    settings = summary.get("settings")
    return settings.get("feedback_suite", "check") if isinstance(settings, dict) else None


def final_integrity_flags(run_dir: Path) -> list[IntegrityFlag]:
    """The integrity flags of the final output, as its unit test report recorded them (none without one)."""
    report_path = RunLayout(run_dir).unit_report
    if not report_path.is_file():
        return []
    return TestReport.model_validate_json(report_path.read_text(encoding="utf-8")).integrity_flags


def final_environment_notes(run_dir: Path) -> list[str]:
    """Why the task's environment was not its benchmark's, as the final unit test report recorded it (none
    without one)."""
    report_path = RunLayout(run_dir).unit_report
    if not report_path.is_file():
        return []
    environment = TestReport.model_validate_json(report_path.read_text(encoding="utf-8")).environment
    return list(environment.incomplete) if environment is not None else []


def final_unit_run_note(run_dir: Path) -> str | None:
    """Why the final unit test run was cut short (a timeout, a stop, modules that did not collect), from its
    report; None when it ran to the end or there is none."""
    report_path = RunLayout(run_dir).unit_report
    if not report_path.is_file():
        return None
    report = TestReport.model_validate_json(report_path.read_text(encoding="utf-8"))
    if reason := report.not_run_reason():
        return reason
    if report.timed_out:
        return f"the hidden unit tests timed out: {len(report.tests)} of {report.collected or '?'} collected ran"
    return None


def final_error_types(run_dir: Path) -> dict[str, dict[str, int] | None]:
    """The exception classes the final output's failing unit tests met and those of the modules its run could
    not collect, from its unit test report as written (nothing runs again); none without a report."""
    report_path = RunLayout(run_dir).unit_report
    if not report_path.is_file():
        return {}
    report = TestReport.model_validate_json(report_path.read_text(encoding="utf-8"))
    return {"error_types": failing_error_types(report), "collection_error_types": collection_error_types(report)}


def final_unit_scores(run_dir: Path, task: Task, runner: Any, unit: Score | None,
                      denominator: DenominatorSetting = DEFAULT_DENOMINATOR, *,
                      recorded: Score | None = None) -> tuple[int | None, int | None, str | None]:
    """(#Pass, #Tests, what #Tests counts) of the final output's unit tests (`unit`: the run log's score).

    #Pass counts the task's expected tests that passed (`SandboxRunner.expected_tests`: what the
    reference collects, skips left out), where a test file that does not collect fails all its tests:
    the run's own count when it `recorded` one, else counted here; without a runner, a unit report or a
    reference, the tests the output ran. #Tests is then the paper's per-task count for a published task
    under the "published" setting (`evaluation.denominators`), else that measured count.
    """
    if unit is None:
        # No unit run: a run that produced no file counts as an error row does (0 of the published or declared
        # #Tests, kept in SUM); it showed #Pass 0/0 and left SUM's #Tests, beside 0/8 for a wrong output
        nothing = nothing_produced(task, denominator) if produced_nothing(run_dir) else None
        return (None, None, None) if nothing is None else (nothing.passed, nothing.total, nothing.denominator)
    report_path = RunLayout(run_dir).unit_report
    if recorded is not None and recorded.passed is not None and recorded.total is not None:
        measured = UnitCounts(recorded.passed, recorded.total, str(recorded.detail["counts"]))
    elif runner is not None and report_path.is_file():
        measured = UnitCounts(*expected_counts(
            runner, task, TestReport.model_validate_json(report_path.read_text(encoding="utf-8"))))
    else:
        measured = UnitCounts(unit.passed or 0, unit.total or 0, "run")
    final = counted(task, measured, denominator)
    return final.passed, final.total, final.denominator


def produced_nothing(run_dir: Path) -> bool:
    """Whether the run's final repository holds no file (nothing was generated, so no unit tests ran)."""
    repository = RunLayout(run_dir).repository
    return not any(path.is_file() for path in repository.rglob("*")) if repository.is_dir() else True


def attempt_maintainability(run_dir: Path, log: RunLog) -> Callable[[int], dict[str, float]]:
    """Attempt number -> the mean maintainability indices of attempts/N/repository, radon's (`maintainability`)
    and the Visual Studio formula's (`maintainability_vs`), none when it has no parsable Python: as the run
    recorded them (`output_scorers.AttemptMaintainability`), else measured here."""
    recorded = log.score(ATTEMPT_MAINTAINABILITY)
    if recorded is not None:
        by_attempt = recorded.detail["attempts"]
        return lambda number: dict(by_attempt.get(str(number)) or {})
    return lambda number: repository_maintainability(RunLayout(run_dir).attempt(number).repository)


def final_non_functional(run_dir: Path, task: Task, runner: Any, log: RunLog | None = None) -> dict[str, Any]:
    """LiveCoder Table 1's non-functional figures (%) of the run's output against the task's reference, its
    suites run in the sandbox, and how resource was measured, as the PairResult fields ``non_functional``
    ``resource_measure`` and ``maintainability_measure`` (RAL-Bench tasks with a reference and a runner; else
    none): the run log's score when its run recorded one, else measured here (`output_scorers.NonFunctional`)."""
    score = log.score(NON_FUNCTIONAL) if log is not None else None
    if score is None:
        score = NonFunctional().score(task, RunLayout(run_dir), runner, None)
    if score is None:
        return {}
    return {"non_functional": dict(score.detail["figures"]), "resource_measure": score.detail["resource_measure"],
            "maintainability_measure": score.detail["maintainability_measure"]}


def final_sketchbleu(run_dir: Path, task: Task, log: RunLog | None = None) -> dict[str, float | str | None]:
    """SketchBLEU of the run's output repository against the task's reference in both modes, as the
    PairResult fields ``sketchbleu`` (repaired), ``sketchbleu_codes`` and ``sketchbleu_codes_files``.

    The repaired mode, projectgen's own, compares the reference's source files with the output
    repository. The codes mode compares the file set ProjectGen's script scored where there is one
    (`sketchbleu_folders.codes_files`: on DevBench and CodeProjectEval the whole task folder against the
    output with the task's tests copied in), so it is the figure ProjectGen's script computes. A figure is None when
    there is no reference, no output, the `sketchbleu` extra is not installed, or CodeS's value is
    undefined (a side without functions). The run log's score when its run recorded one of today's computation
    (`output_scorers.SKETCHBLEU_VERSION`), else computed here (`output_scorers.SketchBLEU`)."""
    score = log.score(SKETCHBLEU) if log is not None else None
    if score is None or score.detail.get("version") != SKETCHBLEU_VERSION:
        score = SketchBLEU().score(task, RunLayout(run_dir), None, None)
    if score is None:
        return {}
    return {"sketchbleu": score.value, "sketchbleu_codes": score.detail["codes"],
            "sketchbleu_codes_files": score.detail["codes_files"]}
