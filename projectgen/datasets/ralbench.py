"""RAL-Bench in its published layout (github.com/Wwstarry/RAL-Bench), on which LiveCoder's Table 1 is computed.

The benchmark is one repository, not a folder per task: `tasks/<Name>/<name>.yaml` describes a task
(its requirement `description`, the `files` it must have, `difficulty`, `package.name`, the test file
of each `test_suite` category and, in `reference_repository`, the reference under `repositories/`),
`tests/<Name>/*_test.py` are its black-box system tests, `tests/_generic/` the security and
maintainability probes every task shares. So a RAL-Bench task's root is the benchmark's root, and
each suite is one test file at its path there (`tests/Humanize/functional_test.py`): the workspace
holds the candidate at its root and each test file at the same path.

Suites: `functional` (what the task is scored by, and, under the `paper` profile its tasks carry, what
picks LiveCoder's best attempt: RAL-Bench publishes no visible tests, so a plain run needs no
`--selection`), `robustness`, `performance` and `resource`. The tests find the candidate through
`RACB_REPO_ROOT` (the workspace, `{repo}`) and import `RACB_PACKAGE_NAME`, as RAL-Bench's runner sets them; many (most performance and resource tests) look
only in `generation/<Name>` beside `tests/` (`<NAME>_TARGET=generated`), so the workspace holds a second
copy of the candidate there (`Task.candidate_copies`, the yaml's `generated_repository`). Security and
maintainability are not run as tests here: they are static measures of the files
(`projectgen.evaluation.nonfunctional`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from projectgen.datasets.compat import apply_compat
from projectgen.datasets.task import PAPER_SETTINGS, Documents, EnvSpec, Task, TestSuite
from projectgen.errors import ProjectGenError, TaskFormatError
from projectgen.repository import SKIPPED_DIRS, safe_relpath

TASKS_DIR = "tasks"
TESTS_DIR = "tests"
REPOSITORIES_DIR = "repositories"
# RAL-Bench's test_suite categories that run as suites here; security and maintainability are static measures.
RUN_SUITES = ("functional", "robustness", "performance", "resource")
SCORED_SUITE = "functional"
# What RAL-Bench's own runner environment gives every test: its resource tests measure themselves with psutil.
# The references' own dependencies are not published per task (compat.toml adds known ones).
HARNESS_REQUIREMENTS = ("psutil",)


def is_ralbench(root: Path) -> bool:
    """Whether `root` is a RAL-Bench checkout: `tasks/<Name>/*.yaml` beside a `tests/` folder."""
    tasks = root / TASKS_DIR
    return tasks.is_dir() and (root / TESTS_DIR).is_dir() and any(tasks.glob("*/*.yaml"))


def ralbench_root_of(folder: Path) -> Path | None:
    """The benchmark root when `folder` is one task's folder (`<root>/tasks/<Name>`) or its yaml, else None."""
    task_dir = folder.parent if folder.is_file() else folder
    root = task_dir.parent.parent
    if task_dir.parent.name == TASKS_DIR and is_ralbench(root) and any(task_dir.glob("*.yaml")):
        return root
    return None


def task_yamls(root: Path) -> list[Path]:
    """Every task description of the benchmark, by folder name."""
    return sorted((root / TASKS_DIR).glob("*/*.yaml"), key=lambda p: (p.parent.name, p.name))


def load_ralbench_task(root: Path, config: Path) -> Task:
    """One task from its yaml; every problem is one TaskFormatError naming the yaml and the key."""
    import yaml

    root = root.resolve()
    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise TaskFormatError(config, f"unreadable task description: {str(error).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise TaskFormatError(config, "expected a mapping at the top level")
    name = config.parent.name
    task_id = _text(config, data, "task_id", required=False) or name.lower()
    description = _text(config, data, "description", required=True)
    package = (data.get("package") or {}).get("name") if isinstance(data.get("package"), dict) else None
    suites = _suites(root, config, data.get("test_suite"))
    reference_root, reference = _reference(root, config, data.get("reference_repository"))
    timeouts = data.get("suite_timeouts_s") if isinstance(data.get("suite_timeouts_s"), dict) else {}
    env_vars = {"RACB_REPO_ROOT": "{repo}", f"{name.upper()}_TARGET": "generated"}
    if package:
        env_vars["RACB_PACKAGE_NAME"] = str(package)
    difficulty = data.get("difficulty")
    generated = data.get("generated_repository")
    copies = (_inside(root, config, "generated_repository", generated),) if generated else ()
    return apply_compat(Task(
        id=task_id, root=root, folder=config.parent.resolve(), format="ralbench",
        docs=Documents(prd=_prd(description, data.get("files"))), suites=suites,
        env=EnvSpec(requirements=HARNESS_REQUIREMENTS, env_vars=env_vars), scored_suite=SCORED_SUITE,
        timeout=_seconds(timeouts.get("default")),
        suite_timeouts={s: t for s in suites if (t := _seconds(timeouts.get(s))) is not None},
        reference=reference, reference_root=reference_root, package=str(package) if package else None,
        candidate_copies=copies, difficulty=str(difficulty).lower() if difficulty else None,
        settings_profile=dict(PAPER_SETTINGS["ralbench"]),
        published_tests=_functional_total(data.get("baseline_metrics"))))


def load_ralbench(root: Path) -> tuple[list[Task], list[TaskFormatError]]:
    """Every task of the benchmark that loads, and one error per task that does not."""
    tasks: dict[str, Task] = {}
    errors: list[TaskFormatError] = []
    for config in task_yamls(root):
        try:
            task = load_ralbench_task(root, config)
        except TaskFormatError as error:
            errors.append(error)
            continue
        if task.id in tasks:
            errors.append(TaskFormatError(config, f"duplicate task id {task.id!r}"))
            continue
        tasks[task.id] = task
    return sorted(tasks.values(), key=lambda t: t.id), errors


def _text(config: Path, data: dict[str, Any], key: str, *, required: bool) -> str | None:
    value = data.get(key)
    if value is None or value == "":
        if required:
            raise TaskFormatError(config, f"{key}: missing")
        return None
    if not isinstance(value, str):
        raise TaskFormatError(config, f"{key}: expected text, got {type(value).__name__}")
    return value


def _prd(description: str, files: object) -> str:
    """The requirement as RAL-Bench's own prompt gives it: the description, then the files to write."""
    listed = [f"- {f['path']}" + (f": {f['description']}" if f.get("description") else "")
              for f in files or [] if isinstance(f, dict) and f.get("path")] if isinstance(files, list) else []
    return description.strip() + ("\n\n## Required files\n" + "\n".join(listed) if listed else "") + "\n"


def _inside(root: Path, config: Path, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TaskFormatError(config, f"{key}: expected a path")
    try:
        clean = safe_relpath(value)
    except ProjectGenError:
        raise TaskFormatError(config, f"{key}: path {value!r} escapes the benchmark folder") from None
    if not (root / clean).resolve().is_relative_to(root):
        raise TaskFormatError(config, f"{key}: path {value!r} resolves outside the benchmark folder")
    return clean


def _suites(root: Path, config: Path, table: object) -> dict[str, TestSuite]:
    """The run suites the yaml names; the functional one must exist, a missing other one is left out (RAL-Bench
    scores it 0; here its dimension is reported as not measured)."""
    if not isinstance(table, dict):
        raise TaskFormatError(config, "test_suite: expected a mapping of category to test file")
    suites = {}
    for name in RUN_SUITES:
        value = table.get(name)
        if value is None:
            continue
        # one file, or a list of them (Dateutil's functional entry, which RAL-Bench's own runner cannot find)
        items = value if isinstance(value, list) else [value]
        paths = [_inside(root, config, f"test_suite.{name}", item) for item in items]
        if paths and all((root / path).is_file() for path in paths):
            suites[name] = TestSuite(name=name, paths=tuple(paths))
    if SCORED_SUITE not in suites:
        raise TaskFormatError(config, "test_suite.functional: no functional test file found")
    return suites


def _reference(root: Path, config: Path, value: object) -> tuple[str, tuple[str, ...]]:
    """The reference's folder under `repositories/` (matched without regard to case, as the published yamls
    name `humanize` for the folder `Humanize`) and its files; none when it is absent (an unchecked-out
    submodule): the task still generates and scores, without a reference to compare against."""
    if value is None or value == "":
        return "", ()
    clean = _inside(root, config, "reference_repository", value)
    folder = root / clean
    if not folder.is_dir() and folder.parent.is_dir():
        same_name = [c for c in sorted(folder.parent.iterdir()) if c.is_dir() and c.name.lower() == folder.name.lower()]
        folder = same_name[0] if same_name else folder
    if not folder.is_dir():
        return "", ()
    rel = folder.relative_to(root).as_posix()
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                   if p.is_file() and not SKIPPED_DIRS.intersection(p.relative_to(folder).parts)
                   and not p.name.endswith((".pyc", ".pyo")))
    return (rel, tuple(files)) if files else ("", ())


def _functional_total(baseline: object) -> int | None:
    """The functional tests the reference passed when the benchmark was built (`baseline_metrics.functional.
    functional_tests_total`): the task's published #Tests."""
    functional = baseline.get("functional") if isinstance(baseline, dict) else None
    total = functional.get("functional_tests_total") if isinstance(functional, dict) else None
    return total if isinstance(total, int) and total > 0 else None


def _seconds(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and value > 0 else None
