"""LiveCoder's non-functional scores: RAL-Bench's arithmetic by hand, the static measures, and a sandboxed run."""
from __future__ import annotations

from pathlib import Path

import pytest

from projectgen.datasets.loaders import load_task
from projectgen.evaluation.nonfunctional import (NO_RESOURCE_SAMPLING, Measures, NonFunctionalScores, SuiteRun,
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


def test_a_dimension_that_cannot_be_measured_leaves_non_functional_unset() -> None:
    reference = Measures(findings=0, mi_min=40.0, suites={"performance": SuiteRun(2, 2, 1.0)})
    candidate = Measures(findings=1, mi_min=40.0, suites={"robustness": SuiteRun(1, 2, 0.5),
                                                         "performance": SuiteRun(2, 2, 2.0)})
    scores = score_measures(reference, candidate)
    assert scores.scores == {"maintainability": 0.5, "security": 0.5, "robustness": 0.5, "efficiency": 0.5,
                             "resource": None}
    assert scores.missing == {"resource": NO_RESOURCE_SAMPLING}
    assert scores.non_functional is None and scores.as_percent()["non_functional"] is None
    full = NonFunctionalScores(scores={**scores.scores, "resource": 1.0})
    assert full.non_functional == pytest.approx(0.36 * 0.5 + 0.24 * 0.5 + 0.16 * 0.5 + 0.12 * 0.5 + 0.12)
    assert mean_scores([full, full])["non_functional"] == pytest.approx(full.non_functional * 100)
    assert mean_scores([full, scores])["resource"] is None  # a mean over a subset is not the paper's figure


def test_a_ralbench_candidate_is_scored_in_the_sandbox_against_its_reference(env_cache: Path) -> None:
    task = load_task(RALBENCH / "tasks" / "Wordcount")
    runner = SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=120))
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
