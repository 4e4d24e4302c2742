"""A user's methods and scorers in an experiment: resolved from spec strings, recorded, checked on continue.

`ExperimentSpec(methods=("projectgen", "pkg.mod:factory"), scorers=("pkg.mod:scorer",))` (or ``--method`` and
``--scorer``) loads them once (`projectgen.runs.custom_methods`). experiment.json records each one's spec and
the hash of its module's file (`plugin_records`); continuing the folder with a method or scorer of the same name
whose code changed is refused with one line (`check_plugin_records`), and so is resuming a run whose run.json
names other code (`check_run_method`): results of two versions of a method never mix silently. A unit of a
custom method runs its base method's path with the method's graph (`custom_run_parts`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from projectgen.agents import Agents
from projectgen.errors import ProjectGenError
from projectgen.external.methods import experiment_methods, is_external, planned_attempts
from projectgen.runs.custom_methods import LoadedMethod, LoadedScorer, load_method, load_scorer
from projectgen.runs.methods import METHODS
from projectgen.runs.output_scorers import REFERENCE_SCORERS
from projectgen.runs.plugins import is_plugin_spec
from projectgen.runs.run_log import KEPT, SELECTION, TESTS, UNIT, WELL_FORMAT

LOG_SCORES = (UNIT, SELECTION, TESTS, WELL_FORMAT, KEPT)  # the names the run log gives its own scores

if TYPE_CHECKING:
    from projectgen.config import AttemptSettings
    from projectgen.llm import ModelRoles
    from projectgen.runs.request import RunRequest


def resolve_methods(entries: Iterable[str],
                    known: Mapping[str, LoadedMethod]) -> tuple[tuple[str, ...], dict[str, LoadedMethod]]:
    """(the arms' names in order, name -> custom method) of built-in names and factory specs (`known`: methods
    resolved before, by name); an unknown name, a bad spec or a name given twice is one line."""
    names: list[str] = []
    custom: dict[str, LoadedMethod] = {}
    unknown: list[str] = []
    for entry in dict.fromkeys(e.strip() for e in entries if e.strip()):
        if is_plugin_spec(entry):
            loaded = load_method(entry)
            name = loaded.method.name
            if name in custom or name in known and known[name].identity != loaded.identity:
                raise ProjectGenError(f"two custom methods are named {name!r}; give each its own name")
            custom[name] = loaded
        elif entry in known:
            name, custom[entry] = entry, known[entry]
        elif entry in METHODS or is_external(entry):
            name = entry
        else:
            unknown.append(entry)
            continue
        names.append(name)
    if unknown or not names:
        raise ProjectGenError(f"unknown method(s) {', '.join(unknown) or '(none given)'} (methods: "
                              f"{', '.join(experiment_methods())}, or package.module:factory / file.py:factory)")
    return tuple(dict.fromkeys(names)), custom


def resolve_scorers(entries: Iterable[str | LoadedScorer]) -> tuple[LoadedScorer, ...]:
    """The custom scorers of factory specs (or ones resolved before), their names distinct from each other's and
    from the built-in scorers'."""
    taken = {*(scorer.name for scorer in REFERENCE_SCORERS), *LOG_SCORES}
    loaded = []
    for entry in entries:
        scorer = entry if isinstance(entry, LoadedScorer) else load_scorer(entry.strip(), frozenset(taken))
        taken.add(scorer.scorer.name)
        loaded.append(scorer)
    return tuple(loaded)


def plugin_records(methods: Mapping[str, LoadedMethod], scorers: Sequence[LoadedScorer]) -> dict[str, Any]:
    """What experiment.json records of the user's code (nothing when there is none: older files stay the same)."""
    records: dict[str, Any] = {}
    if methods:
        records["custom_methods"] = {name: loaded.record() for name, loaded in methods.items()}
    if scorers:
        records["scorers"] = {loaded.scorer.name: loaded.record() for loaded in scorers}
    return records


def check_plugin_records(out_dir: Path, stored: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """Refuse (one line) a continued experiment whose custom method or scorer of a recorded name is other code
    than the recorded one; return the records of both (earlier ones kept: their results are in the folder)."""
    merged: dict[str, Any] = {}
    for kind, what in (("custom_methods", "method"), ("scorers", "scorer")):
        before, now = stored.get(kind) or {}, config.get(kind) or {}
        for name, record in now.items():
            old = before.get(name)
            if old is not None and old.get("sha256") != record["sha256"]:
                raise ProjectGenError(
                    f"{out_dir}: {what} {name!r} ran from {old.get('spec')} (sha256 {old.get('sha256', '?')[:12]}), "
                    f"whose code is now {record['spec']} (sha256 {record['sha256'][:12]}); results of both would "
                    "mix: restore the code, name it differently, or use --fresh or another --out")
        if before or now:
            merged[kind] = {**before, **now}
    return merged


def plugin_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """The results' `custom_methods` and `scorers`: experiment.json's records of the user's code."""
    return {"custom_methods": dict(config.get("custom_methods") or {}), "scorers": dict(config.get("scorers") or {})}


def arm_attempts(method: str, attempt_settings: AttemptSettings, config: Mapping[str, Any] | None = None) -> int:
    """The attempts of a run of `method`: a custom one's are its base method's (experiment.json records it), an
    external system's one."""
    records = (config or {}).get("custom_methods") or {}
    base = records[method]["base"] if method in records else method
    return planned_attempts(base, attempt_settings)


def custom_run_parts(loaded: LoadedMethod, request: RunRequest, models: ModelRoles) -> tuple[Agents, Any]:
    """What a unit of the custom method gives its run's `RunParts` (`agents`, `project_graph`): its agents (made
    as the run would make them) and the graph its factory builds from them."""
    agents = Agents.from_models(models, request.settings)
    return agents, loaded.method.graph(agents, request.settings, models)


def check_run_method(run_dir: Path, recorded: Mapping[str, str] | None, loaded: LoadedMethod | None) -> None:
    """A run folder is resumed or collected only by the method code that began it (run.json's `custom_method`)."""
    if loaded is None and recorded is None:
        return
    if loaded is None or recorded is None or recorded.get("sha256") != loaded.identity.sha256:
        began = f"{recorded['spec']} (sha256 {recorded['sha256'][:12]})" if recorded else "a built-in method"
        now = f"{loaded.identity.spec} (sha256 {loaded.identity.sha256[:12]})" if loaded else "a built-in method"
        raise ProjectGenError(f"{run_dir}: the run began with {began}, not {now}; its results would mix two "
                              "versions of the method")
