"""Joining experiment folders into one result: the shares of ``--shard i/N`` run on N machines.

`merge_experiments([A, B, ...], OUT)` checks that the folders hold one experiment (the same
dataset, settings, attempt settings and token cap in experiment.json; a model folder name means
the same model everywhere), copies each unit's run folder into OUT and writes OUT's ledger from
the folders' ledgers, then regenerates results.json, results.md and results.html from that ledger
alone, as `run_experiment` would have written them had one machine run every unit. The input
folders are only read. OUT may hold an earlier merge of the same experiment: its units stay
unless a folder given now has them too, so shares can be merged as they finish.

A unit finished in one folder and failed in another counts as finished; a unit finished in two
folders is refused (they are not shares of one plan but two runs of it). Nothing is run: a
share's missing or failed units are run by continuing that share, then merging again.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from projectgen.config import AttemptSettings
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.experiments.batch_folder import claim_batch_folder
from projectgen.experiments.custom_arms import arm_attempts, check_plugin_records, plugin_fields
from projectgen.experiments.figures import FINISHED, PairResult
from projectgen.experiments.folder_layout import LEGACY_LAYOUT, folder_layout
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.models import ExperimentModel
from projectgen.experiments.results import ExperimentResults, summarize_pairs
from projectgen.experiments.results_writer import write_results
from projectgen.experiments.spec import FIXED_FIELDS, fixed_field
from projectgen.experiments.tables import experiment_page
from projectgen.runs import layout
from projectgen.runs.locking import folder_lock


def merge_experiments(folders: Sequence[Path | str], out_dir: Path | str) -> tuple[ExperimentResults, list[str]]:
    """Merge `folders` into `out_dir` (see the module docstring); the results and notes to show."""
    folders, out_dir = [Path(f) for f in folders], Path(out_dir)
    if not folders:
        raise ProjectGenError("experiment merge needs at least one experiment folder")
    if out_dir.resolve() in {f.resolve() for f in folders}:
        raise ProjectGenError(f"{out_dir} is one of the folders to merge: give another --out (the inputs are only read)")
    configs = [read_config(folder) for folder in folders]
    check_one_plan(configs, folders)
    with folder_lock(out_dir, "experiment"):
        claim_batch_folder(out_dir, "experiment")
        if (out_dir / layout.EXPERIMENT_CONFIG).is_file():
            configs.append(read_config(out_dir))
        config = merged_config(configs, [*folders, out_dir][:len(configs)])
        chosen = choose_entries(folders)
        ledger = Ledger(out_dir / layout.LEDGER)
        for key, (folder, entry) in chosen.items():
            copy_run_folder(folder / key, out_dir / key)
            moved = {**entry, "run_dir": str(out_dir / key)} if entry.get("run_dir") else entry
            ledger.append(key, **{k: v for k, v in moved.items() if k != "key"})
        write_config(out_dir, config)
        results = merged_results(config, out_dir, ledger, [*folders, out_dir])
        write_results(out_dir, results, experiment_page(results))
    return results, notes(configs[:len(folders)], chosen)


def read_config(folder: Path) -> dict[str, Any]:
    """A folder's experiment.json, or a one-line error saying it is not an experiment folder."""
    path = folder / layout.EXPERIMENT_CONFIG
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProjectGenError(f"{folder}: not an experiment folder (no {layout.EXPERIMENT_CONFIG})") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ProjectGenError(f"{path}: unreadable ({exc})") from None


def check_one_plan(configs: list[dict[str, Any]], folders: list[Path]) -> None:
    """Shares (``--shard i/N``) must split one plan: the same N, models, methods and tasks, each share once.
    Shares of two experiments would otherwise merge into a result neither of them is."""
    shares = [(config, folder) for config, folder in zip(configs, folders) if config.get("shard")]
    if not shares:
        return

    def plan(config: dict[str, Any]) -> dict[str, Any]:
        return {"share count": str(config["shard"]).split("/")[-1], "models": config.get("models") or {},
                "methods": sorted(config.get("methods") or ["livecoder"]), "tasks": config.get("tasks")}

    (first, first_folder), seen = shares[0], {}
    for config, folder in shares:
        differ = [name for name, value in plan(config).items() if value != plan(first)[name]]
        if differ:
            raise ProjectGenError(f"{folder} is a share of another experiment than {first_folder} (other "
                                  f"{', '.join(differ)}): only the shares of one --shard i/N plan can be merged")
        if config["shard"] in seen:
            raise ProjectGenError(f"share {config['shard']} given twice ({seen[config['shard']]} and {folder})")
        seen[config["shard"]] = folder


def merged_config(configs: list[dict[str, Any]], folders: list[Path]) -> dict[str, Any]:
    """One experiment.json for all: the fixed fields agree, models and methods are joined."""
    first = configs[0]
    for config, folder in zip(configs[1:], folders[1:]):
        changed = [name for name in FIXED_FIELDS if fixed_field(config, name) != fixed_field(first, name)]
        if changed:
            raise ProjectGenError(f"{folder} holds an experiment with other {', '.join(changed)} than {folders[0]}: "
                                  "only shares of one experiment can be merged")
    models: dict[str, str] = {}
    for config, folder in zip(configs, folders):
        for slug, spec in (config.get("models") or {}).items():
            if models.setdefault(slug, spec) != spec:
                raise ProjectGenError(f"{folder}: model folder {slug!r} holds runs of {spec!r}, elsewhere of "
                                      f"{models[slug]!r}")
    methods = list(dict.fromkeys(m for config in configs for m in config.get("methods") or ["livecoder"]))
    layouts = {folder: folder_layout(config) for config, folder in zip(configs, folders)}
    if len(set(layouts.values())) > 1:
        legacy = [str(folder) for folder, pairs_at in layouts.items() if pairs_at == LEGACY_LAYOUT]
        raise ProjectGenError(f"{', '.join(legacy)} keep(s) LiveCoder's pairs at OUT/MODEL/TASK (an experiment begun "
                              "before OUT/METHOD/MODEL/TASK), the others do not: merge folders of one layout")
    plugins: dict[str, Any] = {}  # the user's methods and scorers: one version of each over the shares
    for config, folder in zip(configs, folders):
        plugins = check_plugin_records(folder, plugins, config)
    return {**{name: fixed_field(first, name) for name in FIXED_FIELDS}, "models": models, "methods": methods,
            "layout": layouts[folders[0]], **plugins}


def choose_entries(folders: list[Path]) -> dict[str, tuple[Path, dict[str, Any]]]:
    """key -> (folder, latest ledger line) over the folders: finished beats failed; finished twice is refused."""
    chosen: dict[str, tuple[Path, dict[str, Any]]] = {}
    for folder in folders:
        for key, entry in Ledger(folder / layout.LEDGER).done().items():
            if key not in chosen:
                chosen[key] = (folder, entry)
                continue
            other, previous = chosen[key]
            done_there, done_here = previous.get("status") in FINISHED, entry.get("status") in FINISHED
            if done_there and done_here:
                raise ProjectGenError(f"{key} finished in both {other} and {folder}: merge the shares of one "
                                      "experiment (--shard i/N), not two runs of the same units")
            if done_here:
                chosen[key] = (folder, entry)
    return dict(sorted(chosen.items()))


def copy_run_folder(source: Path, target: Path) -> None:
    """The unit's run folder as it is in its share (replacing an earlier merge's copy); lock files left out."""
    if not source.is_dir():
        return
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(layout.LOCK))


def write_config(out_dir: Path, config: dict[str, Any]) -> None:
    write_atomic(out_dir / layout.EXPERIMENT_CONFIG, json.dumps(config, indent=1) + "\n")


def merged_results(config: dict[str, Any], out_dir: Path, ledger: Ledger, folders: list[Path]) -> ExperimentResults:
    """The results of the merged ledger, as `run_experiment` writes them (settings profiles and price source
    from the shares' results.json)."""
    pairs = sorted((PairResult.model_validate(entry) for entry in ledger.done().values()), key=lambda p: p.task_id)
    attempt_settings = AttemptSettings.model_validate(config["attempt_settings"])
    profiles: dict[str, dict[str, Any]] = {}
    prices: list[str] = []
    for folder in folders:
        try:
            earlier = json.loads((folder / layout.RESULTS_JSON).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        profiles.update(earlier.get("settings_profiles") or {})
        if earlier.get("prices") and earlier["prices"] not in prices:
            prices.append(earlier["prices"])
    reports = [summarize_pairs(ExperimentModel(slug, spec), [p for p in pairs if p.model == slug and p.method == method],
                               arm_attempts(method, attempt_settings, config), method=method)
               for method in config["methods"] for slug, spec in config["models"].items()]
    return ExperimentResults(dataset=str(config["dataset"]), out_dir=str(out_dir), settings=config["settings"],
                             attempt_settings=config["attempt_settings"], max_tokens=config["max_tokens"],
                             denominator=config["denominator"], prices="; ".join(prices),
                             settings_profiles=dict(sorted(profiles.items())),
                             models=reports, **plugin_fields(config))


def notes(configs: list[dict[str, Any]], chosen: dict[str, tuple[Path, dict[str, Any]]]) -> list[str]:
    """What the merge should tell: shares missing from an i/N set, failed units."""
    said = []
    shards = [c.get("shard") for c in configs if c.get("shard")]
    counts = {s.split("/")[1] for s in shards}
    if len(counts) == 1:
        count = int(counts.pop())
        missing = [f"{i}/{count}" for i in range(1, count + 1) if f"{i}/{count}" not in shards]
        if missing:
            said.append(f"shares not merged yet: {', '.join(missing)}")
    failed = sorted(key for key, (_, entry) in chosen.items() if entry.get("status") not in FINISHED)
    if failed:
        said.append(f"{len(failed)} unit(s) failed: {', '.join(failed)} (continue their share, then merge again)")
    return said
