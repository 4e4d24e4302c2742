"""SketchBLEU (ProjectGen Tables 4 and 6): full marks for the reference, less for damaged copies,
components checked by hand on tiny repositories, the CodeS defect fixed, the papers' AVG rows."""
from __future__ import annotations

import math
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

pytest.importorskip("codebleu", reason="the 'sketchbleu' extra is not installed")

import projectgen  # noqa: E402
from projectgen.errors import ProjectGenError  # noqa: E402
from projectgen.evaluation.sketch_dataflow import count_penalty  # noqa: E402
from projectgen.evaluation.sketch_structure import repository_expressions  # noqa: E402
from projectgen.evaluation.sketchbleu import (  # noqa: E402
    MISSING_EXTRA,
    SketchBLEUSettings,
    average_sketchbleu,
    code_tokens,
    sketch_bleu,
)

from test_support import paper_table, with_pass_bodies  # noqa: E402



@pytest.fixture(scope="module")
def kvstore() -> dict[str, str]:
    return projectgen.load_task(projectgen.example_task_path("kvstore")).reference_repository()



def test_the_reference_against_itself_scores_100(kvstore: dict[str, str]) -> None:
    score = sketch_bleu(kvstore, kvstore)
    assert (score.ngram_match, score.weighted_ngram_match, score.structure_match, score.dataflow_match) == (
        pytest.approx(1.0),) * 4
    assert score.total == pytest.approx(100.0)
    assert score.reference_functions == score.candidate_functions > 10


def test_removing_a_file_lowers_the_score(kvstore: dict[str, str]) -> None:
    for removed in sorted(path for path in kvstore if path.endswith(".py")):
        without = {path: text for path, text in kvstore.items() if path != removed}
        score = sketch_bleu(without, kvstore)
        assert score.total < 100 - 1e-6, removed
        assert score.ngram_match < 1 and score.structure_match < 1, removed
    largest = {path: text for path, text in kvstore.items() if path != "kvstore/store.py"}
    score = sketch_bleu(largest, kvstore)
    assert score.total < 60 and score.dataflow_match < 1
    assert score.candidate_functions < score.reference_functions


def test_pass_bodies_lower_the_score(kvstore: dict[str, str]) -> None:
    stubbed = with_pass_bodies(kvstore)
    assert stubbed != kvstore
    score = sketch_bleu(stubbed, kvstore)
    assert score.candidate_functions == score.reference_functions
    assert score.total < 40
    assert max(score.ngram_match, score.structure_match, score.dataflow_match) < 0.5


def test_n_gram_parts_by_hand() -> None:
    # tokens: def f ( x ) : NEWLINE INDENT return x NEWLINE -> 11; renaming x loses 2 of them.
    assert code_tokens("def f(x):\n    return x\n") == ["def", "f", "(", "x", ")", ":", "\n", "    ", "return", "x", "\n"]
    score = sketch_bleu({"a.py": "def f(y):\n    return y\n"}, {"a.py": "def f(x):\n    return x\n"})
    # matched / reference n-grams, n = 1..4: 9/11, 6/10, 4/9, 2/8; equal lengths: no brevity penalty
    assert score.ngram_match == pytest.approx((9 / 11 * 6 / 10 * 4 / 9 * 2 / 8) ** 0.25)
    # unigrams weighted: keywords def, return 1.0, the other 9 reference tokens 0.2 -> 3.4 / 3.8
    assert score.weighted_ngram_match == pytest.approx((3.4 / 3.8 * 6 / 10 * 4 / 9 * 2 / 8) ** 0.25)
    # names are not structure, and the dataflow is the same after renaming variables
    assert (score.structure_match, score.dataflow_match) == (1.0, 1.0)
    assert score.total == pytest.approx(25 * (score.ngram_match + score.weighted_ngram_match + 2))


def test_structure_by_hand() -> None:
    from projectgen.evaluation.sketchbleu import python_parser

    reference = repository_expressions({"pkg/a.py": "def f(x):\n    return x\n"}, python_parser(), {})
    assert sorted(reference) == sorted([
        "(Root (Directory (File)))",
        "(Directory (File (function_definition)))",
        "(File (function_definition name: (identifier) parameters: (parameters) body: (block)))",
        "(function_definition name: (identifier) parameters: (parameters (identifier)) body: (block (return_statement)))",
        "(parameters (identifier))",
        "(block (return_statement (identifier)))",
        "(return_statement (identifier))",
    ])
    score = sketch_bleu({"pkg/a.py": "def f(x):\n    pass\n"}, {"pkg/a.py": "def f(x):\n    return x\n"})
    # the stub keeps Root, Directory, File and parameters; function, block and return differ
    assert score.structure_match == pytest.approx(4 / 7)


def test_structure_counts_are_clipped_not_membership() -> None:
    function = "def f(x):\n    return x\n"
    reference = {"a.py": function, "b.py": function}
    single = {"a.py": function}
    clipped = sketch_bleu(single, reference).structure_match
    membership = sketch_bleu(single, reference, SketchBLEUSettings(structure_counting="membership")).structure_match
    assert clipped < membership


def test_dataflow_pairs_functions_whatever_their_order() -> None:
    f = "def f(x):\n    return x\n"
    g = "def g(a, b):\n    c = a + b\n    return c * a\n"
    assert sketch_bleu({"m.py": g + f}, {"m.py": f + g}).dataflow_match == pytest.approx(1.0)


def test_dataflow_count_penalty_by_hand() -> None:
    reference = {"m.py": "def f(x):\n    return x\n\ndef g(a, b):\n    return a + b\n\ndef h(q):\n    return q\n"}
    candidate = {"m.py": "def f(y):\n    return y\n"}
    score = sketch_bleu(candidate, reference)
    # f pairs with f (or h, the same flow) at 1.0; divided by min(3, 1); 3 > 2 x 1 functions: 1 / (1 + ln(3/2))
    assert score.dataflow_match == pytest.approx(1 / (1 + math.log(3 / 2)))
    assert count_penalty(3, 1) == count_penalty(1, 3) == pytest.approx(1 / (1 + math.log(1.5)))
    assert count_penalty(4, 3) == 1.0 and count_penalty(4, 0) == 0.0


def test_a_dataflow_score_of_0_is_not_counted_as_1(kvstore: dict[str, str]) -> None:
    no_functions = {"kvstore/__init__.py": "VALUE = 1\nNAMES = ['a', 'b']\n"}
    fixed = sketch_bleu(no_functions, kvstore)
    assert fixed.candidate_functions == 0 and fixed.dataflow_match == 0.0
    assert fixed.total == pytest.approx(25 * (fixed.ngram_match + fixed.weighted_ngram_match + fixed.structure_match))
    codes = sketch_bleu(no_functions, kvstore, SketchBLEUSettings(zero_dataflow_counts_as_one=True))
    assert codes.dataflow_match == 0.0
    assert codes.total == pytest.approx(
        25 * (codes.ngram_match + codes.weighted_ngram_match + codes.structure_match + 1))
    assert fixed.to_dict()["settings"]["zero_dataflow_counts_as_one"] is False
    assert codes.to_dict()["settings"]["zero_dataflow_counts_as_one"] is True


def test_functions_without_dataflow_match_each_other_unless_codes_rule() -> None:
    reference = {"m.py": "def name():\n    return 'x'\n\ndef f(x):\n    return x\n"}
    assert sketch_bleu(reference, reference).dataflow_match == pytest.approx(1.0)
    # CodeS scores a pair without reference dataflow 0, so the reference itself stays below 100
    codes_rule = SketchBLEUSettings(empty_dataflow_pairs="zero")
    assert sketch_bleu(reference, reference, codes_rule).dataflow_match == pytest.approx(0.5)


def test_a_reference_without_python_files_is_a_user_error() -> None:
    with pytest.raises(ProjectGenError, match="no .py file"):
        sketch_bleu({"a.py": "x = 1\n"}, {"README.md": "# nothing\n"})


def test_a_missing_extra_fails_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "codebleu.utils", None)
    with pytest.raises(ProjectGenError) as raised:
        sketch_bleu({"a.py": "x = 1\n"}, {"a.py": "x = 1\n"})
    assert str(raised.value) == MISSING_EXTRA and "\n" not in MISSING_EXTRA
    assert "projectgen[sketchbleu]" in MISSING_EXTRA




# Printed AVG cells the paper_tables README lists as typos: not asserted.
AVG_TYPOS = {
    "projectgen_table4_devbench_sketchbleu.csv": {("GPT-4o", "MetaGPT")},
    "projectgen_table6_codeprojecteval_sketchbleu.csv": {("DeepSeek-V3", "ProjectGen")},
}


@pytest.mark.parametrize("name, tasks", [
    ("projectgen_table4_devbench_sketchbleu.csv", 10),
    ("projectgen_table6_codeprojecteval_sketchbleu.csv", 18),
])
def test_average_reproduces_the_printed_avg_rows(name: str, tasks: int) -> None:
    groups: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for row in paper_table(name):
        groups[(row["backbone"], row["method"])][row["task"]] = row["sketchbleu"]
    checked = 0
    for key, cells in groups.items():
        printed = cells.pop("AVG")
        assert len(cells) == tasks, key
        if key in AVG_TYPOS[name]:
            continue
        average = average_sketchbleu(float(value) if value else None for value in cells.values())
        assert average is not None
        # half a unit of the printed AVG, plus the rounding carried in from the printed cells
        tolerance = 2 * 0.5 * 10.0 ** Decimal(printed).as_tuple().exponent
        assert abs(average - float(printed)) <= tolerance, (key, average, printed)
        checked += 1
    assert checked == len(groups) - 1


def test_average_skips_tasks_without_a_value(kvstore: dict[str, str]) -> None:
    assert average_sketchbleu([80.0, None, 90.0]) == pytest.approx(85.0)
    assert average_sketchbleu([None]) is None
    assert average_sketchbleu([sketch_bleu(kvstore, kvstore), 50.0]) == pytest.approx(75.0)


def test_dataflow_does_not_depend_on_the_hash_seed() -> None:
    """codebleu orders merged sources through sets of names; a score must not change with PYTHONHASHSEED."""
    import os
    import subprocess

    code = (
        "from projectgen.evaluation.sketchbleu import python_parser\n"
        "from projectgen.evaluation.sketch_dataflow import dataflow_edges\n"
        "src = 'def f(c, a, b, d):\\n    if c:\\n        x = a + d\\n        y = b\\n    else:\\n"
        "        x = b\\n        y = a\\n    for i in range(3):\\n        x = x + y + i\\n    return x, y\\n'\n"
        "print(repr(dataflow_edges(src, python_parser())))\n"
    )
    root = str(Path(__file__).resolve().parents[2])
    outputs = set()
    for seed in ("0", "1", "4"):  # without the sorting, seed 4 gives another graph than 0 and 1 here
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": root}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
