"""Which of a candidate's files a test workspace refuses: the tests, and what would change how they run.

Generated code must never replace or add a test, yet the code under test may live beside
its tests (Exercism puts `pkg/pkg_test.py` beside `pkg/pkg.py`), so dropping every candidate
file under a test folder (what the runner did) loses the code and fails the tests on an
ImportError. A candidate file is refused when it is

1. a file a suite of the task holds (`Task.suite_files` of any suite): the task's copy is used;
2. a `conftest.py`, anywhere: pytest would load it as a plugin;
3. a Python test module by pytest's default patterns (`test_*.py`, `*_test.py`) below a suite
   folder or beside a suite file;
4. below a dedicated test folder (a suite folder where no reference or starter file lives), any
   file that is not a Python module, and `__init__.py`: fixtures the tests may read, and the
   package marker that changes how pytest imports them.

Every other file is kept, so a candidate's `pkg/pkg.py` reaches the tests next to `pkg/pkg_test.py`.
"""
from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass

from projectgen.datasets.task import Task

TEST_MODULE_PATTERNS = ("test_*.py", "*_test.py")  # pytest's default `python_files`; our pytest.ini keeps them


@dataclass(frozen=True)
class ProtectedPaths:
    """The test paths of one task, and the rule that refuses a candidate's file there."""

    task_files: frozenset[str]
    test_areas: tuple[str, ...]  # suite folders and the folders of suite files ('' = the whole repository)
    dedicated: tuple[str, ...]   # suite folders that hold no implementation

    @classmethod
    def of(cls, task: Task) -> ProtectedPaths:
        implementation = set(task.reference) | set(task.docs.starter)
        task_files: set[str] = set()
        areas: set[str] = set()
        dedicated: set[str] = set()
        for name, suite in task.suites.items():
            task_files.update(task.suite_files(name))
            for path in suite.paths:
                if (task.root / path).is_dir():
                    areas.add(path)
                    if not any(_below(rel, path) for rel in implementation):
                        dedicated.add(path)
                else:
                    areas.add(posixpath.dirname(path))
        return cls(frozenset(task_files), tuple(sorted(areas)), tuple(sorted(dedicated)))

    def refuses(self, rel: str) -> bool:
        """Whether the candidate's file at repository path `rel` stays out of the workspace."""
        name = posixpath.basename(rel)
        if rel in self.task_files or name == "conftest.py":
            return True
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in TEST_MODULE_PATTERNS) \
                and any(_below(rel, area) for area in self.test_areas):
            return True
        return (not name.endswith(".py") or name == "__init__.py") and any(_below(rel, d) for d in self.dedicated)


def _below(rel: str, folder: str) -> bool:
    """Whether `rel` lies inside `folder` ('' holds everything)."""
    return not folder or rel.startswith(folder + "/")


def suite_mounts(task: Task, suite: str, files: list[str]) -> list[str]:
    """What the sandbox mounts read-only for a run of `suite`, held back from the steps before the tests
    (an install): each of the suite's dedicated folders (`ProtectedPaths.dedicated`) as a whole, so that
    nothing in it can be written, renamed or removed, and each of `files` outside those alone (a suite
    beside its implementation, as Exercism's: the implementation's folder stays the candidate's)."""
    dedicated = set(ProtectedPaths.of(task).dedicated)
    folders = [path.strip("/") for path in task.suite(suite).paths
               if path.strip("/") not in ("", ".") and path in dedicated]
    alone = [rel for rel in files if not any(_below(rel, folder) for folder in folders)]
    return list(dict.fromkeys([*folders, *alone]))
