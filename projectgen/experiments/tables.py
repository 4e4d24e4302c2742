"""An experiment's results as tables: its results page (results.md and results.html), and the cells and lines
the CLI's tables share."""
from __future__ import annotations

from projectgen.config import FIDELITY_ATTEMPT_SETTINGS, FIDELITY_SETTINGS
from projectgen.evaluation.sketchbleu import SKETCHBLEU_MODES
from projectgen.experiments.figures import PairResult
from projectgen.experiments.livecoder_tables import livecoder_blocks
from projectgen.experiments.paper_figures import paper_figure_blocks, paper_figure_charts
from projectgen.experiments.plots import pass_per_task, score_per_attempt
from projectgen.experiments.results import AttemptRow, ExperimentResults, FinalFigures, ModelReport
from projectgen.experiments.results_writer import (Block, Bullets, Charts, Heading, ResultsPage, Table, TableBlock,
                                                   Text, integrity_section, unprotected_warning)


def percent(value: float | None) -> str:
    """A rate as a percentage with one decimal; "n/a" when there is none."""
    return "n/a" if value is None else f"{value:.1%}"


ATTEMPT_COLUMNS = ("attempt", "generated", "attempt t: mean", "attempt t: LOC-w.", "output: mean",
                   "output: LOC-w.", "reuse", "tokens", "cost", "MI", "MI (VS)")


def attempt_cells(row: AttemptRow) -> list[str]:
    """The cells of one per-attempt table row (shared by the rich and Markdown tables)."""
    return [str(row.attempt), f"{row.generated}/{row.tasks}", percent(row.attempt_mean),
            percent(row.attempt_loc_weighted), percent(row.output_mean), percent(row.output_loc_weighted),
            percent(row.reuse_rate), f"{row.tokens.total_tokens:,}", row.cost.label(),
            *("n/a" if mi is None else f"{mi:.1f}" for mi in (row.maintainability, row.maintainability_vs))]


def final_lines(report: ModelReport) -> list[str]:
    """The final-output figures as short lines (shared by the CLI and Markdown)."""
    f = report.final
    lines = []
    if f.tasks and f.mean_pass_rate is not None:
        lines.append(f"final output (hidden unit tests): #Pass {f.passed}/{f.total}, mean {percent(f.mean_pass_rate)}, "
                     f"LOC-weighted {percent(f.loc_weighted_pass_rate)}, fully passing {f.fully_passing}/{f.tasks} "
                     "tasks")
        lines.append(f"ProjectGen's figures: SUM of #Pass {f.passed}, AVG_weighted {f.avg_weighted:.2f} "
                     f"(SUM of #Tests {f.total}: {', '.join(f.denominators) or 'n/a'}; "
                     f"#LOC: {'; '.join(f.weights) or 'n/a'})")
    elif f.tasks:
        lines.append("final output: hidden unit tests not run")
    if f.incomplete:
        lines.append(incomplete_line(f))
    lines.append(f"tasks: {f.tasks} scored, {f.errors} error(s); attempts run per task: "
                 f"{'n/a' if f.mean_attempts_run is None else f'{f.mean_attempts_run:.2f}'}; reused: {f.reused}; "
                 f"stopped by the budget: {f.budget_limited}")
    if f.scores:
        lines.append("custom scores (mean over the tasks that have one): "
                     + ", ".join(f"{name} {score(value)}" for name, value in f.scores.items()))
    if f.by_difficulty:
        buckets = [f"{name} {percent(bucket.mean_pass_rate)} ({bucket.tasks} task(s))"
                   for name, bucket in f.by_difficulty.items()]
        lines.append("by difficulty (the benchmark's labels, else reference LOC: easy <= 1.5k, hard >= 4k): "
                     + ", ".join(buckets))
    reductions = not report.oracle  # a replay that reuses its full-score first attempt saves 100%: no figure
    lines.append(f"tokens: {f.tokens.total_tokens:,} in {f.tokens.calls} calls; cost: {f.cost.label()}"
                 + (f"; cost reduction attempt 1 -> {report.attempts}: {f.cost_reduction_pct:.2f}%"
                    if f.cost_reduction_pct is not None and reductions else "")
                 + (f"; token reduction attempt 1 -> {report.attempts}: {f.token_reduction_pct:.2f}% "
                    f"({PAPER_TABLE5})" if f.token_reduction_pct is not None and reductions else ""))
    if report.oracle:
        lines.append(ORACLE_LABEL)
    return lines


def incomplete_line(f: FinalFigures) -> str:
    """The tasks counted 'environment incomplete', and the figures without them: SUM never mixes them silently."""
    line = (f"environment incomplete: {len(f.incomplete)} task(s) ({', '.join(f.incomplete)}): tests there that no "
            "output can pass here are in SUM and AVG_weighted, not a model's failure (each row's note names the cause)")
    if f.complete_passed is not None and f.complete_total is not None:
        line += (f"; over the {f.tasks - len(f.incomplete)} complete task(s): "
                 f"#Pass {f.complete_passed}/{f.complete_total}")
    return line


PAPER_TABLE5 = "LiveCoder Table 5, cost attempt 1 -> 4: 41.99% to 53.63%"


NOTES = ("'attempt t' is the unit pass rate of attempt t; 'output' the pass rate of what the run outputs after t "
         "attempts (the historical best so far). An attempt that generated nothing (a reuse of a full-score best, "
         "a budget stop, or after the run ended) carries the best so far forward; attempts after a reuse count as "
         "reuses. Means are over tasks; LOC-w. weights each task by its #LOC (ProjectGen's published figure, else "
         "the reference's lines). Error pairs are left out, except that under the published denominator an error on a "
         "published task keeps its #Tests in SUM with 0 passed. Tokens and cost: calls tagged with attempt t, summed "
         "over tasks.")


def first_of(by_report: list[dict[str, PairResult]], task: str, field: str) -> int | None:
    """A task's figure that every (method, model) shares (#LOC, #Tests): the first one recorded."""
    values = [getattr(pairs[task], field) for pairs in by_report if task in pairs]
    return next((value for value in values if value is not None), None)


def cell(value: object) -> str:
    return "" if value is None else str(value)


def pass_table(results: ExperimentResults) -> Table | None:
    """ProjectGen's Tables 3/5 shape: per task #LOC, #Tests and #Pass per (method, model), then SUM and
    AVG_weighted rows (None when no unit tests were run)."""
    reports = [r for r in results.models if r.final.avg_weighted is not None]
    if not reports:
        return None
    by_report = [{p.task_id: p for p in r.pairs} for r in reports]
    tasks = sorted({task for pairs in by_report for task in pairs})
    incomplete = sorted({task for r in reports for task in r.final.incomplete})
    rows = [[task, cell(first_of(by_report, task, "loc")), cell(first_of(by_report, task, "final_unit_total")),
             *(pass_cell(pairs[task]) if task in pairs and pairs[task].ok else "error" for pairs in by_report)]
            for task in tasks]
    rows.append(["SUM", str(sum(first_of(by_report, task, "loc") or 0 for task in tasks)),
                 str(sum(first_of(by_report, task, "final_unit_total") or 0 for task in tasks)),
                 *(str(r.final.passed) for r in reports)])
    rows.append(["AVG_weighted", "", "", *(f"{r.final.avg_weighted:.2f}" for r in reports)])
    counts = sorted({name for r in reports for name in r.final.denominators})
    header = ["task", "#LOC", f"#Tests ({', '.join(counts)})" if counts else "#Tests", *(r.column for r in reports)]
    if not incomplete:
        return header, rows
    # a column only when a task needs it: which rows count tests no output can pass here, and that SUM has them
    notes = [*(environment_cell(by_report, task) for task in tasks),
             f"includes {len(incomplete)} environment-incomplete task(s)", ""]
    return [*header, "environment"], [[*row, note] for row, note in zip(rows, notes)]


def pass_cell(pair: PairResult) -> str:
    """A pair's #Pass, marked when its unit test run was cut short (the per-task table says why)."""
    return cell(pair.final_unit_passed) + (" (cut short)" if pair.unit_run_note else "")


def environment_cell(by_report: list[dict[str, PairResult]], task: str) -> str:
    """'incomplete: <cause>' when any pair of the task recorded its environment as incomplete, else ''."""
    notes = next((pairs[task].environment_incomplete for pairs in by_report
                  if task in pairs and pairs[task].environment_incomplete), [])
    return "incomplete: " + "; ".join(note.removeprefix("environment incomplete: ") for note in notes) if notes else ""


def sketchbleu_table(results: ExperimentResults) -> Table | None:
    """ProjectGen's Tables 4/6 shape: per task #LOC and SketchBLEU per (method, model) in both modes
    (repaired, then CodeS's arithmetic), then the AVG row (the mean over the tasks that have a value);
    None when no output was scored."""
    reports = [r for r in results.models if r.final.sketchbleu is not None or r.final.sketchbleu_codes is not None]
    if not reports:
        return None
    by_report = [{p.task_id: p for p in r.pairs} for r in reports]
    tasks = sorted({task for pairs in by_report for task in pairs})
    fields = ("sketchbleu", "sketchbleu_codes")
    rows = [[task, cell(first_of(by_report, task, "loc")),
             *(score(getattr(pairs[task], name) if task in pairs else None) for pairs in by_report for name in fields)]
            for task in tasks]
    rows.append(["AVG", "", *(score(getattr(r.final, name)) for r in reports for name in fields)])
    return ["task", "#LOC", *(f"{r.column} ({mode})" for r in reports for mode in SKETCHBLEU_MODES)], rows


def scorer_names(results: ExperimentResults) -> list[str]:
    """The custom scorers with a value in some pair, in the order the experiment names them."""
    found = {name for r in results.models for p in r.pairs for name in p.scores}
    return [name for name in dict.fromkeys([*results.scorers, *sorted(found)]) if name in found]


def custom_scores_table(results: ExperimentResults) -> Table | None:
    """Per task the custom scorers' values per (method, model), then their MEAN over the tasks that have one;
    None without custom scores."""
    names = scorer_names(results)
    if not names:
        return None
    by_report = [{p.task_id: p for p in r.pairs} for r in results.models]
    tasks = sorted({task for pairs in by_report for task in pairs})
    rows = [[task, *(score(pairs[task].scores.get(name)) if task in pairs else "" for pairs in by_report
                     for name in names)] for task in tasks]
    rows.append(["MEAN", *(score(r.final.scores.get(name)) for r in results.models for name in names)])
    return ["task", *(f"{r.column} ({name})" for r in results.models for name in names)], rows


def custom_arm_lines(results: ExperimentResults) -> list[str]:
    """Where each user's method and scorer came from: its spec and its module file's hash."""
    return ([f"method {name}: {record.get('label', '')} (base {record.get('base')}; {record.get('spec')}, sha256 "
             f"{record.get('sha256', '')[:12]})" for name, record in results.custom_methods.items()]
            + [f"scorer {name}: {record.get('spec')}, sha256 {record.get('sha256', '')[:12]}"
               for name, record in results.scorers.items()])


def codes_file_sets(results: ExperimentResults) -> str:
    """The file sets the codes figures compared ('projectgen-script', 'reference-sources'); results written
    before they were recorded took the source files."""
    sets = sorted({name for r in results.models for name in r.final.sketchbleu_codes_files})
    return ", ".join(sets) or "not recorded (older results: the reference's source files)"


def score(value: float | None) -> str:
    """A SketchBLEU or custom score cell: two decimals, empty without a value."""
    return "" if value is None else f"{value:.2f}"


ABLATIONS = (("livecoder", "LiveCoder"), ("livecoder-no-success", "w/o Success Knowledge"),
             ("livecoder-no-failure", "w/o Failure Knowledge"), ("livecoder-no-best", "w/o Historical-Best Repo."))


def ablation_tables(results: ExperimentResults, attempt: int = 2) -> list[Table]:
    """LiveCoder's Table 4 shape, one table per model: the functional score (mean unit pass rate of the
    output) at attempt `attempt` of LiveCoder and of each ablation present, with the change from LiveCoder
    (points)."""
    reports = {(r.method, r.model): r for r in results.models}
    tables: list[Table] = []
    for model in dict.fromkeys(r.model for r in results.models):
        base = reports.get(("livecoder", model))
        variants = [(name, reports[(method, model)]) for method, name in ABLATIONS if (method, model) in reports]
        if base is None or len(variants) < 2 or len(base.per_attempt) < attempt:
            continue
        base_score = base.per_attempt[attempt - 1].output_mean
        rows = []
        for name, report in variants:
            score = report.per_attempt[attempt - 1].output_mean if len(report.per_attempt) >= attempt else None
            change = (f"{(score - base_score) * 100:+.2f}" if score is not None and base_score is not None
                      and name != "LiveCoder" else "")
            rows.append(["", name, percent(score), change])
        tables.append(([model, "variant", f"func at A{attempt}", "change"], rows))
    return tables


def settings_line(results: ExperimentResults) -> str:
    """The settings every arm shares, on one line: the token cap, what #Tests counts, where prices came from."""
    shared = [f"token cap per run: {results.max_tokens}" if results.max_tokens else "",
              f"#Tests: {results.denominator}" if results.denominator else "",
              f"prices: {results.prices}" if results.prices else ""]
    return "; ".join(part for part in shared if part)


def arm_lines(results: ExperimentResults) -> list[str]:
    """What each (method, model) ran, as its runs recorded it (run.json), not as the experiment asked: a method
    without attempts runs one, and a task without check tests selects by the hidden unit tests."""
    return [f"{report.name}: {arm_settings(report)}" for report in results.models]


def arm_settings(report: ModelReport) -> str:
    """attempts, selection, feedback suite, profile and the other settings docs/fidelity.md names over an arm's
    scored runs (several values when its runs differ): what ran, which a task's paper profile may have set."""
    ok = [pair for pair in report.pairs if pair.ok]

    def values(found: list[object]) -> str:
        known = sorted({str(value) for value in found if value is not None})
        return "/".join(known) if known else "not recorded"

    selection = values([pair.selection for pair in ok])
    feedback = values([pair.feedback_suite for pair in ok])
    text = (f"attempts {values([pair.attempts_planned for pair in ok])}, selection {selection}"
            + (" (oracle: the hidden unit tests chose the output)" if "unit" in selection.split("/") else "")
            + f", feedback {feedback}"
            + (" (the hidden unit tests' output was given to the generators)" if "unit" in feedback.split("/") else "")
            + f", profile {values([pair.profile for pair in ok])}")
    named = [name for name in (*FIDELITY_SETTINGS, *FIDELITY_ATTEMPT_SETTINGS)
             if any(name in pair.fidelity_settings for pair in ok)]
    if named:
        text += "; " + ", ".join(f"{name} {values([pair.fidelity_settings.get(name) for pair in ok])}"
                                 for name in named)
    return text + (f"; {ORACLE_LABEL}" if report.oracle else "")


ORACLE_LABEL = "oracle: each task's reference replayed, not a model"




def pair_table(report: ModelReport) -> Table:
    """One row per task of a (method, model): status, LOC, final unit tests, attempts, tokens, cost, the custom
    scores (a column per scorer, when there are any), note."""
    rows = []
    names = list(report.final.scores)
    for p in report.pairs:
        unit = f"{p.final_unit_passed}/{p.final_unit_total}" if p.final_unit_total is not None else ""
        rows.append([p.task_id, p.status, "" if p.loc is None else str(p.loc), unit,
                     str(p.attempts_run) if p.ok else "", str(p.reused_at or ""), f"{p.tokens.total_tokens:,}",
                     p.cost.label() if p.ok else "", *(score(p.scores.get(name)) for name in names),
                     "; ".join([*p.environment_incomplete,
                                *(note for note in (p.run_note, p.unit_run_note, p.error) if note)])[:400]])
    return ["task", "status", "LOC", "unit (final)", "attempts run", "reused at", "tokens", "cost", *names,
            "note"], rows


def model_blocks(report: ModelReport) -> list[Block]:
    """A (method, model)'s section: its per-attempt table, final figures and per-task table."""
    return [Heading(report.name), Text(f"model: `{report.spec}`"),
            TableBlock((list(ATTEMPT_COLUMNS), [attempt_cells(row) for row in report.per_attempt])),
            Bullets(final_lines(report)), TableBlock(pair_table(report))]


def experiment_page(results: ExperimentResults) -> ResultsPage:
    """results.md and results.html: the settings, the plots, ProjectGen's #Pass and SketchBLEU tables, the
    ablations, then per (method, model) its per-attempt table, final figures and per-task table."""
    blocks: list[Block] = [*unprotected_warning([pair.sandbox for r in results.models for pair in r.pairs]),
                           Text(settings_line(results)), Bullets([*arm_lines(results), *custom_arm_lines(results)]),
                           Text(NOTES)]
    if results.settings_profiles:
        by_profile: dict[str, list[str]] = {}
        for task_id, values in results.settings_profiles.items():
            by_profile.setdefault(", ".join(f"{k}={v}" for k, v in sorted(values.items())), []).append(task_id)
        blocks.append(Text("Paper settings applied where the experiment left them unset: "
                           + "; ".join(f"{profile} ({', '.join(tasks)})" for profile, tasks in by_profile.items())))
    blocks.append(Charts("Plots", [
        ("Functional score per attempt (mean unit pass rate of the output after each attempt)",
         score_per_attempt(results)),
        *((f"#Pass per task: {r.column}", pass_per_task(r)) for r in results.models),
        *paper_figure_charts(results)]))
    if table := pass_table(results):
        blocks += [Heading("#Pass per task (ProjectGen Tables 3 and 5)"),
                   Text("#Pass: hidden unit tests passed by the final output; SUM over the tasks; AVG_weighted = "
                        "sum(#Pass x #LOC) / sum(#LOC), #LOC the published figure where the paper gives one, else "
                        "the reference's lines. A pair that failed shows `error` and is left out of SUM and "
                        "AVG_weighted."), TableBlock(table)]
    if sketch := sketchbleu_table(results):
        blocks += [Heading("SketchBLEU per task (ProjectGen Tables 4 and 6)"),
                   Text("SketchBLEU (0-100) of the final output against the reference in both modes: 'repaired' "
                        "(defects fixed: the reference scores 100; the reference's source files against the output "
                        "repository) and 'codes' (CodeS's arithmetic on the file set ProjectGen's script scored, "
                        "the one the paper printed: on DevBench and CodeProjectEval the whole task folder against "
                        "the output with the task's tests copied in); AVG over the tasks that have one "
                        f"(docs/evaluation.md). Codes file set: {codes_file_sets(results)}."),
                   TableBlock(sketch)]
    if custom := custom_scores_table(results):
        blocks += [Heading("Custom scores per task"),
                   Text("The user's scorers (--scorer) of each final output, as each run's log recorded them; MEAN "
                        "over the tasks that have a value. Where each scorer came from is listed at the top."),
                   TableBlock(custom)]
    blocks += paper_figure_blocks(results)
    blocks += livecoder_blocks(results)
    if ablations := ablation_tables(results):
        blocks += [Heading("Ablations at attempt 2 (LiveCoder Table 4)"),
                   Text("func: mean unit pass rate of the output after attempt 2; change: from LiveCoder, in points."),
                   *(TableBlock(table) for table in ablations)]
    for report in results.models:
        blocks += model_blocks(report)
    blocks += integrity_section([(pair.key, pair.integrity_flags) for r in results.models for pair in r.pairs])
    return ResultsPage(f"Experiment on {results.dataset}", "projectgen experiment", blocks)
