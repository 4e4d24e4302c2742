"""Batches of runs: experiments (task x model LiveCoder runs) and the reference bench, on one engine.

    models       ExperimentModel: spec strings, folder names, per-task replay scripts
    spec         ExperimentSpec: what an experiment is; experiment.json ties a folder to it
    engine       plan -> ledger -> executor -> rows (Executor interface, Batch, run_batch)
    executors    LocalExecutor: this process's threads
    ray_executor RayExecutor: each unit one Ray task, on one machine or many (the `ray` extra)
    mirror       a unit's folder kept in step between a worker's machine and the driver's
    ledger       the resumable JSONL ledger
    pairs        one task x model pair as a unit: run, resume or collect its LiveCoder folder
    figures      one pair's figures (PairResult), read from its run folder
    results      a model's figures per attempt and final (summarize_pairs, ExperimentResults)
    tables       the experiment's results page (experiment_page) and the table cells the CLI shares
    plots        the experiment's plots (score per attempt, #Pass per task)
    results_writer  the one writer of every batch's results: results.json from the data, results.md and
                 results.html from a ResultsPage (headings, text, bullets, tables as data, charts)
    experiment   run_experiment
    reference_bench   bench_reference: every task's reference through the sandbox runner
    merge        merge_experiments: shard folders (--shard i/N) joined into one result
    concurrency  Concurrency: pairs, model calls per model or endpoint, and sandbox runs in flight, apart

The names are imported here, eagerly: the CLI's parser imports nothing of this package, so `projectgen --help` does
not pay for it (an experiment imports the LiveCoder runs, and Ray, only when it runs them).
"""
from __future__ import annotations

from projectgen.experiments.concurrency import Concurrency
from projectgen.experiments.engine import Batch, Executor, Shard, run_batch
from projectgen.experiments.executors import LocalExecutor
from projectgen.experiments.experiment import ExperimentHooks, run_experiment
from projectgen.experiments.figures import AttemptFigures, CostFigures, PairResult, TokenFigures, pair_from_run
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.merge import merge_experiments
from projectgen.experiments.models import ExperimentModel, model_slug, parse_models
from projectgen.experiments.ray_executor import RayExecutor
from projectgen.experiments.reference_bench import BenchRow, bench_reference
from projectgen.experiments.results import ExperimentResults, ModelReport, attempt_scores, summarize_pairs
from projectgen.experiments.results_writer import ResultsPage, Table, write_results
from projectgen.experiments.spec import ExperimentSpec
from projectgen.experiments.tables import NOTES, attempt_cells, experiment_page, final_lines

__all__ = [
    "AttemptFigures", "Batch", "BenchRow", "Concurrency", "CostFigures", "Executor", "ExperimentHooks",
    "ExperimentModel", "ExperimentResults", "ExperimentSpec", "Ledger", "LocalExecutor", "ModelReport", "NOTES",
    "PairResult", "RayExecutor", "ResultsPage", "Shard", "Table", "TokenFigures", "attempt_cells", "attempt_scores",
    "bench_reference", "experiment_page", "final_lines", "merge_experiments", "model_slug", "pair_from_run",
    "parse_models", "run_batch", "run_experiment", "summarize_pairs", "write_results",
]
