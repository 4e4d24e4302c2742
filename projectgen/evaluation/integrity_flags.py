"""Integrity flags: constructs in a candidate that are known moves for gaming a test run, found statically.

A flag never changes a score; it tells a researcher where to look (file, line, kind, a short excerpt).
The sandbox is what protects the score (docs/sandbox.md); these flags make an attempt visible even when
it failed. Python files are read with `ast` and never imported or run; other languages' build scripts are
found by file name (and a line or two of their text). The input is the adversary's: nothing here may raise
on it or take long: a Python file over `MAX_FILE_BYTES`, past the candidate's `MAX_PYTHON_BYTES` of parsed
Python (a dense megabyte costs `ast` seconds), or one `ast` cannot parse gets one `unscanned`
flag; binary files are skipped; a file reports at most `MAX_FLAGS_PER_FILE` flags, a candidate `MAX_FLAGS`.

Rules that keep a reference quiet (a column full of flags tells nothing): the candidate's own test modules
(`test_*.py`, `*_test.py`, Python files below a `test`/`tests` folder) are not scanned, since the runner drops
them or never collects them (a `conftest.py` is still flagged: it is what a candidate ships to hook pytest);
`sys.exit` in command-line code is not flagged (in `__main__.py`, under ``if __name__ == "__main__":``, in a
function named `main`, or in any function of a module that imports a command-line or prompt library:
argparse, optparse, getopt, click, typer, fire, docopt, rich.prompt), while a `sys.exit` at a module's top
level (it would run on import) and `os._exit` anywhere always are.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import posixpath
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel

from projectgen.datasets.task import Task
from projectgen.evaluation.protected_paths import ProtectedPaths
from projectgen.repository import SKIPPED_DIRS

FlagKind = Literal[
    "frame-introspection",  # sys._getframe, inspect.currentframe/stack, gc.get_objects/get_referrers, f_back...
    "tracing",              # sys.settrace/setprofile, threading.settrace/setprofile, sys.monitoring
    "ctypes",               # ctypes imported (raw memory: rewrite the interpreter's objects)
    "pytest-internals",     # pytest, _pytest or pluggy imported by library code
    "process-exit",         # os._exit, or sys.exit outside a command-line entry point
    "always-equal",         # __eq__ that returns True (or __ne__ False) unconditionally
    "test-path-write",      # a write, rename or removal of a path literal naming a test folder or file
    "build-script",         # setup.py, build.rs, CMake commands, package.json lifecycle scripts, cgo, Gradle/Maven exec
    "conftest",             # a conftest.py shipped by the candidate
    "pytest-plugin",        # a pytest11 entry point shipped by the candidate
    "startup-hook",         # sitecustomize.py, usercustomize.py, a .pth file
    "unscanned",            # a Python file too large, past the scan's budget, or not parsable: not looked into
]
FLAG_KINDS: tuple[str, ...] = get_args(FlagKind)

MAX_FILE_BYTES = 1_000_000     # the largest reference module, zxcvbn's frequency lists, is 0.8 MB
MAX_PYTHON_BYTES = 2_000_000   # Python parsed per candidate (the largest reference's, zxcvbn's: 0.85 MB)
MAX_FLAGS_PER_FILE = 20
MAX_FLAGS = 200
EXCERPT_CHARS = 120
MAX_SCANNED = 20_000  # files whose flags a runner keeps (`ScannedFiles`)


class IntegrityFlag(BaseModel):
    """One construct worth a look: where it is and what kind of gaming move it resembles."""

    kind: FlagKind
    path: str
    line: int | None = None
    excerpt: str = ""

    def where(self) -> str:
        """``path:line`` (the path alone for a flag on a whole file)."""
        return f"{self.path}:{self.line}" if self.line else self.path


def flag_counts(flags: Collection[IntegrityFlag]) -> dict[str, int]:
    """How many flags of each kind, in `FLAG_KINDS` order (kinds without a flag left out)."""
    return {kind: n for kind in FLAG_KINDS if (n := sum(1 for f in flags if f.kind == kind))}


def unique_flags(flags: Iterable[IntegrityFlag]) -> list[IntegrityFlag]:
    """Each flag once, by kind and place (the runs of one unit meet the same construct again), in order."""
    seen: dict[tuple[str, str, int | None], IntegrityFlag] = {}
    for flag in flags:
        seen.setdefault((flag.kind, flag.path, flag.line), flag)
    return list(seen.values())


def describe_counts(flags: Collection[IntegrityFlag]) -> str:
    """``ctypes 1, process-exit 2``: a short cell for a table ("" without flags)."""
    return ", ".join(f"{kind} {n}" for kind, n in flag_counts(flags).items())


# ----------------------------------------------------------------------------- the candidate's files


class ScannedFiles:
    """Each file's flags, kept by path and content for one runner: it meets the same files again (a candidate's
    suites one after another, a repair that changes a few files, a reference at every run), and parsing them
    cost 47 ms an evaluation on imapclient's. A file is known by a SHA-256 of its bytes; at most `MAX_SCANNED`
    (the oldest go first)."""

    def __init__(self) -> None:
        self._flags: dict[tuple[str, bytes], tuple[IntegrityFlag, ...]] = {}

    def scan(self, rel: str, data: bytes, parse_budget: int) -> list[IntegrityFlag]:
        """`scan_file`'s flags of `data` at `rel` (copies: a report's flags are its own)."""
        if len(data) > parse_budget:  # what is left of the candidate's budget decides, not the file: not kept
            return scan_file(rel, data, parse_budget)
        key = (rel, hashlib.sha256(data).digest())
        known = self._flags.get(key)
        if known is None:
            known = tuple(scan_file(rel, data, parse_budget))
            while len(self._flags) >= MAX_SCANNED:
                self._flags.pop(next(iter(self._flags)))
            self._flags[key] = known
        return [flag.model_copy() for flag in known]


def scan_candidate(candidate: Path | Mapping[str, str] | Mapping[str, Path],
                   skip: Collection[str] = (), scanned: ScannedFiles | None = None) -> list[IntegrityFlag]:
    """Every flag of `candidate` (a folder, or repository path -> text or file on disk, as the runner takes
    it), in path order, the first `MAX_FLAGS`; `skip`: repository paths that are not the candidate's (the
    task's own files, whose copy the workspace uses); `scanned`: the files scanned before (a runner's)."""
    flags: list[IntegrityFlag] = []
    budget = MAX_PYTHON_BYTES
    for rel, data in _files(candidate):
        if rel in skip or data is None:
            continue
        flags += scanned.scan(rel, data, budget) if scanned is not None else scan_file(rel, data, parse_budget=budget)
        if rel.endswith(".py") and len(data) <= min(budget, MAX_FILE_BYTES):
            budget -= len(data)
        if len(flags) >= MAX_FLAGS:
            return flags[:MAX_FLAGS]
    return flags


def _files(candidate: Path | Mapping[str, str] | Mapping[str, Path]) -> Iterator[tuple[str, bytes | None]]:
    """(repository path, its first bytes up to one past the cap; None when unreadable), sorted by path."""
    if isinstance(candidate, Mapping):
        for rel in sorted(candidate):
            content = candidate[rel]
            if isinstance(content, Path):
                yield rel.replace("\\", "/"), _read_capped(content)
            else:
                yield rel.replace("\\", "/"), str(content)[: MAX_FILE_BYTES + 1].encode("utf-8", "surrogatepass")
        return
    root = Path(candidate)
    if not root.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(root):  # links are never followed, as the runner copies
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if not full.is_symlink():
                yield full.relative_to(root).as_posix(), _read_capped(full)


def _read_capped(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None


def candidate_flags(task: Task, candidate: Path | Mapping[str, str] | Mapping[str, Path],
                    scanned: ScannedFiles | None = None) -> list[IntegrityFlag]:
    """The flags of `candidate` as a run of `task` meets it: the task's own files (its suites' files, whose
    copy the workspace uses) are not the candidate's and are not scanned. `scanned`: a runner's files
    scanned before."""
    return scan_candidate(candidate, ProtectedPaths.of(task).task_files, scanned)


def is_test_module(rel: str) -> bool:
    """A test file of the candidate's own (pytest's default names, or a Python file below a test folder)."""
    name = posixpath.basename(rel)
    folders = rel.split("/")[:-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")
                                     or any(part in ("test", "tests") for part in folders))


def scan_file(rel: str, data: bytes | None, parse_budget: int = MAX_PYTHON_BYTES) -> list[IntegrityFlag]:
    """The flags of one file (at most `MAX_FLAGS_PER_FILE`), from its name and, for the kinds that need it,
    its text; a Python file larger than `parse_budget` (what is left of the candidate's) is not parsed."""
    if data is None:
        return []
    name = posixpath.basename(rel)
    flags: list[IntegrityFlag] = []
    if name == "conftest.py":
        flags.append(IntegrityFlag(kind="conftest", path=rel, excerpt="a conftest.py is a pytest plugin"))
    elif name in ("sitecustomize.py", "usercustomize.py") or name.endswith(".pth"):
        flags.append(IntegrityFlag(kind="startup-hook", path=rel, excerpt="Python runs it at interpreter start"))
    elif name in ("setup.py", "build.rs"):
        flags.append(IntegrityFlag(kind="build-script", path=rel, excerpt=f"{name} runs at build or install time"))
    if name.endswith(".py") and name != "conftest.py" and not is_test_module(rel):
        flags += _python_flags(rel, data, parse_budget)
        if name == "setup.py":
            flags += _line_flags(rel, data.decode("utf-8", "replace"), PYTEST11, "pytest-plugin")
    elif len(data) <= MAX_FILE_BYTES and b"\0" not in data[:8192]:
        flags += _text_flags(rel, name, data.decode("utf-8", "replace"))
    return flags[:MAX_FLAGS_PER_FILE]


# ----------------------------------------------------------------------------- other languages, by name

LIFECYCLE_SCRIPTS = ("preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare", "prepublish",
                     "pretest", "posttest")
CMAKE_COMMANDS = re.compile(r"\b(execute_process|add_custom_command|add_custom_target)\s*\(", re.IGNORECASE)
GRADLE_EXEC = re.compile(r"\b(exec|javaexec|commandLine|ProcessBuilder)\b|\.execute\(\)")
MAVEN_EXEC = re.compile(r"<artifactId>\s*(exec-maven-plugin|maven-antrun-plugin|gmaven[\w-]*|groovy-maven-plugin)")
CGO_IMPORT = re.compile(r'^[ \t]*import[ \t]+"C"|^[ \t]*import[ \t]*\([ \t]*"C"', re.MULTILINE)
PYTEST11 = re.compile(r"pytest11")
BACKEND_PATH = re.compile(r"^[ \t]*backend-path[ \t]*=", re.MULTILINE)


def _text_flags(rel: str, name: str, text: str) -> list[IntegrityFlag]:
    """Build scripts and plugin entry points of a non-Python file (or setup.py's pytest11), by name and text."""
    if name == "package.json":
        return _package_json_flags(rel, text)
    if name == "CMakeLists.txt" or name.endswith(".cmake"):
        return _line_flags(rel, text, CMAKE_COMMANDS, "build-script")
    if name in ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"):
        return _line_flags(rel, text, GRADLE_EXEC, "build-script")
    if name == "pom.xml":
        return _line_flags(rel, text, MAVEN_EXEC, "build-script")
    if name.endswith(".go"):
        return _line_flags(rel, text, CGO_IMPORT, "build-script")
    if name in ("pyproject.toml", "setup.cfg"):
        return [*_line_flags(rel, text, PYTEST11, "pytest-plugin"),
                *_line_flags(rel, text, BACKEND_PATH, "build-script")]
    return []


def _line_flags(rel: str, text: str, pattern: re.Pattern[str], kind: FlagKind) -> list[IntegrityFlag]:
    """A flag at each match of `pattern` (at most `MAX_FLAGS_PER_FILE`)."""
    flags = []
    for match in pattern.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.start())
        flags.append(IntegrityFlag(kind=kind, path=rel, line=text.count("\n", 0, match.start()) + 1,
                                   excerpt=_excerpt(text[start:end if end >= 0 else len(text)])))
        if len(flags) >= MAX_FLAGS_PER_FILE:
            break
    return flags


def _package_json_flags(rel: str, text: str) -> list[IntegrityFlag]:
    """npm's lifecycle scripts (run by `npm install`/`npm test` unless scripts are off, as our runner has them)."""
    try:
        scripts = json.loads(text).get("scripts")
    except (ValueError, AttributeError, RecursionError):
        return []
    if not isinstance(scripts, dict):
        return []
    lines = text.splitlines()
    flags = []
    for script in LIFECYCLE_SCRIPTS:
        if script in scripts:
            line = next((i for i, t in enumerate(lines, 1) if f'"{script}"' in t), None)
            flags.append(IntegrityFlag(kind="build-script", path=rel, line=line,
                                       excerpt=_excerpt(f'"{script}": {json.dumps(scripts[script])}')))
    return flags


def _excerpt(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


# ----------------------------------------------------------------------------- Python, with ast

FRAME_NAMES = frozenset({"sys._getframe", "sys._current_frames", "inspect.currentframe", "inspect.stack",
                         "inspect.getouterframes", "inspect.trace", "gc.get_objects", "gc.get_referrers",
                         "gc.get_referents"})
FRAME_ATTRIBUTES = frozenset({"f_back", "f_locals", "f_globals"})
TRACING_NAMES = frozenset({"sys.settrace", "sys.setprofile", "threading.settrace", "threading.setprofile",
                           "threading.settrace_all_threads", "threading.setprofile_all_threads", "sys.monitoring"})
PYTEST_MODULES = ("pytest", "_pytest", "pluggy")
DYNAMIC_IMPORTS = frozenset({"__import__", "importlib.import_module", "importlib.__import__"})
WRITE_CALLS = frozenset({"os.remove", "os.unlink", "os.rename", "os.renames", "os.replace", "os.rmdir",
                         "os.removedirs", "os.truncate", "os.chmod", "shutil.rmtree", "shutil.move", "shutil.copy",
                         "shutil.copy2", "shutil.copyfile", "shutil.copytree"})
WRITE_METHODS = frozenset({"write_text", "write_bytes", "unlink", "rename", "replace", "rmdir", "touch", "chmod"})
OPEN_CALLS = frozenset({"open", "io.open", "builtins.open", "codecs.open"})
TEST_PATH = re.compile(r"(^|[/\\])(\w+_)?tests?([/\\]|$)|(^|[/\\])test_[^/\\]*\.py$|_test\.py$|(^|[/\\])conftest\.py$")
ENTRY_FUNCTIONS = frozenset({"main", "_main"})
CLI_MODULES = frozenset({"argparse", "optparse", "getopt", "click", "typer", "fire", "docopt"})
FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda})
CHECKED_NODES = frozenset({ast.Import, ast.ImportFrom, ast.Attribute, ast.Name, ast.Call, ast.FunctionDef,
                           ast.AsyncFunctionDef, ast.Assign})


def _python_flags(rel: str, data: bytes, parse_budget: int) -> list[IntegrityFlag]:
    """The flags of one Python module's syntax tree; one `unscanned` flag when it cannot be looked into."""
    if len(data) > MAX_FILE_BYTES:
        return [IntegrityFlag(kind="unscanned", path=rel, excerpt=f"over {MAX_FILE_BYTES:,} bytes: not scanned")]
    if len(data) > parse_budget:
        return [IntegrityFlag(kind="unscanned", path=rel, excerpt=f"past the {MAX_PYTHON_BYTES:,} bytes of Python "
                              "one candidate's scan parses: not scanned")]
    try:
        tree = ast.parse(data, filename=rel)
        return _PythonScan(rel, data, posixpath.basename(rel) == "__main__.py").run(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeError) as exc:
        return [IntegrityFlag(kind="unscanned", path=rel,
                              excerpt=_excerpt(f"{type(exc).__name__}: {exc}"))]


class _PythonScan:
    """One module's walk: names resolved through its imports, each node of a kind that can hold a move
    checked once."""

    def __init__(self, rel: str, data: bytes, entry_module: bool) -> None:
        self.rel = rel
        self.lines = data.decode("utf-8", "replace").splitlines()
        self.entry_module = entry_module
        self.aliases: dict[str, str] = {}
        self.flags: list[IntegrityFlag] = []
        self.entry_spans: list[tuple[int, int]] = []     # lines of `main` functions and __main__ guards
        self.function_spans: list[tuple[int, int]] = []  # lines of every function
        self.command_line = False

    def run(self, tree: ast.AST) -> list[IntegrityFlag]:
        # One walk gathers the nodes to check, the imports and the spans; the checks come after it, so a
        # name used above its import (in a function, or an import at the end) still resolves.
        checked: list[ast.AST] = []
        for node in ast.walk(tree):
            kind = type(node)
            if kind in CHECKED_NODES:
                checked.append(node)
            if kind is ast.Import:
                for alias in node.names:  # `import a.b` binds a; `import a.b as c` binds c to a.b
                    top = alias.name.split(".")[0]
                    self.aliases[alias.asname or top] = alias.name if alias.asname else top
            elif kind is ast.ImportFrom and node.module and not node.level:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif kind in FUNCTIONS:
                span = (node.lineno, node.end_lineno or node.lineno)
                self.function_spans.append(span)
                if kind is not ast.Lambda and node.name in ENTRY_FUNCTIONS:
                    self.entry_spans.append(span)
            elif kind is ast.If and _is_main_guard(node):
                self.entry_spans.append((node.lineno, node.end_lineno or node.lineno))
        self.command_line = any(name.split(".")[0] in CLI_MODULES or name.startswith("rich.prompt")
                                for name in self.aliases.values())
        for node in checked:
            if len(self.flags) >= MAX_FLAGS_PER_FILE:
                break
            self.check(node)
        return sorted(self.flags, key=lambda flag: flag.line or 0)

    def in_command_line_code(self, node: ast.AST) -> bool:
        """Whether `node` is in a CLI entry point: `__main__.py`, a __main__ guard, a function named `main`, or
        any function of a module that imports a command-line library."""
        line = getattr(node, "lineno", 0)
        spans = [*self.entry_spans, *(self.function_spans if self.command_line else [])]
        return self.entry_module or any(first <= line <= last for first, last in spans)

    def flag(self, kind: FlagKind, node: ast.AST) -> None:
        line = getattr(node, "lineno", None)
        if any(f.kind == kind and f.line == line for f in self.flags):
            return
        text = self.lines[line - 1] if line and 0 < line <= len(self.lines) else ""
        self.flags.append(IntegrityFlag(kind=kind, path=self.rel, line=line, excerpt=_excerpt(text)))

    def qualified(self, node: ast.AST) -> str | None:
        """`sys._getframe` for ``sys._getframe``, ``s._getframe`` (import sys as s) or ``_getframe`` (from sys
        import _getframe); None for anything but a dotted name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        return ".".join([self.aliases.get(node.id, node.id), *reversed(parts)])

    def check(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.check_module(alias.name, node)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            self.check_module(node.module, node)  # the names it binds are checked where they are used
        elif isinstance(node, ast.Attribute):
            if node.attr in FRAME_ATTRIBUTES:
                self.flag("frame-introspection", node)
            if isinstance(node.ctx, ast.Load) and (name := self.qualified(node)):
                self.check_name(name, node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in self.aliases:
            self.check_name(self.aliases[node.id], node)
        elif isinstance(node, ast.Call):
            self.check_call(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.check_comparison(node.name, _returned_constant(node.body), node)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    body = node.value.body
                    self.check_comparison(target.id, body.value if isinstance(body, ast.Constant) else None, node)

    def check_module(self, module: str, node: ast.AST) -> None:
        top = module.split(".")[0]
        if top in ("ctypes", "_ctypes"):
            self.flag("ctypes", node)
        elif top in PYTEST_MODULES:
            self.flag("pytest-internals", node)

    def check_name(self, name: str, node: ast.AST) -> None:
        if name in FRAME_NAMES:
            self.flag("frame-introspection", node)
        elif name in TRACING_NAMES or name.startswith("sys.monitoring."):
            self.flag("tracing", node)
        elif name == "os._exit" or (name == "sys.exit" and not self.in_command_line_code(node)):
            self.flag("process-exit", node)

    def check_call(self, node: ast.Call) -> None:
        name = self.qualified(node.func)
        first = _string(node.args[0]) if node.args else None
        if name in DYNAMIC_IMPORTS and first:
            self.check_module(first, node)
        elif name == "getattr" and len(node.args) >= 2 and (attr := _string(node.args[1])):
            if attr in FRAME_ATTRIBUTES:
                self.flag("frame-introspection", node)
            if module := self.qualified(node.args[0]):
                self.check_name(f"{module}.{attr}", node)
        elif name in OPEN_CALLS:
            mode = _string(node.args[1]) if len(node.args) > 1 else next(
                (_string(k.value) for k in node.keywords if k.arg == "mode"), None)
            if mode and any(c in mode for c in "wax+") and first and TEST_PATH.search(first):
                self.flag("test-path-write", node)
        elif name in WRITE_CALLS:
            if any(TEST_PATH.search(text) for arg in node.args for text in _strings(arg)):
                self.flag("test-path-write", node)
        elif isinstance(node.func, ast.Attribute) and node.func.attr in WRITE_METHODS:
            if any(TEST_PATH.search(text) for part in (node.func.value, *node.args) for text in _strings(part)):
                self.flag("test-path-write", node)

    def check_comparison(self, name: str, returned: object, node: ast.AST) -> None:
        if (name == "__eq__" and returned is True) or (name == "__ne__" and returned is False):
            self.flag("always-equal", node)


def _is_main_guard(node: ast.If) -> bool:
    """``if __name__ == "__main__":`` (either way round)."""
    if not isinstance(node.test, ast.Compare) or len(node.test.comparators) != 1:
        return False
    sides = [node.test.left, node.test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) \
        and any(_string(s) == "__main__" for s in sides)


def _returned_constant(body: list[ast.stmt]) -> object:
    """The constant a function body returns unconditionally (its only statement but a docstring); else None."""
    statements = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(statements) == 1 and isinstance(statements[0], ast.Return) \
            and isinstance(statements[0].value, ast.Constant):
        return statements[0].value.value
    return None


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _strings(node: ast.AST, limit: int = 50) -> Iterator[str]:
    """The string constants inside an expression (the first `limit`): a path literal, or its parts."""
    for count, inner in enumerate(ast.walk(node)):
        if count >= limit:
            return
        if (text := _string(inner)) is not None:
            yield text
