"""A model's figures over its pairs: per attempt and for the final outputs (`summarize_pairs`).

The functional score of a task is its hidden unit-test pass rate
(`projectgen.evaluation.metrics.pass_rate`), and a dataset figure is given both as the plain
mean over tasks and LOC-weighted (`loc_weighted_average`, weight: the task's published #LOC,
else its reference's lines; `projectgen.datasets.published`), over the pairs that did not fail;
the final outputs also get ProjectGen's own figures, SUM of #Pass and AVG_weighted (the #Pass
*counts* weighted by #LOC, as its Tables 3 and 5):

- per attempt t: the pass rate of attempt t (``attempt``), the pass rate of what the run
  outputs after t attempts (``output``: the historical best so far; the last attempt under
  the no-historical-best ablation), the reuse rate, tokens and cost of the calls tagged with
  attempt t (summed over tasks). See `attempt_scores` for attempts that generated nothing.
- final: the hidden unit tests run on each run's final repository: SUM of #Pass, AVG_weighted,
  mean and LOC-weighted pass rate, tasks fully passing; tokens and cost of the whole runs.

Error pairs are left out of every mean and LOC-weighted figure and counted apart (``errors``):
a run that raised is usually the infrastructure (an unreachable endpoint), not the model.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, computed_field

from projectgen.evaluation.error_types import by_category, merged
from projectgen.evaluation.metrics import TaskScore, loc_weighted_average, pass_rate, summarize
from projectgen.evaluation.sketchbleu import average_sketchbleu
from projectgen.experiments.figures import CostFigures, PairResult, TokenFigures
from projectgen.experiments.models import ExperimentModel
from projectgen.llm.specs import REFERENCE_SPEC

def _rate(passed: int | None, total: int | None) -> float:
    return pass_rate(passed or 0, total or 0)


def attempt_scores(pair: PairResult, attempts: int) -> list[tuple[float | None, float | None, bool]]:
    """Per attempt t = 1..attempts: (pass rate of attempt t, pass rate of the output after t, reuse at t).

    The pass rate is the hidden unit tests' (None throughout when the run did not measure
    them). An attempt that generated a repository scores its own pass rate (0 when it
    produced nothing to test); its output is the historical best so far (under the
    no-historical-best ablation, the attempt itself).

    An attempt that generated nothing carries the best so far forward, as LiveCoder
    reports it: a reuse (the best already had the full score) scores the pass rate of the
    reused best attempt; an attempt stopped by the token budget, and any attempt after the
    run ended early, scores what the run outputs at that point (the best so far, or the
    last attempt under the ablation; 0 if nothing was generated yet). A run stops at its
    first reuse, and every later attempt would reuse too, so the attempts after a reuse
    count as reuses.
    """
    rows = {a.attempt: a for a in pair.attempts}
    rates = {a.attempt: _rate(a.unit_passed, a.unit_total) for a in pair.attempts if a.kind == "generated"}
    out: list[tuple[float | None, float | None, bool]] = []
    output: float = 0.0
    reused = False
    for t in range(1, attempts + 1):
        row = rows.get(t)
        if row is not None and row.kind == "generated":
            own = rates[t]
            output = rates.get(row.best_attempt, own) if pair.historical_best and row.best_attempt else own
            out.append((own, output, False))
        elif row is not None and row.kind == "reused":
            reused = True
            output = rates.get(row.best_attempt, output) if row.best_attempt else output
            out.append((output, output, True))
        else:
            out.append((output, output, reused))
    if not pair.unit_measured:
        return [(None, None, r) for _, _, r in out]
    return out


def cost_reduction(first: float | None, last: float | None) -> float | None:
    """LiveCoder Table 5's reduction: (cost of A1 - cost of the last attempt) / cost of A1 x 100."""
    if not first or last is None:
        return None
    return (first - last) / first * 100


# LiveCoder's difficulty buckets (NL2Repo-Bench, its Table 2) by the reference's lines of code.
DIFFICULTIES = ("easy", "medium", "hard")


def difficulty(loc: int) -> str:
    """easy (<= 1.5k LOC), medium (1.5k-4k) or hard (>= 4k), as LiveCoder reports NL2Repo-Bench."""
    if loc <= 1500:
        return "easy"
    return "medium" if loc < 4000 else "hard"


class BucketFigures(BaseModel):
    """The final outputs of the tasks of one difficulty bucket."""

    tasks: int
    mean_pass_rate: float | None


class AttemptRow(BaseModel):
    """One attempt index over a model's tasks."""

    attempt: int
    tasks: int
    generated: int = Field(description="tasks whose attempt t generated a repository")
    reuse_rate: float
    attempt_mean: float | None = Field(description="mean over tasks of attempt t's unit pass rate")
    attempt_loc_weighted: float | None
    output_mean: float | None = Field(description="mean over tasks of the unit pass rate of the output after t")
    output_loc_weighted: float | None
    maintainability: float | None = Field(default=None, description="mean over the attempts that generated a "
                                          "repository of radon's maintainability index")
    maintainability_vs: float | None = Field(default=None, description="the same, by the Visual Studio formula")
    tokens: TokenFigures
    cost: CostFigures


class FinalFigures(BaseModel):
    """The final outputs (the hidden unit tests on each run's final repository) over a model's tasks."""

    tasks: int
    errors: int
    passed: int | None = Field(default=None, description="SUM of #Pass: unit tests passed over the tasks")
    total: int | None = None
    avg_weighted: float | None = Field(default=None, description="ProjectGen's AVG_weighted: sum(#Pass x #LOC) / "
                                       "sum(#LOC) over the tasks (#Pass a count, #LOC the published figure)")
    weights: list[str] = Field(default_factory=list, description="where the #LOC weights came from")
    denominators: list[str] = Field(default_factory=list, description="what the tasks' #Tests count: 'published' "
                                    "(the paper's), 'expected' (the reference's), 'declared' (the task's frozen total), 'run' "
                                    "(evaluation.denominators)")
    sketchbleu: float | None = Field(default=None, description="ProjectGen Tables 4/6's AVG: the unweighted mean "
                                     "SketchBLEU, mode 'repaired', over the tasks that have one")
    sketchbleu_codes: float | None = Field(default=None, description="the same AVG of SketchBLEU in mode 'codes' "
                                           "(CodeS's arithmetic on the file sets sketchbleu_codes_files names, "
                                           "as ProjectGen's script computed its figures)")
    sketchbleu_codes_files: list[str] = Field(default_factory=list, description="what the tasks' codes figures "
                                              "compared: 'projectgen-script', 'reference-sources' (PairResult."
                                              "sketchbleu_codes_files); empty in older results")
    mean_pass_rate: float | None = None
    loc_weighted_pass_rate: float | None = None
    fully_passing: int | None = None
    by_difficulty: dict[str, BucketFigures] = Field(default_factory=dict, description="mean final pass rate by "
                                                    "the benchmark's difficulty label, else by reference size: "
                                                    "easy <= 1.5k LOC, medium, hard >= 4k")
    cost_reduction_pct: float | None = Field(default=None, description="(cost of attempt 1 - cost of the last "
                                             "attempt) / cost of attempt 1 x 100 (LiveCoder Table 5)")
    token_reduction_pct: float | None = Field(default=None, description="the same reduction in tokens: what a "
                                              "replay or an unpriced model shows of Table 5 (they cost nothing)")
    incomplete: list[str] = Field(default_factory=list, description="tasks whose environment here is not their "
                                  "benchmark's (each pair names the cause): SUM and AVG_weighted include them, and "
                                  "the figures' lines say so")
    complete_passed: int | None = Field(default=None, description="SUM of #Pass over the tasks whose environment "
                                        "is complete")
    complete_total: int | None = Field(default=None, description="SUM of #Tests over those tasks")
    scores: dict[str, float | None] = Field(default_factory=dict, description="custom scorer name -> the mean of "
                                            "its values over the tasks that have one (None: no task has one)")
    mean_attempts_run: float | None = None
    reused: int = 0
    budget_limited: int = 0
    tokens: TokenFigures = Field(default_factory=TokenFigures)
    cost: CostFigures = Field(default_factory=CostFigures)


class ModelReport(BaseModel):
    """One (method, model)'s figures and its pairs (sorted by task id)."""

    method: str = Field(default="livecoder", description="the method (arm) the runs used")
    model: str
    spec: str
    attempts: int
    per_attempt: list[AttemptRow]
    final: FinalFigures
    pairs: list[PairResult]

    @property
    def oracle(self) -> bool:
        """Whether its runs replayed the tasks' references (the oracle that checks the harness), not a model."""
        return self.spec == REFERENCE_SPEC

    @property
    def name(self) -> str:
        """How sections name it: the model for LiveCoder, ``method / model`` for another method; an oracle says
        so wherever its figures appear."""
        name = self.model if self.method == "livecoder" else f"{self.method} / {self.model}"
        return name + (" (oracle)" if self.oracle else "")

    @property
    def column(self) -> str:
        """How a table's column names it: ``method / model``, an oracle saying so."""
        return f"{self.method} / {self.model}" + (" (oracle)" if self.oracle else "")

    @property
    def error_types(self) -> dict[str, int] | None:
        """Its scored pairs' failing unit tests per exception class (ProjectGen Figure 5); None when no pair
        recorded them (older ledgers)."""
        recorded = [p.error_types for p in self.pairs if p.ok and p.error_types is not None]
        return merged(recorded) if recorded else None


def summarize_pairs(model: ExperimentModel, pairs: Sequence[PairResult], attempts: int,
                    method: str = "livecoder") -> ModelReport:
    """A model's figures per attempt and for the final outputs (see the module docstring)."""
    ok = [p for p in pairs if p.ok]
    measured = bool(ok) and all(p.unit_measured for p in ok)
    scores = [attempt_scores(p, attempts) for p in ok]

    def mean(values: list[float]) -> float:
        return math.fsum(values) / len(values)

    rows = []
    for t in range(1, attempts + 1):
        own = [(s[t - 1][0], p.loc or 0) for s, p in zip(scores, ok)]
        output = [(s[t - 1][1], p.loc or 0) for s, p in zip(scores, ok)]
        figures = [next((a for a in p.attempts if a.attempt == t), None) for p in ok]
        tokens = sum((a.tokens for a in figures if a is not None), TokenFigures())
        cost = sum((a.cost for a in figures if a is not None), CostFigures())
        indices = [a.maintainability for a in figures if a is not None and a.maintainability is not None]
        indices_vs = [a.maintainability_vs for a in figures if a is not None and a.maintainability_vs is not None]
        rows.append(AttemptRow(
            attempt=t, tasks=len(ok), generated=sum(1 for a in figures if a is not None and a.kind == "generated"),
            maintainability=mean(indices) if indices else None,
            maintainability_vs=mean(indices_vs) if indices_vs else None,
            reuse_rate=mean([float(s[t - 1][2]) for s in scores]) if ok else 0.0,
            attempt_mean=mean([s for s, _ in own]) if ok and measured else None,
            attempt_loc_weighted=loc_weighted_average(own) if ok and measured else None,
            output_mean=mean([s for s, _ in output]) if ok and measured else None,
            output_loc_weighted=loc_weighted_average(output) if ok and measured else None,
            tokens=tokens, cost=cost))
    final = FinalFigures(
        tasks=len(ok), errors=len(pairs) - len(ok),
        mean_attempts_run=mean([p.attempts_run for p in ok]) if ok else None,
        reused=sum(1 for p in ok if p.reused_at is not None),
        budget_limited=sum(1 for p in ok if p.status == "budget-limited"),
        tokens=sum((p.tokens for p in ok), TokenFigures()), cost=sum((p.cost for p in ok), CostFigures()),
        cost_reduction_pct=cost_reduction(rows[0].cost.usd, rows[-1].cost.usd) if len(rows) > 1 else None,
        token_reduction_pct=(cost_reduction(rows[0].tokens.total_tokens, rows[-1].tokens.total_tokens)
                             if len(rows) > 1 else None),
        sketchbleu=average_sketchbleu(p.sketchbleu for p in ok),
        sketchbleu_codes=average_sketchbleu(p.sketchbleu_codes for p in ok),
        sketchbleu_codes_files=sorted({p.sketchbleu_codes_files for p in ok
                                       if p.sketchbleu_codes is not None and p.sketchbleu_codes_files}),
        incomplete=sorted(p.task_id for p in ok if p.environment_incomplete), scores=mean_scores(ok))
    if ok and measured:
        # An error pair on a published task keeps the paper's #Tests (0 passed) in SUM and AVG_weighted.
        kept = [p for p in pairs if not p.ok and p.unit_denominator == "published"]
        task_scores = [TaskScore(task_id=p.task_id, passed=p.final_unit_passed or 0, total=p.final_unit_total or 0,
                                 loc=p.loc or 0) for p in [*ok, *kept]]
        dataset = summarize(task_scores)
        final = final.model_copy(update={
            "passed": dataset.passed, "total": dataset.total, "avg_weighted": dataset.avg_weighted,
            "weights": sorted({p.loc_source for p in ok if p.loc_source}),
            "denominators": sorted({p.unit_denominator for p in [*ok, *kept] if p.unit_denominator}), "mean_pass_rate": dataset.mean_pass_rate,
            "loc_weighted_pass_rate": dataset.loc_weighted_pass_rate,
            "fully_passing": sum(1 for s in task_scores if s.total and s.passed == s.total),
            "complete_passed": sum(s.passed for s in task_scores if s.task_id not in final.incomplete),
            "complete_total": sum(s.total for s in task_scores if s.task_id not in final.incomplete),
            "by_difficulty": difficulty_buckets(task_scores, {p.task_id: p.difficulty for p in [*ok, *kept]
                                                              if p.difficulty})})
    return ModelReport(method=method, model=model.slug, spec=model.spec, attempts=attempts, per_attempt=rows,
                       final=final,
                       pairs=sorted(pairs, key=lambda p: p.task_id))


def mean_scores(pairs: Sequence[PairResult]) -> dict[str, float | None]:
    """Custom scorer name -> the mean of its values over the pairs that have one (None when none has)."""
    means: dict[str, float | None] = {}
    for name in dict.fromkeys(name for pair in pairs for name in pair.scores):
        values = [value for pair in pairs if (value := pair.scores.get(name)) is not None]
        means[name] = math.fsum(values) / len(values) if values else None
    return means


RESULTS_SCHEMA_VERSION = 1


class SummaryEntry(BaseModel):
    """One (method, model) of an experiment in the papers' terms: ProjectGen's SUM and AVG_weighted."""

    method: str
    model: str
    tasks: int
    errors: int
    pass_sum: int | None = Field(description="SUM of #Pass over the scored tasks (None: unit tests not run)")
    tests: int | None = Field(description="unit tests over the scored tasks (the SUM row's #Tests)")
    avg_weighted: float | None = Field(description="sum(#Pass x #LOC) / sum(#LOC) over the scored tasks")
    sketchbleu: float | None = Field(default=None, description="mean SketchBLEU, mode 'repaired', over the tasks "
                                     "that have one")
    sketchbleu_codes: float | None = Field(default=None, description="mean SketchBLEU, mode 'codes'")
    sketchbleu_codes_files: list[str] = Field(default_factory=list, description="what the codes figures compared: "
                                              "'projectgen-script' or 'reference-sources' (empty in older results)")
    weights: list[str] = Field(description="where the #LOC weights came from")
    denominators: list[str] = Field(default_factory=list, description="what #Tests counts: 'published', "
                                    "'expected', 'declared' or 'run' (projectgen.evaluation.denominators)")
    environment_incomplete: list[str] = Field(default_factory=list, description="tasks in pass_sum and tests whose "
                                              "environment here is not their benchmark's (each pair names the cause)")
    error_types: dict[str, int] | None = Field(default=None, description="failing unit tests of the final outputs per "
                                               "exception class (ProjectGen Figure 5); None when not recorded")
    error_categories: dict[str, int] | None = Field(default=None, description="the same per category "
                                                    "(LiveCoder Figure 5, evaluation.error_types.CATEGORIES)")
    scores: dict[str, float | None] = Field(default_factory=dict, description="custom scorer name -> its mean over "
                                            "the tasks that have a value (--scorer)")


def difficulty_buckets(scores: Sequence[Any], labels: Mapping[str, str] | None = None) -> dict[str, BucketFigures]:
    """Mean final pass rate per difficulty bucket (only the buckets that have tasks): a task's published label
    (`labels`, task id -> easy / medium / hard: NL2Repo-Bench's) where it has one, else its #LOC's bucket."""
    buckets: dict[str, list[float]] = {}
    for score in scores:
        label = (labels or {}).get(score.task_id) or difficulty(score.loc)
        buckets.setdefault(label, []).append(score.pass_rate)
    return {name: BucketFigures(tasks=len(buckets[name]), mean_pass_rate=math.fsum(buckets[name]) / len(buckets[name]))
            for name in DIFFICULTIES if name in buckets}


class ExperimentResults(BaseModel):
    """An experiment's results: what results.json holds (and results.md shows as tables).

    `schema_version` changes when a field changes meaning or goes away; `summary` holds one entry
    per (method, model)."""

    schema_version: int = RESULTS_SCHEMA_VERSION
    dataset: str
    out_dir: str
    settings: dict[str, Any] = Field(description="the pipeline settings the experiment asked for; a task's paper "
                                     "profile fills what it left unset (`settings_profiles`), so what each run used "
                                     "is its pair's `profile`, `feedback_suite` and `fidelity_settings`")
    attempt_settings: dict[str, Any] = Field(description="the attempt settings the experiment asked for; a method "
                                             "and a task's profile change them (each pair's `attempts_planned`, "
                                             "`selection` and `fidelity_settings` are what ran)")
    max_tokens: int | None = None
    denominator: str = Field(default="", description="the #Tests setting the experiment ran with: 'published' "
                             "or 'reference' (projectgen.evaluation.denominators); empty in older results")
    prices: str = Field(default="", description="where the prices came from")
    settings_profiles: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="task id -> settings its benchmark's paper profile gave it over "
        "`settings` (fields the experiment left unset, e.g. the code-stage cap of 10 on CodeProjectEval)")
    custom_methods: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="name -> the user's method (--method package.module:factory): its label, "
        "base method, spec and its module file's sha256, as experiment.json records them")
    scorers: dict[str, dict[str, str]] = Field(default_factory=dict, description="name -> the user's scorer "
                                               "(--scorer): its spec and its module file's sha256")
    models: list[ModelReport]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def summary(self) -> list[SummaryEntry]:
        """One entry per (method, model): SUM of #Pass and AVG_weighted of the final outputs."""
        return [SummaryEntry(method=r.method, model=r.model, tasks=r.final.tasks, errors=r.final.errors,
                             pass_sum=r.final.passed, tests=r.final.total, avg_weighted=r.final.avg_weighted,
                             sketchbleu=r.final.sketchbleu, sketchbleu_codes=r.final.sketchbleu_codes,
                             sketchbleu_codes_files=r.final.sketchbleu_codes_files,
                             weights=r.final.weights, denominators=r.final.denominators,
                             environment_incomplete=r.final.incomplete, error_types=r.error_types,
                             error_categories=None if r.error_types is None else by_category(r.error_types),
                             scores=r.final.scores)
                for r in self.models]
