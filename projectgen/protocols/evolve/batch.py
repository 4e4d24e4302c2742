"""Evolve's batch: one evolve run, of the one base run the dataset names, in the output folder itself.

An evolve run is one unit (one base, one change, one model with per-role overrides), so its batch is that run in
this process, through the driver (`unit.run_evolve`), with no ledger: the folder is the run folder, exactly as
`projectgen evolve --out` has always written it. Running the same call again continues the run in the folder
(from its checkpoint; a finished run writes its outputs again), after checking that it is the same base, change and
models; ``fresh`` (``--fresh``/``--force``) replaces it with a new run instead. A folder holding anything else is
refused unless ``fresh``, as a new run folder always is.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel

from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import TestReport
from projectgen.experiments.executors import worker_runner
from projectgen.experiments.models import ExperimentModel
from projectgen.llm import MODEL_FAILURES, model_failure_reason
from projectgen.llm.sampling import sampling_arguments
from projectgen.llm.specs import REFERENCE_SPEC
from projectgen.oracles.role_specs import models_from_specs
from projectgen.protocols.definition import Evaluation
from projectgen.protocols.evolve.settings import EvolveSettings
from projectgen.protocols.evolve.unit import (EVOLVE_METHOD, EvolveRecord, check_change, read_evolve_record,
                                              run_evolve)
from projectgen.runs.folder import read_manifest
from projectgen.runs.layout import RunLayout
from projectgen.runs.manifest import RunManifest


class EvolveResults(BaseModel):
    """What an evolve batch gives: its run folder, its evolve.json record, its test reports, and why the pipeline
    stopped early (None: it ran to its end)."""

    out: str
    record: EvolveRecord
    check_report: TestReport | None = None
    unit_report: TestReport | None = None
    stopped: str | None = None


def model_specs(model: ExperimentModel, role_models: Mapping[str, str], base_url: str | None,
                sampling: Mapping[str, float | int]) -> dict[str, str]:
    """run.json's ``models``: the run's model, the roles' own, the endpoint and the sampling overrides (as strings,
    as `projectgen run` records them), which a resume rebuilds the models from."""
    specs = {"default": model.spec, **role_models}
    if base_url is not None:
        specs["base_url"] = base_url
    specs.update({name: str(value) for name, value in sampling.items()})
    return specs


def read_evolve_run(out: Path) -> tuple[RunManifest, EvolveRecord]:
    """run.json and evolve.json of the evolve run in `out`; a folder holding another kind of run is one line."""
    manifest = read_manifest(out)
    if manifest.method != EVOLVE_METHOD:
        raise ProjectGenError(f"{out}: a {manifest.method} run, not an evolve run; continue it with "
                              f"`projectgen run --resume {out}`")
    return manifest, read_evolve_record(out)


def same_models(recorded: Mapping[str, str], asked: Mapping[str, str]) -> bool:
    """Whether two run.json ``models`` mappings name the same models (sampling compared as numbers)."""
    def normal(specs: Mapping[str, str]) -> tuple[dict[str, str], dict[str, float | int]]:
        sampling = sampling_arguments(specs)
        return {key: value for key, value in specs.items() if key not in sampling}, sampling

    return normal(recorded) == normal(asked)


def check_continued(out: Path, dataset: Path, settings: EvolveSettings, record: EvolveRecord,
                    manifest: RunManifest, specs: Mapping[str, str]) -> None:
    """A continued run keeps its base, its change and its models; another one is one line (the folder holds the
    evolved task and the base's copy, so neither the base run nor the tests folder is read again)."""
    changed = []
    if str(dataset.resolve()) != record.base_run:
        changed.append(f"base run ({record.base_run})")
    if settings.requirement.strip() not in ("", record.change):
        changed.append("change request")
    if not same_models(manifest.models, specs):
        changed.append(f"models ({', '.join(f'{k}={v}' for k, v in manifest.models.items())})")
    if changed:
        raise ProjectGenError(f"{out} holds an evolve run that differs in its {', '.join(changed)}; continue it with "
                              "the same ones, or use --fresh (--force) or another --out")


def evolve_batch(evaluation: Evaluation[EvolveSettings]) -> EvolveResults:
    """Run (or continue) the evolve run of `evaluation.dataset`, a finished run folder, into `evaluation.out`."""
    options, settings, out = evaluation.options, evaluation.settings, evaluation.out
    if len(evaluation.models) != 1:
        raise ProjectGenError(f"evolve runs one model (give a role its own with role_models), got "
                              f"{len(evaluation.models)}: {', '.join(m.spec for m in evaluation.models)}")
    if options.checkpoint_url is not None:
        raise ProjectGenError("evolve keeps its checkpoints in its run folder: --checkpoint-url does not apply")
    if options.tasks is not None:
        raise ProjectGenError("evolve's dataset is one finished run: --tasks does not apply")
    specs = model_specs(evaluation.models[0], settings.role_models, options.base_url, options.sampling)
    if REFERENCE_SPEC in specs.values():
        raise ProjectGenError("--model reference has no reference for a new requirement; give a model or a "
                              "scripted:PATH replay")
    resume = not options.fresh and RunLayout(out).manifest.is_file() and read_manifest(out).method == EVOLVE_METHOD
    if resume:
        manifest, record = read_evolve_run(out)
        check_continued(out, evaluation.dataset, settings, record, manifest, specs)
    else:
        check_change(settings.requirement, settings.tests)
    progress = options.hooks.progress
    key = evaluation.dataset.name
    runner = (options.runner_factory() if options.runner_factory is not None
              else worker_runner(options.runner_settings, progress))
    try:
        outcome = run_evolve(None if resume else evaluation.dataset, out, requirement=settings.requirement,
                             tests=settings.tests, models=models_from_specs(specs, None), model_specs=specs,
                             settings=settings.settings, runner=runner, max_tokens=settings.max_tokens,
                             resume=resume, force=options.fresh,
                             progress=(lambda message: progress(key, message)) if progress else None,
                             evaluate_unit=settings.unit_tests)
    except MODEL_FAILURES as exc:
        reason = read_manifest(out).reason or model_failure_reason(exc)
        raise ProjectGenError(f"the evolve run failed ({reason}); continue with `projectgen evolve --resume {out}`") \
            from None
    return EvolveResults(out=str(out), record=outcome.record, check_report=outcome.check_report,
                         unit_report=outcome.unit_report, stopped=outcome.state.get("stopped"))
