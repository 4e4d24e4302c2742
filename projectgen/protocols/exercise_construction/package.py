"""Seeds in, exercises out: reading a seed set and writing an exercise in the Exercism layout `reflect` reads.

A seed set is a folder of code files (one seed per file, its language from its suffix; `examples` is the
bundled set). An exercise is written as `projectgen.datasets.exercism` reads it::

    <project>/.docs/instructions.md
    <project>/.meta/config.json      files.solution / files.test / files.example, and how it was made
    <project>/.meta/<solution path>  the kept reference solution
    <project>/<stubs> <tests> <build files>

Python solution files without a stub from the designer get one rendered from the reference (signatures,
docstrings and ``pass`` bodies: `projectgen.ssat.render_stub`), as Exercism ships them.
"""
from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from projectgen.construction.drafts import python_stubs
from projectgen.datasets.examples import example_tasks_dir
from projectgen.datasets.exercism import LANGUAGES, file_language
from projectgen.errors import ProjectGenError
from projectgen.protocols.exercise_construction.agents import ExerciseDefinition, ExerciseSeed
from projectgen.repository import SKIPPED_DIRS, safe_relpath

EXAMPLES = "examples"
_MAX_SEED_BYTES = 64_000
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def example_seeds_dir() -> Path:
    """The bundled seed set (`--seeds examples`)."""
    return example_tasks_dir() / "exercise_seeds"


def load_seeds(spec: str) -> list[ExerciseSeed]:
    """Every code file of a seed folder (or the bundled set), in path order; ProjectGenError when none."""
    root = example_seeds_dir() if spec == EXAMPLES else Path(spec)
    if not root.is_dir():
        raise ProjectGenError(f"{spec}: seed folder not found (a folder of code files, or 'examples')")
    seeds: dict[str, ExerciseSeed] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or any(part.startswith(".") or part in SKIPPED_DIRS for part in rel.parts):
            continue
        language = file_language(path.name)
        if language not in LANGUAGES or path.stat().st_size > _MAX_SEED_BYTES:
            continue
        seed_id = _UNSAFE.sub("_", "-".join((*rel.parts[:-1], path.stem))).strip("._-") or "seed"
        if seed_id in seeds:
            raise ProjectGenError(f"{path}: two seeds are named {seed_id!r}; rename one")
        seeds[seed_id] = ExerciseSeed(id=seed_id, language=language, path=rel.as_posix(),
                              code=path.read_text(encoding="utf-8", errors="replace"))
    if not seeds:
        raise ProjectGenError(f"{root}: no seed code files ({', '.join(LANGUAGES)})")
    return list(seeds.values())


def write_exercise(parent: Path, definition: ExerciseDefinition, tests: Mapping[str, str],
                   example: Mapping[str, str] | None, provenance: Mapping[str, Any] | None = None) -> Path:
    """The exercise folder ``parent/<project>`` (replaced if present), as the module docstring lays it out."""
    folder = parent / definition.project
    if folder.exists():
        shutil.rmtree(folder)
    stubs = dict(definition.stubs)
    if example and definition.language == "python":
        stubs = {**{p: t for p, t in python_stubs(example, definition.project).items()
                    if p in definition.solution_files}, **stubs}
    solution = list(dict.fromkeys([*definition.solution_files, *(example or {})]))
    clash = set(tests) & set(solution)
    if clash:
        raise ProjectGenError(f"{definition.project}: {', '.join(sorted(clash))} is both a test and a solution file")
    files: dict[str, str] = {".docs/instructions.md": definition.instructions.strip() + "\n"}
    files.update({path: text for path, text in definition.support_files.items() if path not in solution})
    files.update({path: text for path, text in stubs.items() if path in solution})
    files.update(tests)
    files.update({f".meta/{path}": text for path, text in (example or {}).items()})
    config = {"files": {"solution": solution, "test": list(tests),
                        "example": [f".meta/{path}" for path in (example or {})]},
              "blurb": definition.topic, "construction": dict(provenance or {})}
    files[".meta/config.json"] = json.dumps(config, indent=2) + "\n"
    for rel, text in files.items():
        target = folder / safe_relpath(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder
