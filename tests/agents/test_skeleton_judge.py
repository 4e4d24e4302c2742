"""The SkeletonJudge (agents/skeleton_judge.py): compile errors and structure mismatches found without
a model call, then the model's review."""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pytest

from projectgen.agents import SkeletonJudge, Verdict, compile_errors, structure_problems
from projectgen.ssat import render_tree
from agent_fakes import F, PromptModel, gateway, only_record, run, scripted, stubs, tree


def skeleton_judge_model(score: float = 10, files: Mapping[str, str] | None = None) -> Any:
    return scripted({"role": "skeleton_judge", "content": {"score": score, "feedback": "MODEL-FEEDBACK",
                                                           "files": dict(files or {})}})


def judge_skeleton(files: Mapping[str, str], model: Any, threshold: float = 8) -> Verdict:
    return run(SkeletonJudge(model).review(gateway(), tree(), files, iteration=1, threshold=threshold))


def test_compile_errors_names_each_broken_python_file():
    errors = compile_errors({"a.py": "def f(:\n", "b.py": "x = 1\n", "c.txt": "def (", "d.py": "x = '\0'\0"})
    assert set(errors) == {"a.py", "d.py"}
    assert errors["a.py"].startswith("line 1:")


def test_skeleton_judge_compile_error_scores_zero_without_a_model_call():
    files = stubs(tree())
    files["calc/core.py"] = "def evaluate(expression:\n    pass\n"
    model = skeleton_judge_model(10)
    verdict = judge_skeleton(files, model)
    assert verdict.score == 0 and not verdict.accepted
    assert "calc/core.py" in verdict.feedback and "do not compile" in verdict.feedback
    assert list(verdict.files) == ["calc/core.py"]
    assert model.calls == []


def _drop_reset(code: str) -> str:
    return re.sub(r"\n    def reset\(self\):\n.*?pass\n", "\n", code, flags=re.S)


STRUCTURE_CASES = [
    # (case, path, change of that file (None: remove it), text expected in the report)
    ("missing file", "calc/errors.py", None, "calc/errors.py: file is missing"),
    ("missing class", "calc/errors.py", lambda c: c.replace("class CalcError(Exception):", "class Other(Exception):"),
     "class 'CalcError' is missing"),
    ("missing method", "calc/core.py", _drop_reset, "class Calculator: function 'reset' is missing"),
    ("renamed function", "calc/core.py", lambda c: c.replace("def evaluate(", "def evaluate_expression("),
     "function 'evaluate' is missing"),
    ("parameter renamed", "calc/core.py", lambda c: c.replace("b: float = 0.0", "c: float = 0.0"),
     "add(self, a, c=0.0) should be add(self, a, b=0.0)"),
    ("default changed", "calc/core.py", lambda c: c.replace("precision: int = 2", "precision: int = 3"),
     "evaluate(expression, precision=3, *, strict=False) should be evaluate(expression, precision=2, *, strict=False)"),
    ("parameter missing", "calc/core.py", lambda c: c.replace(", b: float = 0.0", ""),
     "add(self, a) should be add(self, a, b=0.0)"),
    ("kind changed", "calc/core.py", lambda c: c.replace("*, strict", "strict"),
     "evaluate(expression, precision=2, strict=False) should be evaluate(expression, precision=2, *, strict=False)"),
    ("receiver dropped", "calc/core.py", lambda c: c.replace("def add(self, a", "def add(a"),
     "add(a, b=0.0) should be add(self, a, b=0.0)"),
]


@pytest.mark.parametrize("case,path,change,expected", STRUCTURE_CASES, ids=[c[0] for c in STRUCTURE_CASES])
def test_skeleton_judge_reports_structure_mismatches_without_asking_the_model(case, path, change, expected):
    files = stubs(tree())
    if change is None:
        del files[path]
    else:
        changed = change(files[path])
        assert changed != files[path], "the test's change did not apply"
        files[path] = changed
    model = skeleton_judge_model(10)  # would accept, if it were asked
    verdict = judge_skeleton(files, model, threshold=8)
    assert not verdict.accepted and verdict.score < 8
    assert expected in verdict.feedback, verdict.feedback
    assert expected in verdict.files[path]
    assert set(verdict.files) == {path}
    assert verdict.scores == {"exact": verdict.score}
    assert model.calls == []


def test_skeleton_judge_reports_an_extra_file_and_scores_one_point_less_per_problem():
    files = stubs(tree())
    files["calc/extra.py"] = "x = 1\n"
    files["notes.txt"] = "not python: ignored"
    verdict = judge_skeleton(files, skeleton_judge_model(10), threshold=8)
    assert "calc/extra.py: file is not in the architecture tree" in verdict.feedback
    assert set(verdict.files) == {"calc/extra.py"} and verdict.score == 7
    del files["calc/errors.py"]
    files["calc/core.py"] = files["calc/core.py"].replace("def evaluate(", "def other(")
    verdict = judge_skeleton(files, skeleton_judge_model(10), threshold=8)
    assert set(verdict.files) == {"calc/extra.py", "calc/errors.py", "calc/core.py"}
    assert verdict.score == 5 and not verdict.accepted  # 3 problems: 7, 6, 5


def test_structure_problems_of_the_rendered_stubs_is_empty():
    ssat = tree()
    assert structure_problems(ssat, stubs(ssat)) == {}
    # a hand-written skeleton with other bodies, annotations and comments still matches
    written = dict(stubs(ssat))
    written["calc/core.py"] = (
        "import math\nfrom calc import errors\n\n\nclass Calculator:\n    total = 0.0\n\n"
        "    def add(self, a, b=0.0):\n        # add\n        pass\n\n    def reset(self):\n        pass\n\n\n"
        "def evaluate(expression, precision=2, *, strict=False):\n    '''Evaluate.'''\n")
    assert structure_problems(ssat, written) == {}


def test_skeleton_judge_matching_skeleton_lets_the_model_decide():
    files = stubs(tree())
    accepted = judge_skeleton(files, skeleton_judge_model(9), threshold=8)
    assert accepted.accepted and accepted.score == 9
    assert accepted.scores == {"exact": 10.0, "review": 9}
    assert accepted.feedback == "MODEL-FEEDBACK"
    rejected = judge_skeleton(files, skeleton_judge_model(6), threshold=8)
    assert not rejected.accepted and rejected.score == 6


def test_skeleton_judge_prompt_holds_tree_and_skeleton_and_drops_unknown_files():
    files = stubs(tree())
    answer = json.dumps({"score": 7, "feedback": "f", "files": {"calc/core.py": "use math", "ghost.py": "x",
                                                                "calc/__init__.py": "export Calculator"}})
    model = PromptModel(answer=answer)
    gw = gateway()
    verdict = run(SkeletonJudge(model).review(gw, tree(), files, iteration=2, threshold=8))
    assert verdict.files == {"calc/core.py": "use math", "calc/__init__.py": "export Calculator"}
    prompt = model.prompts[0]
    assert render_tree(tree()) in prompt
    assert f"## calc/core.py\n{F}python\n{files['calc/core.py']}{F}" in prompt
    assert "## calc/__init__.py" not in prompt  # empty files are not listed
    record = only_record(gw)
    assert (record.role, record.stage, record.iteration) == ("skeleton_judge", "skeleton", 2)


@pytest.mark.parametrize("reply", ["Looks fine to me.", '{"score": 11}', '{"feedback": "no score"}'])
def test_skeleton_judge_unreadable_review_is_rejected(reply):
    verdict = judge_skeleton(stubs(tree()), scripted({"role": "skeleton_judge", "content": reply}), threshold=0)
    assert not verdict.accepted and verdict.score == 0
    assert "could not be read" in verdict.feedback
