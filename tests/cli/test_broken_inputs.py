"""Broken tasks and exercises: the command exits non-zero and says so first, in one line each."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from projectgen.cli import main
from projectgen.datasets.examples import example_exercises_dir
from projectgen.datasets.exercism import load_exercises
from projectgen.datasets.multiturn import bundled_dataset_dir, load_multiturn_dataset


def test_a_latin1_requirement_is_one_load_error_and_refine_exits_1_saying_so_before_the_table(
        tmp_path: Path, env_cache: Path, capsys) -> None:
    data = tmp_path / "data"
    shutil.copytree(bundled_dataset_dir() / "slugify", data / "slugify")
    shutil.copytree(bundled_dataset_dir() / "slugify", data / "latin")
    (data / "latin" / "multiturn.toml").write_text(
        (data / "latin" / "multiturn.toml").read_text().replace('"slugify"', '"latin"'))
    (data / "latin" / "turns" / "1" / "requirement.md").write_bytes("Écrire une fonction\n".encode("latin-1"))
    tasks, errors = load_multiturn_dataset(data)
    assert [task.id for task in tasks] == ["slugify"]
    assert "turns/1/requirement.md: not valid UTF-8 (byte 0)" in errors["latin"]
    code = main(["refine", "--dataset", str(data), "--model", "reference", "--strategy", "fh", "--context",
                 "basic", "--out", str(tmp_path / "out"), "--cache-dir", str(env_cache)])
    out = capsys.readouterr().out
    assert code == 1
    assert "Traceback" not in out
    assert out.index("latin: does not load") < out.index("stepwise requirement refinement")


def test_an_exercise_without_a_test_file_is_an_error_not_another_language(tmp_path: Path) -> None:
    shutil.copytree(example_exercises_dir() / "unit_convert", tmp_path / "unit_convert")
    for test in (tmp_path / "unit_convert").glob("*_test.py"):
        test.unlink()
    config = tmp_path / "unit_convert" / ".meta" / "config.json"
    data = json.loads(config.read_text())
    del data["files"]["test"], data["other"]["test"]  # nothing names a test file either
    config.write_text(json.dumps(data))
    found = load_exercises(tmp_path)
    assert not found.other_languages and not found.exercises
    assert "no test file found" in found.errors["unit_convert"]
