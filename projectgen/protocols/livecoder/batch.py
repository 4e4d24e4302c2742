"""LiveCoder's batch: an `Evaluation` as the `ExperimentSpec` it is, run on the experiment's batch
(`run_experiment`: the folder, ledger, results and resume `projectgen experiment` has always had; the command is
now a preset of `evaluate("livecoder", ...)`, so there is one way in)."""
from __future__ import annotations

from projectgen.experiments.experiment import ExperimentHooks, run_experiment
from projectgen.experiments.ray_executor import RayExecutor
from projectgen.experiments.results import ExperimentResults
from projectgen.experiments.spec import ExperimentSpec
from projectgen.llm.pricing import price_table
from projectgen.protocols.definition import Evaluation
from projectgen.protocols.livecoder.settings import LiveCoderSettings


def experiment_spec(evaluation: Evaluation[LiveCoderSettings]) -> ExperimentSpec:
    """The experiment an evaluation asks for, checked (an unknown method, a bad scorer or system path, a task id
    given twice, ...: one line before anything is written)."""
    settings, options = evaluation.settings, evaluation.options
    return ExperimentSpec(dataset=evaluation.dataset, models=evaluation.models, settings=settings.settings,
                          attempt_settings=settings.attempt_settings,
                          tasks=tuple(options.tasks) if options.tasks is not None else None,
                          max_tokens=settings.max_tokens, base_url=options.base_url,
                          knowledge_url=settings.knowledge_url, embedding=settings.embedding,
                          methods=settings.methods, sampling=dict(options.sampling),
                          checkpoint_url=options.checkpoint_url, denominator=settings.denominator,
                          faults=settings.faults, scorers=settings.scorers, system_paths=settings.system_paths)


def livecoder_batch(evaluation: Evaluation[LiveCoderSettings]) -> ExperimentResults:
    """Every task x method x model of the evaluation (or the settings' share of them) as one LiveCoder run,
    resumable from the folder's ledger."""
    return run_spec(experiment_spec(evaluation), evaluation)


def run_spec(spec: ExperimentSpec, evaluation: Evaluation[LiveCoderSettings]) -> ExperimentResults:
    """`livecoder_batch` of an evaluation whose experiment `spec` its caller built (`experiment_spec`) to check it
    first: `projectgen experiment` checks it before an executor connects to a Ray cluster, and builds it once (a
    custom method's or scorer's factory is called once)."""
    options, hooks, settings = evaluation.options, evaluation.options.hooks, evaluation.settings
    prices, prices_source = price_table(settings.prices)
    if isinstance(options.executor, RayExecutor):  # units may land on other machines: refused before anything is written
        options.executor.refuse_per_machine(spec.per_machine_state())
    return run_experiment(spec, evaluation.out, executor=options.executor, fresh=options.fresh,
                          runner_factory=options.runner_factory, runner_settings=options.runner_settings,
                          prices=prices, prices_source=prices_source, shard=settings.shard,
                          concurrency=options.concurrency,
                          hooks=ExperimentHooks(on_start=hooks.on_start, on_pair=hooks.on_row, progress=hooks.progress))
