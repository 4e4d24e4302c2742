"""Exercism-layout exercises: the nestings of LiveRepoReflection and Aider's polyglot benchmark, one exercise
or a folder at any depth, configs with and without their quirks, and the Task the sandbox runs."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from projectgen.datasets.examples import example_exercises_dir
from projectgen.datasets.exercism import exercise_language, exercise_task, load_exercise, load_exercises
from projectgen.errors import ProjectGenError, TaskFormatError

LAYOUTS = Path(__file__).parent / "exercism_layouts"
ROUTE_CACHE = LAYOUTS / "liverepo/python/exercises/practice/unit_test_5b1c0e7a_3f2d_4c1b_9a8e_2d4f6b8c0a1e/route_cache"
TALLY = LAYOUTS / "aider/python/exercises/practice/tally_marks"
HOPS = LAYOUTS / "short/unit_test_9c8d7e6f_1a2b_4c3d_8e9f_0a1b2c3d4e5f/hop_count"
HOP_ROUTER = LAYOUTS / "liverepo/go/exercises/practice/unit_test_7d3e9b21_4a6c_4f08_9b15_c2e8a0f4d6b3/hop_router"


def test_every_nesting_is_found_below_one_folder_in_every_language() -> None:
    found = load_exercises(LAYOUTS)
    assert [e.id for e in found.exercises] == ["hop_count", "hop_router", "ring_buffer", "route_cache", "span_merge",
                                               "tally_marks", "vote_tally", "window_median"]
    assert found.errors == {}
    assert found.other_languages == {} and found.skipped_line() == ""
    assert {e.id: e.language_name for e in found.exercises}["ring_buffer"] == "Cpp"
    assert {e.language_name for e in found.exercises} == {"Python", "Cpp", "Go", "Java", "Rust"}
    # The same exercises from a folder further down, or one exercise folder by itself.
    assert [e.id for e in load_exercises(LAYOUTS / "liverepo").exercises] == ["hop_router", "ring_buffer",
                                                                                "route_cache", "span_merge",
                                                                                "vote_tally", "window_median"]
    assert [e.id for e in load_exercises(TALLY).exercises] == ["tally_marks"]


def test_liverepo_config_with_double_slashes_and_the_other_block() -> None:
    exercise = load_exercise(ROUTE_CACHE)
    assert exercise.solution == ("route_cache.py", "main.py", "__init__.py")
    assert exercise.tests == ("test_route_cache.py",)
    assert exercise.examples == {"route_cache.py": ".meta/route_cache.py", "main.py": ".meta/main.py",
                                 "__init__.py": ".meta/__init__.py"}
    assert exercise.stubs() == {}  # LiveRepoReflection keeps no stubs in the folder
    assert exercise.reference()["__init__.py"].startswith("from .route_cache import RouteCache")
    assert exercise.instructions.startswith("## Question: A Route Cache")


def test_aider_config_pairs_example_py_with_the_one_solution_and_joins_the_docs_in_order() -> None:
    exercise = load_exercise(TALLY)
    assert exercise.examples == {"tally_marks.py": ".meta/example.py"}
    assert exercise.stubs() == {"tally_marks.py": "def tally(n):\n    pass\n"}
    text = exercise.instructions
    assert text.index("# Introduction") < text.index("# Instructions\n") < text.index("# Instructions append")


def test_an_exercise_without_config_takes_its_tests_and_reference_from_the_folder() -> None:
    exercise = load_exercise(HOPS)
    assert exercise.tests == ("hop_count_test.py",)
    assert exercise.solution == ("__init__.py", "hop_count.py")
    assert exercise.language == "python"  # from the test file: no python/exercises/ above it


def test_the_task_runs_the_test_file_inside_a_folder_named_like_the_project() -> None:
    exercise = load_exercise(ROUTE_CACHE)
    task = exercise_task(exercise)
    assert task.root == ROUTE_CACHE.parent.resolve() and task.format == "exercism"
    assert task.suite("unit").paths == ("route_cache/test_route_cache.py",)
    assert (task.root / task.suite("unit").paths[0]).is_file()
    # the stubs are starter files: the candidate's code beside the tests is never replaced by them
    assert set(task.docs.starter) == {f"route_cache/{rel}" for rel in exercise.stubs()}
    assert not set(task.docs.starter) & set(task.suite_files("unit"))
    assert exercise.candidate({"main.py": "x"}) == {"route_cache/main.py": "x"}
    # .meta's examples are the reference, at the solution paths (evaluation only: never in what a model reads)
    assert task.reference_files() == {f"route_cache/{rel}": ROUTE_CACHE / example
                                      for rel, example in exercise.examples.items()}
    assert task.docs.prd == exercise.instructions and not set(task.docs.starter) - set(exercise.candidate(exercise.stubs()))


def test_an_example_named_unlike_its_solution_file_is_the_reference_of_that_file() -> None:
    """Aider's `.meta/example.py` answers `tally_marks.py`: the task's reference is that file's repository path."""
    task = exercise_task(load_exercise(TALLY))
    assert task.reference == ("tally_marks/tally_marks.py",)
    assert task.reference_files() == {"tally_marks/tally_marks.py": TALLY / ".meta" / "example.py"}
    assert task.reference_repository()["tally_marks/tally_marks.py"] == (TALLY / ".meta" / "example.py").read_text()
    assert task.size().files == 1


def test_the_bundled_exercises_load() -> None:
    found = load_exercises(example_exercises_dir())
    python = [e for e in found.exercises if e.language == "python"]
    assert [e.id for e in python] == ["ledger_book", "unit_convert", "word_index"]
    assert all(len(e.solution) >= 3 and e.reference() and e.stubs() for e in python)
    others = {e.id: e.language for e in found.exercises if e.language != "python"}
    assert others == {"bracket_depth": "go", "clamp_range": "cpp", "digit_sum": "rust", "stack_calc": "java",
                      "word_caps": "javascript"}
    assert all(e.reference() and set(e.reference()) == set(e.solution) for e in found.exercises)


def test_two_exercises_of_one_name_get_their_folder_in_the_id(tmp_path: Path) -> None:
    for uuid in ("0d197b77_191c", "047484df_821d"):
        shutil.copytree(HOPS, tmp_path / f"unit_test_{uuid}" / "hop_count")
    assert [e.id for e in load_exercises(tmp_path).exercises] == ["hop_count-047484df", "hop_count-0d197b77"]


def test_one_exercise_in_several_languages_gets_its_language_in_the_id(tmp_path: Path) -> None:
    """Aider's polyglot benchmark has affine-cipher in Java, JavaScript, Python...: one batch runs them all, so
    the ids (and the batch's unit keys) must differ; a run of all of them once stopped on a shared key."""
    for language in ("python", "java"):
        shutil.copytree(TALLY, tmp_path / language / "exercises" / "practice" / "tally_marks")
    assert [e.id for e in load_exercises(tmp_path).exercises] == ["tally_marks-java", "tally_marks-python"]


@pytest.mark.parametrize("solution, examples, pairs", [
    (["src/lib.rs", "Cargo.toml"], [".meta/example.rs"], {"src/lib.rs": ".meta/example.rs"}),  # Rust
    (["src/lib.rs", "Cargo.toml"], [".meta/example.rs", ".meta/Cargo-example.toml"],  # its crates, in no config
     {"src/lib.rs": ".meta/example.rs", "Cargo.toml": ".meta/Cargo-example.toml"}),
    (["allergies.cpp", "allergies.h"], [".meta/example.cpp", ".meta/example.h"],  # C++
     {"allergies.cpp": ".meta/example.cpp", "allergies.h": ".meta/example.h"}),
    (["src/main/java/AffineCipher.java"], [".meta/src/reference/java/AffineCipher.java"],  # Java
     {"src/main/java/AffineCipher.java": ".meta/src/reference/java/AffineCipher.java"}),
    (["affine-cipher.js"], [".meta/proof.ci.js"], {"affine-cipher.js": ".meta/proof.ci.js"}),  # JavaScript
])
def test_each_tracks_reference_files_answer_their_solution_files(tmp_path: Path, solution: list[str],
                                                                 examples: list[str], pairs: dict[str, str]) -> None:
    configured = [rel for rel in examples if not rel.endswith("Cargo-example.toml")]
    folder = broken(tmp_path, {"files": {"solution": solution, "test": ["tally_marks_test.py"], "example": configured}})
    for rel in examples:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text("// the reference\n")
    assert load_exercise(folder).examples == pairs


def broken(tmp_path: Path, config: dict | None, *, docs: bool = True) -> Path:
    folder = tmp_path / "python" / "exercises" / "practice" / "bad"
    shutil.copytree(TALLY, folder)
    if config is None:
        (folder / ".meta" / "config.json").unlink()
    else:
        (folder / ".meta" / "config.json").write_text(json.dumps(config))
    if not docs:
        shutil.rmtree(folder / ".docs")
        (folder / ".docs").mkdir()
    return folder


@pytest.mark.parametrize("config, message", [
    ({"files": {"solution": ["tally_marks.py"], "test": ["a_test.py", "b_test.py"]}}, "not found"),
    ({"files": {"solution": [], "test": ["tally_marks_test.py"]}}, "files.solution is empty"),
    ({"files": {"solution": ["../up.py"], "test": ["tally_marks_test.py"]}}, "leaves the exercise folder"),
    ({"files": {"solution": ["tally_marks.py"], "test": ["tally_marks_test.py"],
                "example": [".meta/example.py", ".meta/tests.toml"]}}, "cannot tell which solution file"),
    ({"solution": []}, "no 'files' block"),
])
def test_a_malformed_config_is_one_error_naming_the_file(tmp_path: Path, config: dict, message: str) -> None:
    folder = broken(tmp_path, config)
    with pytest.raises(TaskFormatError, match=message) as caught:
        load_exercise(folder)
    assert "config.json" in str(caught.value)
    # In a folder of exercises it is that exercise's error; the others still load.
    shutil.copytree(HOPS, tmp_path / "hop_count")
    found = load_exercises(tmp_path)
    assert [e.id for e in found.exercises] == ["hop_count"] and message in found.errors["bad"]


def test_several_test_files_make_one_suite(tmp_path: Path) -> None:
    folder = broken(tmp_path, {"files": {"solution": ["tally_marks.py"],
                                         "test": ["tally_marks_test.py", "more_test.py"]}})
    (folder / "more_test.py").write_text("def test_x():\n    pass\n")
    task = exercise_task(load_exercise(folder))
    assert task.suite("unit").paths == (f"{folder.name}/tally_marks_test.py", f"{folder.name}/more_test.py")


def test_an_example_that_is_a_copy_of_a_test_is_no_reference_and_every_test_file_runs() -> None:
    """LiveRepoReflection lists ``.meta/`` copies of its test files (sometimes an older draft) among the example
    files beside the reference: they answer no solution file, and what runs is files.test at the top."""
    exercise = load_exercise(HOP_ROUTER)
    assert exercise.examples == {"hop_router.go": ".meta/hop_router.go", "go.mod": ".meta/go.mod"}
    assert exercise.tests == ("cases_test.go", "hop_router_test.go", "limits_test.go", "README.md")
    task = exercise_task(exercise)
    assert task.suite("unit").paths == tuple(f"hop_router/{rel}" for rel in exercise.tests)
    assert "hop_router/.meta/hop_router_test.go" not in task.reference_sources.values()


def test_an_exercise_without_config_takes_no_test_of_meta_as_a_solution_file(tmp_path: Path) -> None:
    folder = tmp_path / "hop_count"
    shutil.copytree(HOPS, folder)
    shutil.copy(folder / "hop_count_test.py", folder / ".meta" / "hop_count_test.py")
    assert load_exercise(folder).solution == ("__init__.py", "hop_count.py")


def test_a_line_of_shell_listed_as_a_solution_file_is_no_file_to_write(tmp_path: Path) -> None:
    """LiveRepoReflection lists a few commands or code lines as "solution files" (``rm -f *.o distributed_tx
    test``): no reply could name them, so the reference replay could not be written; they are left out."""
    junk = "rm -f *.o tally_marks test"
    folder = broken(tmp_path, {"files": {"solution": ["tally_marks.py", junk], "test": ["tally_marks_test.py"],
                                         "example": [".meta/example.py", f".meta/{junk}"]}})
    (folder / junk).write_text("")
    (folder / ".meta" / junk).write_text("rm -f *.o tally_marks test\n")
    exercise = load_exercise(folder)
    assert exercise.solution == ("tally_marks.py",) and exercise.examples == {"tally_marks.py": ".meta/example.py"}
    assert junk not in exercise.support_files()


def test_a_python_exercise_whose_tests_import_numpy_gets_it_in_its_environment(tmp_path: Path) -> None:
    """LiveRepoReflection's Python tests import numpy, networkx, ... (17 of 819 numpy): the benchmark's image had
    them, so the exercise's test environment asks PyPI for them; the standard library and its own modules,
    nothing."""
    folder = tmp_path / "python" / "exercises" / "practice" / "tally_marks"
    shutil.copytree(TALLY, folder)
    test_file = folder / "tally_marks_test.py"
    test_file.write_text("import numpy as np\nfrom sklearn.metrics import f1_score\nimport os.path\n"
                         "from tally_marks import tally\nfrom . import helpers\n" + test_file.read_text())
    (folder / ".meta" / "example.py").write_text("import networkx\n" + (folder / ".meta" / "example.py").read_text())
    exercise = load_exercise(folder)
    assert exercise_task(exercise).env.requirements == ("networkx", "numpy", "scikit-learn")
    assert exercise_task(load_exercise(TALLY)).env.requirements == ()


def test_an_exercise_lacking_a_listed_example_file_has_no_reference_but_loads(tmp_path: Path) -> None:
    folder = broken(tmp_path, {"files": {"solution": ["tally_marks.py"], "test": ["tally_marks_test.py"],
                                         "example": [".meta/example.py", ".meta/tally_marks_test.py"]}})
    (folder / ".meta" / "example.py").unlink()  # the test's .meta copy is absent too: no reference either way
    exercise = load_exercise(folder)
    assert exercise.lacking_reference == (".meta/example.py",) and exercise.examples == {}
    assert not exercise_task(exercise).has_reference


def test_missing_instructions_and_empty_folders_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="no instructions.md"):
        load_exercise(broken(tmp_path / "a", None, docs=False))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProjectGenError, match="no exercises found"):
        load_exercises(tmp_path / "empty")
    with pytest.raises(ProjectGenError, match="exercise folder not found"):
        load_exercises(tmp_path / "nowhere")


@pytest.mark.parametrize("listing", [list, lambda entries: list(reversed(entries))])
def test_a_tie_between_two_languages_goes_the_same_way_in_any_directory_order(tmp_path: Path, monkeypatch,
                                                                                listing) -> None:
    # one Python and one JavaScript test file, no config: the folder's order must not pick the language
    folder = tmp_path / "both"
    folder.mkdir()
    for name in ("both_test.py", "both.test.js"):
        (folder / name).write_text("")
    real_iterdir = Path.iterdir
    monkeypatch.setattr(Path, "iterdir", lambda self: iter(listing(sorted(real_iterdir(self)))))
    assert exercise_language(folder) == "javascript"  # "both.test.js" sorts first
