"""Each language's own test runner run directly on a task's files, outside the sandbox (our own code, the
reference), and the number of tests it says passed, read from its own summary: what projectgen's count
is compared with. The files are laid out as projectgen lays them out (candidate, the task's files, every
test switched on), so both run the same tests."""
from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

from projectgen.datasets.task import Task
from projectgen.evaluation.languages.dependencies import JEST_ENTRY, prepare_node_modules
from projectgen.evaluation.languages.plans import PLANS
from projectgen.evaluation.languages.session import suite_test_files
from projectgen.evaluation.languages.toolchains import Toolchain
from projectgen.evaluation.protected_paths import ProtectedPaths
from projectgen.evaluation.workspace import copy_candidate, copy_task_files

TIMEOUT = 600


def lay_out(task: Task, candidate: Mapping[str, str], workspace: Path, suite: str = "unit") -> Path:
    """`candidate` and the task's files in `workspace`, every test on; the folder the tests run in."""
    workspace.mkdir(parents=True, exist_ok=True)
    copy_candidate(workspace, dict(candidate), ProtectedPaths.of(task))
    copy_task_files(task.root, workspace, [*task.required_files, *task.suite_files(suite)])
    plan = PLANS[task.language]
    for rel in suite_test_files(task, suite, plan):
        path = workspace / rel
        path.write_text(plan.enable_all_tests(path.read_text(encoding="utf-8")), encoding="utf-8")
    return workspace / (task.env.source_root or "")


def _run(argv: list[str], cwd: Path, env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False,
                          env={**os.environ, **(env or {})})
    return done.stdout + done.stderr


def go_passed(project: Path, toolchain: Toolchain, scratch: Path) -> int:
    """`go test -v`'s `--- PASS` lines, leaves only (a test with subtests passes through them)."""
    out = _run([toolchain.tool("go"), "test", "-v", "-count=1", "."], project,
               {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local", "GOCACHE": str(scratch / "gocache"),
                "CGO_ENABLED": "0"})
    passed = re.findall(r"^\s*--- PASS: (\S+)", out, re.M)
    return sum(1 for name in passed if not any(other.startswith(name + "/") for other in passed))


def junit_passed(project: Path, toolchain: Toolchain, scratch: Path) -> int:
    """javac, then the JUnit console launcher's own summary: `[ N tests successful ]`."""
    jars = {name.split(".jar")[0]: path for name, path in toolchain.tools.items() if ".jar" in name}
    console, assertj = jars["junit-platform-console-standalone"], jars["assertj-core"]
    sources = sorted(str(p) for p in project.rglob("*.java"))
    classes = scratch / "classes"
    _run([toolchain.tool("javac"), "-nowarn", "-encoding", "UTF-8", "-d", str(classes), "-cp",
          f"{console}:{assertj}", *sources], project)
    out = _run([toolchain.tool("java"), "-jar", console, "--disable-banner", "--details=summary",
                "--disable-ansi-colors", "--class-path", f"{classes}:{assertj}", "--scan-class-path"], project)
    return int(re.search(r"\[\s*(\d+) tests successful\s*\]", out)[1])


def jest_passed(project: Path, test_files: list[Path], toolchain: Toolchain, cache: Path, scratch: Path) -> int:
    """jest's own `--json` summary: numPassedTests."""
    modules = prepare_node_modules(cache, toolchain, project)
    if not (project / "node_modules").exists():
        (project / "node_modules").symlink_to(modules / "node_modules")
    report = scratch / "jest.json"
    _run([toolchain.tool("node"), str(modules / JEST_ENTRY), "--ci", "--runInBand", "--json",
          f"--outputFile={report}", f"--rootDir={project}", "--runTestsByPath", *map(str, test_files)], project,
         {"CI": "true"})
    return int(json.loads(report.read_text(encoding="utf-8"))["numPassedTests"])


def cargo_passed(project: Path, toolchain: Toolchain, scratch: Path) -> int:
    """`cargo test --offline -- --include-ignored`: the sum of its `test result: ... N passed` lines."""
    out = _run([toolchain.tool("cargo"), "test", "--offline", "--", "--include-ignored"], project,
               {"CARGO_TARGET_DIR": str(scratch / "target"), "RUSTC": toolchain.tool("rustc")})
    return sum(int(n) for n in re.findall(r"^test result: \w+\. (\d+) passed", out, re.M))


def catch_passed(project: Path, toolchain: Toolchain, scratch: Path) -> int:
    """CMake and make (all tests on), then the Catch2 binary's own summary of passed test cases."""
    build = scratch / "build"
    _run([toolchain.tool("cmake"), "-S", ".", "-B", str(build), "-DEXERCISM_RUN_ALL_TESTS=1"], project,
         {"CXX": toolchain.tool("g++")})
    _run([toolchain.tool("make"), "-s", "-C", str(build), project.name], project)
    out = _run([str(build / project.name)], project)
    found = re.search(r"All tests passed \(\d+ assertions? in (\d+) test cases?\)", out)
    return int(found[1]) if found else int(re.search(r"test cases:\s*\d+\s*\|\s*(\d+) passed", out)[1])


def own_runner_passed(task: Task, candidate: Mapping[str, str], toolchain: Toolchain, cache: Path,
                      scratch: Path) -> int:
    """How many tests of `task`'s unit suite the language's own runner says `candidate` passes."""
    project = lay_out(task, candidate, scratch / "workspace")
    if task.language == "go":
        return go_passed(project, toolchain, scratch)
    if task.language == "java":
        return junit_passed(project, toolchain, scratch)
    if task.language == "javascript":
        files = [scratch / "workspace" / rel for rel in suite_test_files(task, "unit", PLANS[task.language])]
        return jest_passed(project, files, toolchain, cache, scratch)
    if task.language == "rust":
        return cargo_passed(project, toolchain, scratch)
    if task.language == "cpp":
        return catch_passed(project, toolchain, scratch)
    raise ValueError(f"no own runner for {task.language}")
