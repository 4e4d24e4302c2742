"""What an attempt produced and how its tests went, as compact prompt text.

LiveCoder's knowledge agent reads two things about an attempt: a *repository
observation* (file layout with line counts, the interfaces read from the AST,
the internal import graph, files that do not parse, placeholder bodies left
unimplemented) and *execution feedback* (pass/fail counts, failing tests with
the line of their message that says what went wrong, collection errors, a
harness error or timeout, the score). Both are Pydantic values, computed
without running anything, and both render with ``.text(limit)`` to prompt text
that never exceeds ``limit`` characters, however large the repository (the
CodeProjectEval tasks have up to ~100 files): sections share the budget, what
one leaves unused goes to the next, and the interface listing degrades in steps
(class members dropped, then descriptions) before it is cut.
"""
from __future__ import annotations

import ast
import math
import posixpath
import re
import warnings
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, Field

from projectgen.errors import error_line
from projectgen.evaluation.report import Outcome, TestReport
from projectgen.repository.dependencies import import_cycles, import_graph
from projectgen.repository.syntax import parse_python
from projectgen.ssat import render_tree, ssat_from_repository, unparsable_files

_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)
_USES = re.compile(r" \[uses [^\]]*\]$")
_LOCATION = re.compile(r"^(?P<where>\S+:\d+): (?P<what>\w[\w.]*)$")
_MESSAGE_CHARS = 240


# --------------------------------------------------------------------------- budget helpers

def fit_lines(lines: Sequence[str], budget: int, what: str = "lines") -> str:
    """Whole lines joined by newlines, at most `budget` characters; a cut is marked ``[... N more what]``."""
    if budget <= 0 or not lines:
        return ""
    text = "\n".join(lines)
    if len(text) <= budget:
        return text
    kept: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        marker = f"[... {len(lines) - i} more {what}]"
        cost = len(line) + (1 if kept else 0)
        if used + cost + 1 + len(marker) > budget:
            break
        kept.append(line)
        used += cost
    marker = f"[... {len(lines) - len(kept)} more {what}]"
    if not kept:
        return marker[:budget]
    return "\n".join(kept) + "\n" + marker


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, with a marker when it was cut."""
    if len(text) <= limit:
        return text
    marker = f" [... {len(text) - limit} more chars]"
    if limit <= len(marker) + 20:
        return text[:max(limit, 0)]
    keep = limit - len(marker) - 2  # room for the count's extra digits
    return text[:keep] + f" [... {len(text) - keep} more chars]"


def _share_out(limit: int, head: str, sections: Sequence[tuple[str, float, Callable[[int], str]]]) -> str:
    """`head`, then each (title, weight, render) section given its share of what is left.

    `render(budget) -> str` returns at most `budget` characters ("" to skip the section); a
    section's unused share is passed on to the ones after it. The result never exceeds `limit`.
    """
    parts = [clip(head, limit)]
    remaining = limit - len(parts[0])
    for index, (title, weight, render) in enumerate(sections):
        weights = sum(w for _, w, _ in sections[index:])
        share = int(remaining * weight / weights) if weights else remaining
        budget = share - len(title) - 2  # "\n" before the title and after it
        if budget <= 0:
            continue
        body = render(budget)
        if not body:
            continue
        block = f"\n{title}\n{body}"
        if len(block) > remaining:
            continue
        parts.append(block)
        remaining -= len(block)
    return "".join(parts)[:limit]


# --------------------------------------------------------------------------- repository observation

class FileStat(BaseModel):
    """One repository file and its length in lines."""

    path: str
    lines: int


class RepositoryObservation(BaseModel):
    """A static look at a repository: layout, interfaces, internal imports, problems."""

    files: list[FileStat] = Field(default_factory=list)
    interfaces: str = Field(default="", description="render_tree of the SSAT read from the source (may be cut)")
    edges: list[tuple[str, str]] = Field(default_factory=list, description="(importer, imported) repository files")
    cycles: list[list[str]] = Field(default_factory=list)
    unparsable: list[str] = Field(default_factory=list, description=".py files that do not parse")
    syntax_errors: dict[str, str] = Field(default_factory=dict, description="path -> where and why it fails")
    placeholders: list[str] = Field(default_factory=list,
                                    description="path:qualname of functions whose body is only pass/.../"
                                                "raise NotImplementedError")
    note: str = Field(default="", description="why the interfaces could not be read, if so")

    @property
    def total_lines(self) -> int:
        return sum(f.lines for f in self.files)

    @property
    def python_files(self) -> list[str]:
        return [f.path for f in self.files if f.path.endswith(".py")]

    def dependencies(self) -> dict[str, list[str]]:
        """importer -> the repository files it imports (only files that import something)."""
        out: dict[str, list[str]] = {}
        for source, target in self.edges:
            out.setdefault(source, []).append(target)
        return out

    def text(self, limit: int = 6000) -> str:
        """Prompt text, at most `limit` characters."""
        head = (f"Repository: {len(self.files)} files ({len(self.python_files)} Python), "
                f"{self.total_lines} lines in all.")
        if not self.files:
            head += " It is empty."
        if self.note:
            head += f"\nNote: {self.note}"
        problems: list[str] = []
        for path in self.unparsable:
            problems.append(f"  does not parse: {path}" + (f" ({self.syntax_errors[path]})"
                                                           if path in self.syntax_errors else ""))
        problems += [f"  import cycle: {' <-> '.join(cycle)}" for cycle in self.cycles]
        if self.placeholders:
            problems.append(f"  {len(self.placeholders)} function(s) whose body is only pass / ... / "
                            f"raise NotImplementedError (unimplemented unless intended):")
            problems += [f"    {p}" for p in self.placeholders]
        layout = [line for folder, entries in _by_folder(self.files)
                  for line in _wrap(f"  {folder or '.'}/: ", [f"{name} {n}" for name, n in entries])]
        deps = [f"  {source} -> {', '.join(targets)}" for source, targets in self.dependencies().items()]
        sections = [
            ("Problems:", 1.0, lambda b: fit_lines(problems, b, "problems")),
            ("Layout (folder/: file lines, ...):", 1.0, lambda b: fit_lines(layout, b, "lines")),
            ("Internal imports (file -> repository files it imports):", 1.0,
             lambda b: fit_lines(deps, b, "files") if deps else "  (none)"),
            ("Interfaces (from the AST):", 3.0, lambda b: fit_tree(self.interfaces, b)),
        ]
        return _share_out(limit, head, sections)


def _by_folder(files: Sequence[FileStat]) -> list[tuple[str, list[tuple[str, int]]]]:
    groups: dict[str, list[tuple[str, int]]] = {}
    for f in sorted(files, key=lambda f: f.path):
        folder, name = posixpath.split(f.path)
        groups.setdefault(folder, []).append((name, f.lines))
    return sorted(groups.items())


def _wrap(head: str, items: Sequence[str], width: int = 110) -> list[str]:
    """`head` then the items joined by ", ", in lines of about `width` characters, never splitting an item."""
    lines = [head]
    for item in items:
        if len(lines[-1]) + len(item) > width and lines[-1].strip() and lines[-1] != head:
            lines[-1] += ","
            lines.append("      ")
        elif lines[-1] != head and lines[-1].strip():
            lines[-1] += ", "
        lines[-1] += item
    return lines


def _file_groups(lines: Sequence[str]) -> list[list[str]]:
    """Tree lines (indented by two) grouped per file or package: the header line, then its items."""
    groups: list[list[str]] = []
    for line in lines:
        if not line.startswith("    ") or not groups:
            groups.append([line])
        else:
            groups[-1].append(line)
    return groups


def _at_level(group: list[str], level: int) -> list[str]:
    """A file's lines: 0 everything; 1 without class members; 2 also without its description;
    3 one line of public names. Package lines go from level 2."""
    head, items = group[0], group[1:]
    if level == 0:
        return group
    if head.lstrip().startswith("package "):
        return [head] if level == 1 else []  # a package line only carries its description
    # class members are indented by four in render_tree (six here); classes and functions by two (four here)
    items = [line for line in items if not line.startswith("      ")]
    if level == 1:
        return [head, *items]
    if level == 2:
        return [head.split(": ", 1)[0], *items]
    return _names_only([head.split(": ", 1)[0], *items])


def _cost(block: Sequence[str]) -> int:
    """Characters of a block's lines, each with its newline."""
    return sum(len(line) + 1 for line in block)


def _size(blocks: Sequence[Sequence[str]]) -> int:
    """Length of the blocks' lines joined by newlines."""
    return max(sum(_cost(block) for block in blocks) - 1, 0)


_LEVEL_NOTES = ("", "class members left out", "class members and descriptions left out", "public names only")


def fit_tree(tree: str, budget: int) -> str:
    """An interface listing (render_tree lines, indented by two) within `budget` characters.

    Finds the finest level of detail at which every file fits (everything; without class members;
    also without descriptions; public names only), then spends what is left showing the first files
    one level finer; when even names do not fit, the list is cut.
    """
    if budget <= 0 or not tree.strip():
        return ""
    groups = _file_groups([f"  {line}" for line in tree.splitlines()])
    for level in range(4):
        rendered = [_at_level(g, level) for g in groups]
        note = [f"  ({_LEVEL_NOTES[level]}" + (" for some files)" if level else ")")] if level else []
        total = _size([*rendered, note])
        if total > budget:
            continue
        if level:
            for i, group in enumerate(groups):
                finer = _at_level(group, level - 1)
                delta = _cost(finer) - _cost(rendered[i])
                if total + delta <= budget:
                    rendered[i], total = finer, total + delta
        return "\n".join(line for block in [*rendered, note] for line in block)
    return fit_lines([line for g in groups for line in _at_level(g, 3)], budget, "files")


_DEFINED = re.compile(r"^(?:@\S+ )*(?:(?P<kind>class|def|async def) )?(?P<name>[A-Za-z_]\w*)")


def _names_only(lines: Sequence[str]) -> list[str]:
    """One line per file: ``path: Class, function(), CONSTANT`` (public top-level names)."""
    files: list[tuple[str, list[str]]] = []
    for line in lines:
        if not line.startswith("    "):
            if not line.lstrip().startswith("package "):
                files.append((line, []))
            continue
        match = _DEFINED.match(line.strip())
        if match is None or match["name"].startswith("_") or not files:
            continue
        name = match["name"] + ("()" if match["kind"] in ("def", "async def") else "")
        if name not in files[-1][1]:  # overloads, property setters
            files[-1][1].append(name)
    return [head + (f": {', '.join(names)}" if names else "") for head, names in files]


def _syntax_error(path: str, text: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parse_python(text, path)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except _PARSE_ERRORS as exc:
        return type(exc).__name__
    return None


def _is_placeholder(body: Sequence[ast.stmt]) -> bool:
    stmts = list(body)
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) \
            and isinstance(stmts[0].value.value, str):
        stmts = stmts[1:]  # docstring
    if len(stmts) != 1:
        return not stmts  # a docstring alone is a placeholder too
    stmt = stmts[0]
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis:
        return True
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        if isinstance(stmt.exc, ast.Call) and (stmt.exc.args or stmt.exc.keywords):
            return False  # raise NotImplementedError("not supported for ..."): a deliberate refusal
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _abstract(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    names = {d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "") for d in node.decorator_list}
    return bool(names & {"abstractmethod", "abstractproperty", "overload"})


def _name_of(node: ast.expr) -> str:
    """`Base` of ``Base``, ``mod.Base`` or ``Base[T]``."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _parsed(python: Mapping[str, str]) -> dict[str, ast.Module]:
    trees: dict[str, ast.Module] = {}
    for path, text in python.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                trees[path] = parse_python(text, path)
        except _PARSE_ERRORS:
            continue
    return trees


def _placeholders(trees: Mapping[str, ast.Module]) -> list[str]:
    """path:qualname of top-level functions and methods whose body is only pass / ... / raise
    NotImplementedError. Abstract methods, protocols and classes subclassed in the repository (whose
    empty methods are hooks or abstract by convention) are not counted."""
    subclassed = {_name_of(base) for tree in trees.values() for node in ast.walk(tree)
                  if isinstance(node, ast.ClassDef) for base in node.bases}
    found: list[str] = []
    for path, tree in sorted(trees.items()):
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if _is_placeholder(node.body) and not _abstract(node):
                    found.append(f"{path}:{node.name}")
            elif isinstance(node, ast.ClassDef):
                if node.name in subclassed or {_name_of(b) for b in node.bases} & {"Protocol", "ABC"}:
                    continue
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_placeholder(item.body) \
                            and not _abstract(item):
                        found.append(f"{path}:{node.name}.{item.name}")
    return found


def _line_count(text: str) -> int:
    return len(text.splitlines())


def observe_repository(repository: Mapping[str, str], *, project_name: str = "repository",
                       interface_chars: int = 60_000) -> RepositoryObservation:
    """Look at a repository (path -> text) without running it; never raises on bad source."""
    files = [FileStat(path=p, lines=_line_count(t)) for p, t in sorted(repository.items())]
    python = {p: t for p, t in repository.items() if p.endswith(".py")}
    unparsable = unparsable_files(python)
    errors = {p: e for p in unparsable if (e := _syntax_error(p, python[p])) is not None}
    graph = import_graph(python)
    edges = sorted((source, target) for source, targets in graph.items() for target in targets)
    cycles = import_cycles(graph)
    placeholders = _placeholders(_parsed(python))
    note = ""
    interfaces = ""
    try:
        tree = render_tree(ssat_from_repository(python, project_name))
    except Exception as exc:  # noqa: BLE001 - a repository the SSAT cannot express is still observed
        note = f"the interfaces could not be read ({error_line(exc)[:240]})"
    else:
        lines = tree.splitlines()[1:]  # "Project NAME" says nothing
        lines = [_USES.sub("", line) for line in lines]  # the import graph is shown on its own
        interfaces = "\n".join(line[2:] if line.startswith("  ") else line for line in fit_tree(
            "\n".join(lines), interface_chars).splitlines())
    return RepositoryObservation(files=files, interfaces=interfaces, edges=edges, cycles=cycles,
                                 unparsable=unparsable, syntax_errors=errors, placeholders=placeholders,
                                 note=note)


# --------------------------------------------------------------------------- execution feedback

class TestProblem(BaseModel):
    """A failing (or erroring) test, or a test module that failed to collect, with its key message line."""

    __test__ = False

    nodeid: str
    outcome: str = "failed"
    message: str = ""

    def line(self) -> str:
        return f"{self.nodeid} [{self.outcome}]" + (f": {self.message}" if self.message else "")


def message_line(message: str) -> str:
    """The line of a pytest failure message that says what went wrong.

    pytest's long report ends with the location (``pkg/mod.py:12: KeyError``); the error itself is
    on the ``E`` lines before it. Gives the first line of the last ``E`` block, with the location
    appended; without ``E`` lines, the last non-empty line.
    """
    lines = [line.rstrip() for line in (message or "").splitlines() if line.strip()]
    if not lines:
        return ""
    location = _LOCATION.match(lines[-1].strip())
    e_lines = [i for i, line in enumerate(lines) if line.startswith("E ") or line == "E"]
    if e_lines:
        first = e_lines[-1]
        while first - 1 in e_lines:
            first -= 1
        text = lines[first][1:].strip()
        if not text:
            text = next((lines[i][1:].strip() for i in e_lines if i > first and lines[i][1:].strip()), "")
        if location:
            text += f" (at {location['where']})"
    else:
        text = lines[-1].strip()
    return clip(text, _MESSAGE_CHARS)


class ExecutionFeedback(BaseModel):
    """How one suite went on an attempt's repository."""

    suite: str
    score: float = Field(description="the attempt's score, as given (usually the pass rate)")
    score_suite: str | None = Field(
        default=None, description="the suite the score is the pass rate of, when not `suite`: LiveCoder's selection "
        "by the hidden unit tests with check-test feedback shows their pass rate, never their output")
    ran: bool = Field(default=True, description="False when there was no report (nothing was run)")
    passed: int = 0
    failed: int = Field(default=0, description="tests that failed or errored")
    skipped: int = 0
    total: int = 0
    failing: list[TestProblem] = Field(default_factory=list)
    collection_errors: list[TestProblem] = Field(default_factory=list)
    error: str | None = None
    timed_out: bool = False
    output_tail: str = Field(default="", description="end of the pytest output, kept when nothing else explains")

    def failing_ids(self) -> list[str]:
        return [t.nodeid for t in self.failing]

    def text(self, limit: int = 4000) -> str:
        """Prompt text, at most `limit` characters."""
        if not self.ran:
            head = f"Suite {self.suite}: no test report (nothing was run); {self._score_text()}."
        else:
            head = (f"Suite {self.suite}: {self.passed} of {self.total} tests passed, {self.failed} failed"
                    + (f", {self.skipped} skipped" if self.skipped else "")
                    + (f", {len(self.collection_errors)} test module(s) failed to collect"
                       if self.collection_errors else "")
                    + f"; {self._score_text()}.")
        if self.error:
            head += f"\nThe test harness failed: {clip(self.error, 400)}"
        if self.timed_out:
            head += "\nThe test run timed out (results may be partial)."
        sections = [
            (f"Collection errors ({len(self.collection_errors)}):", 1.0,
             lambda b: fit_lines([f"  {t.line()}" for t in self.collection_errors], b, "collection errors")),
            (f"Failing tests ({len(self.failing)}):", 2.0,
             lambda b: fit_lines([f"  {t.line()}" for t in self.failing], b, "failing tests")),
            ("Output (end):", 1.0, lambda b: _tail_lines(self.output_tail, b)),
        ]
        return _share_out(limit, head, sections)


    def _score_text(self) -> str:
        """The score, with the suite it comes from when that is not the suite shown (never passed off as it)."""
        if self.score_suite is None or self.score_suite == self.suite:
            return f"score {self.score:.2f}"
        return f"score {self.score:.2f}, the pass rate of the {self.score_suite} tests (their output is not shown)"


def _tail_lines(text: str, budget: int) -> str:
    lines = [f"  {line}" for line in text.strip().splitlines()]
    if budget <= 0 or not lines:
        return ""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(reversed(kept)) if kept else clip(lines[-1], budget)


def execution_feedback(report: TestReport | None, score: float, suite: str,
                       score_suite: str | None = None) -> ExecutionFeedback:
    """Summarize a test report (None: nothing was run) for the knowledge agent; `score_suite` names the suite
    the score comes from when it is not `suite`'s."""
    score = _clean_score(score)
    score_suite = None if score_suite == suite else score_suite
    if report is None:
        return ExecutionFeedback(suite=suite, score=score, score_suite=score_suite, ran=False)
    failing = [TestProblem(nodeid=t.nodeid, outcome=t.outcome.value, message=message_line(t.message))
               for t in report.failures()]
    collection = [TestProblem(nodeid=e.nodeid or "(collection)", outcome="collection error",
                              message=message_line(e.message)) for e in report.collection_errors]
    unexplained = not failing and not collection and report.status != "passed"
    tail = "\n".join(report.output_tail.strip().splitlines()[-30:]) if unexplained else ""
    return ExecutionFeedback(
        suite=suite, score=score, score_suite=score_suite, passed=report.passed, failed=len(failing),
        skipped=report.count(Outcome.SKIPPED), total=report.total, failing=failing,
        collection_errors=collection, error=report.error, timed_out=report.timed_out, output_tail=tail)


def _clean_score(score: float) -> float:
    try:
        value = float(score)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(value) else value


__all__ = [
    "ExecutionFeedback", "FileStat", "RepositoryObservation", "TestProblem", "clip", "execution_feedback",
    "fit_lines", "fit_tree", "message_line", "observe_repository",
]
