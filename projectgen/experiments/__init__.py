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

Names are re-exported lazily: an experiment imports the LiveCoder runs (LangGraph), and
`projectgen --help` must stay fast.
"""
from __future__ import annotations

from projectgen.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ExperimentModel": "projectgen.experiments.models",
    "model_slug": "projectgen.experiments.models",
    "parse_models": "projectgen.experiments.models",
    "ExperimentSpec": "projectgen.experiments.spec",
    "Executor": "projectgen.experiments.engine",
    "Batch": "projectgen.experiments.engine",
    "run_batch": "projectgen.experiments.engine",
    "LocalExecutor": "projectgen.experiments.executors",
    "RayExecutor": "projectgen.experiments.ray_executor",
    "Shard": "projectgen.experiments.engine",
    "Concurrency": "projectgen.experiments.concurrency",
    "merge_experiments": "projectgen.experiments.merge",
    "Ledger": "projectgen.experiments.ledger",
    "PairResult": "projectgen.experiments.figures",
    "AttemptFigures": "projectgen.experiments.figures",
    "CostFigures": "projectgen.experiments.figures",
    "TokenFigures": "projectgen.experiments.figures",
    "pair_from_run": "projectgen.experiments.figures",
    "attempt_scores": "projectgen.experiments.results",
    "summarize_pairs": "projectgen.experiments.results",
    "ModelReport": "projectgen.experiments.results",
    "ExperimentResults": "projectgen.experiments.results",
    "NOTES": "projectgen.experiments.tables",
    "attempt_cells": "projectgen.experiments.tables",
    "final_lines": "projectgen.experiments.tables",
    "experiment_page": "projectgen.experiments.tables",
    "ResultsPage": "projectgen.experiments.results_writer",
    "Table": "projectgen.experiments.results_writer",
    "write_results": "projectgen.experiments.results_writer",
    "ExperimentHooks": "projectgen.experiments.experiment",
    "run_experiment": "projectgen.experiments.experiment",
    "BenchRow": "projectgen.experiments.reference_bench",
    "bench_reference": "projectgen.experiments.reference_bench",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
