"""The packages an NL2Repo-Bench task's `start.md` lists as its environment, as requirements for its test venv.

The harness runs a task's tests in the task's container image, whose core packages `start.md` lists under its
environment heading ("## Environment Configuration" / "## Dependent Environment", then "### Core Dependency
Library Versions" or the like) in a fenced block, in one of two spellings: `pip list`'s two columns
(`numpy      2.3.3`, read as `numpy==2.3.3`) or requirement lines (`pycodestyle >= 2.12.0   # comment`,
`tomli; python_version < '3.11'`). Without them a generated repository whose tests import such a package fails to
collect: a lower score for the machine's sake. Left out, each with its reason (`ListedEnvironment.left_out`): the
task's own project (installing it would put the reference beside the candidate; names compared as PyPI
normalises them), the test and build tools projectgen's environment already provides, the interpreter line
(`python >= 3.7`) and any line that is no requirement (said, never guessed at).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType

# What every environment projectgen builds for a task with an install step has (environments.BUILD_TOOLS, pytest):
# their listed pins are the image's, not the task's, and would fight the runner's own.
PROVIDED_TOOLS = frozenset({"pytest", "pip", "setuptools", "wheel"})
# Task folders whose project PyPI knows by a name no rule derives (checked over the benchmark's 102 tasks).
OWN_DISTRIBUTIONS = MappingProxyType({"paillier": "phe"})

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_ENVIRONMENT_HEADING = re.compile(r"environment", re.IGNORECASE)
_DEPENDENCIES_HEADING = re.compile(r"dependenc", re.IGNORECASE)
_STRUCTURE_HEADING = re.compile(r"structure|architecture", re.IGNORECASE)
_PROJECT_NAMED = re.compile(r"project\s+named\s+[`*\"']*([A-Za-z0-9][A-Za-z0-9._-]*)", re.IGNORECASE)
_PIP_LIST_ROW = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s+v?(\d[0-9A-Za-z.!+_-]*)(?:\s+\S+)?$")
_SPECIFIER = r"(?:===|==|!=|<=|>=|~=|<|>)\s*[0-9A-Za-z.*+!_-]+"
_REQUIREMENT = re.compile(
    rf"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[A-Za-z0-9._,\s-]*\])?\s*({_SPECIFIER}(?:\s*,\s*{_SPECIFIER})*)?"
    r"\s*(;.*)?$")


@dataclass(frozen=True)
class ListedEnvironment:
    """The requirements read from a task's listed environment, and each listed line not taken, with why."""

    requirements: tuple[str, ...] = ()
    left_out: tuple[str, ...] = field(default=())


def canonical_name(name: str) -> str:
    """A distribution name as PyPI normalises it (PEP 503): `Typing_Extensions` and `typing-extensions` are one."""
    return re.sub(r"[-_.]+", "-", name).lower()


def own_project_names(task_id: str, document: str) -> frozenset[str]:
    """The names the task's own project may be listed under: its folder's name, the name the prompt gives it
    ("create a Python project named X"), each also without a `python-` prefix or `-master` suffix."""
    names = {task_id, *(_PROJECT_NAMED.findall(document)[:1]), *([OWN_DISTRIBUTIONS[task_id]]
                                                                if task_id in OWN_DISTRIBUTIONS else [])}
    variants = set()
    for name in map(canonical_name, names):
        variants |= {name, f"python-{name}", name.removeprefix("python-"), name.removesuffix("-master")}
    return frozenset(v for v in variants if v)


def environment_section(document: str) -> list[str]:
    """The fenced blocks' lines of the document's environment section: from its first heading of level 2 or 3
    naming the environment (else the first naming the dependencies, not the project's structure) to the next
    heading of that level or above. Headings inside fences are code comments, not headings."""
    lines = document.splitlines()
    headings: list[tuple[int, int, str]] = []  # (line index, level, text), outside fences
    inside = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            inside = not inside
        elif not inside and (heading := _HEADING.match(line)):
            headings.append((index, len(heading.group(1)), heading.group(2)))
    chosen = next((h for h in headings if h[1] in (2, 3) and _ENVIRONMENT_HEADING.search(h[2])), None) or next(
        (h for h in headings if h[1] in (2, 3) and _DEPENDENCIES_HEADING.search(h[2])
         and not _STRUCTURE_HEADING.search(h[2])), None)
    if chosen is None:
        return []
    start, level, _ = chosen
    stop = next((index for index, depth, _ in headings if index > start and depth <= level), len(lines))
    taken, inside = [], False
    for line in lines[start + 1:stop]:
        if _FENCE.match(line):
            inside = not inside
        elif inside:
            taken.append(line)
    return taken


def listed_environment(task_id: str, document: str) -> ListedEnvironment:
    """The requirements `document` (a start.md) lists as its environment, its own project and the provided tools
    left out, each line it leaves out named with its reason."""
    own = own_project_names(task_id, document)
    requirements: dict[str, str] = {}  # canonical name -> requirement, in listed order
    left_out: list[str] = []
    for raw in environment_section(document):
        line = re.split(r"\s#", raw, maxsplit=1)[0].strip().removeprefix("- ").strip()
        # some documents space out names and wildcards ("pre - commit == 4.1. *")
        line = re.sub(r"\.\s+\*", ".*", re.sub(r"(?<=[A-Za-z0-9]) - (?=[A-Za-z0-9])", "-", line))
        if not line or line.startswith("#"):
            continue
        requirement = _requirement(line)
        if requirement is None:
            left_out.append(f"{line!r}: not a requirement")
            continue
        name = canonical_name(_parts(requirement)[0])
        if name == "python":
            left_out.append(f"{line!r}: the interpreter, not a package")
        elif name in own:
            left_out.append(f"{line!r}: the task's own project")
        elif name in PROVIDED_TOOLS:
            left_out.append(f"{line!r}: provided by projectgen's test environment")
        elif name in requirements:
            merged = _with_extras(requirements[name], _parts(requirement)[1])
            left_out.append(f"{line!r}: listed twice" + (f", its extras added: {merged}"
                                                          if merged != requirements[name] else ""))
            requirements[name] = merged
        else:
            requirements[name] = requirement
    return ListedEnvironment(tuple(requirements.values()), tuple(left_out))


def _parts(requirement: str) -> tuple[str, set[str]]:
    """A requirement's distribution name and its extras."""
    match = _REQUIREMENT.match(requirement)
    assert match is not None  # only requirements `_requirement` made are asked
    return match.group(1), {e.strip() for e in (match.group(2) or "[]")[1:-1].split(",") if e.strip()}


def _with_extras(requirement: str, extras: set[str]) -> str:
    """`requirement` with `extras` added to its own (a package listed again for another extra)."""
    name, own = _parts(requirement)
    if extras <= own:
        return requirement
    rest = re.sub(r"^\s*\[[^\]]*\]", "", requirement[len(name):])
    return f"{name}[{','.join(sorted(own | extras))}]{rest}"


def _requirement(line: str) -> str | None:
    """`line` as a requirement: a `pip list` row becomes an `==` pin; None when it is neither spelling."""
    row = _PIP_LIST_ROW.match(line)
    if row and not re.match(r"^[<>=!~]", line[len(row.group(1)):].strip()):
        return f"{row.group(1)}=={row.group(2)}"
    if _REQUIREMENT.match(line):
        return re.sub(r"\s+", "", line.split(";")[0]) + (f"; {line.split(';', 1)[1].strip()}" if ";" in line else "")
    return None
