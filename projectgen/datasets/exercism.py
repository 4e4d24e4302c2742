"""Exercism-layout exercises: LiveRepoReflection's and Aider's polyglot benchmark's repository tasks.

One exercise is a folder (its *project* folder, named like the package the tests import)::

    .docs/instructions.md            the task (plus introduction.md before it and
                                     instructions.append.md after it, when present)
    .meta/config.json                files.solution: the files the model writes (stubs of some of
                                     them may be in the folder); files.test: the test file(s);
                                     files.example: the reference solution, under .meta/
    <solution stubs>  <name>_test.py

An ``other`` block in config.json repeats the paths with the project folder's name in front:
the tests import the solution *by that folder's name* (``from dtc_conflicts import X`` with
``dtc_conflicts/__init__.py``), so the files are laid out and tested inside a folder of that name,
as the benchmarks do. A config whose example paths carry ``.meta//`` (LiveRepoReflection writes
them so) is read as ``.meta/``. An exercise without a config.json (some LiveRepoReflection folders)
takes its tests from the top-level ``*_test.py`` / ``test_*.py`` files and its reference from
``.meta/*.py``, whose names are the solution files.

Nestings found at any depth below the folder given: Aider's ``python/exercises/practice/<name>/``,
LiveRepoReflection's ``python/exercises/practice/unit_test_<uuid>/<project>/`` and
``unit_test_<uuid>/<project>/``, or the exercise folder itself. Exercises in the six languages of
`LANGUAGES` load (Go, Rust, C++, JavaScript and Java keep their build files: go.mod, Cargo.toml,
CMakeLists.txt with its bundled Catch2, package.json, tests in ``tests/``, ``src/test/java`` or beside
the code); those of other languages are counted. `exercise_task` is the one place that turns an
exercise into a `Task` for the sandbox runner.
"""
from __future__ import annotations

import ast
import json
import os
import posixpath
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from projectgen.datasets.task import Documents, EnvSpec, Task, TestSuite
from projectgen.errors import ProjectGenError, TaskFormatError
from projectgen.repository import SKIPPED_DIRS, safe_relpath

CONFIG = ".meta/config.json"
DOCS = ("introduction.md", "instructions.md", "instructions.append.md")  # in the order they are given
LANGUAGES: dict[str, str] = {"python": "Python", "java": "Java", "cpp": "Cpp", "rust": "Rust", "go": "Go",
                             "javascript": "JavaScript"}
"""Language folder name -> the name the LiveRepoReflection tables use."""
DISTRIBUTIONS = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow", "cv2": "opencv-python",
                 "bs4": "beautifulsoup4", "dateutil": "python-dateutil"}
"""An imported module -> the PyPI distribution that provides it, where the names differ."""
RUST_EXAMPLE_MANIFEST = ".meta/Cargo-example.toml"  # the Rust track's example manifest, named in no config
_SUFFIXES: dict[str, str] = {".py": "python", ".java": "java", ".cpp": "cpp", ".cc": "cpp", ".h": "cpp",
                             ".hpp": "cpp", ".rs": "rust", ".go": "go", ".js": "javascript", ".mjs": "javascript",
                             ".ts": "typescript"}


def file_language(name: str) -> str | None:
    """The language a code file's suffix names (``x.rs`` -> "rust"), or None."""
    return _SUFFIXES.get(os.path.splitext(name)[1])


UNUSED_FILES = frozenset({".meta", ".docs", ".exercism", "gradle", "gradlew", "gradlew.bat", "build", "target",
                          "node_modules", ".gradle"})
"""Top-level entries of an exercise folder that never reach a test workspace."""
_UUID_FOLDER = re.compile(r"^unit_test_(?P<uuid>[0-9a-f]{8})[0-9a-f_]*$", re.I)
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_NOT_A_FILE_NAME = re.compile(r'[\s*"(),;$<>|`]')
"""What no file a benchmark means to ship is named with: LiveRepoReflection lists five "solution files" that are
a line of code or of shell captured as a name (``rm -f *.o distributed_tx test``, ``fmt.Println("Total
errors:", errorCount)``); no reply could name them and no build reads them."""
_MAX_DEPTH = 8  # python/exercises/practice/unit_test_<uuid>/<project> is 5 below a benchmark's root


@dataclass(frozen=True)
class Exercise:
    """One exercise: what the model is told and given, and where its tests and reference are.

    Paths in `solution`, `tests` and `examples` are relative to `folder`; a candidate repository
    uses the solution paths (``dtc.py``), and `candidate` places it in the project folder for the
    sandbox (``dtc_conflicts/dtc.py``)."""

    id: str
    language: str
    folder: Path
    instructions: str
    solution: tuple[str, ...]
    tests: tuple[str, ...]
    examples: dict[str, str] = field(default_factory=dict)  # solution path -> its reference file
    lacking_reference: tuple[str, ...] = ()
    """Example files config.json lists that this copy of the exercise lacks: it has no reference then (a part of
    one is no oracle), but a model's code can still be tested."""

    @property
    def project(self) -> str:
        """The project folder's name: the package (or module folder) the tests import."""
        return self.folder.name

    @property
    def language_name(self) -> str:
        return LANGUAGES.get(self.language, self.language)

    def stubs(self) -> dict[str, str]:
        """The solution files the folder holds (the starting code), by solution path."""
        return {rel: (self.folder / rel).read_text(encoding="utf-8", errors="replace")
                for rel in self.solution if (self.folder / rel).is_file()}

    def reference(self) -> dict[str, str]:
        """The reference solution (``.meta``'s example files) by solution path; evaluation and the
        reference replay only, never shown to a model."""
        return {rel: (self.folder / example).read_text(encoding="utf-8", errors="replace")
                for rel, example in self.examples.items()}

    def support_files(self) -> tuple[str, ...]:
        """The exercise's files that are neither solution, test nor its own metadata: what its build needs
        (go.mod, CMakeLists.txt, catch.hpp, tests-main.cpp). Gradle's wrapper and build outputs are left out."""
        found = []
        for path in sorted(self.folder.rglob("*")):
            rel = path.relative_to(self.folder).as_posix()
            top = rel.split("/", 1)[0]
            if not path.is_file() or top in UNUSED_FILES or top in SKIPPED_DIRS or rel in self.solution \
                    or rel in self.tests or _NOT_A_FILE_NAME.search(rel):
                continue
            found.append(rel)
        return tuple(found)

    def python_requirements(self) -> tuple[str, ...]:
        """The PyPI distributions a Python exercise's tests or reference import (``numpy``): the tests cannot run
        without them and the benchmark's harness ran them with them, so the test environment gets them; the
        standard library and the exercise's own modules need nothing."""
        own = {self.project, *(Path(rel).parts[0].removesuffix(".py") for rel in (*self.solution, *self.tests))}
        found = set()
        for rel in (*self.tests, *self.examples.values()):
            if not rel.endswith(".py") or not (self.folder / rel).is_file():
                continue
            try:
                tree = ast.parse((self.folder / rel).read_text(encoding="utf-8", errors="replace"))
            except SyntaxError:
                continue  # the test run says so
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    found.add(node.module.split(".")[0])
        return tuple(sorted(DISTRIBUTIONS.get(name, name) for name in found
                            if name not in sys.stdlib_module_names and name not in own and name != "__future__"))

    def workspace_path(self, rel: str) -> str:
        """Where a solution path goes in a test workspace: inside the project folder."""
        return f"{self.project}/{safe_relpath(rel)}"

    def candidate(self, repo: dict[str, str]) -> dict[str, str]:
        """A candidate repository (solution paths -> text) laid out for the sandbox runner."""
        return {self.workspace_path(rel): text for rel, text in repo.items()}


def exercise_task(exercise: Exercise) -> Task:
    """The `Task` the sandbox runner evaluates: rooted at the project folder's parent, so the tests
    run inside a folder named like the project; the suite is the exercise's test files, copied over
    the candidate (a reply cannot change them), and the stubs are starter files (never copied over
    the candidate's code beside the tests). In another language than Python the project folder is
    where the build runs (`EnvSpec.source_root`), and the exercise's other files (go.mod,
    CMakeLists.txt, the bundled Catch2) are copied into every workspace. The reference is `.meta`'s
    example files, each at the path of the solution file it answers (`eval`, `bench-reference` and
    `run --model reference` use it; a model never sees it). The only place an exercise becomes a Task."""
    other = exercise.language != "python"
    sources = {exercise.workspace_path(rel): exercise.workspace_path(example)
               for rel, example in sorted(exercise.examples.items())}
    return Task(id=exercise.id, root=exercise.folder.parent, folder=exercise.folder, format="exercism",
                language=exercise.language,
                docs=Documents(prd=exercise.instructions, starter=exercise.candidate(exercise.stubs())),
                package=exercise.project, reference=tuple(sources), reference_sources=sources,
                env=EnvSpec(source_root=exercise.project) if other else EnvSpec(
                    requirements=exercise.python_requirements()),
                required_files=tuple(exercise.workspace_path(rel) for rel in exercise.support_files()) if other else (),
                suites={"unit": TestSuite(name="unit", paths=tuple(exercise.workspace_path(t)
                                                                   for t in exercise.tests))})


# --------------------------------------------------------------------------- one exercise


def is_exercise(folder: Path) -> bool:
    """Whether `folder` is an exercise (it holds ``.meta/`` or ``.docs/``)."""
    return (folder / ".meta").is_dir() or (folder / ".docs").is_dir()


def load_exercise(folder: str | os.PathLike[str], exercise_id: str | None = None) -> Exercise:
    """Read one exercise folder; a `TaskFormatError` names the file and what is wrong."""
    folder = Path(folder).resolve()
    if not folder.is_dir() or not is_exercise(folder):
        raise TaskFormatError(folder, "not an exercise folder (expected .docs/instructions.md and .meta/)")
    exercise_id = exercise_id or folder.name
    if not _SAFE_ID.match(exercise_id):
        raise TaskFormatError(folder, f"exercise name {exercise_id!r} is not a safe identifier")
    config_path = folder / CONFIG
    lacking: tuple[str, ...] = ()
    if config_path.is_file():
        solution, tests, examples, lacking = _from_config(folder, config_path)
    else:
        solution, tests, examples = _discovered(folder)
    exercise = Exercise(id=exercise_id, language=exercise_language(folder, tests), folder=folder,
                        instructions=_instructions(folder), solution=solution, tests=tests,
                        examples={} if lacking else examples, lacking_reference=lacking)
    exercise_task(exercise)  # refuse now what the runner could not run
    return exercise


def _instructions(folder: Path) -> str:
    parts = []
    for name in DOCS:
        path = folder / ".docs" / name
        if path.is_file():
            try:
                parts.append(path.read_bytes().decode("utf-8").strip())
            except UnicodeDecodeError as error:
                raise TaskFormatError(path, f"not valid UTF-8 (byte {error.start})") from None
    if not parts:
        raise TaskFormatError(folder / ".docs", "no instructions.md")
    return "\n\n".join(parts) + "\n"


def _paths(config: Path, files: dict, key: str) -> tuple[str, ...]:
    value = files.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise TaskFormatError(config, f"files.{key}: expected a list of paths")
    try:
        return tuple(dict.fromkeys(safe_relpath(item) for item in value))
    except ProjectGenError:
        raise TaskFormatError(config, f"files.{key}: a path leaves the exercise folder") from None


def _from_config(folder: Path, config: Path) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str],
                                                     tuple[str, ...]]:
    """Solution files, test files, the reference's pairs and the listed example files this copy lacks."""
    try:
        data = json.loads(config.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TaskFormatError(config, f"not readable JSON ({error})") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        raise TaskFormatError(config, "no 'files' block")
    solution, tests, examples = (_paths(config, files, key) for key in ("solution", "test", "example"))
    # a line of code captured as a file name is no file to write, and its example no reference
    solution = tuple(rel for rel in solution if not _NOT_A_FILE_NAME.search(rel))
    examples = tuple(rel for rel in examples if not _NOT_A_FILE_NAME.search(rel))
    if not solution:
        raise TaskFormatError(config, "files.solution is empty: which files does the model write?")
    if not tests:
        raise TaskFormatError(config, "files.test is empty")
    for rel in (*tests, *examples):
        if (folder / rel).exists() and not (folder / rel).resolve().is_relative_to(folder):
            raise TaskFormatError(config, f"{rel} leaves the exercise folder")
    for rel in tests:
        if not (folder / rel).is_file():
            raise TaskFormatError(config, f"{rel} not found in the exercise folder")
    lacking = tuple(rel for rel in examples
                    if not (folder / rel).is_file() and not _copy_of_a_test(rel, tests, solution))
    examples = tuple(rel for rel in examples if (folder / rel).is_file())
    if set(tests) & set(solution):
        raise TaskFormatError(config, "a file is both a test and a solution file")
    references = tuple(rel for rel in examples if not _copy_of_a_test(rel, tests, solution))
    pairs = _pair_examples(config, solution, references)
    if "Cargo.toml" in solution and "Cargo.toml" not in pairs and (folder / RUST_EXAMPLE_MANIFEST).is_file():
        pairs["Cargo.toml"] = RUST_EXAMPLE_MANIFEST  # the crates the example uses: refused in one line offline
    return solution, tests, pairs, lacking


def _copy_of_a_test(example: str, tests: tuple[str, ...], solution: tuple[str, ...] = ()) -> bool:
    """Whether an example file is the exercise's own test rather than a reference solution file: a copy of a
    test file (LiveRepoReflection lists ``.meta/cases_test.go`` beside ``cases_test.go``), or a file named like a
    test (``.meta/example_test.go``, ``.meta/max_flow_benchmark_test.go``). Exercism's example files stand in for
    the solution files; a test is no solution file, and the tests that run are ``files.test`` (and, as the
    native runner runs the folder, the other test files at the top), never ``.meta``'s copies, which may be
    an older draft."""
    name = example.removeprefix(".meta/")
    return name not in solution and (name in tests or _is_test_file(posixpath.basename(name)))


def _pair_examples(config: Path, solution: tuple[str, ...], examples: tuple[str, ...]) -> dict[str, str]:
    """Solution path -> reference file, as Exercism's tracks pair them: ``.meta/x.py`` answers ``x.py``; else
    the solution file of the same name (Java's ``.meta/src/reference/java/X.java`` answers
    ``src/main/java/X.java``); else the one solution file with the example's extension (``.meta/example.rs``
    answers ``src/lib.rs``, ``.meta/example.h`` the track's one header, ``.meta/proof.ci.js`` the one
    ``.js``)."""
    pairs: dict[str, str] = {}
    unmatched = []
    for rel in examples:
        name = rel.removeprefix(".meta/")
        same_name = [path for path in solution if posixpath.basename(path) == posixpath.basename(name)]
        extension = posixpath.splitext(name)[1]
        same_extension = [path for path in solution if posixpath.splitext(path)[1] == extension]
        lone_of_its_kind = sum(1 for other in examples if posixpath.splitext(other)[1] == extension) == 1
        if name in solution:
            pairs[name] = rel
        elif len(same_name) == 1:
            pairs[same_name[0]] = rel
        elif len(same_extension) == 1 and lone_of_its_kind:
            pairs[same_extension[0]] = rel
        else:
            unmatched.append(rel)
    if not unmatched and len(pairs) == len(examples):
        return pairs
    unmatched = sorted(unmatched) or sorted(examples)
    raise TaskFormatError(config, f"cannot tell which solution file {', '.join(unmatched)} is the reference of")


def _discovered(folder: Path) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str]]:
    """No config.json: tests are the top-level test files, the reference is ``.meta``'s code files."""
    tests = tuple(sorted(p.name for p in folder.iterdir() if p.is_file() and _is_test_file(p.name)))
    meta = folder / ".meta"
    examples = sorted(p.name for p in meta.iterdir() if p.is_file() and p.suffix in _SUFFIXES
                      and not _copy_of_a_test(p.name, tests)) if meta.is_dir() else []
    if not tests:
        raise TaskFormatError(folder, f"no {CONFIG} and no test file (*_test.py, test_*.py) at the top")
    if not examples:
        raise TaskFormatError(folder, f"no {CONFIG} and no reference files in .meta/")
    solution = tuple(examples)
    return solution, tests, {name: f".meta/{name}" for name in examples}


def _is_test_file(name: str) -> bool:
    stem, suffix = os.path.splitext(name)
    return suffix in _SUFFIXES and (stem.endswith(("_test", "Test", ".spec", ".test")) or stem.startswith("test_"))


def _configured_tests(folder: Path) -> tuple[str, ...]:
    """The test files config.json names (none when it is missing or unreadable: loading says why)."""
    try:
        files = json.loads((folder / CONFIG).read_bytes().decode("utf-8")).get("files") or {}
        tests = files.get("test") or []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return ()
    return tuple(str(t) for t in ([tests] if isinstance(tests, str) else tests) if isinstance(t, str))


def exercise_language(folder: Path, tests: tuple[str, ...] = ()) -> str:
    """The exercise's language: the folder above ``exercises/`` in its path (``python/exercises/...``),
    else the suffix of its test files (config.json's, else those at the top), else "unknown"."""
    parts = folder.resolve().parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == "exercises" and parts[i - 1].lower() in LANGUAGES:
            return parts[i - 1].lower()
    # sorted: a tie between two languages goes to the same one on every file system
    files = tests or _configured_tests(folder) or tuple(p.name for p in sorted(folder.iterdir())
                                                        if p.is_file() and _is_test_file(p.name))
    found = Counter(_SUFFIXES.get(os.path.splitext(name)[1], "") for name in files)
    found.pop("", None)
    return found.most_common(1)[0][0] if found else "unknown"


# --------------------------------------------------------------------------- a folder of exercises


@dataclass(frozen=True)
class ExerciseSet:
    """What a folder holds: the exercises that load (in every language with a test runner), those of
    other languages counted by language, and one reason per exercise that does not load (by its id)."""

    root: Path
    exercises: list[Exercise]
    other_languages: dict[str, int]
    errors: dict[str, str]

    def skipped_line(self) -> str:
        """One line saying what was not loaded ("" when nothing was skipped)."""
        if not self.other_languages:
            return ""
        counts = ", ".join(f"{LANGUAGES.get(lang, lang)} {n}" for lang, n in sorted(self.other_languages.items()))
        return f"skipped {sum(self.other_languages.values())} exercise(s) in languages without a test runner " \
               f"({counts}): projectgen runs {', '.join(LANGUAGES.values())}"


def find_exercise_folders(root: Path) -> list[Path]:
    """Exercise folders at or below `root` (not below an exercise), in path order."""
    if is_exercise(root):
        return [root]
    found: list[Path] = []
    base = len(root.parts)
    for dirpath, dirnames, _ in os.walk(root):
        here = Path(dirpath)
        if here != root and is_exercise(here):
            found.append(here)
            dirnames[:] = []
            continue
        depth = len(here.parts) - base
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRS
                             and depth < _MAX_DEPTH)
    return found


def exercise_ids(folders: list[Path]) -> dict[Path, str]:
    """Each folder's id: its name, or where several share a name, the name and the nearest folder above it
    that tells them apart (``network_routing-0d197b77`` for ``unit_test_0d197b77_.../network_routing``,
    ``affine-cipher-java`` for ``java/exercises/practice/affine-cipher`` beside the other languages')."""
    groups: dict[str, list[Path]] = {}
    for folder in folders:
        groups.setdefault(folder.name, []).append(folder)
    ids = {}
    for name, group in groups.items():
        if len(group) == 1:
            ids[group[0]] = name
            continue
        for level in range(1, min(len(folder.parts) for folder in group)):
            above = [_folder_label(folder.parents[level - 1]) for folder in group]
            if len(set(above)) == len(group):
                ids.update({folder: f"{name}-{label}" for folder, label in zip(group, above)})
                break
        else:
            ids.update({folder: f"{name}-{index}" for index, folder in enumerate(group, 1)})
    return ids


def _folder_label(folder: Path) -> str:
    """How a folder above an exercise names it: a LiveRepoReflection ``unit_test_<uuid>_`` folder by its uuid."""
    uuid = _UUID_FOLDER.match(folder.name)
    return uuid["uuid"] if uuid else folder.name


def load_exercises(path: str | os.PathLike[str]) -> ExerciseSet:
    """Every exercise at or below `path` (one exercise folder, or a benchmark's folder at any of the
    nestings above); ProjectGenError when there is none."""
    root = Path(path)
    if not root.is_dir():
        raise ProjectGenError(f"{root}: exercise folder not found")
    root = root.resolve()
    folders = find_exercise_folders(root)
    if not folders:
        raise ProjectGenError(f"{root}: no exercises found (no folder with .docs/ or .meta/ at any depth)")
    exercises, errors, others = [], {}, Counter()
    for folder, exercise_id in exercise_ids(folders).items():
        try:
            language = exercise_language(folder)
        except OSError as error:
            errors[exercise_id] = f"{folder}: cannot read ({error.strerror})"
            continue
        if language == "unknown":  # not "another language": a broken exercise, said as one
            errors[exercise_id] = f"{folder}: no test file found, so neither its language nor its tests are known"
            continue
        if language not in LANGUAGES:
            others[language] += 1
            continue
        try:
            exercises.append(load_exercise(folder, exercise_id))
        except TaskFormatError as error:
            errors[exercise_id] = str(error)
    return ExerciseSet(root=root, exercises=sorted(exercises, key=lambda e: e.id), other_languages=dict(others),
                       errors=errors)
