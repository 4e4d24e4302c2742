"""The models of an experiment: spec strings, their folder names, per-task replay scripts.

A model is a spec string as for ``projectgen run --model`` (``openai:gpt-4o-mini``, a served
name with a base URL, ``scripted:FILE``), optionally labelled ``LABEL=SPEC`` (the label names
its folder and table). Experiments only: ``scripted:DIR`` where DIR is a folder replays
``DIR/<task-id>.json`` for each task (one replay script per task, since the architect's and
judges' entries carry no target and the scripts of two tasks would collide); a task without
its script is an error pair. The resolved per-task spec is what each run's ``run.json``
records, so ``projectgen run --resume OUT/<slug>/<task>`` works on its own.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from projectgen.errors import ProjectGenError
from projectgen.llm import ModelRoles
from projectgen.llm.specs import REFERENCE_SPEC, SCRIPTED_PREFIX, absolute_script


_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def model_slug(spec: str) -> str:
    """A folder name for a model spec: ``openai:gpt-4o-mini`` -> ``openai-gpt-4o-mini``;
    ``scripted:/x/replays`` -> ``scripted-replays``; ``scripted:/x/run.json`` -> ``scripted-run``."""
    text = spec.strip()
    if text.startswith(SCRIPTED_PREFIX):
        path = Path(text[len(SCRIPTED_PREFIX):].rstrip("/"))
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
        if spec.startswith(SCRIPTED_PREFIX):
            given, spec = spec, absolute_script(spec)
            if not Path(spec[len(SCRIPTED_PREFIX):]).exists():
                raise ProjectGenError(f"{given}: no such script file or folder")
        return cls(slug=label or model_slug(spec), spec=spec)

    @property
    def is_reference(self) -> bool:
        """The reference replay (`--model reference`): each task answered from its own reference code."""
        return self.spec == REFERENCE_SPEC

    @property
    def script_dir(self) -> Path | None:
        """The folder of per-task scripts of a ``scripted:DIR`` model, else None."""
        if self.spec.startswith(SCRIPTED_PREFIX):
            path = Path(self.spec[len(SCRIPTED_PREFIX):])
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
        return f"{SCRIPTED_PREFIX}{script}"


def parse_models(models: Iterable[ExperimentModel | str]) -> tuple[ExperimentModel, ...]:
    """Models from specs (or as given), one per folder: two specs that would share a folder are refused."""
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
    return tuple(unique.values())


def preflight(model: ExperimentModel, base_url: str | None) -> None:
    """Fail before any run on a spec that cannot make a model (unknown provider, missing key, bad script)."""
    if model.is_reference:
        return
    if model.script_dir is not None:
        if not any(model.script_dir.glob("*.json")):
            raise ProjectGenError(f"{model.script_dir}: no replay scripts (<task-id>.json) in the folder")
        return
    ModelRoles.from_specs(model.spec, base_url=base_url)
