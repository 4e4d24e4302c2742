"""Load tasks from folders: CodeProjectEval and DevBench `config.json`, or our own `task.toml`.

Every path a config names is checked to stay inside the task folder (also through
symlinks) before anything is read, and every problem becomes one `TaskFormatError`
line naming the config file and the offending key. The two benchmark formats are
read leniently where their published data is known to be incomplete (absent UML
files, data files, test folders are skipped); `task.toml` is read strictly (a
declared path that does not exist, or an unknown key, is an error).
"""
from __future__ import annotations

import difflib
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import ValidationError

from projectgen.config import Settings
from projectgen.datasets.assets import with_asset_packages
from projectgen.datasets.catalog import published_task_folder
from projectgen.datasets.compat import apply_compat
from projectgen.datasets.examples import example_task_names, example_task_path
from projectgen.datasets.exercism import LANGUAGES, exercise_task, is_exercise, load_exercise
from projectgen.datasets.nl2repobench import (difficulties, is_nl2repo_task, load_nl2repo, load_nl2repo_task,
                                              nl2repo_tasks_folder)
from projectgen.datasets.pytest_config import pytest_options
from projectgen.datasets.ralbench import is_ralbench, load_ralbench, load_ralbench_task, ralbench_root_of
from projectgen.datasets.task import (INSTALL_STEPS, PAPER_SETTINGS, STANDARD_SUITES, SUITE_NAME, Documents,
                                      EnvSpec, SuiteName, Task, TestSuite, package_install)
from projectgen.errors import ProjectGenError, TaskFormatError
from projectgen.repository import SKIPPED_DIRS, safe_relpath

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

TASK_TOML = "task.toml"
CONFIG_JSON = "config.json"

_CPE_SUITE_KEYS: dict[SuiteName, str] = {"check": "check_tests", "unit": "unit_tests"}
_DEVBENCH_SUITE_KEYS: dict[SuiteName, str] = {
    "check": "check_tests",
    "unit": "unit_tests",
    "acceptance": "acceptance_tests",
}
_DEVBENCH_MARKERS = frozenset({"UML_class", "code_file_DAG", "acceptance_tests"})

_TOML_TOP_KEYS = frozenset({"id", "package", "reference", "reference_root", "reference_target", "starter",
                            "required_files", "docs", "tests", "env", "expected_tests", "expected_total",
                            "empty_dirs", "timeout", "settings_profile", "scored", "timeouts", "install_timeout",
                            "language"})
_TOML_DOCS_KEYS = frozenset(Documents.model_fields) - {"starter"}  # starter files are a top-level key
_TOML_ENV_KEYS = frozenset({"requirements", "constraints", "python", "env_vars", "pytest_plugins", "setup_script",
                            "source_root", "install", "workdir", "pytest_config", "nearest_pins",
                            "listed_left_out"})
_TOML_PYTHON_ENV_KEYS = frozenset({"requirements", "constraints", "python", "pytest_plugins", "setup_script",
                                   "install", "pytest_config", "nearest_pins", "listed_left_out"})  # what a task in another language cannot use

_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_PYTHON_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
_REQ_COMMENT = re.compile(r"(^|\s)#.*$")  # pip's rule: '#' at line start or after whitespace
_REQ_NAME = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
_TEST_DIRS = frozenset({"test", "tests", "testing"})


# --------------------------------------------------------------------------- public API


def load_task(path: str | os.PathLike[str]) -> Task:
    """Load one task folder (or its config.json / task.toml), detecting its format; an Exercism exercise folder
    (.meta/config.json) loads as `exercise_task` makes it."""
    given = Path(path)
    if given.is_file() and given.name in (TASK_TOML, CONFIG_JSON):
        given = given.parent.parent if given.parent.name == ".meta" else given.parent  # an exercise's config
    elif given.is_file() and given.suffix == ".yaml":  # a RAL-Bench task's description: its folder
        given = given.parent
    if not given.exists():
        raise TaskFormatError(given, "task folder not found")
    if not given.is_dir():
        raise TaskFormatError(
            given, f"not a task folder (expected a folder holding {TASK_TOML} or {CONFIG_JSON})"
        )
    root = given.resolve()
    if (root / TASK_TOML).is_file():
        ctx = _Ctx(root, root / TASK_TOML)
        return _load_taskdir(ctx, _read_toml(ctx.config))
    if (root / CONFIG_JSON).is_file():
        ctx = _Ctx(root, root / CONFIG_JSON)
        config = _read_json(ctx.config)
        if "source_code" in config or isinstance(config.get("UML"), list):
            return apply_compat(with_asset_packages(_load_codeprojecteval(ctx, config)))
        if _DEVBENCH_MARKERS & config.keys():
            return apply_compat(with_asset_packages(_load_devbench(ctx, config)))
        raise ctx.fail(
            "",
            "cannot tell the task format: expected CodeProjectEval keys (source_code, UML) "
            "or DevBench keys (UML_class, code_file_DAG, acceptance_tests)",
        )

    if (bench := ralbench_root_of(root)) is not None:  # RAL-Bench: tasks/<Name>/<name>.yaml
        return load_ralbench_task(bench, sorted(root.glob("*.yaml"))[0])
    if is_nl2repo_task(root):  # NL2Repo-Bench: test_files/<task>/start.md
        return load_nl2repo_task(root, difficulties(root.parent).get(root.name.lower()))
    if is_exercise(root):  # Exercism's layout: .meta/config.json (or .meta/ and .docs/ without one)
        return exercise_task(load_exercise(root))
    raise TaskFormatError(root, f"no {TASK_TOML} or {CONFIG_JSON} found")


def load_task_or_example(spec: str | os.PathLike[str]) -> Task:
    """A task folder, the name of a bundled example, or NAME/TASK of a fetched benchmark (devbench/lice) (`run`,
    `eval`, Studio's ``{"task": ...}`` take all three)."""
    path, text = Path(spec), str(spec)
    published = published_task_folder(text)
    if published is not None:
        path = published
    elif not path.exists() and text in example_task_names():
        path = example_task_path(text)
    elif not path.exists() and "/" not in text and text not in (".", ".."):
        raise ProjectGenError(f"{text}: no such task folder or bundled example (examples: "
                              f"{', '.join(example_task_names())})")
    return load_task(path)


def load_dataset(
    path: str | os.PathLike[str], on_error: Literal["raise", "skip"] = "raise"
) -> list[Task]:
    """Every task in the immediate subfolders of `path`, sorted by id.

    With on_error="raise" the first malformed task (in folder-name order) raises its
    TaskFormatError; with "skip" malformed tasks are left out (see
    `load_dataset_report` to get their errors too).
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    tasks, errors = _load_all(Path(path), stop_at_first_error=on_error == "raise")
    if errors and on_error == "raise":
        raise errors[0]
    return tasks


def load_dataset_report(path: str | os.PathLike[str]) -> tuple[list[Task], list[TaskFormatError]]:
    """Load every task that can be loaded and collect one error per malformed task."""
    return _load_all(Path(path), stop_at_first_error=False)


def parse_requirements(text: str, exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """Requirement strings from a requirements file's text, ready for one `pip install`.

    Comments, blank lines and option lines (`-e .`, `-r other.txt`, `--index-url ...`)
    are dropped; environment markers are kept. Requirements naming a project in
    `exclude` (the task's own package) are dropped, because installing the
    published package would shadow the candidate implementation under test.
    Exact duplicates are dropped too.
    """
    excluded = {_normalize_name(name) for name in exclude if name}
    kept: list[str] = []
    for raw in text.splitlines():
        line = _REQ_COMMENT.sub("", raw).strip()
        if not line or line.startswith("-"):
            continue
        match = _REQ_NAME.match(line)
        if match and _normalize_name(match.group(1)) in excluded:
            continue
        if line not in kept:
            kept.append(line)
    return tuple(kept)


# --------------------------------------------------------------------------- dataset scan


def _load_all(root: Path, *, stop_at_first_error: bool) -> tuple[list[Task], list[TaskFormatError]]:
    """Load the task subfolders of a dataset folder; duplicate ids count as malformed."""
    if not root.exists():
        raise ProjectGenError(f"{root}: dataset folder not found")
    if not root.is_dir():
        raise ProjectGenError(f"{root}: not a folder (expected a dataset folder of task subfolders)")

    if is_ralbench(root):  # one repository of tasks/, tests/ and repositories/
        tasks, errors = load_ralbench(root)
        return tasks, errors[:1] if stop_at_first_error else errors
    if nl2repo_tasks_folder(root) is not None:  # test_files/<task>/
        tasks, errors = load_nl2repo(root)
        return tasks, errors[:1] if stop_at_first_error else errors
    folders = sorted(
        (child for child in root.iterdir() if child.is_dir() and _has_config(child)), key=lambda p: p.name
    )
    if not folders:
        hint = " (it is itself a task folder: use load_task)" if _has_config(root) else ""
        raise ProjectGenError(
            f"{root}: no tasks found (no subfolder holds a {TASK_TOML} or {CONFIG_JSON}){hint}"
        )
    tasks: dict[str, Task] = {}
    errors: list[TaskFormatError] = []
    for folder in folders:
        try:
            task = load_task(folder)
            if task.id in tasks:
                raise TaskFormatError(
                    folder, f"duplicate task id {task.id!r} (also used by {tasks[task.id].root})"
                )
            tasks[task.id] = task
        except TaskFormatError as error:
            errors.append(error)
            if stop_at_first_error:
                break
    return sorted(tasks.values(), key=lambda t: t.id), errors


def _has_config(folder: Path) -> bool:
    """Whether a folder is a task: a task.toml, a benchmark config.json, or an Exercism exercise's .meta/config.json."""
    return any((folder / name).is_file() for name in (TASK_TOML, CONFIG_JSON, f".meta/{CONFIG_JSON}"))


# --------------------------------------------------------------------------- config files


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(_read_config_text(path))
    except json.JSONDecodeError as error:
        raise TaskFormatError(
            path, f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None
    if not isinstance(data, dict):
        raise TaskFormatError(path, f"expected a JSON object at the top level, got {_kind(data)}")
    return data


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(_read_config_text(path))
    except tomllib.TOMLDecodeError as error:  # its message carries "(at line L, column C)"
        raise TaskFormatError(path, f"invalid TOML: {error}") from None


def _read_config_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise TaskFormatError(path, f"not valid UTF-8 (byte {error.start})") from None
    except OSError as error:
        raise TaskFormatError(path, f"cannot read: {error.strerror}") from None


# --------------------------------------------------------------------------- shared helpers


@dataclass(frozen=True)
class _Ctx:
    """A task root plus its config file, so every check can name the file and the key."""

    root: Path  # resolved task folder
    config: Path

    def fail(self, key: str, problem: str) -> TaskFormatError:
        return TaskFormatError(self.config, f"{key}: {problem}" if key else problem)

    def inside(self, key: str, rel: object) -> tuple[str, Path]:
        """Normalize a config path; refuse absolute paths, '..' and symlinks leaving the root."""
        if not isinstance(rel, str):
            raise self.fail(key, f"expected a path string, got {_kind(rel)}")
        if not rel.strip():
            raise self.fail(key, "empty path")
        try:
            clean = safe_relpath(rel)
        except ProjectGenError:
            raise self.fail(
                key, f"path {rel!r} escapes the task folder (absolute paths and '..' are not allowed)"
            ) from None
        full = self.root / clean
        if not full.resolve().is_relative_to(self.root):
            raise self.fail(key, f"path {rel!r} resolves outside the task folder (through a symlink)")
        return clean, full

    def file(self, key: str, rel: object, *, required: bool) -> tuple[str, Path] | None:
        """A checked file path, or None when it is absent and not required."""
        clean, full = self.inside(key, rel)
        if full.is_dir():
            raise self.fail(key, f"{clean!r} is a folder, expected a file")
        if not full.is_file():
            if required:
                raise self.fail(key, f"file {clean!r} not found")
            return None
        return clean, full

    def folder(self, key: str, rel: object, *, required: bool) -> str | None:
        """A checked folder path, or None when it is absent and not required."""
        clean, full = self.inside(key, rel)
        if full.is_file():
            raise self.fail(key, f"{clean!r} is a file, expected a folder")
        if not full.is_dir():
            if required:
                raise self.fail(key, f"folder {clean!r} not found")
            return None
        return clean

    def read(self, key: str, rel: object, *, required: bool) -> str | None:
        """A document's text (UTF-8: anything else would reach the model garbled), or None when absent."""
        found = self.file(key, rel, required=required)
        if found is None:
            return None
        clean, full = found
        try:
            return full.read_bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            raise self.fail(key, f"{clean!r} is not valid UTF-8 (byte {error.start}); save it as UTF-8") from None
        except OSError as error:
            raise self.fail(key, f"cannot read {clean!r}: {error.strerror}") from None

    def document(self, key: str, value: object, *, required: bool) -> str | None:
        """One document, or a list of them concatenated, each after a `<!-- file: name -->` line."""
        if isinstance(value, str):
            return self.read(key, value, required=required)
        if not isinstance(value, list):
            raise self.fail(key, f"expected a path or a list of paths, got {_kind(value)}")
        parts = []
        for index, item in enumerate(value):
            text = self.read(f"{key}[{index}]", item, required=required)
            if text is not None:
                parts.append(f"<!-- file: {safe_relpath(item)} -->\n{text.rstrip()}\n")
        return "\n".join(parts) or None

    def optional_document(self, config: dict[str, Any], key: str, *, required: bool = False) -> str | None:
        """A document named by `config[key]`; a missing key or "" means none."""
        value = config.get(key)
        if value is None or value == "":
            return None
        return self.document(key, value, required=required)

    def suite(self, key: str, name: SuiteName, rel: object, *, required: bool) -> TestSuite | None:
        """A benchmark's suite: one folder."""
        clean = self.folder(key, rel, required=required)
        return None if clean is None else TestSuite(name=name, paths=(clean,))

    def test_paths(self, key: str, value: object) -> tuple[str, ...]:
        """A suite's folders, files and globs (each must exist or match), in order; a path inside
        another one of the suite is dropped (pytest would run its tests once anyway)."""
        items = self.str_list(key, value)
        if not items:
            raise self.fail(key, "empty: name at least one folder, file or glob of tests")
        paths: list[str] = []
        for index, item in enumerate(items):
            item_key = f"{key}[{index}]" if isinstance(value, list) else key
            clean, full = self.inside(item_key, item)  # checked before globbing
            if any(ch in clean for ch in "*?["):
                matches = [m for m in sorted(self.root.glob(clean))
                           if not any(_skipped_dir(part) for part in m.relative_to(self.root).parts)
                           and not m.name.endswith(_SKIPPED_SUFFIXES)]
                if not matches:
                    raise self.fail(item_key, f"{clean!r} matches no files or folders")
                for match in matches:
                    rel = match.relative_to(self.root).as_posix()
                    if not match.resolve().is_relative_to(self.root):
                        raise self.fail(item_key, f"{rel!r} resolves outside the task folder (through a symlink)")
                    paths.append(rel)
            elif full.exists():
                paths.append(clean)
            else:
                raise self.fail(item_key, f"{clean!r} not found (expected a folder, a file or a glob of tests)")
        unique = list(dict.fromkeys(paths))
        return tuple(p for p in unique if not any(p.startswith(other + "/") for other in unique))

    def files(self, key: str, patterns: object, *, missing_ok: bool) -> tuple[str, ...]:
        """Files named by paths, folders (all files below) and globs, sorted and deduplicated."""
        found: set[str] = set()
        for index, pattern in enumerate(self.str_list(key, patterns)):
            item_key = f"{key}[{index}]"
            clean, full = self.inside(item_key, pattern)  # checked before globbing
            if any(ch in clean for ch in "*?["):
                matches = sorted(self.root.glob(clean))
                if not matches and not missing_ok:
                    raise self.fail(item_key, f"{clean!r} matches no files")
            elif full.exists():
                matches = [full]
            elif missing_ok:
                continue
            else:
                raise self.fail(item_key, f"{clean!r} not found")
            for match in matches:
                found.update(self.files_below(item_key, match))
        return tuple(sorted(found))

    def files_below(self, key: str, path: Path) -> list[str]:
        """Relative paths of a file or of every file in a folder, skipping caches and bytecode."""
        if path.is_file():
            candidates = [path]
        else:
            candidates = []
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if not _skipped_dir(d))
                candidates += [
                    Path(dirpath) / name for name in sorted(filenames) if not name.endswith(_SKIPPED_SUFFIXES)
                ]
        rels = []
        for candidate in candidates:
            rel = candidate.relative_to(self.root).as_posix()
            if not candidate.resolve().is_relative_to(self.root):
                raise self.fail(key, f"{rel!r} is a symlink to a file outside the task folder")
            rels.append(rel)
        return rels

    def str_list(self, key: str, value: object) -> list[str]:
        """A list of strings; a single string counts as a one-item list; None as empty."""
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            raise self.fail(key, f"expected a list of strings, got {_kind(value)}")
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{key}[{index}]", f"expected a string, got {_kind(item)}")
        return list(value)

    def string(self, key: str, value: object, example: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty string such as {example!r}, got {_kind(value)}")
        return value.strip()

    def requirements(self, key: str, value: object, exclude: Iterable[str]) -> tuple[str, ...]:
        """Requirements from a file path or an inline list; None or "" means none."""
        if value is None or value == "":
            return ()
        if isinstance(value, str):
            text = self.read(key, value, required=True) or ""
        else:
            text = "\n".join(self.str_list(key, value))
        return parse_requirements(text, exclude)

    def setup_script(self, key: str, value: object, *, required: bool) -> str | None:
        if value is None or value == "":
            return None
        return self.read(key, value, required=required)

    def env_vars(self, key: str, value: object) -> dict[str, str]:
        """A mapping of variable names to strings (numbers are converted)."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping of names to strings, got {_kind(value)}")
        out: dict[str, str] = {}
        for name, item in value.items():
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                raise self.fail(f"{key}.{name}", f"expected a string, got {_kind(item)}")
            out[str(name)] = str(item)
        return out

    def folders(self, key: str, value: object) -> tuple[str, ...]:
        """Relative folder paths that need not exist in the task folder (they are made in the workspace)."""
        return tuple(dict.fromkeys(self.inside(f"{key}[{index}]", item)[0]
                                   for index, item in enumerate(self.str_list(key, value))))

    def seconds(self, key: str, value: object) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise self.fail(key, f"expected a positive number of seconds such as 120, got {_kind(value)}")
        return float(value)

    def choice(self, key: str, value: object, allowed: tuple[str, ...]) -> str | None:
        if value is None:
            return None
        if value not in allowed:
            raise self.fail(key, f"expected one of {', '.join(map(repr, allowed))}, got {value!r}")
        return str(value)

    def table(self, key: str, value: object) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {_kind(value)}")
        return value

    def known_keys(self, where: str, table: dict[str, Any], allowed: frozenset[str]) -> None:
        """Unknown keys are errors: a typo must not silently drop a document or a suite."""
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, sorted(allowed), n=1)
                allowed_list = ", ".join(sorted(allowed))
                hint = f"; did you mean {close[0]!r}?" if close else f" (allowed: {allowed_list})"
                raise self.fail(where, f"unknown key {key!r}{hint}")


def _kind(value: object) -> str:
    """A user-facing name for a parsed value's type."""
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _skipped_dir(name: str) -> bool:
    """Caches, VCS and build metadata are never part of a task's files."""
    return name in SKIPPED_DIRS or name.endswith(".egg-info")


def _normalize_name(name: str) -> str:
    """PEP 503 project-name normalization ('Foo_Bar' == 'foo-bar')."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _prd(ctx: _Ctx, key: str, value: object) -> str:
    """The PRD is the one mandatory document: a missing key and a missing file are both errors."""
    if value is None or value == "":
        raise ctx.fail(key, "missing: every task needs a PRD")
    return ctx.document(key, value, required=True) or ""


# --------------------------------------------------------------------------- CodeProjectEval


def _load_codeprojecteval(ctx: _Ctx, config: dict[str, Any]) -> Task:
    """CodeProjectEval: `source_code` is the package folder, and the whole reference."""
    package, reference = _cpe_source(ctx, config.get("source_code"))
    docs = Documents(
        prd=_prd(ctx, "PRD", config.get("PRD")),
        uml_class=ctx.optional_document(config, "UML"),
        architecture_design=ctx.optional_document(config, "architecture_design"),
    )
    # The suite folders come from the `*_tests` keys, never from the scripts (voluptuous's
    # unit_test_script names `unit_test`, but its folder is `unit_tests`).
    return _config_task(ctx, config, "codeprojecteval", docs, _CPE_SUITE_KEYS, package, reference)


def _config_task(
    ctx: _Ctx,
    config: dict[str, Any],
    fmt: Literal["codeprojecteval", "devbench"],
    docs: Documents,
    suite_keys: Mapping[SuiteName, str],
    package: str | None,
    reference: tuple[str, ...],
) -> Task:
    """The parts both config.json formats share: suites, environment, fixtures."""
    suites = {
        kind: suite
        for kind, key in suite_keys.items()
        if config.get(key) and (suite := ctx.suite(key, kind, config[key], required=False))
    }
    return Task(
        id=ctx.root.name,
        root=ctx.root,
        format=fmt,
        docs=docs,
        suites=suites,
        env=_config_env(ctx, config, exclude=(package or "", ctx.root.name)),
        required_files=_fixtures(ctx, config, reference, suites),
        reference=reference,
        package=package,
        settings_profile=dict(PAPER_SETTINGS[fmt]),
    )


def _settings_profile(ctx: _Ctx, table: dict[str, Any]) -> dict[str, Any]:
    """`[settings_profile]`: pipeline settings the task's benchmark reports (as `PAPER_SETTINGS` gives the
    benchmark formats), used where a run leaves them unset; each key a `Settings` field with a valid value,
    so a typo fails at load instead of at the first run."""
    ctx.known_keys("[settings_profile]", table, frozenset(Settings.model_fields))
    for name, value in table.items():
        try:
            Settings(**{name: value})
        except ValidationError as error:
            raise ctx.fail(f"[settings_profile].{name}", f"{error.errors()[0]['msg']}, got {value!r}") from None
    return dict(table)


def _declared_tests(ctx: _Ctx, table: dict[str, Any], suites: dict[SuiteName, TestSuite]
                    ) -> dict[SuiteName, tuple[str, ...]]:
    """`[expected_tests]`: per suite, the node ids it is expected to run (for tasks without a reference)."""
    declared = {}
    for kind, value in table.items():
        if kind not in suites:
            raise ctx.fail("[expected_tests]", f"{kind!r} is not a suite of this task (it has: {', '.join(suites)})")
        declared[kind] = tuple(ctx.str_list(f"[expected_tests].{kind}", value))
    return declared


def _expected_totals(ctx: _Ctx, table: dict[str, Any], suites: dict[SuiteName, TestSuite],
                     declared: dict[SuiteName, tuple[str, ...]]) -> dict[SuiteName, int]:
    """`[expected_total]`: per suite, the benchmark's frozen test count (#Pass is counted out of it)."""
    totals = {}
    for name, value in table.items():
        if name not in suites:
            raise ctx.fail("[expected_total]", f"{name!r} is not a suite of this task (it has: {', '.join(suites)})")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            shown = repr(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else _kind(value)
            raise ctx.fail(f"[expected_total].{name}", f"expected a positive whole number of tests such as 250, "
                                                       f"got {shown}")
        if len(set(declared.get(name, ()))) > value:
            raise ctx.fail(f"[expected_total].{name}", f"[expected_tests].{name} names {len(set(declared[name]))} "
                                                       f"tests, more than the declared total {value}")
        totals[name] = value
    return totals


def _suite_timeouts(ctx: _Ctx, table: dict[str, Any], suites: dict[SuiteName, TestSuite]) -> dict[SuiteName, float]:
    """`[timeouts]`: per suite, the seconds one run of it may take."""
    timeouts = {}
    for name, value in table.items():
        if name not in suites:
            raise ctx.fail("[timeouts]", f"{name!r} is not a suite of this task (it has: {', '.join(suites)})")
        timeouts[name] = ctx.seconds(f"[timeouts].{name}", value)
    return timeouts


def _pytest_options(ctx: _Ctx, value: object) -> dict[str, str]:
    """`[env] pytest_config`: the ini options of the benchmark's pytest.ini, tox.ini, setup.cfg or pyproject.toml."""
    if value is None:
        return {}
    text = ctx.read("[env].pytest_config", value, required=True) or ""
    try:
        return pytest_options(str(value), text)
    except ValueError as error:
        raise ctx.fail("[env].pytest_config", f"{value}: {error}") from None


def _scored_suite(ctx: _Ctx, value: object, suites: dict[SuiteName, TestSuite]) -> SuiteName:
    """`scored`: the suite that is the final evaluation (default `unit`); it must be declared, and a task
    that also declares `unit` must not name another (which of the two would `run` score?)."""
    name = ctx.string("scored", value, "integration")
    if name is None:
        return "unit"
    if name not in suites:
        raise ctx.fail("scored", f"{name!r} is not a suite of this task (it has: {', '.join(suites) or 'none'})")
    if name != "unit" and "unit" in suites:
        raise ctx.fail("scored", f"the task declares a 'unit' suite too: name the tests the final evaluation runs "
                                 f"either 'unit' or {name!r}, not both")
    return name


_DOCUMENT_KEYS = ("PRD", "UML", "UML_class", "UML_sequence", "architecture_design")


def _fixtures(ctx: _Ctx, config: dict, reference: tuple[str, ...], suites: dict) -> tuple[str, ...]:
    """Files the tests may read at run time: everything in the task folder except the
    reference code, the test suites, the config and the requirement documents.

    Benchmark tests read more than their config's `required_files` says: cookiecutter's
    read templates from `tests/`, csvs-to-sqlite's and portalocker's read the project
    README, lice's read `templates/`. The reference is never a fixture: a candidate must
    not inherit the code it failed to generate.
    """
    named = set(ctx.files("required_files", config.get("required_files"), missing_ok=True))
    named |= set(ctx.files("usage_examples", config.get("usage_examples") or None, missing_ok=True))
    documents = set()
    for key in _DOCUMENT_KEYS:
        value = config.get(key)
        for rel in ctx.str_list(key, value if value else None):
            documents.add(safe_relpath(rel))
    test_dirs = {path for suite in suites.values() for path in suite.paths}
    test_dirs |= {"check_tests", "unit_tests", "acceptance_tests"}
    test_dirs |= {safe_relpath(v) for k, v in config.items() if k.endswith("_tests") and isinstance(v, str) and v}
    prefixes = tuple(d.rstrip("/") + "/" for d in test_dirs)
    excluded = set(reference) | documents | {CONFIG_JSON, TASK_TOML}
    everything = set(ctx.files_below("(task folder)", ctx.root)) | named
    return tuple(sorted(f for f in everything if f not in excluded and not f.startswith(prefixes)))


def _cpe_source(ctx: _Ctx, value: object) -> tuple[str | None, tuple[str, ...]]:
    """The package name and its files; a single-module `foo.py` is accepted too."""
    if value is None or value == "":
        return None, ()
    clean, full = ctx.inside("source_code", value)
    name = PurePosixPath(clean).name
    if full.is_file():
        return PurePosixPath(name).stem, tuple(ctx.files_below("source_code", full))
    if full.is_dir():
        return name, tuple(sorted(ctx.files_below("source_code", full)))
    return name, ()  # reference absent: the task is still usable for generation


def _config_env(ctx: _Ctx, config: dict[str, Any], exclude: Iterable[str]) -> EnvSpec:
    """EnvSpec from the keys CodeProjectEval and DevBench share. A setup script that is one plain pip install
    of the project (flask's ``pip install -e .``) is that install step, with the build backend its
    pyproject.toml names added to the requirements (the step builds without isolation or an index); the
    others only install the requirements, which the environment does already."""
    script = ctx.setup_script("setup_shell_script", config.get("setup_shell_script"), required=False)
    requirements = ctx.requirements("dependencies", config.get("dependencies"), exclude)
    install = package_install(script.splitlines()) if script else None
    if install is not None:
        requirements += tuple(r for r in _build_requirements(ctx.root / "pyproject.toml") if r not in requirements)
    return EnvSpec(requirements=requirements, setup_script=script, install=install,
                   env_vars=ctx.env_vars("env_vars", config.get("env_vars")))


def _build_requirements(pyproject: Path) -> tuple[str, ...]:
    """`[build-system] requires` of a pyproject.toml (none when there is no file or no such table)."""
    if not pyproject.is_file():
        return ()
    try:
        table = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise TaskFormatError(pyproject, f"not readable as TOML ({error})") from None
    requires = table.get("build-system", {}).get("requires", [])
    return tuple(str(item) for item in requires) if isinstance(requires, list) else ()


# --------------------------------------------------------------------------- DevBench


def _load_devbench(ctx: _Ctx, config: dict[str, Any]) -> Task:
    """DevBench: doc paths vary per task; the reference is derived from code_file_DAG/src_files."""
    package, reference = _devbench_source(ctx, config)
    docs = Documents(
        prd=_prd(ctx, "PRD", config.get("PRD")),
        uml_class=ctx.optional_document(config, "UML_class"),
        uml_sequence=ctx.optional_document(config, "UML_sequence"),
        architecture_design=ctx.optional_document(config, "architecture_design"),
    )
    return _config_task(ctx, config, "devbench", docs, _DEVBENCH_SUITE_KEYS, package, reference)


def _devbench_source(ctx: _Ctx, config: dict[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    """Package and reference files of a DevBench task.

    The source files are the keys and values of `code_file_DAG` plus `src_files`. A
    file inside a top-level folder pulls in that whole folder: every .py file (the DAG
    leaves out `__init__.py` files, hone's `hone/utils/__init__.py` and the
    `hone/utils/test_utils.py` helper its tests import) and the package data that is
    not under a test folder (chakin's `datasets.csv`, geotext's `data_file/`).
    Root-level files are taken one by one. Data the code reads relative to the working
    directory (lice's root `templates/`) is not reference: DevBench lists it in
    `required_files`. Ambiguity: the package is the single top-level folder (which
    for Hybrid_Images is the namespace folder `src`, imported as `src.hybrid`), else
    the single root module (ArXiv_digest: `query_arxiv`), else None (TextCNN has five
    root modules).
    """
    dag = config.get("code_file_DAG") or {}
    if not isinstance(dag, dict):
        raise ctx.fail("code_file_DAG", f"expected a mapping of file to list of files, got {_kind(dag)}")
    named: list[tuple[str, object]] = []  # (key for error messages, path)
    for source, deps in dag.items():
        key = f"code_file_DAG[{source!r}]"
        named.append((key, source))
        named += [(f"{key}[{i}]", dep) for i, dep in enumerate(ctx.str_list(key, deps))]
    src_files = ctx.str_list("src_files", config.get("src_files"))
    named += [(f"src_files[{i}]", item) for i, item in enumerate(src_files)]

    folders: set[str] = set()
    modules: set[str] = set()
    reference: set[str] = set()
    for key, value in named:
        found = ctx.file(key, value, required=False)
        if found is None:
            continue  # a DAG entry without a file: nothing to compare against
        clean, full = found
        parts = PurePosixPath(clean).parts
        if len(parts) == 1:
            modules.add(clean)
            reference.add(clean)
        elif parts[0] not in folders:
            folders.add(parts[0])
            reference.update(_package_files(ctx, key, parts[0]))
    if len(folders) == 1:
        package: str | None = next(iter(folders))
    elif not folders and len(modules) == 1:
        package = PurePosixPath(next(iter(modules))).stem
    else:
        package = None
    return package, tuple(sorted(reference))


def _package_files(ctx: _Ctx, key: str, top: str) -> list[str]:
    """All .py files under a package folder, plus its data files outside test folders."""
    files = ctx.files_below(key, ctx.root / top)
    return [
        rel
        for rel in files
        if rel.endswith(".py") or not _TEST_DIRS.intersection(PurePosixPath(rel).parts[:-1])
    ]


# --------------------------------------------------------------------------- task.toml


def _load_taskdir(ctx: _Ctx, config: dict[str, Any]) -> Task:
    """Our own format: explicit keys, every declared path must exist, unknown keys are errors."""
    ctx.known_keys("", config, _TOML_TOP_KEYS)
    docs_table = ctx.table("[docs]", config.get("docs"))
    tests_table = ctx.table("[tests]", config.get("tests"))
    env_table = ctx.table("[env]", config.get("env"))
    ctx.known_keys("[docs]", docs_table, _TOML_DOCS_KEYS)
    ctx.known_keys("[env]", env_table, _TOML_ENV_KEYS)
    expected_table = ctx.table("[expected_tests]", config.get("expected_tests"))
    profile_table = ctx.table("[settings_profile]", config.get("settings_profile"))

    task_id = ctx.string("id", config.get("id"), "textstats") or ctx.root.name
    if not _TASK_ID.match(task_id):
        raise ctx.fail("id", f"{task_id!r} is not a valid task id (letters, digits, '.', '_', '-')")
    package = ctx.string("package", config.get("package"), "textstats")
    language = _toml_language(ctx, config.get("language"), env_table)

    prd = _prd(ctx, "[docs].prd", docs_table.get("prd"))
    documents = {
        name: ctx.document(f"[docs].{name}", docs_table[name], required=True)
        for name in ("uml_class", "uml_sequence", "architecture_design")
        if name in docs_table
    }
    suites = _toml_suites(ctx, tests_table)
    declared_tests = _declared_tests(ctx, expected_table, suites)
    reference_root, on_disk = _toml_reference(ctx, config)
    reference, reference_sources = _reference_target(ctx, config.get("reference_target"), reference_root, on_disk)
    starter = _toml_starter(ctx, config.get("starter"))
    _no_overlaps(ctx, suites, {f"{reference_root}/{rel}" if reference_root else rel for rel in on_disk}, starter)
    docs = Documents(prd=prd, **documents, starter=starter)
    plugins = env_table.get("pytest_plugins")
    python = ctx.string("[env].python", env_table.get("python"), "3.11")
    if python is not None and not _PYTHON_VERSION.match(python):
        raise ctx.fail("[env].python", f"expected a version such as '3.11' or '3.11.4', got {python!r}")
    source_root = env_table.get("source_root")
    env = EnvSpec(
        requirements=ctx.requirements(
            "[env].requirements", env_table.get("requirements"), (package or "", task_id)
        ),
        constraints=ctx.requirements("[env].constraints", env_table.get("constraints"), ()),
        python=python,
        setup_script=ctx.setup_script("[env].setup_script", env_table.get("setup_script"), required=True),
        env_vars=ctx.env_vars("[env].env_vars", env_table.get("env_vars")),
        pytest_plugins=None if plugins is None else tuple(ctx.str_list("[env].pytest_plugins", plugins)),
        source_root=None if source_root is None else ctx.inside("[env].source_root", source_root)[0],
        install=ctx.choice("[env].install", env_table.get("install"), INSTALL_STEPS),
        pytest_options=_pytest_options(ctx, env_table.get("pytest_config")),
        workdir=None if env_table.get("workdir") in (None, "", ".") else ctx.inside("[env].workdir",
                                                                                   env_table["workdir"])[0],
        nearest_pins=_toml_flag(ctx, "[env].nearest_pins", env_table.get("nearest_pins")),
        listed_left_out=tuple(ctx.str_list("[env].listed_left_out", env_table.get("listed_left_out"))),
    )
    if env.install == "script" and env.setup_script is None:
        raise ctx.fail("[env].install", "'script' runs the setup script, but [env].setup_script is not set")
    return Task(
        id=task_id,
        root=ctx.root,
        format="taskdir",
        language=language,
        docs=docs,
        suites=suites,
        env=env,
        required_files=ctx.files("required_files", config.get("required_files"), missing_ok=True),
        empty_dirs=ctx.folders("empty_dirs", config.get("empty_dirs")),
        timeout=ctx.seconds("timeout", config.get("timeout")),
        suite_timeouts=_suite_timeouts(ctx, ctx.table("[timeouts]", config.get("timeouts")), suites),
        install_timeout=ctx.seconds("install_timeout", config.get("install_timeout")),
        scored_suite=_scored_suite(ctx, config.get("scored"), suites),
        reference=reference,
        reference_root=reference_root,
        reference_sources=reference_sources,
        package=package,
        settings_profile=_settings_profile(ctx, profile_table),
        expected_tests=declared_tests,
        expected_totals=_expected_totals(ctx, ctx.table("[expected_total]", config.get("expected_total")), suites,
                                         declared_tests),
    )


def _toml_flag(ctx: _Ctx, key: str, value: object) -> bool:
    """A true/false key, false when absent (TOML's booleans only: "yes" or 1 is a typo, not a choice)."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ctx.fail(key, f"expected true or false, got {_kind(value)}")
    return value


def _toml_language(ctx: _Ctx, value: object, env_table: dict[str, Any]) -> str:
    """`language`: python (the default, pytest) or another language the runner tests with its own tool
    (go test, cargo test, CMake and the Catch2 binary, jest, the JUnit console launcher); a task in another
    language refuses the [env] keys of Python's environments rather than ignoring them."""
    if value is None:
        return "python"
    if not isinstance(value, str) or value not in LANGUAGES:
        raise ctx.fail("language", f"expected one of {', '.join(LANGUAGES)}, got {value!r}")
    python_only = sorted(key for key, given in env_table.items() if key in _TOML_PYTHON_ENV_KEYS and given)
    if value != "python" and python_only:
        raise ctx.fail("[env]", f"{', '.join(python_only)}: only for Python tasks (this task's language is {value})")
    return value


def _toml_suites(ctx: _Ctx, table: dict[str, Any]) -> dict[SuiteName, TestSuite]:
    """`[tests]`: every key names a suite (check, unit, acceptance or a name of the user's), its value
    a folder, a file, a glob or a list of them. A key that is no valid name, or that looks like a
    misspelt standard suite the table lacks (`units` without `unit`), is an error."""
    suites: dict[SuiteName, TestSuite] = {}
    for name, value in table.items():
        if not SUITE_NAME.match(name):
            close = difflib.get_close_matches(name.lower(), STANDARD_SUITES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ctx.fail("[tests]", f"{name!r} is not a valid suite name (lowercase letters, digits, '_' and '-', "
                                      f"starting with a letter){hint}")
        if name not in STANDARD_SUITES:
            missing = [standard for standard in STANDARD_SUITES if standard not in table]
            close = difflib.get_close_matches(name, missing, n=1, cutoff=0.75)
            if close:
                raise ctx.fail("[tests]", f"suite {name!r} looks like a misspelt {close[0]!r}, which the task does "
                                          f"not declare; did you mean {close[0]!r}?")
        suites[name] = TestSuite(name=name, paths=ctx.test_paths(f"[tests].{name}", value))
    return suites


def _toml_reference(ctx: _Ctx, config: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """`reference_root` and `reference`: the reference's repository paths, relative to its root
    folder (default: the task folder). With a root and no `reference`, the whole root is the reference."""
    root_value = config.get("reference_root")
    root = "" if root_value in (None, "") else ctx.folder("reference_root", root_value, required=True) or ""
    if root and config.get("reference") is None:
        found = ctx.files("reference_root", root, missing_ok=False)
    else:
        items = ctx.str_list("reference", config.get("reference"))
        for index, item in enumerate(items):
            ctx.inside(f"reference[{index}]", item)  # absolute paths and '..' refused before the root is prefixed
        found = ctx.files("reference", [f"{root}/{item}" if root else item for item in items], missing_ok=False)
    return root, tuple(rel[len(root) + 1:] if root else rel for rel in found)


def _reference_target(ctx: _Ctx, value: object, root: str, on_disk: tuple[str, ...]
                      ) -> tuple[tuple[str, ...], dict[str, str]]:
    """`reference_target`: the repository folder the reference's files belong in (the reference lives at the
    task root, or in `reference_root`, but the candidate keeps it in `src/`). Returns the reference's
    repository paths and where each lives on disk; without the key they are the paths below the root."""
    if value in (None, "", "."):
        return on_disk, {}
    target = ctx.inside("reference_target", value)[0]  # a folder of the candidate: it need not exist here
    return (tuple(f"{target}/{rel}" for rel in on_disk),
            {f"{target}/{rel}": f"{root}/{rel}" if root else rel for rel in on_disk})


def _toml_starter(ctx: _Ctx, value: object) -> dict[str, str]:
    """`starter`: files, folders or globs whose texts (UTF-8) the generators are shown; their repository
    path is their path in the task folder."""
    return {rel: ctx.read("starter", rel, required=True) or "" for rel in ctx.files("starter", value, missing_ok=False)}


def _no_overlaps(ctx: _Ctx, suites: dict[SuiteName, TestSuite], reference_paths: set[str],
                 starter: dict[str, str]) -> None:
    """A file is a test, the reference or a starter file, never two: a test file that is the reference
    would copy it over every candidate, and a starter file is shown to generators."""
    for rel in starter:
        if rel in reference_paths:
            raise ctx.fail("starter", f"{rel!r} is also a reference file; a starter file is shown to generators")
    for name, suite in suites.items():
        for path in suite.paths:
            if path in starter:
                raise ctx.fail("starter", f"{path!r} is also a test file of the {name} suite")
            if path in reference_paths:
                raise ctx.fail(f"[tests].{name}", f"{path!r} is a reference file, not a test file")
