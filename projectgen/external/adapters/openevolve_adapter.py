"""Adapter: OpenEvolve (the open AlphaEvolve) evolves the whole repository, packed into one file, against the
task's check tests.

Run inside the sandbox with the system's own Python as ``python openevolve_adapter.py --docs DOCS --out OUT``
(the adapter contract in docs/external-systems.md). OpenEvolve evolves ONE program file, so the repository is
packed into one file (`pack`: every file after a ``# ==== file: PATH ====`` line, between OpenEvolve's EVOLVE-
BLOCK markers), evolved for PROJECTGEN_MAX_ITERATIONS iterations, and the best program is unpacked into OUT
(`unpack`). While it evolves, a program's fitness is the share of the task's check tests (DOCS/check_tests)
that pass on its unpacked repository: the unit tests that score the result are never seen. It imports nothing
of projectgen, only `contract` beside it, on purpose: it runs in OpenEvolve's environment, where projectgen is
not installed, and the evaluator file it writes imports `unpack` from this file by path; it imports OpenEvolve
only inside `run_openevolve` (its tests import this file without the package). Its file name is not the
package's, or ``python openevolve.py`` would import itself as ``openevolve``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from contract import (AdapterError, Settings, copy_into, documents_text, read_documents, read_settings, relative_path,
                      run_adapter)

CHECK_TESTS = "check_tests"
MARKER = "# ==== file: {path} ===="
MARKER_LINE = re.compile(r"^# ==== file: (?P<path>\S(?:.*\S)?) ====$")
BLOCK_START = "# EVOLVE-BLOCK-START"
BLOCK_END = "# EVOLVE-BLOCK-END"
MAX_PACKED_CHARS = 400_000  # OpenEvolve's default (10,000) is one small program, not a repository
PLACEHOLDER = {"README.md": "Nothing is written yet: write the repository the documents specify.\n"}
EVALUATION_TIMEOUT_S = 300  # OpenEvolve's default evaluator timeout
# OpenEvolve gives up on a call after 60 s and asks again: with a slow model behind the bridge (the tiny
# one's first call took 62 s) the same call is then made, and paid, twice
LLM_TIMEOUT_S = 600

PACK_FORMAT = """\

# The program is a whole repository, packed into one file

The program you rewrite is a software repository packed into one file: each file of the repository
starts with a line `# ==== file: PATH ====` (PATH relative to the repository's root, e.g.
`package/module.py`), followed by the file's full content. Keep that format exactly, keep the
`# EVOLVE-BLOCK-START` and `# EVOLVE-BLOCK-END` lines around all files, and write every file the
documents below specify. The FITNESS SCORE is the share of the project's check tests (pytest, run from
the repository's root) that pass.

# The project the repository must implement

{documents}
"""

EVALUATOR = '''\
"""OpenEvolve evaluator written by projectgen's openevolve adapter: the share of the check tests that pass."""
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ADAPTER = {adapter!r}
CHECK_TESTS = {check_tests!r}
TIMEOUT_S = {timeout}


def _adapter():
    folder = str(Path(ADAPTER).parent)  # the adapter imports `contract` from its folder
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location("projectgen_openevolve_adapter", ADAPTER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass looks its module up there while the file runs
    spec.loader.exec_module(module)
    return module


def evaluate(program_path):
    adapter = _adapter()
    with tempfile.TemporaryDirectory(prefix="openevolve-eval-") as folder:
        root = Path(folder) / "repo"
        try:
            files = adapter.unpack(Path(program_path).read_text(encoding="utf-8"))
            adapter.write_files(files, root)
        except ValueError as error:
            return {{"combined_score": 0.0, "passed": 0, "tests": 0, "error": str(error)}}
        shutil.copytree(CHECK_TESTS, root / "check_tests", dirs_exist_ok=True)
        report = Path(folder) / "report.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", str(report),
                   "check_tests"]
        try:
            subprocess.run(command, cwd=root, capture_output=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return {{"combined_score": 0.0, "passed": 0, "tests": 0, "error": "the check tests timed out"}}
        return adapter.junit_score(report.read_text() if report.exists() else "")
'''


# --------------------------------------------------------------------------- the repository <-> one file


def checked_path(path: str) -> str:
    """`path` as a relative POSIX path inside the repository; ValueError (the contract's RefusedPathError) if it
    would leave it."""
    return relative_path(path.strip()).as_posix()


def pack(files: Mapping[str, str]) -> str:
    """One file holding every file of the repository, sorted by path. A file whose content lacks a final
    newline gets one (so the next marker starts a line); a content line that looks like a marker cannot be
    packed (it would split the file on unpacking) and raises ValueError."""
    sections = []
    for path in sorted(files):
        content = files[path]
        for line in content.splitlines():
            if MARKER_LINE.match(line) or line.strip() in (BLOCK_START, BLOCK_END):
                raise ValueError(f"{path} has a line that reads as a pack marker: {line!r}")
        if content and not content.endswith("\n"):
            content += "\n"
        sections.append(MARKER.format(path=checked_path(path)) + "\n" + content)
    return f"{BLOCK_START}\n{''.join(sections)}{BLOCK_END}\n"


def unpack(packed: str) -> dict[str, str]:
    """The files of a packed repository. Text before the first marker and the EVOLVE-BLOCK lines are not
    part of any file; a path given twice keeps its last content (a model may rewrite a file further down);
    a path that would leave the repository raises ValueError."""
    files: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in packed.splitlines(keepends=True):
        match = MARKER_LINE.match(line.rstrip("\r\n"))
        if match:
            if current is not None:
                files[current] = "".join(lines)
            current, lines = checked_path(match.group("path")), []
        elif current is not None and line.strip() not in (BLOCK_START, BLOCK_END):
            lines.append(line)
    if current is not None:
        files[current] = "".join(lines)
    return files


def write_files(files: Mapping[str, str], root: Path) -> list[str]:
    """Write `files` under `root` (`copy_into`: a path leaving it refused); the paths written."""
    return [copy_into(root, path.strip(), content.encode("utf-8")) for path, content in files.items()]


def junit_score(report: str) -> dict[str, Any]:
    """OpenEvolve's metrics from a pytest JUnit XML report: combined_score is the share of tests passed
    (0 when no test ran: an empty or unparsable report is no evidence of passing)."""
    try:
        root = ElementTree.fromstring(report)
    except ElementTree.ParseError:
        return {"combined_score": 0.0, "passed": 0, "tests": 0, "error": "no test report"}
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = sum(int(suite.get("tests", 0)) for suite in suites)
    failed = sum(int(suite.get(key, 0)) for suite in suites for key in ("failures", "errors", "skipped"))
    passed = max(tests - failed, 0)
    return {"combined_score": passed / tests if tests else 0.0, "passed": passed, "tests": tests}


# --------------------------------------------------------------------------- OpenEvolve's configuration


def system_message(default_message: str, documents: Sequence[tuple[str, str]]) -> str:
    """OpenEvolve's own system message, then the packing format and the task's documents."""
    return default_message.strip() + "\n" + PACK_FORMAT.format(documents=documents_text(documents))


def openevolve_config(settings: Settings, message: str, work: Path) -> dict[str, Any]:
    """OpenEvolve's config (as its YAML would hold it). Departures from its defaults, each needed here:
    full rewrites (there is no first program to diff against: the first one is a placeholder), a packed
    repository's length, iterations from the contract, one evaluation at a time (the sandbox has one
    core), the bridge as the only model with the paper's sampling and a call timeout long enough not to
    ask a slow call twice, logs and output outside OUT."""
    if settings.max_iterations < 1:
        raise AdapterError("PROJECTGEN_MAX_ITERATIONS must be at least 1 for openevolve "
                           "(OpenEvolve reads 0 as its default, 10,000)")
    return {
        "max_iterations": settings.max_iterations,
        "checkpoint_interval": settings.max_iterations,
        "log_dir": str(work / "logs"),
        "language": "python",
        "diff_based_evolution": False,
        "max_code_length": MAX_PACKED_CHARS,
        "llm": {
            "api_base": settings.base_url,
            "api_key": settings.api_key,
            "models": [{"name": settings.model, "weight": 1.0}],
            "timeout": LLM_TIMEOUT_S,
            **{key: value for key, value in (("temperature", settings.temperature), ("top_p", settings.top_p),
                                             ("max_tokens", settings.max_tokens)) if value is not None},
        },
        "prompt": {"system_message": message},
        "evaluator": {"timeout": EVALUATION_TIMEOUT_S, "parallel_evaluations": 1, "cascade_evaluation": False},
    }


def evaluator_source(adapter: Path, check_tests: Path) -> str:
    return EVALUATOR.format(adapter=str(adapter), check_tests=str(check_tests), timeout=EVALUATION_TIMEOUT_S)


def run_openevolve(config: Mapping[str, Any], work: Path) -> tuple[str, dict[str, Any]]:
    """Evolve the placeholder program with `config` and the evaluator in `work`; the best program's code
    and its metrics."""
    import yaml
    from openevolve.api import run_evolution
    from openevolve.config import load_config

    config_path = work / "config.yaml"
    config_path.write_text(yaml.safe_dump(dict(config), sort_keys=False))
    program = work / "initial_program.py"
    program.write_text(pack(PLACEHOLDER))
    result = run_evolution(initial_program=str(program), evaluator=str(work / "evaluator.py"),
                           config=load_config(str(config_path)), output_dir=str(work / "openevolve_output"),
                           cleanup=False)
    return result.best_code, dict(result.metrics)


def default_system_message() -> str:
    """OpenEvolve's shipped default system message (prompts/defaults/system_message.txt)."""
    import openevolve

    return (Path(openevolve.__file__).parent / "prompts" / "defaults" / "system_message.txt").read_text()


def run(args: argparse.Namespace) -> int:
    settings = read_settings(os.environ)
    documents = read_documents(args.docs)
    check_tests = args.docs / CHECK_TESTS
    if not check_tests.is_dir():
        raise AdapterError(f"openevolve scores its programs on the check tests: no folder {check_tests}")
    work = Path(os.environ.get("TMPDIR", "/tmp")) / "openevolve"
    work.mkdir(parents=True, exist_ok=True)
    config = openevolve_config(settings, system_message(default_system_message(), documents), work)
    (work / "evaluator.py").write_text(evaluator_source(Path(__file__).resolve(), check_tests.resolve()))
    best_code, metrics = run_openevolve(config, work)
    files = unpack(best_code)
    if not files or files == PLACEHOLDER:
        print(f"openevolve adapter: no program beat the placeholder ({json.dumps(metrics)})", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    written = write_files(files, args.out)
    print(json.dumps({"best_metrics": metrics, "files": len(written)}), file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_adapter("openevolve", __doc__.splitlines()[0], argv, run)


if __name__ == "__main__":
    sys.exit(main())
