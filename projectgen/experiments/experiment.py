"""Experiments: every task x model as one LiveCoder run, in parallel, resumable, summarised per attempt.

`run_experiment(dataset, out_dir, models, ...)` runs each (model, task) pair as one LiveCoder
run (`projectgen.runs.livecoder.run_livecoder`: the attempts of one task in order, inside that
run) into ``OUT/<model-slug>/<task-id>/``; different pairs run in parallel on `workers`
threads. The folder holds::

    experiment.json      what the experiment is (dataset, settings, models); checked on every continue
    ledger.jsonl         one line per pair that finished (its figures) or failed (its one-line reason)
    <model-slug>/<task-id>/   the LiveCoder run folder (run.json, checkpoints, usage.jsonl, summary.json, ...)
    results.json         per model: per-attempt figures, final-output figures, one row per task
    results.md           the same as Markdown tables

Continuing. Run the same command again and:

- a pair whose latest ledger line says it finished (or stopped at its token budget) is skipped;
- a pair whose run folder holds ``run.json`` and a checkpoint but no ``summary.json`` (killed,
  or it raised) is resumed (``resume=True``): the checkpointer replays what was done, so no
  finished model call is repeated;
- a pair whose folder holds a ``summary.json`` but no ledger line (killed between the two)
  is recorded from its folder, without running anything;
- a pair that failed (an error line) is tried again, resuming its folder when it can;
- anything else starts afresh in an emptied folder.

``fresh=True`` forgets the ledger and starts every pair again. An experiment folder is tied to
its settings: continuing it with other pipeline/attempt settings, token cap or dataset is
refused (use `fresh` or another folder); adding models or tasks is fine.

Errors. A task folder that fails to load and a run that raises are both recorded as error
lines (with a one-line reason) and the experiment goes on. Error pairs are left out of every
mean and LOC-weighted figure and counted apart (``errors``): a run that raised is usually
the infrastructure (an unreachable endpoint), not the model, and is retried on the next
continue.

Models. A model is a spec string as for ``projectgen run --model`` (``openai:gpt-4o-mini``,
a served name with `base_url`, ``scripted:FILE``), optionally labelled ``LABEL=SPEC`` (the
label names its folder and table). Experiments only: ``scripted:DIR`` where DIR is a folder
replays ``DIR/<task-id>.json`` for each task (one replay script per task, since the
architect's and judges' entries carry no target and the scripts of two tasks would collide);
a task without its script is an error pair. The resolved per-task spec is what each run's
``run.json`` records, so ``projectgen run --resume OUT/<slug>/<task>`` works on its own.

Figures (`summarize_pairs`), per model, over the pairs that did not fail; the functional
score of a task is its hidden unit-test pass rate (`projectgen.evaluation.metrics.pass_rate`)
and a dataset figure is given both as the plain mean over tasks and as ProjectGen's
LOC-weighted average (`loc_weighted_average`, weight `Task.size().loc`):

- per attempt t: the pass rate of attempt t (``attempt``), the pass rate of what the run
  outputs after t attempts (``output``: the historical best so far; the last attempt under
  the no-historical-best ablation), the reuse rate, tokens and cost of the calls tagged with
  attempt t (summed over tasks). See `attempt_scores` for attempts that generated nothing.
- final: the hidden unit tests run on each run's final repository: #Pass, mean and
  LOC-weighted pass rate, tasks fully passing; tokens and cost of the whole runs.

Cost uses `projectgen.llm.pricing.PriceTable` (list prices, or a price file); a call whose model
has no price is counted apart and its cost shown as "n/a", never guessed. Scripted replays
cost 0.
"""
from __future__ import annotations

import json
import math
import queue
import re
import shutil
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from projectgen.config import AttemptSettings, Settings
from projectgen.datasets.task import Task
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError, error_line
from projectgen.experiments.ledger import Ledger
from projectgen.runs import layout

SCRIPTED = "scripted:"

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

PairStatus = Literal["finished", "budget-limited", "error"]
FINISHED: tuple[str, ...] = ("finished", "budget-limited")


# --------------------------------------------------------------------------- models


def model_slug(spec: str) -> str:
    """A folder name for a model spec: ``openai:gpt-4o-mini`` -> ``openai-gpt-4o-mini``;
    ``scripted:/x/replays`` -> ``scripted-replays``; ``scripted:/x/run.json`` -> ``scripted-run``."""
    text = spec.strip()
    if text.startswith(SCRIPTED):
        path = Path(text[len(SCRIPTED):].rstrip("/"))
        text = "scripted-" + (path.stem if path.suffix == ".json" else path.name)
    return _UNSAFE.sub("-", text).strip("-.") or "model"


@dataclass(frozen=True)
class ExperimentModel:
    """One model of an experiment: its folder/table name and its spec string."""

    slug: str
    spec: str

    @classmethod
    def parse(cls, text: str) -> ExperimentModel:
        """``SPEC`` or ``LABEL=SPEC``; a scripted path is made absolute (run manifests outlive the cwd)."""
        text = text.strip()
        label, sep, rest = text.partition("=")
        if sep and _LABEL.match(label.strip()) and rest.strip():
            label, spec = label.strip(), rest.strip()
        else:
            label, spec = "", text
        if not spec:
            raise ProjectGenError("empty model spec")
        if spec.startswith(SCRIPTED):
            path = Path(spec[len(SCRIPTED):]).expanduser()
            if not path.exists():
                raise ProjectGenError(f"{spec}: no such script file or folder")
            spec = f"{SCRIPTED}{path.resolve()}"
        return cls(slug=label or model_slug(spec), spec=spec)

    @property
    def script_dir(self) -> Path | None:
        """The folder of per-task scripts of a ``scripted:DIR`` model, else None."""
        if self.spec.startswith(SCRIPTED):
            path = Path(self.spec[len(SCRIPTED):])
            if path.is_dir():
                return path
        return None

    def spec_for(self, task_id: str) -> str:
        """The spec one task's run uses: ``scripted:DIR`` becomes ``scripted:DIR/<task-id>.json``."""
        folder = self.script_dir
        if folder is None:
            return self.spec
        script = folder / f"{task_id}.json"
        if not script.is_file():
            raise ProjectGenError(f"{folder}: no replay script for task {task_id!r} (expected {script.name})")
        return f"{SCRIPTED}{script}"


def _as_models(models: Iterable[ExperimentModel | str]) -> list[ExperimentModel]:
    parsed = [m if isinstance(m, ExperimentModel) else ExperimentModel.parse(m) for m in models]
    if not parsed:
        raise ProjectGenError("an experiment needs at least one model")
    seen: dict[str, str] = {}
    for model in parsed:
        if model.slug in seen and seen[model.slug] != model.spec:
            raise ProjectGenError(f"models {seen[model.slug]!r} and {model.spec!r} would share the folder "
                                  f"{model.slug!r}: label one of them (LABEL=SPEC)")
        seen[model.slug] = model.spec
    unique: dict[str, ExperimentModel] = {m.slug: m for m in parsed}
    return list(unique.values())


def _preflight(model: ExperimentModel, base_url: str | None) -> None:
    """Fail before any run on a spec that cannot make a model (unknown provider, missing key, bad script)."""
    from projectgen.llm import ModelRoles

    if model.script_dir is not None:
        if not any(model.script_dir.glob("*.json")):
            raise ProjectGenError(f"{model.script_dir}: no replay scripts (<task-id>.json) in the folder")
        return
    ModelRoles.from_specs(model.spec, base_url=base_url)


# --------------------------------------------------------------------------- ledger records


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
        from projectgen.llm.pricing import format_usd

        if self.priced_calls == 0 and self.unpriced_calls == 0:
            return "-"
        if self.priced_calls == 0:
            return "n/a"
        text = format_usd(self.usd)
        return text if not self.unpriced_calls else f"{text} + n/a ({self.unpriced_calls} calls)"


class TokenFigures(BaseModel):
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
    tokens: TokenFigures = Field(default_factory=TokenFigures)
    cost: CostFigures = Field(default_factory=CostFigures)


class PairResult(BaseModel):
    """One task x model pair: one ledger line, one row of the per-task table."""

    key: str
    model: str
    spec: str
    task_id: str
    status: PairStatus
    error: str | None = None
    loc: int | None = Field(default=None, description="Task.size().loc: the LOC weight")
    attempts_planned: int | None = None
    historical_best: bool = True
    unit_measured: bool = True
    attempts: list[AttemptFigures] = Field(default_factory=list)
    final: dict[str, Any] | None = None
    final_unit_passed: int | None = None
    final_unit_total: int | None = None
    tokens: TokenFigures = Field(default_factory=TokenFigures)
    cost: CostFigures = Field(default_factory=CostFigures)
    duration_s: float | None = None
    run_dir: str | None = None
    how: str = Field(default="run", description="run / resumed / collected (from a finished folder) / ledger")

    @property
    def ok(self) -> bool:
        return self.status in FINISHED

    @property
    def attempts_run(self) -> int:
        return sum(1 for a in self.attempts if a.kind == "generated")

    @property
    def reused_at(self) -> int | None:
        return next((a.attempt for a in self.attempts if a.kind == "reused"), None)


def pair_key(model: str, task_id: str) -> str:
    return f"{model}/{task_id}"


def pair_from_run(run_dir: Path, *, model: ExperimentModel, task: Task, prices: Any = None,
                  how: str = "run") -> PairResult:
    """A finished run folder's figures: attempts from summary.json, tokens and cost from usage.jsonl.

    Tokens are counted from usage.jsonl (every call of the run, also those made before a
    resume), not from the summary, whose counts cover only the calls of its last process.
    """
    from projectgen.llm import UsageRecorder

    summary = json.loads((run_dir / layout.SUMMARY).read_text(encoding="utf-8"))
    if prices is None:
        from projectgen.llm.pricing import PriceTable

        prices = PriceTable.default()
    records = UsageRecorder.load(run_dir / layout.USAGE).records
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
    for row in summary.get("attempts") or []:
        number = int(row["attempt"])
        kind = "reused" if row.get("reused") else "budget" if row.get("budget_limited") else "generated"
        unit = row.get("unit") or {}
        calls = by_attempt.get(number, [])
        attempts.append(AttemptFigures(
            attempt=number, kind=kind, score=row.get("score"),
            unit_passed=unit.get("passed") if unit else None, unit_total=unit.get("total") if unit else None,
            best_attempt=row.get("best_attempt"), tokens=tokens(calls), cost=cost(calls)))
    attempt_settings = summary.get("attempt_settings") or {}
    unit = summary.get("unit_tests") or {}
    return PairResult(
        key=pair_key(model.slug, task.id), model=model.slug, spec=model.spec, task_id=task.id,
        status="budget-limited" if summary.get("budget_limited") else "finished", loc=task.size().loc,
        attempts_planned=attempt_settings.get("attempts"),
        historical_best=attempt_settings.get("historical_best", True),
        unit_measured=attempt_settings.get("measure_unit_tests", True), attempts=attempts,
        final=summary.get("final"), final_unit_passed=unit.get("passed") if unit else None,
        final_unit_total=unit.get("total") if unit else None, tokens=tokens(records), cost=cost(records),
        duration_s=summary.get("duration_s"), run_dir=str(run_dir), how=how)


# --------------------------------------------------------------------------- figures


def _rate(passed: int | None, total: int | None) -> float:
    from projectgen.evaluation.metrics import pass_rate

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
    tokens: TokenFigures
    cost: CostFigures


class FinalFigures(BaseModel):
    """The final outputs (the hidden unit tests on each run's final repository) over a model's tasks."""

    tasks: int
    errors: int
    passed: int | None = None
    total: int | None = None
    mean_pass_rate: float | None = None
    loc_weighted_pass_rate: float | None = None
    fully_passing: int | None = None
    mean_attempts_run: float | None = None
    reused: int = 0
    budget_limited: int = 0
    tokens: TokenFigures = Field(default_factory=TokenFigures)
    cost: CostFigures = Field(default_factory=CostFigures)


class ModelReport(BaseModel):
    model: str
    spec: str
    attempts: int
    per_attempt: list[AttemptRow]
    final: FinalFigures
    pairs: list[PairResult]


def summarize_pairs(model: ExperimentModel, pairs: Sequence[PairResult], attempts: int) -> ModelReport:
    """A model's figures per attempt and for the final outputs (see the module docstring)."""
    from projectgen.evaluation.metrics import TaskScore, loc_weighted_average, summarize

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
        rows.append(AttemptRow(
            attempt=t, tasks=len(ok), generated=sum(1 for a in figures if a is not None and a.kind == "generated"),
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
        tokens=sum((p.tokens for p in ok), TokenFigures()), cost=sum((p.cost for p in ok), CostFigures()))
    if ok and measured:
        task_scores = [TaskScore(task_id=p.task_id, passed=p.final_unit_passed or 0, total=p.final_unit_total or 0,
                                 loc=p.loc or 0) for p in ok]
        dataset = summarize(task_scores)
        final = final.model_copy(update={
            "passed": dataset.passed, "total": dataset.total, "mean_pass_rate": dataset.mean_pass_rate,
            "loc_weighted_pass_rate": dataset.loc_weighted_pass_rate,
            "fully_passing": sum(1 for s in task_scores if s.total and s.passed == s.total)})
    return ModelReport(model=model.slug, spec=model.spec, attempts=attempts, per_attempt=rows, final=final,
                       pairs=sorted(pairs, key=lambda p: p.task_id))


class ExperimentResults(BaseModel):
    dataset: str
    out_dir: str
    settings: dict[str, Any]
    attempt_settings: dict[str, Any]
    max_tokens: int | None = None
    prices: str = Field(default="", description="where the prices came from")
    models: list[ModelReport]

    def write(self, out_dir: Path) -> None:
        write_atomic(out_dir / layout.RESULTS_JSON, self.model_dump_json(indent=1) + "\n")
        write_atomic(out_dir / layout.RESULTS_MD, render_markdown(self))


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


ATTEMPT_COLUMNS = ("attempt", "generated", "attempt t: mean", "attempt t: LOC-w.", "output: mean",
                   "output: LOC-w.", "reuse", "tokens", "cost")


def attempt_cells(row: AttemptRow) -> list[str]:
    """The cells of one per-attempt table row (shared by the rich and Markdown tables)."""
    return [str(row.attempt), f"{row.generated}/{row.tasks}", percent(row.attempt_mean),
            percent(row.attempt_loc_weighted), percent(row.output_mean), percent(row.output_loc_weighted),
            percent(row.reuse_rate), f"{row.tokens.total_tokens:,}", row.cost.label()]


def final_lines(report: ModelReport) -> list[str]:
    """The final-output figures as short lines (shared by the CLI and Markdown)."""
    f = report.final
    lines = []
    if f.tasks and f.mean_pass_rate is not None:
        lines.append(f"final output (hidden unit tests): #Pass {f.passed}/{f.total}, mean {percent(f.mean_pass_rate)}, "
                     f"LOC-weighted {percent(f.loc_weighted_pass_rate)}, fully passing {f.fully_passing}/{f.tasks} "
                     "tasks")
    elif f.tasks:
        lines.append("final output: hidden unit tests not run")
    lines.append(f"tasks: {f.tasks} scored, {f.errors} error(s); attempts run per task: "
                 f"{'n/a' if f.mean_attempts_run is None else f'{f.mean_attempts_run:.2f}'}; reused: {f.reused}; "
                 f"stopped by the budget: {f.budget_limited}")
    lines.append(f"tokens: {f.tokens.total_tokens:,} in {f.tokens.calls} calls; cost: {f.cost.label()}")
    return lines


NOTES = ("'attempt t' is the unit pass rate of attempt t; 'output' the pass rate of what the run outputs after t "
         "attempts (the historical best so far). An attempt that generated nothing (a reuse of a full-score best, "
         "a budget stop, or after the run ended) carries the best so far forward; attempts after a reuse count as "
         "reuses. Means are over tasks; LOC-w. weights each task by its reference LOC (ProjectGen). Error pairs "
         "are left out. Tokens and cost: calls tagged with attempt t, summed over tasks.")


def render_markdown(results: ExperimentResults) -> str:
    lines = [f"# Experiment on {results.dataset}", "",
             f"attempts: {results.attempt_settings.get('attempts')}, selection: "
             f"{results.attempt_settings.get('selection')}"
             + (" (oracle: hidden unit tests)" if results.attempt_settings.get("selection") == "unit" else "")
             + (f", token cap per run: {results.max_tokens}" if results.max_tokens else "")
             + (f"; prices: {results.prices}" if results.prices else ""), "", NOTES, ""]
    for report in results.models:
        lines += [f"## {report.model}", "", f"model: `{report.spec}`", "",
                  "| " + " | ".join(ATTEMPT_COLUMNS) + " |", "|" + "---|" * len(ATTEMPT_COLUMNS)]
        lines += ["| " + " | ".join(attempt_cells(row)) + " |" for row in report.per_attempt]
        lines += [""] + [f"- {line}" for line in final_lines(report)] + [""]
        lines += ["| task | status | LOC | unit (final) | attempts run | reused at | tokens | cost | note |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for p in report.pairs:
            unit = f"{p.final_unit_passed}/{p.final_unit_total}" if p.final_unit_total is not None else ""
            note = (p.error or "").replace("|", "\\|")[:200]
            lines.append(f"| {p.task_id} | {p.status} | {p.loc if p.loc is not None else ''} | {unit} | "
                         f"{p.attempts_run if p.ok else ''} | {p.reused_at or ''} | "
                         f"{p.tokens.total_tokens:,} | {p.cost.label() if p.ok else ''} | {note} |")
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class _Job:
    model: ExperimentModel
    task: Task
    run_dir: Path
    mode: Literal["new", "resume", "collect"]


ProgressFn = Callable[[str, str], None]  # (pair key, message)


def _config(dataset: Path, models: Sequence[ExperimentModel], settings: Settings, attempt_settings: AttemptSettings,
            max_tokens: int | None) -> dict[str, Any]:
    return {"dataset": str(dataset.resolve()), "settings": settings.model_dump(mode="json"),
            "attempt_settings": attempt_settings.model_dump(mode="json"), "max_tokens": max_tokens,
            "models": {m.slug: m.spec for m in models}}


def _check_config(out_dir: Path, config: dict[str, Any], fresh: bool) -> dict[str, Any]:
    """Write experiment.json, or check that a continued experiment keeps its settings (models may be added)."""
    path = out_dir / layout.EXPERIMENT_CONFIG
    if path.exists() and not fresh:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ProjectGenError(f"{path}: unreadable ({exc}); use --fresh or another --out") from None
        changed = [name for name in ("dataset", "settings", "attempt_settings", "max_tokens")
                   if stored.get(name) != config[name]]
        if changed:
            raise ProjectGenError(f"{out_dir} holds an experiment with other {', '.join(changed)}; continue it with "
                                  "the same options, or use --fresh or another --out")
        for slug, spec in (stored.get("models") or {}).items():
            if slug in config["models"] and config["models"][slug] != spec:
                raise ProjectGenError(f"{out_dir}: model folder {slug!r} holds runs of {spec!r}, not "
                                      f"{config['models'][slug]!r}; label the model differently (LABEL=SPEC)")
        config = {**config, "models": {**stored.get("models", {}), **config["models"]}}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(config, indent=1) + "\n")
    except OSError as exc:
        raise ProjectGenError(f"{out_dir}: cannot write the experiment there ({exc.strerror or exc}); choose "
                              "another --out") from None
    return config


def _plan(run_dir: Path, fresh: bool) -> Literal["new", "resume", "collect"]:
    if fresh:
        return "new"
    if (run_dir / layout.SUMMARY).is_file():
        return "collect"
    if (run_dir / layout.MANIFEST).is_file() and (run_dir / layout.CHECKPOINTS).is_file():
        return "resume"
    return "new"


def _pair_dir(out_dir: Path, slug: str, task_id: str) -> Path:
    run_dir = out_dir / slug / task_id
    if ".." in (slug, task_id) or run_dir.resolve().parent.parent != out_dir.resolve():
        raise ProjectGenError(f"unsafe run folder for {slug}/{task_id}")
    return run_dir


def run_experiment(dataset: Path | str, out_dir: Path | str, models: Iterable[ExperimentModel | str], *,
                   settings: Settings | None = None, attempt_settings: AttemptSettings | None = None,
                   tasks: Iterable[str] | None = None, workers: int = 1, fresh: bool = False,
                   base_url: str | None = None, max_tokens: int | None = None, knowledge_url: str | None = None,
                   runner_factory: Callable[[], Any] | None = None, prices: Any = None, prices_source: str = "",
                   on_start: Callable[[int, int], None] | None = None,
                   on_pair: Callable[[PairResult], None] | None = None,
                   progress: ProgressFn | None = None) -> ExperimentResults:
    """Run every task x model pair of `dataset` as one LiveCoder run; continue from `out_dir`'s ledger.

    `models`: `ExperimentModel`s or spec strings (``LABEL=SPEC`` allowed, ``scripted:DIR``
    per task). `tasks`: task ids to keep (default all). `runner_factory` makes one sandbox
    runner per worker thread (default `SandboxRunner()` with `progress` as its log).
    `prices`: a `projectgen.llm.pricing.PriceTable` (default: list prices). `on_start(pending,
    already)` is called once the plan is known; `on_pair(result)` after each pair (also for
    load errors); `progress(key, message)` relays the runs' progress lines. Writes
    ``results.json`` and ``results.md`` and returns the results.
    """
    from projectgen.datasets.loaders import load_dataset_report

    dataset, out_dir = Path(dataset), Path(out_dir)
    settings = settings or Settings()
    attempt_settings = attempt_settings or AttemptSettings()
    chosen = _as_models(models)
    if knowledge_url and len(chosen) > 1:
        raise ProjectGenError("a shared knowledge store would let the runs of one task by different models read "
                              "each other's knowledge: run one model per experiment with it, or leave it out")
    if workers < 1:
        raise ProjectGenError(f"workers must be at least 1, got {workers}")
    if prices is None:
        from projectgen.llm.pricing import PRICES_AS_OF, PriceTable

        prices, prices_source = PriceTable.default(), prices_source or f"list prices as of {PRICES_AS_OF}"
    for model in chosen:
        _preflight(model, base_url)
    loaded, load_errors = load_dataset_report(dataset)
    errors = {_error_task_id(e.path): str(e) for e in load_errors}
    wanted = None if tasks is None else [t.strip() for t in tasks if t.strip()]
    if wanted is not None:
        known = {t.id for t in loaded} | set(errors)
        unknown = [t for t in wanted if t not in known]
        if unknown:
            raise ProjectGenError(f"unknown task(s) {', '.join(unknown)} in {dataset} (tasks: "
                                  f"{', '.join(sorted(known))})")
        loaded = [t for t in loaded if t.id in wanted]
        errors = {k: v for k, v in errors.items() if k in wanted}

    from projectgen.runs.locking import folder_lock

    # One experiment process at a time in the folder: a second one would plan the same pairs from the ledger.
    with folder_lock(out_dir, "experiment"):
        _check_config(out_dir, _config(dataset, chosen, settings, attempt_settings, max_tokens), fresh)
        ledger = Ledger(out_dir / layout.LEDGER)
        if fresh and ledger.path.exists():
            ledger.path.unlink()
        done = ledger.done()
        results: dict[str, PairResult] = {}
        jobs: list[_Job] = []
        for model in chosen:
            for task_id, reason in sorted(errors.items()):
                key = pair_key(model.slug, task_id)
                result = PairResult(key=key, model=model.slug, spec=model.spec, task_id=task_id, status="error",
                                    error=f"task does not load: {reason}", how="load")
                previous = done.get(key)
                if previous is None or previous.get("status") != "error" or previous.get("error") != result.error:
                    ledger.append(key, **result.model_dump(mode="json", exclude={"key"}))
                results[key] = result
            for task in loaded:
                key = pair_key(model.slug, task.id)
                entry = done.get(key)
                if entry is not None and entry.get("status") in FINISHED:
                    results[key] = PairResult.model_validate(entry).model_copy(update={"how": "ledger"})
                    continue
                run_dir = _pair_dir(out_dir, model.slug, task.id)
                jobs.append(_Job(model, task, run_dir, _plan(run_dir, fresh)))
        already = sum(1 for r in results.values() if r.how == "ledger")
        if on_start:
            on_start(len(jobs), already)
        if on_pair:
            for result in results.values():
                if result.status == "error":
                    on_pair(result)

        def work(job: _Job, runner: Any) -> PairResult:
            key = pair_key(job.model.slug, job.task.id)
            try:
                result = _run_pair(job, runner, settings=settings, attempt_settings=attempt_settings, base_url=base_url,
                                   max_tokens=max_tokens, knowledge_url=knowledge_url, prices=prices,
                                   progress=(lambda message: progress(key, message)) if progress else None)
            except Exception as exc:  # one failing run must not end the experiment
                result = PairResult(key=key, model=job.model.slug, spec=job.model.spec, task_id=job.task.id,
                                    status="error", error=error_line(exc), run_dir=str(job.run_dir),
                                    loc=_safe_loc(job.task))
            ledger.append(key, **result.model_dump(mode="json", exclude={"key"}))
            return result

        def make_runner() -> Any:
            if runner_factory is not None:
                return runner_factory()
            from projectgen.evaluation.runner import SandboxRunner

            return SandboxRunner(log=(lambda message: progress("sandbox", message)) if progress else None)

        for result in _parallel(jobs, workers, work, make_runner):
            results[result.key] = result
            if on_pair:
                on_pair(result)

        reports = []
        for model in chosen:
            pairs = [r for r in results.values() if r.model == model.slug]
            reports.append(summarize_pairs(model, pairs, attempt_settings.attempts))
        experiment = ExperimentResults(
            dataset=str(dataset), out_dir=str(out_dir), settings=settings.model_dump(mode="json"),
            attempt_settings=attempt_settings.model_dump(mode="json"), max_tokens=max_tokens, prices=prices_source,
            models=reports)
        experiment.write(out_dir)
        return experiment


def _error_task_id(path: Path) -> str:
    return path.parent.name if path.name in ("config.json", "task.toml") else path.name


def _safe_loc(task: Task) -> int | None:
    try:
        return task.size().loc
    except OSError:
        return None


def _run_pair(job: _Job, runner: Any, *, settings: Settings, attempt_settings: AttemptSettings,
              base_url: str | None, max_tokens: int | None, knowledge_url: str | None, prices: Any,
              progress: Callable[[str], None] | None) -> PairResult:
    from projectgen.runs.livecoder import run_livecoder
    from projectgen.llm import ModelRoles

    if job.mode == "collect":
        return pair_from_run(job.run_dir, model=job.model, task=job.task, prices=prices, how="collected")
    spec = job.model.spec_for(job.task.id)
    models = ModelRoles.from_specs(spec, base_url=base_url)
    model_specs = {"default": spec, **({"base_url": base_url} if base_url else {})}
    common = dict(models=models, model_specs=model_specs, settings=settings, attempt_settings=attempt_settings,
                  runner=runner, knowledge_url=knowledge_url, max_tokens=max_tokens, progress=progress,
                  evaluate_unit=attempt_settings.measure_unit_tests)
    if job.mode == "resume":
        try:
            run_livecoder(job.task, job.run_dir, resume=True, **common)
            return pair_from_run(job.run_dir, model=job.model, task=job.task, prices=prices, how="resumed")
        except ProjectGenError as exc:
            if "no checkpoint to resume from" not in str(exc):
                raise
    # A new run starts in an emptied folder: LiveCoder's best-repository and knowledge stores are
    # per task, not per run, so leftovers of an earlier run in the same folder would leak into it.
    if job.run_dir.exists():
        shutil.rmtree(job.run_dir)
    run_livecoder(job.task, job.run_dir, force=False, **common)
    return pair_from_run(job.run_dir, model=job.model, task=job.task, prices=prices)


def _parallel(jobs: Sequence[_Job], workers: int, work: Callable[[_Job, Any], PairResult],
              make_runner: Callable[[], Any]) -> Iterable[PairResult]:
    """Run `work` over `jobs` on daemon threads (one runner each); yield results as they finish.

    Each worker calls `run_livecoder`, whose `asyncio.run` gives that thread its own event
    loop. Daemon threads let Ctrl-C end the command at once: what a run had finished is in
    its checkpoint and the ledger, and the next invocation resumes it.
    """
    pending = list(jobs)
    lock = threading.Lock()
    done: queue.Queue[PairResult | BaseException] = queue.Queue()
    stop = threading.Event()

    def worker() -> None:
        try:
            runner = make_runner()
        except BaseException as exc:
            done.put(exc)
            return
        while not stop.is_set():
            with lock:
                if not pending:
                    return
                job = pending.pop(0)
            try:
                done.put(work(job, runner))
            except BaseException as exc:  # work() records its own errors; this is a bug or an interrupt
                done.put(exc)
                return

    threads = [threading.Thread(target=worker, name=f"experiment-worker-{i}", daemon=True)
               for i in range(min(workers, len(jobs)))]
    for thread in threads:
        thread.start()
    received = 0
    try:
        while received < len(jobs):
            try:
                item = done.get(timeout=0.2)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and done.empty():
                    raise RuntimeError("experiment workers stopped before finishing their pairs")
                continue
            if isinstance(item, BaseException):
                raise item
            received += 1
            yield item
    finally:
        stop.set()

