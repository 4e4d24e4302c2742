"""The ProjectGen agents and judges, offline: scripted or prompt-reading fake models, a real sandbox for the
code judge (bundled `kvstore` task, two sandbox runs shared by the whole module)."""
from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from string import Template
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from projectgen.agents import (
    Agents,
    Architect,
    ArchitectureGenerator,
    ArchitectureJudge,
    ArchitectureReviewer,
    CheckStatus,
    CodeGenerator,
    CodeJudge,
    Coder,
    CodeReviewer,
    KnowledgeExtractor,
    LessonExtractor,
    ModelGateway,
    SkeletonGenerator,
    SkeletonJudge,
    SkeletonReviewer,
    SkeletonWriter,
    Verdict,
    combine_verdicts,
    compile_errors,
    structure_problems,
)
from projectgen.agents.architect import ssat_json
from projectgen.agents.code_judge import error_log, mentioned_files
from projectgen.agents.coder import FORMAT_INSTRUCTIONS, interface_of
from projectgen.config import EditFormat, Settings
from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.datasets.task import Documents, Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import CollectionError, Outcome, TestReport, TestResult
from projectgen.evaluation.runner import SandboxRunner
from projectgen.graphs import RunContext, code_stage, initial_state
from projectgen.graphs.state import ssat_data
from projectgen.llm import ModelRoles, ScriptedChatModel, UsageRecorder
from projectgen.llm.parsing import StructuredOutputError
from projectgen.prompts import Prompt, load_prompt, prompt_names
from projectgen.repository.edits import EditOutcome
from projectgen.oracles.reference_replay import Breakage, break_function
from projectgen.ssat import SSAT, SSATValidationError, render_file, render_stub, render_tree, validate_ssat_json

F = "```"

# --------------------------------------------------------------------------- fixtures and helpers

TREE: dict[str, Any] = {
    "project_name": "calc",
    "description": "A tiny calculator.",
    "modules": [{"path": "calc", "description": "The package."}],
    "files": [
        {"path": "calc/__init__.py"},
        {"path": "calc/errors.py", "description": "Errors.",
         "classes": [{"name": "CalcError", "bases": ["Exception"], "description": "Base error."}]},
        {"path": "calc/core.py", "description": "Core arithmetic.", "dependencies": ["calc/errors.py"],
         "imports": ["import math"],
         "classes": [{"name": "Calculator", "description": "Keeps a running total.",
                      "attributes": [{"name": "total", "type": "float", "description": "Current value."}],
                      "methods": [
                          {"name": "add", "description": "Add two numbers.", "returns": "float",
                           "parameters": [{"name": "self"}, {"name": "a", "type": "float"},
                                          {"name": "b", "type": "float", "default": "0.0"}]},
                          {"name": "reset", "description": "Set the total to zero.",
                           "parameters": [{"name": "self"}]}]}],
         "functions": [{"name": "evaluate", "description": "Evaluate an expression.", "returns": "float",
                        "parameters": [{"name": "expression", "type": "str"},
                                       {"name": "precision", "type": "int", "default": "2"},
                                       {"name": "strict", "type": "bool", "default": "False",
                                        "kind": "keyword_only"}]}]},
        {"path": "README.md", "description": "How to use it."},
    ],
}
DOCS = Documents(prd="PRD-MARKER: a calculator that adds numbers and evaluates expressions.",
                 uml_class="UML-CLASS-MARKER Calculator --> CalcError")


def tree() -> SSAT:
    return validate_ssat_json(TREE)


def stubs(ssat: SSAT) -> dict[str, str]:
    """A skeleton matching the tree exactly: the rendered stub of every .py file."""
    return {f.path: render_stub(f) for f in ssat.files() if f.path.endswith(".py")}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def scripted(*responses: dict[str, Any], **kwargs: Any) -> Any:
    return ScriptedChatModel.from_responses(list(responses), **kwargs)


class PromptModel(BaseChatModel):
    """Answers with `answer(prompt text)` (or a fixed text); remembers every prompt and its call metadata."""

    answer: Any = ""
    prompts: list[str] = Field(default_factory=list)
    call_metadata: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "prompt-reading-fake"

    def _generate(self, messages: list[Any], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        text = "\n".join(str(m.content) for m in messages)
        self.prompts.append(text)
        self.call_metadata.append(dict(getattr(run_manager, "metadata", None) or {}))
        reply = self.answer(text) if callable(self.answer) else self.answer
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


def gateway() -> ModelGateway:
    return ModelGateway(recorder=UsageRecorder(), retries=0)


def only_record(gw: ModelGateway) -> Any:
    assert gw.recorder is not None
    records = gw.recorder.records
    assert len(records) == 1, records
    return records[0]


# --------------------------------------------------------------------------- prompts


def test_every_bundled_prompt_loads_with_both_parts_and_fills_completely():
    names = prompt_names()
    assert set(names) >= {"architect", "architecture_judge", "skeleton", "skeleton_judge", "coder", "repair",
                          "code_judge"}
    for name in names:
        prompt = load_prompt(name)
        assert prompt.name == name
        assert prompt.system.strip() and prompt.user.strip(), name
        assert "=== user ===" not in prompt.system + prompt.user
        placeholders = set(Template(prompt.system).get_identifiers()) | set(Template(prompt.user).get_identifiers())
        (system, system_text), (human, human_text) = prompt.messages(**{p: f"<{p}>" for p in placeholders})
        assert (system, human) == ("system", "human")
        assert "${" not in system_text + human_text
        assert all(f"<{p}>" in system_text + human_text for p in placeholders)


def test_prompt_with_a_missing_value_raises_naming_it():
    prompt = Prompt.from_text("System ${tone}.\n=== user ===\nHello ${who}, about ${topic}.\n", "greeting")
    assert prompt.messages(tone="calm", who="Ada", topic="tests") == [
        ("system", "System calm.\n"), ("human", "Hello Ada, about tests.\n")]
    with pytest.raises(ProjectGenError, match=r"'greeting'.*'topic'"):
        prompt.messages(tone="calm", who="Ada")
    with pytest.raises(ProjectGenError):
        load_prompt("architect").messages(prd="only the prd")


def test_prompt_from_text_needs_the_separator_and_unknown_names_fail():
    with pytest.raises(ProjectGenError, match="=== user ==="):
        Prompt.from_text("no separator here")
    with pytest.raises(ProjectGenError, match="no bundled prompt named 'nope'"):
        load_prompt("nope")


def test_json_braces_in_prompts_survive_substitution():
    prompt = load_prompt("architect")
    system, _ = prompt.messages(prd="p", uml_class="u", uml_sequence="s", architecture_design="a", starter="", revision="", guidance="")
    assert '"project_name": "name"' in system[1]


def test_agents_take_a_custom_prompt():
    model = PromptModel(answer=f"{F}python\nx = 1\n{F}")
    custom = Prompt.from_text("CUSTOM SYSTEM\n=== user ===\nWrite ${path} (${overview}${file_spec}${revision})")
    code = run(SkeletonWriter(model, prompt=custom).write(gateway(), tree(), "calc/errors.py", iteration=1))
    assert code == "x = 1\n"
    assert model.prompts[0].startswith("CUSTOM SYSTEM\n\nWrite calc/errors.py (Project calc")


# --------------------------------------------------------------------------- architect

VALID_REPLY = json.dumps(TREE)


def test_architect_valid_reply_gives_the_tree_and_records_the_call():
    model = scripted({"role": "architect", "content": TREE})
    gw = gateway()
    ssat = run(Architect(model).design(gw, DOCS, iteration=1))
    assert ssat == tree()
    assert [f.path for f in ssat.files()] == ["README.md", "calc/__init__.py", "calc/core.py", "calc/errors.py"]
    record = only_record(gw)
    assert (record.role, record.stage, record.iteration, record.target) == ("architect", "architecture", 1, None)
    assert model.calls[0]["role"] == "architect"


@pytest.mark.parametrize("reply", [
    f"Here is the architecture you asked for:\n\n{F}json\n{VALID_REPLY}\n{F}\n\nLet me know if it needs changes.",
    f"Sure! {VALID_REPLY} That is all.",
    f"{F}\n{json.dumps(TREE, indent=2)}\n{F}",
])
def test_architect_reads_json_wrapped_in_prose_or_fences(reply):
    ssat = run(Architect(scripted({"role": "architect", "content": reply})).design(gateway(), DOCS, iteration=1))
    assert ssat == tree()


@pytest.mark.parametrize("reply", [
    "Sorry, I cannot design this project.",
    '{"project_name": "calc" "files": ]}',
    '{"project_name": ]',
])
def test_architect_unreadable_json_raises_structured_output_error(reply):
    with pytest.raises(StructuredOutputError):
        run(Architect(scripted({"role": "architect", "content": reply})).design(gateway(), DOCS, iteration=1))


@pytest.mark.parametrize("bad_path", ["../evil.py", "/etc/evil.py", "calc/../../evil.py"])
def test_architect_rejects_paths_outside_the_repository(bad_path):
    data = json.loads(VALID_REPLY)
    data["files"].append({"path": bad_path, "description": "escape"})
    with pytest.raises(SSATValidationError) as caught:
        run(Architect(scripted({"role": "architect", "content": data})).design(gateway(), DOCS, iteration=1))
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith(f"files[4].path ({bad_path}): unsafe repository path")


def test_architect_invalid_tree_raises_ssat_validation_error_listing_problems():
    data = json.loads(VALID_REPLY)
    data["files"][2]["dependencies"] = ["calc/missing.py"]
    with pytest.raises(SSATValidationError, match="calc/missing.py"):
        run(Architect(scripted({"role": "architect", "content": data})).design(gateway(), DOCS, iteration=1))


def test_architect_rejects_a_cut_off_reply_even_when_the_repaired_json_validates():
    cut = '{"project_name": "calc", "files": [{"path": "calc/a.py"}, {"path": "calc/b.py"'
    with pytest.raises(SSATValidationError, match="cut off"):
        run(Architect(scripted({"role": "architect", "content": cut})).design(gateway(), DOCS, iteration=1))


def test_architect_first_prompt_holds_the_documents_and_no_revision_section():
    model = PromptModel(answer=VALID_REPLY)
    run(Architect(model).design(gateway(), DOCS, iteration=1, feedback="FEEDBACK-MARKER", memory="MEMORY-MARKER"))
    prompt = model.prompts[0]
    assert "PRD-MARKER" in prompt and "UML-CLASS-MARKER" in prompt
    assert "# UML sequence diagram\n(not given)" in prompt  # missing documents are said to be missing
    assert "FEEDBACK-MARKER" not in prompt and "MEMORY-MARKER" not in prompt
    assert "previous architecture" not in prompt
    assert model.call_metadata[0]["projectgen_role"] == "architect"
    assert model.call_metadata[0]["projectgen_iteration"] == 1


def test_architect_revision_prompt_holds_previous_tree_feedback_and_memory():
    model = PromptModel(answer=VALID_REPLY)
    previous = tree()
    run(Architect(model).design(gateway(), DOCS, iteration=2, previous=previous,
                                feedback="FEEDBACK-MARKER: add a subtract method",
                                memory="MEMORY-MARKER: iteration 1 lacked errors.py"))
    prompt = model.prompts[0]
    assert "PRD-MARKER" in prompt
    assert "# Your previous architecture tree\n" + ssat_json(previous) in prompt
    assert "# Reviewer feedback to address\nFEEDBACK-MARKER: add a subtract method" in prompt
    assert "# Relevant earlier revisions\nMEMORY-MARKER: iteration 1 lacked errors.py" in prompt
    assert model.call_metadata[0]["projectgen_iteration"] == 2


def test_architect_revision_without_a_usable_previous_tree_says_so():
    model = PromptModel(answer=VALID_REPLY)
    run(Architect(model).design(gateway(), DOCS, iteration=2, previous=None, feedback="try again"))
    assert "(your previous answer could not be used)" in model.prompts[0]
    assert "Relevant earlier revisions" not in model.prompts[0]  # empty memory: no section


def test_architect_iteration_selects_the_scripted_reply():
    model = scripted({"role": "architect", "iteration": 1, "content": "garbage"},
                     {"role": "architect", "iteration": 2, "content": TREE})
    architect = Architect(model)
    with pytest.raises(StructuredOutputError):
        run(architect.design(gateway(), DOCS, iteration=1))
    assert run(architect.design(gateway(), DOCS, iteration=2, feedback="x")) == tree()
    assert [c["iteration"] for c in model.calls] == [1, 2]


# --------------------------------------------------------------------------- architecture judge

def review(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"scores": {"requirement_coverage": 9, "document_consistency": 8,
                                       "interface_consistency": 9, "dependency_relations": 8},
                            "reasons": "REASONS", "feedback": "FEEDBACK"}
    base.update(fields)
    return base


def judge_architecture(content: Any, threshold: float = 7.0, iteration: int = 1) -> tuple[Verdict, ModelGateway]:
    gw = gateway()
    model = scripted({"role": "architecture_judge", "content": content})
    verdict = run(ArchitectureJudge(model).review(gw, DOCS, tree(), iteration=iteration, threshold=threshold))
    return verdict, gw


def test_architecture_judge_accepts_at_or_above_threshold():
    verdict, gw = judge_architecture(review(overall=8), threshold=7)
    assert verdict.accepted and verdict.score == 8
    assert (verdict.judge, verdict.stage, verdict.iteration) == ("architecture_judge", "architecture", 1)
    assert verdict.feedback == "FEEDBACK" and verdict.reasons == "REASONS"
    assert verdict.scores["document_consistency"] == 8
    record = only_record(gw)
    assert (record.role, record.stage) == ("architecture_judge", "architecture")
    assert judge_architecture(review(overall=7), threshold=7)[0].accepted


def test_architecture_judge_rejects_below_threshold():
    verdict, _ = judge_architecture(review(overall=6.5), threshold=7)
    assert not verdict.accepted and verdict.score == 6.5
    assert verdict.feedback == "FEEDBACK"


def test_architecture_judge_without_overall_uses_the_mean_of_the_scores():
    verdict, _ = judge_architecture(review(), threshold=8.5)  # mean of 9, 8, 9, 8
    assert verdict.score == 8.5 and verdict.accepted
    verdict, _ = judge_architecture(review(scores={"requirement_coverage": 6, "dependency_relations": 8}),
                                    threshold=7.5)
    assert verdict.score == 7 and not verdict.accepted


def test_architecture_judge_clamps_scores_and_an_empty_review_scores_zero():
    verdict, _ = judge_architecture(review(overall=85, scores={"requirement_coverage": -3}), threshold=7)
    assert verdict.score == 10 and verdict.scores == {"requirement_coverage": 0}
    verdict, _ = judge_architecture({}, threshold=1)
    assert verdict.score == 0 and not verdict.accepted


@pytest.mark.parametrize("reply", ["I think it looks great, 9/10!", '{"scores": "high", "overall": "x"}'])
def test_architecture_judge_unreadable_reply_scores_zero_with_feedback(reply):
    verdict, _ = judge_architecture(reply, threshold=0)
    assert verdict.score == 0 and not verdict.accepted
    assert "could not be read" in verdict.feedback


def test_architecture_judge_prompt_holds_documents_and_the_tree():
    model = PromptModel(answer=json.dumps(review(overall=9)))
    ssat = tree()
    run(ArchitectureJudge(model).review(gateway(), DOCS, ssat, iteration=3, threshold=7))
    assert "PRD-MARKER" in model.prompts[0] and ssat_json(ssat) in model.prompts[0]
    assert model.call_metadata[0]["projectgen_iteration"] == 3


STUB = 'def evaluate(expression: str, precision: int = 2, *, strict: bool = False) -> float:\n    """STUB-MARKER"""\n'
STARTER_DOCS = DOCS.model_copy(update={"starter": {"calc/core.py": STUB, "calc/data.txt": "DATA-MARKER"}})


def test_starter_files_are_shown_with_the_documents_and_prompts_without_them_are_unchanged():
    from projectgen.agents import DirectGenerator
    from projectgen.repository.edits import make_whole_file_reply

    for name, call in [("architect", lambda m, d: Architect(m).design(gateway(), d, iteration=1)),
                       ("architecture_judge", lambda m, d: ArchitectureJudge(m).review(gateway(), d, tree(),
                                                                                         iteration=1, threshold=7)),
                       ("direct", lambda m, d: DirectGenerator(m).generate(gateway(), d)),
                       ("self_reflection", lambda m, d: DirectGenerator(m).reflect(
                           gateway(), d, {"calc/core.py": "x = 1\n"}, error_log="", passed=0, total=1, iteration=2))]:
        model = PromptModel(answer=VALID_REPLY if name == "architect" else json.dumps(review(overall=9)))
        run(call(model, STARTER_DOCS))
        run(call(model, DOCS))
        with_starter, without = model.prompts
        assert "# Starter files" in with_starter, name
        assert f"calc/core.py\n{F}python\n{STUB}{F}" in with_starter and "calc/data.txt\n```\nDATA-MARKER\n```" \
            in with_starter, name
        # a task without starter files gets the very prompt it got before starter files existed
        before = load_prompt(name)
        old = Prompt(name, before.system, before.user.replace("${starter}", ""))
        assert "Starter" not in without
        values = {"revision": "", "guidance": "", "ssat": ssat_json(tree()), "error_log": "(no log)", "passed": 0,
                  "total": 1, "repository": make_whole_file_reply(["calc/core.py"], {"calc/core.py": "x = 1\n"})}
        expected = "\n".join(text for _, text in old.messages(**values, prd=DOCS.prd, uml_class=DOCS.uml_class,
                                                                uml_sequence="(not given)",
                                                                architecture_design="(not given)"))
        assert without == expected, name


# --------------------------------------------------------------------------- skeleton writer


def test_skeleton_writer_extracts_the_python_block_and_prompts_with_the_file_design():
    reply = (f"Here is the skeleton.\n{F}bash\npip install calc\n{F}\n{F}python\n"
             f"class CalcError(Exception):\n    pass\n{F}\nDone.")
    model = PromptModel(answer=reply)
    gw = gateway()
    code = run(SkeletonWriter(model).write(gw, tree(), "calc/errors.py", iteration=1,
                                            feedback="FEEDBACK-MARKER"))
    assert code == "class CalcError(Exception):\n    pass\n"
    prompt = model.prompts[0]
    assert render_file(tree(), "calc/errors.py") in prompt and render_tree(tree()) in prompt
    assert "FEEDBACK-MARKER" not in prompt  # first iteration: no revision section
    record = only_record(gw)
    assert (record.role, record.stage, record.target, record.iteration) == ("skeleton", "skeleton",
                                                                            "calc/errors.py", 1)


def test_skeleton_writer_takes_an_unfenced_reply_as_the_code():
    model = scripted({"role": "skeleton", "target": "calc/errors.py", "content": "\n\nclass CalcError(Exception):\n"
                                                                                 "    pass"})
    code = run(SkeletonWriter(model).write(gateway(), tree(), "calc/errors.py", iteration=1))
    assert code == "class CalcError(Exception):\n    pass\n"


def test_skeleton_writer_leaves_a_bare_init_empty_without_a_model_call():
    model = scripted()  # any call would raise ScriptExhaustedError
    gw = gateway()
    assert run(SkeletonWriter(model).write(gw, tree(), "calc/__init__.py", iteration=1)) == ""
    assert model.calls == [] and gw.recorder.records == []


def test_skeleton_writer_starts_a_starter_file_from_its_text():
    model = PromptModel(answer=f"{F}python\nx = 1\n{F}")
    run(SkeletonWriter(model).write(gateway(), tree(), "calc/core.py", iteration=1, starter=STUB))
    run(SkeletonWriter(model).write(gateway(), tree(), "calc/core.py", iteration=1))
    assert "# Starter file given for this path\nStart from it" in model.prompts[0] and STUB in model.prompts[0]
    assert "Starter" not in model.prompts[1]
    # a file the tree leaves empty is its starter file as given, without a model call
    quiet = scripted()
    assert run(SkeletonWriter(quiet).write(gateway(), tree(), "calc/__init__.py", iteration=1, starter=STUB)) == STUB
    assert quiet.calls == []


def test_skeleton_writer_revision_prompt_holds_previous_feedback_and_memory():
    model = PromptModel(answer=f"{F}python\nx = 1\n{F}")
    run(SkeletonWriter(model).write(gateway(), tree(), "calc/core.py", iteration=2, previous="PREVIOUS = 1\n",
                                    feedback="FEEDBACK-MARKER", memory="MEMORY-MARKER"))
    prompt = model.prompts[0]
    assert f"# Your previous skeleton of this file\n{F}python\nPREVIOUS = 1\n{F}" in prompt
    assert "# Reviewer feedback to address\nFEEDBACK-MARKER" in prompt
    assert "# Relevant earlier revisions\nMEMORY-MARKER" in prompt


# --------------------------------------------------------------------------- skeleton judge


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


# --------------------------------------------------------------------------- coder: fill


CORE_CODE = "import math\n\n\ndef evaluate(expression, precision=2, *, strict=False):\n    return 1.0\n"


def test_coder_fill_prompt_holds_skeleton_and_dependency_interfaces():
    ssat = tree()
    skeleton = stubs(ssat)["calc/core.py"]
    errors_interface = interface_of("calc/errors.py", "class CalcError(Exception):\n    code = 3\n")
    model = PromptModel(answer=f"Implementation:\n{F}python\n{CORE_CODE}{F}\nHope this helps.")
    gw = gateway()
    code = run(Coder(model).fill(gw, ssat, "calc/core.py", skeleton,
                                 dependencies={"calc/errors.py": errors_interface}, iteration=1))
    assert code == CORE_CODE
    prompt = model.prompts[0]
    assert f"# Skeleton of calc/core.py\n{F}python\n{skeleton.rstrip()}\n{F}" in prompt
    assert f"## calc/errors.py\n{F}python\n{errors_interface}{F}" in prompt
    assert render_file(ssat, "calc/core.py") in prompt and render_tree(ssat) in prompt
    record = only_record(gw)
    assert (record.role, record.stage, record.target, record.iteration) == ("coder", "code", "calc/core.py", 1)


def test_coder_fill_without_dependencies_or_tree():
    model = PromptModel(answer=f"{F}python\nx = 1\n{F}")
    code = run(Coder(model).fill(gateway(), None, "tool.py", "x = None\n", dependencies={}))
    assert code == "x = 1\n"
    assert "(none)" in model.prompts[0] and "(no tree)" in model.prompts[0]
    assert "(not in the tree)" in model.prompts[0]


def test_coder_fill_keeps_an_empty_init_empty_without_a_model_call():
    model = scripted()
    gw = gateway()
    assert run(Coder(model).fill(gw, tree(), "calc/__init__.py", "", dependencies={})) == ""
    assert model.calls == [] and gw.recorder.records == []


def test_interface_of_shows_signatures_not_bodies():
    code = "class CalcError(Exception):\n    def explain(self, verbose=False):\n        return 'SECRET'\n"
    interface = interface_of("calc/errors.py", code)
    assert "class CalcError(Exception):" in interface and "def explain(self, verbose=False)" in interface
    assert "SECRET" not in interface
    assert interface_of("calc/bad.py", "def broken(:\n") == "def broken(:\n"


# --------------------------------------------------------------------------- coder: repair


ORIGINAL = "def evaluate(expression):\n    return 0  # BUG\n\n\ndef other():\n    return 2\n"
FIXED = "def evaluate(expression):\n    return eval(expression)\n\n\ndef other():\n    return 2\n"


def repair(reply: str, edit_format: str, content: str = ORIGINAL, **kwargs: Any) -> tuple[Any, PromptModel]:
    model = PromptModel(answer=reply)
    outcome = run(Coder(model).repair(gateway(), "calc/core.py", content, suggestion=kwargs.pop("suggestion", "S"),
                                      error_log=kwargs.pop("error_log", "LOG"), iteration=2,
                                      edit_format=edit_format, **kwargs))
    return outcome, model


def test_coder_repair_whole_file_replaces_the_file():
    outcome, model = repair(f"The fix:\n\ncalc/core.py\n{F}python\n{FIXED}{F}\n", "whole",
                            suggestion="SUGGESTION-MARKER", error_log="ERROR-LOG-MARKER", memory="MEMORY-MARKER")
    assert outcome.well_formed and outcome.failed == []
    assert outcome.repo == {"calc/core.py": FIXED}
    prompt = model.prompts[0]
    assert FORMAT_INSTRUCTIONS["whole"] in prompt
    assert "ERROR-LOG-MARKER" in prompt and "SUGGESTION-MARKER" in prompt
    assert "# Relevant earlier revisions of this file\nMEMORY-MARKER" in prompt
    assert f"# Current content of calc/core.py\n{F}python\n{ORIGINAL.rstrip()}\n{F}" in prompt
    assert model.call_metadata[0]["projectgen_target"] == "calc/core.py"
    assert model.call_metadata[0]["projectgen_iteration"] == 2


def test_coder_repair_search_replace_changes_only_the_matched_lines():
    reply = (f"calc/core.py\n{F}python\n<<<<<<< SEARCH\n    return 0  # BUG\n=======\n"
             f"    return eval(expression)\n>>>>>>> REPLACE\n{F}\n")
    outcome, model = repair(reply, "search_replace")
    assert outcome.well_formed and outcome.changed_paths == ["calc/core.py"]
    assert outcome.repo["calc/core.py"] == FIXED
    assert FORMAT_INSTRUCTIONS["search_replace"] in model.prompts[0]
    assert "Relevant earlier revisions" not in model.prompts[0]  # no memory, no section


def test_coder_repair_search_that_does_not_match_leaves_the_file_unchanged():
    reply = (f"calc/core.py\n{F}python\n<<<<<<< SEARCH\n    return 42  # not in the file\n=======\n"
             f"    return 1\n>>>>>>> REPLACE\n{F}\n")
    outcome, _ = repair(reply, "search_replace")
    assert outcome.failed and not outcome.well_formed
    assert outcome.repo["calc/core.py"] == ORIGINAL
    assert outcome.feedback()


@pytest.mark.parametrize("edit_format,reply", [
    ("whole", f"calc/other.py\n{F}python\nimport os\n{F}\n"),
    ("whole", f"../outside.py\n{F}python\nimport os\n{F}\n"),
    ("search_replace", f"calc/errors.py\n{F}python\n<<<<<<< SEARCH\n=======\nimport os\n>>>>>>> REPLACE\n{F}\n"),
])
def test_coder_repair_refuses_edits_of_other_paths(edit_format, reply):
    outcome, _ = repair(reply, edit_format)
    assert not outcome.well_formed and len(outcome.failed) == 1 and outcome.applied == []
    assert outcome.repo == {"calc/core.py": ORIGINAL}


def test_coder_repair_keeps_the_allowed_edit_and_refuses_the_other():
    reply = f"calc/core.py\n{F}python\n{FIXED}{F}\n\ncalc/other.py\n{F}python\nimport os\n{F}\n"
    outcome, _ = repair(reply, "whole")
    assert outcome.repo == {"calc/core.py": FIXED}
    assert [f.path for f in outcome.failed] == ["calc/other.py"] and not outcome.well_formed
    assert "not one of the files you may edit" in outcome.failed[0].reason


def test_coder_repair_reply_without_edits_is_not_well_formed():
    outcome, _ = repair("I would change the return value.", "whole")
    assert not outcome.well_formed and outcome.repo == {"calc/core.py": ORIGINAL}
    assert "no edits" in outcome.feedback()


# --------------------------------------------------------------------------- code judge: helpers


def _report(tests: list[TestResult], **fields: Any) -> TestReport:
    return TestReport(task_id="t", suite="check", tests=tests, **fields)


def test_error_log_lists_failures_and_truncates():
    report = _report([TestResult(nodeid="t::a", outcome=Outcome.PASSED),
                      TestResult(nodeid="t::b", outcome=Outcome.FAILED, message="assert 1 == 2"),
                      TestResult(nodeid="t::c", outcome=Outcome.ERROR, message="fixture broke")],
                     collection_errors=[CollectionError(nodeid="t2.py", message="ImportError: calc.core")],
                     output_tail="TAIL-MARKER")
    log = error_log(report, 6000)
    assert "FAILED t::b\nassert 1 == 2" in log and "ERROR t::c\nfixture broke" in log
    assert "COLLECTION ERROR t2.py" in log and "t::a" not in log
    assert log.endswith("TAIL-MARKER")
    short = error_log(_report([TestResult(nodeid="t::b", outcome=Outcome.FAILED, message="x" * 500)]), 100)
    assert short.startswith("FAILED t::b") and short.endswith("more characters ...]") and len(short) < 160


def test_mentioned_files_by_path_and_by_module_name():
    paths = ["calc/core.py", "calc/errors.py", "calc/storage.py", "calc/store.py"]
    log = "File calc/errors.py, line 3\nModuleNotFoundError: No module named 'calc.storage'\ncalc.stores here"
    assert mentioned_files(log, paths) == ["calc/errors.py", "calc/storage.py"]


# --------------------------------------------------------------------------- code judge: real sandbox


class MemoRunner:
    """A real `SandboxRunner` whose reports are memoized per (task, suite, repository), to keep runs few."""

    def __init__(self) -> None:
        self.runner = SandboxRunner()
        self.cache: dict[Any, TestReport] = {}
        self.runs = 0

    def evaluate(self, task: Task, candidate: Mapping[str, str], suite: str = "unit") -> TestReport:
        key = (task.id, suite, tuple(sorted(candidate.items())))
        if key not in self.cache:
            self.runs += 1
            self.cache[key] = self.runner.evaluate(task, dict(candidate), suite)
        return self.cache[key]


class FakeRunner:
    """Returns a prepared report (or fails the test if it is asked to run at all)."""

    def __init__(self, report: TestReport | None = None) -> None:
        self.report = report
        self.calls = 0

    def evaluate(self, task: Task, candidate: Any, suite: str = "unit") -> TestReport:
        self.calls += 1
        assert self.report is not None, "the runner must not be used"
        return self.report


@pytest.fixture(scope="module")
def kvstore() -> Task:
    return load_task(example_task_path("kvstore"))


@pytest.fixture(scope="module")
def reference(kvstore: Task) -> dict[str, str]:
    return kvstore.reference_repository()


@pytest.fixture(scope="module")
def broken(reference: dict[str, str]) -> dict[str, str]:
    repo = dict(reference)
    repo["kvstore/store.py"] = break_function(repo["kvstore/store.py"], Breakage("kvstore/store.py", "_expired"))
    assert repo["kvstore/store.py"] != reference["kvstore/store.py"]
    return repo


@pytest.fixture(scope="module")
def sandbox() -> MemoRunner:
    return MemoRunner()


def judge_code(task: Task, repo: Mapping[str, str], model: Any, runner: Any,
               iteration: int = 1) -> tuple[Verdict, ModelGateway]:
    gw = gateway()
    verdict = run(CodeJudge(model).review(gw, task, repo, runner=runner, iteration=iteration))
    return verdict, gw


def test_code_judge_accepts_passing_code_without_a_model_call(kvstore, reference, sandbox):
    model = scripted()  # any call would raise
    verdict, gw = judge_code(kvstore, reference, model, sandbox)
    assert verdict.accepted and verdict.score == 10 and not verdict.stop
    assert verdict.check is not None and verdict.check.status == "passed"
    assert verdict.check.passed == verdict.check.total == 5 and verdict.check.failing == []
    assert verdict.files == {} and verdict.log == ""
    assert model.calls == [] and gw.recorder.records == []


def test_code_judge_broken_code_uses_the_files_the_model_names(kvstore, broken, sandbox):
    answer = json.dumps({"summary": "SUMMARY-MARKER", "files": [
        {"path": "kvstore/store.py", "suggestion": "implement _expired"},
        {"path": "./kvstore/errors.py", "suggestion": ""},  # "./" stripped; empty suggestion -> the summary
        {"path": "check_tests/test_kvstore_check.py", "suggestion": "change the test"},  # not a repo file
    ]})
    model = PromptModel(answer=answer)
    verdict, gw = judge_code(kvstore, broken, model, sandbox, iteration=2)
    assert not verdict.accepted and not verdict.stop
    assert verdict.check is not None and verdict.check.status == "failed"
    assert verdict.check.passed < verdict.check.total == 5 and verdict.check.failing
    assert all(n.startswith("check_tests/test_kvstore_check.py::") for n in verdict.check.failing)
    assert verdict.score == round(10 * verdict.check.passed / 5, 2) < 10
    assert f"{verdict.check.passed} of 5 check tests pass" in verdict.feedback
    assert "NotImplementedError" in verdict.log
    assert verdict.files == {"kvstore/store.py": "implement _expired", "kvstore/errors.py": "SUMMARY-MARKER"}
    prompt = model.prompts[0]
    assert "\n".join(sorted(broken)) in prompt and "NotImplementedError" in prompt
    assert f"{verdict.check.passed} of 5 passed" in prompt
    record = only_record(gw)
    assert (record.role, record.stage, record.iteration) == ("code_judge", "code", 2)


@pytest.mark.parametrize("reply,suggestion", [
    ('{"summary": "S-MARKER", "files": [{"path": "kvstore/ghost.py", "suggestion": "x"}]}', "S-MARKER"),
    ("The store is broken somewhere.", "make the failing check tests pass"),
])
def test_code_judge_falls_back_to_files_the_log_mentions(kvstore, broken, sandbox, reply, suggestion):
    verdict, _ = judge_code(kvstore, broken, scripted({"role": "code_judge", "content": reply}), sandbox)
    assert not verdict.accepted
    assert verdict.files == {"kvstore/store.py": suggestion}


def test_code_judge_runs_the_sandbox_once_per_distinct_repository(sandbox):
    assert sandbox.runs <= 2  # reference + broken, shared by every test above


def test_code_judge_falls_back_to_every_python_file_when_the_log_names_none(kvstore):
    report = _report([TestResult(nodeid="check_tests/t.py::a", outcome=Outcome.FAILED, message="assert 1 == 2"),
                      TestResult(nodeid="check_tests/t.py::b", outcome=Outcome.PASSED)])
    repo = {"pkg/a.py": "x = 1\n", "pkg/b.py": "y = 2\n", "README.md": "docs"}
    runner = FakeRunner(report)
    verdict, _ = judge_code(kvstore, repo, scripted({"role": "code_judge", "content": {"files": []}}), runner)
    assert runner.calls == 1
    assert verdict.files == {"pkg/a.py": "make the failing check tests pass",
                             "pkg/b.py": "make the failing check tests pass"}
    assert verdict.score == 5 and not verdict.accepted
    assert verdict.check == CheckStatus(passed=1, total=2, status="failed", failing=["check_tests/t.py::a"])


def test_code_judge_harness_error_stops_without_a_model_call(kvstore):
    model = scripted()
    verdict, _ = judge_code(kvstore, {"a.py": ""}, model, FakeRunner(_report([], error="venv build failed")))
    assert verdict.stop and not verdict.accepted and verdict.score == 0
    assert "venv build failed" in verdict.feedback and model.calls == []


def test_code_judge_without_check_tests_accepts_without_running(kvstore):
    no_check = kvstore.model_copy(update={"suites": {k: v for k, v in kvstore.suites.items() if k != "check"}})
    assert "check" not in no_check.suites and "unit" in no_check.suites
    runner, model = FakeRunner(), scripted()
    verdict, _ = judge_code(no_check, {"a.py": "broken("}, model, runner)
    assert verdict.accepted and verdict.score == 10 and verdict.check is None
    assert runner.calls == 0 and model.calls == []


# --------------------------------------------------------------------------- combine_verdicts


def verdict(judge: str, score: float, accepted: bool, **fields: Any) -> Verdict:
    return Verdict(judge=judge, stage="code", iteration=2, score=score, accepted=accepted, **fields)


def test_combine_single_verdict_is_unchanged():
    only = verdict("a", 7, True, feedback="f")
    assert combine_verdicts([only]) is only


def test_combine_needs_every_judge_to_accept_and_takes_the_lowest_score():
    check = CheckStatus(passed=1, total=2, status="failed")
    a = verdict("a", 9, True, feedback="A-FB", files={"x.py": "ax", "y.py": "ay"}, check=check, log="LOG-A")
    b = verdict("b", 4, False, feedback="B-FB", files={"x.py": "bx"}, reasons="B-R", stop=True)
    combined = combine_verdicts([a, b])
    assert not combined.accepted and combined.score == 4
    assert combined.judge == "a+b" and (combined.stage, combined.iteration) == ("code", 2)
    assert combined.files == {"x.py": "ax\nbx", "y.py": "ay"}
    assert combined.feedback == "[a] A-FB\n\n[b] B-FB" and combined.reasons == "B-R"
    assert combined.check == check and combined.log == "LOG-A" and combined.stop
    assert combined.scores == {"a": 9, "b": 4}


def test_combine_accepts_when_all_accept_and_keeps_per_judge_scores():
    combined = combine_verdicts([verdict("a", 9, True, scores={"x": 9}), verdict("b", 8, True, scores={"y": 8})])
    assert combined.accepted and combined.score == 8 and not combined.stop
    assert combined.scores == {"a.x": 9, "b.y": 8} and combined.files == {}


# --------------------------------------------------------------------------- gateway and the bundle


def test_gateway_metadata_reaches_the_model_and_picks_the_attempt():
    model = scripted({"role": "architect", "content": "garbage"},
                     {"role": "architect", "attempt": 2, "content": TREE})
    gw = ModelGateway(recorder=UsageRecorder(), metadata={"projectgen_attempt": 2})
    assert run(Architect(model).design(gw, DOCS, iteration=1)) == tree()
    assert model.calls[0]["attempt"] == 2


def test_agents_from_models_gives_each_role_its_model():
    default, coder_model = scripted(label="default"), scripted(label="coder")
    agents = Agents.from_models(ModelRoles(default=default, overrides={"coder": coder_model}))
    assert agents.coder.model is coder_model
    assert all(getattr(agents, name).model is default for name in
               ("architect", "architecture_judge", "skeleton", "skeleton_judge", "code_judge"))
    single = Agents.from_models(default)
    assert single.coder.model is default and single.extra_code_judges == ()
    custom = Coder(coder_model, prompt=Prompt.from_text("s\n=== user ===\nu"))
    swapped = agents.replace(coder=custom)
    assert swapped.coder is custom and agents.coder is not custom and swapped.architect is agents.architect


# --------------------------------------------------------------------------- protocols: a user's own agents


class StubFiller:
    """A user's coder with no base class: it has only the two methods `CodeGenerator` names."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def fill(self, gateway: ModelGateway, ssat: SSAT | None, path: str, skeleton: str, /, *,
                   dependencies: Mapping[str, str], iteration: int, guidance: str) -> str:
        self.calls.append(("fill", path))
        return skeleton.replace("pass\n", "return 0\n")

    async def repair(self, gateway: ModelGateway, path: str, content: str, /, *, suggestion: str, error_log: str,
                     memory: str, iteration: int, edit_format: EditFormat, guidance: str) -> EditOutcome:
        self.calls.append(("repair", path))
        return EditOutcome(format=edit_format, repo={path: content + f"# {suggestion}\n"}, well_formed=True)


class SecondRoundJudge:
    """A user's code judge: names calc/core.py in round 1, accepts round 2; runs nothing."""

    async def review(self, gateway: ModelGateway, task: Task, repository: Mapping[str, str], /, *,
                     runner: SandboxRunner, iteration: int) -> Verdict:
        accepted = iteration > 1
        return Verdict(judge="second_round", stage="code", iteration=iteration, score=10 if accepted else 5,
                       accepted=accepted, files={} if accepted else {"calc/core.py": "checked"})


def test_a_user_agent_that_only_satisfies_the_protocols_runs_in_a_stage(kvstore: Task) -> None:
    coder: CodeGenerator = StubFiller()  # what a type checker checks; isinstance checks the methods exist
    judge: CodeReviewer = SecondRoundJudge()
    assert isinstance(coder, CodeGenerator) and isinstance(judge, CodeReviewer)
    ssat = tree()
    state = {**initial_state(kvstore), "ssat": ssat_data(ssat), "skeleton": stubs(ssat)}
    graph = code_stage(coder, [judge], Settings(code_iterations=3))
    result = run(graph.ainvoke(state, context=RunContext(task=kvstore, runner=SandboxRunner())))
    core = result["repository"]["calc/core.py"]
    assert "return 0" in core and "pass\n" not in core and core.endswith("# checked\n")
    assert [c for c in coder.calls if c[0] == "repair"] == [("repair", "calc/core.py")]
    assert {p for kind, p in coder.calls if kind == "fill"} >= set(stubs(ssat))
    assert result["verdicts"][-1]["accepted"] and result["iterations"]["code"] == 2


def test_the_default_agents_satisfy_their_protocols_and_a_coder_without_repair_does_not() -> None:
    model = scripted()
    pairs = [(Architect(model), ArchitectureGenerator), (ArchitectureJudge(model), ArchitectureReviewer),
             (SkeletonWriter(model), SkeletonGenerator), (SkeletonJudge(model), SkeletonReviewer),
             (Coder(model), CodeGenerator), (CodeJudge(model), CodeReviewer),
             (KnowledgeExtractor(model), LessonExtractor)]
    assert [type(agent).__name__ for agent, protocol in pairs if not isinstance(agent, protocol)] == []

    class FillOnly:
        async def fill(self, *args: Any, **kwargs: Any) -> str:
            return ""

    assert not isinstance(FillOnly(), CodeGenerator)
    assert not isinstance(Coder(model), CodeReviewer)


def test_the_stage_roles_are_the_agents_fields() -> None:
    """describe_agents and --role-model name the agents by STAGE_ROLES: the two lists must not drift."""
    import dataclasses

    from projectgen.agents import Agents
    from projectgen.llm import STAGE_ROLES

    assert tuple(f.name for f in dataclasses.fields(Agents) if f.name != "extra_code_judges") == STAGE_ROLES
