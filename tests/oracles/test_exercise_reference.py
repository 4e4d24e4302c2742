"""`reflect --model reference`: each exercise's .meta example replayed, in both edit formats, exactly."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from projectgen.datasets.exercism import load_exercise
from projectgen.errors import ProjectGenError
from projectgen.llm.naming import REFERENCE_LABEL, describe_model
from projectgen.oracles.reference_replay import exercise_reference_model, exercise_reference_script
from projectgen.repository.edits import apply_edits

LAYOUTS = Path(__file__).parents[1] / "datasets" / "exercism_layouts"
ROUTE_CACHE = LAYOUTS / "liverepo/python/exercises/practice/unit_test_5b1c0e7a_3f2d_4c1b_9a8e_2d4f6b8c0a1e/route_cache"


def replies(exercise) -> dict[str, str]:
    return {entry.stage: entry.text for entry in exercise_reference_script(exercise).responses}


def test_both_formats_write_the_example_exactly_from_no_stubs_and_files_without_final_newlines() -> None:
    exercise = load_exercise(ROUTE_CACHE)
    reference = exercise.reference()
    assert not reference["main.py"].endswith("\n")  # as LiveRepoReflection writes them
    for stage, fmt in (("reflection_whole", "whole"), ("reflection_patch", "search_replace")):
        outcome = apply_edits(exercise.stubs(), replies(exercise)[stage], fmt, allowed_paths=exercise.solution)
        assert outcome.exact, stage
        assert {p: t.rstrip("\n") for p, t in outcome.repo.items()} == {p: t.rstrip("\n") for p, t in reference.items()}
    assert "<<<<<<< ORIGINAL" in replies(exercise)["reflection_patch"]


def test_a_stub_without_a_final_newline_is_patched_as_it_ends(tmp_path: Path) -> None:
    folder = tmp_path / "route_cache"
    shutil.copytree(ROUTE_CACHE, folder)
    (folder / "route_cache.py").write_text("class RouteCache:\n    pass")  # a stub, no final newline
    exercise = load_exercise(folder)
    outcome = apply_edits(exercise.stubs(), replies(exercise)["reflection_patch"], "search_replace")
    assert outcome.exact and outcome.repo["route_cache.py"] == exercise.reference()["route_cache.py"].rstrip("\n")


def test_the_model_is_labelled_as_the_oracle_and_an_exercise_without_example_is_refused(tmp_path: Path) -> None:
    assert describe_model(exercise_reference_model(load_exercise(ROUTE_CACHE))) == REFERENCE_LABEL
    folder = tmp_path / "route_cache"
    shutil.copytree(ROUTE_CACHE, folder)
    config = folder / ".meta" / "config.json"
    config.write_text(config.read_text().replace('"example": [\n            ".meta//route_cache.py",\n'
                                                 '            ".meta//main.py",\n            ".meta//__init__.py"\n'
                                                 '        ],', '"example": [],'))
    with pytest.raises(ProjectGenError, match="has no example solution"):
        exercise_reference_script(load_exercise(folder))
