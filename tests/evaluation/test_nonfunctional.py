"""LiveCoder's non-functional scores: RAL-Bench's arithmetic by hand, the static measures, and a sandboxed run."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from projectgen.datasets.loaders import load_task
from projectgen.evaluation.nonfunctional import (NO_REFERENCE_USAGE, NO_RESOURCE_SUITE, Measures, NonFunctionalScores,
                                                 SuiteRun,
                                                 efficiency_score, high_risk_findings, lowest_maintainability,
                                                 maintainability_score, mean_scores, resource_score,
                                                 robustness_score, score_candidate, score_measures, security_score)
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

RALBENCH = Path(__file__).parents[1] / "datasets" / "benchmark_layouts" / "ralbench"


def test_each_dimension_follows_ral_benchs_formula() -> None:
    assert security_score(0, 0) == 1.0 and security_score(2, 0) == 1.0  # safer than the reference: capped
    assert security_score(1, 3) == pytest.approx(0.5)  # (1 + 1) / (3 + 1)
    assert security_score(-1, 0) == 0.0
    assert maintainability_score(50.0, 50.0) == pytest.approx(0.5)  # equal MI is the midpoint, r / (1 + r)
    assert maintainability_score(50.0, 150.0) == pytest.approx(0.75)
    assert maintainability_score(0.0, 40.0) == 0.0 and maintainability_score(40.0, 0.0) == 0.0
    assert robustness_score(3, 4) == 0.75 and robustness_score(0, 0) == 0.0
    assert efficiency_score(2.0, 4.0, suite_passed=True) == 0.5
    assert efficiency_score(2.0, 1.0, suite_passed=True) == 1.0  # faster than the reference: capped
    assert efficiency_score(2.0, 1.0, suite_passed=False) == 0.0  # a failed suite scores nothing
    assert resource_score(30.0, 60.0, 90.0, 45.0, suite_passed=True) == pytest.approx(0.75)  # (0.5 + 1) / 2
    assert resource_score(30.0, 60.0, None, 45.0, suite_passed=True) == pytest.approx(0.5)  # memory alone
    assert resource_score(30.0, 60.0, 90.0, 45.0, suite_passed=False) == 0.0


def test_high_risk_calls_are_counted_as_ral_bench_counts_them() -> None:
    repo = {
        "pkg/__init__.py": "import os, subprocess\nfrom pickle import loads as undump\n"
                           "eval('1')\nos.system('ls')\nsubprocess.run('ls', shell=True)\nsubprocess.run(['ls'])\n"
                           "undump(b'')\nexec('x = 1')\n",
        "pkg/broken.py": "eval(\n",  # does not parse: no finding
        "pkg/tests/test_x.py": "eval('1')\n",  # tests are not scanned
        "setup.py": "eval('1')\n",  # outside the package
    }
    assert high_risk_findings(repo, "pkg") == 5
    assert high_risk_findings(repo) == 6  # no package given: every non-test file
    assert high_risk_findings({"a.py": "x = 1\n"}, "pkg") == 0


def test_the_lowest_file_mi_is_taken_and_an_unparsable_file_scores_zero() -> None:
    simple = "def f(x):\n    return x + 1\n"
    branchy = "def g(x):\n" + "".join(f"    if x == {i}:\n        return {i} * x + {i}\n" for i in range(30))
    low = lowest_maintainability({"p/a.py": simple, "p/b.py": branchy, "p/empty.py": "# nothing\n"}, "p")
    assert 0 < low < lowest_maintainability({"p/a.py": simple}, "p")
    assert lowest_maintainability({"p/a.py": simple, "p/bad.py": "def (\n"}, "p") == 0.0
    assert lowest_maintainability({}, "p") == 0.0


def test_the_maintainability_dimension_takes_the_visual_studio_mi_livecoder_cites_not_radons() -> None:
    """radon's MI adds a comment term: docstrings alone would raise a candidate's maintainability score."""
    bare = "def g(x):\n" + "".join(f"    if x == {i}:\n        return {i} * x + {i}\n" for i in range(8))
    documented = '"""' + "Explains g at length.\n" * 10 + '"""\n' + bare
    # no comment term: a docstring is a line more, never a bonus
    assert lowest_maintainability({"p/a.py": documented}, "p") <= lowest_maintainability({"p/a.py": bare}, "p")
    from projectgen.evaluation.metrics import maintainability_indices

    radon_bare, vs_bare = maintainability_indices(bare)
    radon_documented, _ = maintainability_indices(documented)
    assert radon_documented > radon_bare  # what radon's MI would have rewarded
    assert lowest_maintainability({"p/a.py": bare}, "p") == pytest.approx(vs_bare)


def test_the_maintainability_index_is_the_visual_studio_formula_on_counts_made_by_hand() -> None:
    """MAX(0, (171 - 5.2 ln V - 0.23 G - 16.2 ln L) x 100 / 171) per file: V the Halstead volume, G the file's
    decision points + 1, L its logical lines."""
    def visual_studio(volume: float, complexity: int, lines: int) -> float:
        return max(0.0, (171 - 5.2 * math.log(volume) - 0.23 * complexity - 16.2 * math.log(lines)) * 100 / 171)

    small = "def f(a, b):\n    # the larger minus the smaller\n    if a > b:\n        return a - b\n    return a + b\n"
    # operators > - + (3 distinct, 3 in all), operands a b (2 distinct, 6 in all): V = 9 log2 5; one if: G = 2
    assert lowest_maintainability({"p/a.py": small}, "p") == pytest.approx(visual_studio(9 * math.log2(5), 2, 4))
    two = small + "\n\ndef g(items):\n    total = 0\n    for item in items:\n        total += item\n    return total\n"
    # + a for loop (G = 3) and `total += item`: one more +, as radon keys an operator by its AST op (4 operators
    # in all, 3 distinct) and the operands total, item (8 in all, 4 distinct): V = 12 log2 7; 9 logical lines
    assert lowest_maintainability({"p/b.py": two}, "p") == pytest.approx(visual_studio(12 * math.log2(7), 3, 9))
    assert lowest_maintainability({"p/a.py": small, "p/b.py": two}, "p") == pytest.approx(
        visual_studio(12 * math.log2(7), 3, 9))  # the lowest file's
    from projectgen.evaluation.metrics import maintainability_indices

    assert maintainability_indices(small)[0] > maintainability_indices(small)[1] + 10  # radon's: the comment counts


def test_a_dimension_that_cannot_be_measured_leaves_non_functional_unset() -> None:
    reference = Measures(findings=0, mi_min=40.0, suites={"performance": SuiteRun(2, 2, 1.0)})
    candidate = Measures(findings=1, mi_min=40.0, suites={"robustness": SuiteRun(1, 2, 0.5),
                                                         "performance": SuiteRun(2, 2, 2.0)})
    scores = score_measures(reference, candidate)
    assert scores.scores == {"maintainability": 0.5, "security": 0.5, "robustness": 0.5, "efficiency": 0.5,
                             "resource": None}
    assert scores.missing == {"resource": NO_RESOURCE_SUITE}
    assert scores.non_functional is None and scores.as_percent()["non_functional"] is None
    full = NonFunctionalScores(scores={**scores.scores, "resource": 1.0})
    assert full.non_functional == pytest.approx(0.36 * 0.5 + 0.24 * 0.5 + 0.16 * 0.5 + 0.12 * 0.5 + 0.12)
    assert mean_scores([full, full])["non_functional"] == pytest.approx(full.non_functional * 100)
    assert mean_scores([full, scores])["resource"] is None  # a mean over a subset is not the paper's figure


def test_resource_compares_the_sandboxs_measures_and_an_unmeasured_candidate_scores_zero() -> None:
    reference = Measures(findings=0, mi_min=40.0, suites={"resource": SuiteRun(1, 1, 1.0, memory_mb=30.0,
                                                                                cpu_pct=90.0)})
    lean = Measures(findings=0, mi_min=40.0, suites={"resource": SuiteRun(1, 1, 1.0, memory_mb=30.0, cpu_pct=45.0)})
    heavy = Measures(findings=0, mi_min=40.0, suites={"resource": SuiteRun(1, 1, 1.0, memory_mb=120.0, cpu_pct=90.0)})
    assert score_measures(reference, lean).scores["resource"] == 1.0
    assert score_measures(reference, heavy).scores["resource"] == pytest.approx((0.25 + 1.0) / 2)
    stopped = Measures(findings=0, mi_min=40.0, suites={"resource": SuiteRun(1, 1, 1.0)})  # the sandbox saw no end
    assert score_measures(reference, stopped).scores["resource"] == 0.0  # as RAL-Bench scores a missing figure
    unmeasured = score_measures(stopped, lean)  # nothing to compare with: not measured, not "bad"
    assert unmeasured.scores["resource"] is None and unmeasured.missing["resource"] == NO_REFERENCE_USAGE


@pytest.fixture(scope="module")
def ralbench_runner(env_cache: Path) -> SandboxRunner:
    """One runner for the module: the reference's runs are made once (`SandboxRunner.recent`)."""
    return SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=120))


def test_a_ralbench_candidate_is_scored_in_the_sandbox_against_its_reference(ralbench_runner: SandboxRunner) -> None:
    task = load_task(RALBENCH / "tasks" / "Wordcount")
    runner = ralbench_runner
    reference = task.reference_repository()
    functional = runner.evaluate(task, reference)
    assert (functional.passed, functional.total) == (3, 3)  # the tests find the workspace through RACB_REPO_ROOT
    same = score_candidate(task, reference, runner)
    assert same.scores["robustness"] == 1.0 and same.scores["security"] == 1.0
    assert same.scores["maintainability"] == pytest.approx(0.5)
    # the performance tests find the candidate only in generation/Wordcount: its second copy in the workspace
    assert runner.evaluate(task, reference, "performance").passed == 1
    assert 0 < same.scores["efficiency"] <= 1.0
    risky = {"wordcount/__init__.py": reference["wordcount/__init__.py"].replace(
        'raise TypeError("text must be a str")', "text = eval('str(text)')")}
    worse = score_candidate(task, risky, runner)
    assert worse.scores["security"] == pytest.approx(0.5)  # one finding against none
    assert worse.scores["robustness"] == 0.5  # bytes are no longer refused


HOARD_MB = 150


def test_a_candidate_that_hoards_memory_scores_worse_on_resource_and_cannot_forge_its_figures(
        ralbench_runner: SandboxRunner) -> None:
    """Resource as the sandbox measures it (the launcher's wait4 rusage, outside the code under test): the
    reference against itself scores 1 and fills non_functional; a candidate holding HOARD_MB that also writes
    fake measurement files (RAL-Bench's baseline and result files, a usage file) and prints fake launcher
    status lines scores less, measured all the same."""
    task = load_task(RALBENCH / "tasks" / "Wordcount")
    runner = ralbench_runner
    lean = task.reference_repository()
    hoarder = {**lean, "wordcount/forge.py": FORGE, "wordcount/__init__.py": lean["wordcount/__init__.py"]
               + f"\n_HOARD = b'x' * ({HOARD_MB} * 1024 * 1024)\nfrom wordcount import forge  # noqa: E402,F401\n"}
    same = score_candidate(task, lean, runner)
    assert same.scores["resource"] == 1.0 and same.missing == {}
    assert same.non_functional is not None  # every dimension measured: Table 1's combined figure is filled
    heavy = score_candidate(task, hoarder, runner)
    assert heavy.scores["resource"] < same.scores["resource"]
    assert heavy.scores["robustness"] == same.scores["robustness"] == 1.0  # it works: only its memory differs
    report = runner.evaluate(task, hoarder, "resource")  # the run just made (`SandboxRunner.recent`)
    assert report.passed == report.total == 1 and not report.tampered
    assert report.usage is not None and report.usage.peak_memory_mb > HOARD_MB


# Writes every measurement file a test harness might read and prints what a launcher's status line looks like.
FORGE = """import json, os, sys
import math
from pathlib import Path

root = Path(os.environ.get("RACB_REPO_ROOT", "."))
fake = {"avg_memory_mb": 0.01, "avg_cpu_percent": 0.01, "peak_memory_mb": 0.01, "cpu_seconds": 0.0}
for path in ("usage.json", "resource_usage.json", "results/resource.json", "tasks/Wordcount/wordcount.yaml"):
    try:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"resource": fake, "baseline_metrics": {"resource": fake}}))
    except OSError:
        pass
print("ended 0 finished 0 1 1 1")
sys.stderr.write("ended 0 finished 0 1 1 1\\n")
"""
