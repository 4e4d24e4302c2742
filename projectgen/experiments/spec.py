"""What an experiment is (`ExperimentSpec`), and the experiment.json that ties a folder to it.

An experiment folder is tied to its settings: continuing it with other pipeline or attempt
settings, token cap or dataset is refused (start afresh, or use another folder); adding models
or tasks is fine.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from projectgen.config import AttemptSettings, Settings
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.denominators import DEFAULT_DENOMINATOR, DenominatorSetting
from projectgen.experiments.custom_arms import check_plugin_records, plugin_records, resolve_methods, resolve_scorers
from projectgen.experiments.folder_layout import PAIR_LAYOUT, folder_layout
from projectgen.experiments.models import ExperimentModel, parse_models
from projectgen.external.methods import is_external, system_paths_for
from projectgen.runs import layout
from projectgen.runs.checkpoints import per_machine_checkpoints
from projectgen.runs.custom_methods import LoadedMethod, LoadedScorer
from projectgen.runs.methods import method_attempt_settings
from projectgen.runs.request import check_options

# The fields of experiment.json that a continued experiment must keep.
FIXED_FIELDS = ("dataset", "settings", "attempt_settings", "max_tokens", "denominator")
# What an experiment.json written before a fixed field existed meant by it: counted out of the reference's tests.
FIXED_FIELD_BEFORE = {"denominator": "reference"}


def fixed_field(config: Mapping[str, Any], name: str) -> Any:
    """A fixed field of an experiment.json, older files read as what they meant (`FIXED_FIELD_BEFORE`)."""
    return config.get(name, FIXED_FIELD_BEFORE.get(name))


@dataclass(frozen=True)
class ExperimentSpec:
    """Which tasks of which dataset run with which models and settings.

    `models`: `ExperimentModel`s or spec strings (``LABEL=SPEC`` allowed, ``scripted:DIR`` per
    task), parsed on construction. `tasks`: the task ids to keep (None: all). `max_tokens`: the
    token cap of each run. `base_url`: an OpenAI-compatible endpoint for every model.
    `knowledge_url`: a shared knowledge store server, allowed with one model only (the runs of
    one task by different models would read each other's knowledge). `methods`: the arms to run
    (`projectgen.runs.METHODS`), each task x method x model one run. `embedding`: the knowledge
    store's embedding of each new run (a name of `projectgen.memory.EMBEDDINGS`; None: the default);
    a resumed run keeps the one its run.json records. `sampling`: overrides of the
    models' temperature, top_p and max_tokens (`projectgen.llm.sampling`; recorded in each run.json).
    `checkpoint_url`: a PostgreSQL database for every run's checkpoints (default: SQLite in each run
    folder), which units that may land on different machines need. `denominator`: what #Tests counts
    (`projectgen.evaluation.denominators`: the paper's per-task count by default). `faults`: an
    `--inject-faults` spec wrapped around every model (`projectgen.llm.faults`; e.g. ``latency=1s`` to
    measure throughput offline), recorded in each run.json so that a resumed run misbehaves the same way.
    A method may also be a user's factory, ``package.module:factory`` or ``path/to/file.py:factory`` returning a
    `projectgen.runs.custom_methods.CustomMethod` (resolved on construction: `methods` then holds its name and
    `custom_methods` the loaded method); `scorers` are factories of the user's scorers, the same way, whose scores
    the runs' logs and the results keep by name (`projectgen.experiments.custom_arms`).
    `system_paths`: external system name -> the checkout it runs from (``--system-path``; the systems of
    source "checkout" in systems.toml, `projectgen.external`); every external method is checked runnable here.
    """

    dataset: Path
    models: tuple[ExperimentModel, ...]
    settings: Settings = field(default_factory=Settings)
    attempt_settings: AttemptSettings = field(default_factory=AttemptSettings)
    tasks: tuple[str, ...] | None = None
    max_tokens: int | None = None
    base_url: str | None = None
    knowledge_url: str | None = None
    embedding: str | None = None
    methods: tuple[str, ...] = ("livecoder",)
    sampling: Mapping[str, float | int] = field(default_factory=dict)
    checkpoint_url: str | None = None
    denominator: DenominatorSetting = DEFAULT_DENOMINATOR
    faults: str | None = None
    scorers: tuple[str | LoadedScorer, ...] = ()
    custom_methods: Mapping[str, LoadedMethod] = field(default_factory=dict)
    system_paths: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # frozen: normalise the given values once, here

        object.__setattr__(self, "dataset", Path(self.dataset))
        methods, custom = resolve_methods(self.methods, self.custom_methods)
        object.__setattr__(self, "methods", methods)
        object.__setattr__(self, "custom_methods", custom)
        object.__setattr__(self, "scorers", resolve_scorers(self.scorers))
        object.__setattr__(self, "system_paths", {name: str(path) for name, path in
                                                  system_paths_for(methods, self.system_paths).items()})
        object.__setattr__(self, "models", parse_models(self.models))
        if self.tasks is not None:
            object.__setattr__(self, "tasks", tuple(t.strip() for t in self.tasks if t.strip()))
            repeated = sorted({task for task in self.tasks if self.tasks.count(task) > 1})
            if repeated:
                raise ProjectGenError(f"task id(s) given twice: {', '.join(repeated)}")
        if self.knowledge_url and len(self.models) > 1:
            raise ProjectGenError("a shared knowledge store would let the runs of one task by different models read "
                                  "each other's knowledge: run one model per experiment with it, or leave it out")
        if self.faults:
            from projectgen.llm.faults import FaultPlan

            FaultPlan.parse(self.faults)  # a bad spec is refused before anything runs
        check_options(knowledge_store=self.knowledge_url, checkpoint_url=self.checkpoint_url, embedding=self.embedding)

    def per_machine_state(self) -> dict[str, str]:
        """What the runs would keep on the machine that runs them (what -> the option that shares it): the
        SQLite checkpoints without `checkpoint_url`, and an embedded knowledge store when some method
        reads knowledge across attempts without `knowledge_url`. Units that may land on other machines
        (a Ray cluster) need none of it."""
        state = per_machine_checkpoints(self.checkpoint_url)
        knowledge = [method_attempt_settings(self.base_method(method), self.attempt_settings)
                     for method in self.methods if not is_external(method)]
        if not self.knowledge_url and any(s.attempts > 1 and (s.success_knowledge or s.failure_knowledge)
                                          for s in knowledge):
            state["a knowledge store embedded in each run folder"] = "--knowledge-store http://HOST:PORT"
        return state

    def base_method(self, method: str) -> str:
        """The built-in method whose run path an arm takes: a custom method's base, else the arm itself."""
        return self.custom_methods[method].method.base if method in self.custom_methods else method

    def stored(self) -> dict[str, Any]:
        """What experiment.json records: the dataset (absolute), settings, token cap, models by folder,
        methods and the task ids asked for (`experiment merge` rebuilds the results from these and the
        ledger, and tells the shares of one plan from those of another by them)."""
        return {"dataset": str(self.dataset.resolve()), "settings": self.settings.model_dump(mode="json"),
                "attempt_settings": self.attempt_settings.model_dump(mode="json"), "max_tokens": self.max_tokens,
                "models": {m.slug: m.spec for m in self.models}, "methods": list(self.methods),
                "tasks": list(self.tasks) if self.tasks is not None else None,
                "denominator": self.denominator, **plugin_records(self.custom_methods, self.scorers)}


def write_experiment_json(out_dir: Path, spec: ExperimentSpec, *, fresh: bool,
                          shard: str | None = None) -> dict[str, Any]:
    """Write experiment.json, or check that a continued experiment keeps its settings (models may be added).

    `shard` (``i/N``) is recorded for `experiment merge` to say which shares it joined. Returns what
    was written: a continued experiment's file keeps the models and methods it had, and its folder layout (a
    new one gets ``OUT/<method>/<model>/<task>`` for every method; `projectgen.experiments.folder_layout`)."""
    path = out_dir / layout.EXPERIMENT_CONFIG
    config = {**spec.stored(), **({"shard": shard} if shard else {}), "layout": PAIR_LAYOUT}
    if path.exists() and not fresh:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ProjectGenError(f"{path}: unreadable ({exc}); use --fresh or another --out") from None
        changed = [name for name in FIXED_FIELDS if fixed_field(stored, name) != config[name]]
        if changed:
            raise ProjectGenError(f"{out_dir} holds an experiment with other {', '.join(changed)}; continue it with "
                                  "the same options, or use --fresh or another --out")
        for slug, spec_text in (stored.get("models") or {}).items():
            if slug in config["models"] and config["models"][slug] != spec_text:
                raise ProjectGenError(f"{out_dir}: model folder {slug!r} holds runs of {spec_text!r}, not "
                                      f"{config['models'][slug]!r}; label the model differently (LABEL=SPEC)")
        config = {**config, **check_plugin_records(out_dir, stored, config),
                  "models": {**stored.get("models", {}), **config["models"]},
                  "methods": list(dict.fromkeys([*stored.get("methods", []), *config["methods"]])),
                  "layout": folder_layout(stored)}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(config, indent=1) + "\n")
    except OSError as exc:
        raise ProjectGenError(f"{out_dir}: cannot write the experiment there ({exc.strerror or exc}); choose "
                              "another --out") from None
    return config
