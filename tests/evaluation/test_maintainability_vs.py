"""MI by the Visual Studio formula LiveCoder cites, beside radon's: known answers worked out by hand."""
from __future__ import annotations

import math

import pytest

from projectgen.evaluation.metrics import maintainability_index_vs, maintainability_indices, repository_stats

SOURCE = "def f(a, b):\n    if a:\n        return a + b\n    return b\n"
# By hand: Halstead counts one operator (+) and two operands (a, b), each once: vocabulary 3, length 3,
# volume 3 log2 3; cyclomatic complexity 2 (the function, its if); 4 logical lines.
VOLUME, COMPLEXITY, LINES = 3 * math.log2(3), 2, 4
DOCUMENTED = ("# a comment\n# another\ndef f(a, b):\n    \"\"\"Doc.\"\"\"\n    if a:  # why\n        return a + b\n"
              "    return b\n")


def test_the_visual_studio_formula_on_given_figures():
    # (171 - 5.2 ln 100 - 0.23 * 5 - 16.2 ln 20) * 100 / 171 = (171 - 23.9469 - 1.15 - 48.5309) / 1.71
    assert maintainability_index_vs(100, 5, 20) == pytest.approx(56.9428, abs=1e-4)
    assert maintainability_index_vs(5000, 60, 2000) == 0.0  # -5.98 before MAX(0, ...)
    assert maintainability_index_vs(0, 0, 0) == 100.0  # nothing to measure, as radon scores it


def test_a_files_visual_studio_mi_uses_its_volume_complexity_and_lines():
    radon, vs = maintainability_indices(SOURCE)
    expected = (171 - 5.2 * math.log(VOLUME) - 0.23 * COMPLEXITY - 16.2 * math.log(LINES)) * 100 / 171
    assert vs == pytest.approx(expected) == pytest.approx(81.8563, abs=1e-4)
    assert radon == pytest.approx(vs)  # no comments: radon's comment term adds nothing
    # comments raise radon's MI (here to its cap) but not the Visual Studio one, which has no comment term;
    # the docstring is one more logical line, so VS falls a little
    radon, vs = maintainability_indices(DOCUMENTED)
    assert radon == 100.0
    assert vs == pytest.approx((171 - 5.2 * math.log(VOLUME) - 0.23 * COMPLEXITY - 16.2 * math.log(5)) * 100 / 171)


def test_repository_stats_report_both_means_over_the_parsed_files():
    stats = repository_stats({"a.py": SOURCE, "b.py": DOCUMENTED, "c.py": "def (:\n"})
    assert stats.unparsable_files == 1
    assert stats.mean_maintainability_index_vs == pytest.approx(
        (maintainability_indices(SOURCE)[1] + maintainability_indices(DOCUMENTED)[1]) / 2)
    assert stats.mean_maintainability_index == pytest.approx((81.8563 + 100.0) / 2, abs=1e-4)
