"""LiveCoder's non-functional scores (its Table 1, on RAL-Bench) and their AHP-weighted combination.

LiveCoder reports RAL-Bench's five non-functional dimensions and one `non_functional` score; the
arithmetic is RAL-Bench's own (its `evaluation/measure_generated.py`, read out of tree): every
dimension is a score in [0, 1] of the candidate against a baseline measured on the reference
repository, and `non_functional` is their weighted mean with the AHP weight vector
maintainability 0.36, security 0.24, robustness 0.16, efficiency ("performance") 0.12, resource 0.12.

- security: high-risk call sites (eval, exec, os.system, subprocess with shell=True, pickle/dill/
  cloudpickle load(s), pickle.Unpickler) in the package's Python files, tests left out;
  min(1, (baseline + 1) / (candidate + 1)), and 1 when both are 0.
- maintainability: r = candidate's lowest per-file MI / the reference's; r / (1 + r). The MI is the
  Visual Studio formula LiveCoder's paper cites (`MAINTAINABILITY_MEASURE`, recorded with every result);
  RAL-Bench's script takes radon's MI, whose comment term rewards docstrings.
- robustness: the pass rate of the task's robustness suite.
- efficiency: 0 if the performance suite failed, else min(1, reference seconds / candidate seconds).
- resource: 0 if the resource suite failed, else the mean of min(1, reference / candidate) for the
  memory and the CPU% of the test processes (memory alone when CPU is unknown).

What is measured here and how is in `docs/evaluation.md`; each dimension that cannot be measured
is None with its reason, never a made-up number, and `non_functional` is then None too (RAL-Bench
counts a missing dimension as 0, which would turn "not measured" into "bad"). The resource figures
come from the sandbox's launcher, outside the code under test (`report.ResourceUsage`): RAL-Bench
samples the summed RSS of the test processes with psutil and averages it; the sandbox takes the peak
RSS of the largest test process instead (`RESOURCE_MEASURE`, recorded with every result), and the CPU%
as CPU time over the test step's wall time, the time-weighted mean of what RAL-Bench samples.
"""
from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from projectgen.evaluation.metrics import maintainability_indices

if TYPE_CHECKING:
    from projectgen.datasets.task import Task
    from projectgen.evaluation.runner import SandboxRunner

Dimension = Literal["maintainability", "security", "robustness", "efficiency", "resource"]
DIMENSIONS: tuple[Dimension, ...] = ("maintainability", "security", "robustness", "efficiency", "resource")
# RAL-Bench's AHP-derived weight vector (LiveCoder Table 1's non_functional), in DIMENSIONS order.
AHP_WEIGHTS: Mapping[Dimension, float] = {"maintainability": 0.36, "security": 0.24, "robustness": 0.16,
                                          "efficiency": 0.12, "resource": 0.12}
# The suite of a RAL-Bench task that each dimension runs (RAL-Bench calls efficiency "performance").
DIMENSION_SUITES: Mapping[Dimension, str] = {"robustness": "robustness", "efficiency": "performance",
                                             "resource": "resource", "security": "security",
                                             "maintainability": "maintainability"}

# Which maintainability index the maintainability dimension compares: the Visual Studio formula LiveCoder's paper
# cites, MAX(0, (171 - 5.2 ln(HV) - 0.23 CC - 16.2 ln(LOC)) x 100 / 171); RAL-Bench's script uses radon's MI.
MAINTAINABILITY_MEASURE = "visual-studio-mi"
MAINTAINABILITY_MEASURE_NOTE = ("the lowest per-file Visual Studio maintainability index, as LiveCoder cites it (no "
                                "comment term; RAL-Bench's script takes radon's MI, which rewards docstrings)")

# How the resource dimension's memory is measured: "peak-rss", the largest peak resident size of a test process
# (wait4 rusage, read by the sandbox's launcher); RAL-Bench's own is the mean of the sampled summed RSS.
RESOURCE_MEASURE = "peak-rss"
RESOURCE_MEASURE_NOTE = ("memory: the peak RSS of the largest test process (RAL-Bench: the mean sampled RSS of "
                         "the process tree), CPU: CPU time over the test step's wall time, both read by the "
                         "sandbox's launcher from the kernel, outside the code under test")

_RISKY_CALLS = frozenset({"eval", "exec", "os.system", "pickle.loads", "pickle.load", "pickle.Unpickler",
                          "dill.loads", "dill.load", "cloudpickle.loads", "cloudpickle.load"})
_SKIPPED_PARTS = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", "venv",
                            ".venv", "env", "build", "dist", "site-packages", "tests"})


# --------------------------------------------------------------------------- per-dimension scores


def security_score(baseline_findings: float, findings: float) -> float:
    """min(1, (b + 1) / (g + 1)): as safe as the reference or safer scores 1; negative counts score 0."""
    if baseline_findings < 0 or findings < 0:
        return 0.0
    return min(1.0, (baseline_findings + 1.0) / (findings + 1.0))


def maintainability_score(baseline_mi_min: float, mi_min: float) -> float:
    """r / (1 + r) with r = candidate's lowest file MI / the reference's: equal MI scores 0.5, and it
    saturates towards 1 only for far more maintainable code (RAL-Bench's smooth compression)."""
    if baseline_mi_min <= 0 or mi_min < 0:
        return 0.0
    ratio = mi_min / baseline_mi_min
    return ratio / (1.0 + ratio) if ratio > 0 else 0.0


def robustness_score(passed: int, total: int) -> float:
    """The robustness suite's pass rate (0 for an empty suite)."""
    return passed / total if total > 0 else 0.0


def efficiency_score(baseline_seconds: float, seconds: float, *, suite_passed: bool) -> float:
    """min(1, reference time / candidate time) of the performance suite; a failed suite scores 0."""
    if not suite_passed or baseline_seconds <= 0 or seconds <= 0:
        return 0.0
    return min(1.0, baseline_seconds / seconds)


def resource_score(baseline_memory_mb: float, memory_mb: float, baseline_cpu_pct: float | None,
                   cpu_pct: float | None, *, suite_passed: bool) -> float:
    """Mean of min(1, b / g) for memory and CPU% of the resource suite (memory alone when a CPU figure
    is missing or not positive); a failed suite scores 0."""
    if not suite_passed or baseline_memory_mb <= 0 or memory_mb <= 0:
        return 0.0
    memory = min(1.0, baseline_memory_mb / memory_mb)
    if baseline_cpu_pct is None or cpu_pct is None or baseline_cpu_pct <= 0 or cpu_pct <= 0:
        return memory
    return (memory + min(1.0, baseline_cpu_pct / cpu_pct)) / 2.0


def non_functional(scores: Mapping[str, float | None]) -> float | None:
    """The AHP-weighted mean of the five dimension scores; None when any of them is missing."""
    values = [scores.get(name) for name in DIMENSIONS]
    if any(value is None for value in values):
        return None
    weighted = math.fsum(AHP_WEIGHTS[name] * float(value or 0.0) for name, value in zip(DIMENSIONS, values))
    return weighted / math.fsum(AHP_WEIGHTS.values())


# --------------------------------------------------------------------------- static measurements


def high_risk_findings(repository: Mapping[str, str], package: str | None = None) -> int:
    """High-risk call sites in the repository's Python files (below `package/` when that folder exists),
    test folders and caches left out; a file that does not parse counts none (RAL-Bench's rule)."""
    return sum(_risky_calls(text) for text in _package_sources(repository, package).values())


def lowest_maintainability(repository: Mapping[str, str], package: str | None = None) -> float:
    """The lowest per-file maintainability index of the package's non-empty Python files (0 for none);
    a file that does not parse scores 0, as RAL-Bench treats it. The MI is the Visual Studio formula
    LiveCoder cites (`projectgen.evaluation.metrics.maintainability_indices`, its second figure: no comment
    term), on the reference and the candidate alike, so the ratio the score takes compares like with like."""
    indices = []
    for text in _package_sources(repository, package).values():
        if not any(line.strip() and not line.strip().startswith("#") for line in text.splitlines()):
            continue
        try:
            indices.append(maintainability_indices(text)[1])
        except (SyntaxError, ValueError):
            indices.append(0.0)
    return min(indices, default=0.0)


def _package_sources(repository: Mapping[str, str], package: str | None) -> dict[str, str]:
    """The .py files RAL-Bench scans: below `package/` when the repository has it, else all of them."""
    files = {path: text for path, text in repository.items() if path.endswith(".py")
             and not _SKIPPED_PARTS.intersection(path.split("/")[:-1])}
    if package and any(path.startswith(f"{package}/") for path in files):
        files = {path: text for path, text in files.items() if path.startswith(f"{package}/")}
    return files


def _risky_calls(source: str) -> int:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return 0
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update({alias.asname or alias.name.split(".")[-1]: alias.name for alias in node.names})
        elif isinstance(node, ast.ImportFrom):
            imported.update({alias.asname or alias.name: f"{node.module}.{alias.name}" if node.module else alias.name
                             for alias in node.names})
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        name = imported.get(name, name)
        shell = any(k.arg == "shell" and isinstance(k.value, ast.Constant) and k.value.value is True
                    for k in node.keywords)
        if name in _RISKY_CALLS or (name.startswith("subprocess.") and shell):
            count += 1
    return count


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return ""


# --------------------------------------------------------------------------- one candidate's figures


@dataclass(frozen=True)
class SuiteRun:
    """What a sandboxed run of one suite tells the scores: passed of total, its wall time, and the peak
    memory and the CPU% of its processes (None when the sandbox did not see its test step end)."""

    passed: int
    total: int
    seconds: float
    memory_mb: float | None = None
    cpu_pct: float | None = None

    @property
    def succeeded(self) -> bool:
        """RAL-Bench's "suite passed": something ran and nothing failed."""
        return self.total > 0 and self.passed == self.total


@dataclass(frozen=True)
class Measures:
    """The raw figures of one repository (the reference or a candidate) the five scores compare."""

    findings: int
    mi_min: float
    suites: Mapping[str, SuiteRun] = field(default_factory=dict)


@dataclass(frozen=True)
class NonFunctionalScores:
    """The five dimension scores (0-1, None = not measured), why any is missing, and their combination."""

    scores: Mapping[str, float | None]
    missing: Mapping[str, str] = field(default_factory=dict)

    @property
    def non_functional(self) -> float | None:
        return non_functional(self.scores)

    def as_percent(self) -> dict[str, float | None]:
        """The figures as LiveCoder Table 1 prints them (%), non_functional included."""
        values: dict[str, float | None] = {name: None if value is None else value * 100
                                           for name, value in self.scores.items()}
        combined = self.non_functional
        values["non_functional"] = None if combined is None else combined * 100
        return values


NO_RESOURCE_SUITE = "the task has no resource suite, or the reference's was not run"
NO_REFERENCE_USAGE = ("not measured: the sandbox did not see the reference's resource run end (stopped by the host, "
                      "or its launcher died), so there is nothing to compare with")


def score_measures(reference: Measures, candidate: Measures) -> NonFunctionalScores:
    """The five scores of `candidate` against `reference` (both measured the same way, here)."""
    scores: dict[str, float | None] = {
        "maintainability": maintainability_score(reference.mi_min, candidate.mi_min),
        "security": security_score(reference.findings, candidate.findings),
    }
    missing: dict[str, str] = {}
    robust = candidate.suites.get("robustness")
    scores["robustness"] = None if robust is None else robustness_score(robust.passed, robust.total)
    if robust is None:
        missing["robustness"] = "the task has no robustness suite"
    run, base = candidate.suites.get("performance"), reference.suites.get("performance")
    scores["efficiency"] = (None if run is None or base is None
                            else efficiency_score(base.seconds, run.seconds, suite_passed=run.succeeded))
    if run is None or base is None:
        missing["efficiency"] = "the task has no performance suite, or the reference's was not run"
    run, base = candidate.suites.get("resource"), reference.suites.get("resource")
    if run is None or base is None or base.memory_mb is None:
        scores["resource"] = None
        missing["resource"] = NO_RESOURCE_SUITE if run is None or base is None else NO_REFERENCE_USAGE
    else:  # a candidate whose run was stopped before the sandbox measured it scores 0, as RAL-Bench scores it
        scores["resource"] = resource_score(base.memory_mb, run.memory_mb or 0.0, base.cpu_pct, run.cpu_pct,
                                            suite_passed=run.succeeded and run.memory_mb is not None)
    return NonFunctionalScores(scores={name: scores[name] for name in DIMENSIONS}, missing=missing)


def measure(task: Task, repository: Mapping[str, str], runner: SandboxRunner) -> Measures:
    """A repository's raw figures: the static ones read from its text here (nothing of it runs), and
    its robustness, performance and resource suites run in the sandbox (`SandboxRunner.evaluate`): their
    pass counts, and the test step's wall time, peak memory and CPU% as the sandbox's launcher measured
    them (when it did not, the run's whole duration and no memory or CPU)."""
    suites = {}
    for name in ("robustness", "performance", "resource"):
        if name in task.suites:
            report = runner.evaluate(task, repository, name)
            usage = report.usage
            suites[name] = SuiteRun(passed=report.passed, total=report.total,
                                    seconds=usage.wall_seconds if usage else report.duration,
                                    memory_mb=usage.peak_memory_mb if usage else None,
                                    cpu_pct=usage.cpu_percent if usage else None)
    return Measures(findings=high_risk_findings(repository, task.package),
                    mi_min=lowest_maintainability(repository, task.package), suites=suites)


def score_candidate(task: Task, repository: Mapping[str, str], runner: SandboxRunner,
                    reference: Measures | None = None) -> NonFunctionalScores:
    """The five scores of a candidate of a task with a reference; `reference`: its measures when already
    taken (they are the same for every candidate of the task)."""
    if reference is None:
        reference = measure(task, task.reference_repository(), runner)
    return score_measures(reference, measure(task, repository, runner))


def mean_scores(per_task: Iterable[NonFunctionalScores]) -> dict[str, float | None]:
    """A dataset's figures (%): each dimension and non_functional averaged over the tasks (a dimension
    missing on any task is None: a mean over a subset would not be the paper's figure)."""
    rows = [scores.as_percent() for scores in per_task]
    names = (*DIMENSIONS, "non_functional")
    if not rows:
        return dict.fromkeys(names)
    return {name: None if any(row[name] is None for row in rows)
            else math.fsum(row[name] for row in rows) / len(rows)  # type: ignore[misc]
            for name in names}
