"""The Architect (agents/architect.py): the tree from a reply, its prompts, and the documents every
prompt shows (starter files included)."""
from __future__ import annotations

import json

import pytest

from projectgen.agents import Architect, ArchitectureJudge
from projectgen.agents.architect import ssat_json
from projectgen.llm.parsing import StructuredOutputError
from projectgen.prompts import Prompt, load_prompt
from projectgen.ssat import SSATValidationError
from agent_fakes import DOCS, F, STUB, TREE, VALID_REPLY, PromptModel, gateway, only_record, review, run, scripted, tree


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


STARTER_DOCS = DOCS.model_copy(update={"starter": {"calc/core.py": STUB, "calc/data.txt": "DATA-MARKER"}})


def test_starter_files_are_shown_with_the_documents_and_prompts_without_them_are_unchanged():
    from projectgen.agents import DirectGenerator
    from projectgen.prompts.suite_words import suite_words
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
        values = {"revision": "", "guidance": "", "reflections": "", "ssat": ssat_json(tree()), "error_log": "(no log)", "passed": 0,
                  "total": 1, "repository": make_whole_file_reply(["calc/core.py"], {"calc/core.py": "x = 1\n"}),
                  **suite_words("check").values()}  # the self-reflection prompt names the check tests
        expected = "\n".join(text for _, text in old.messages(**values, prd=DOCS.prd, uml_class=DOCS.uml_class,
                                                                uml_sequence="(not given)",
                                                                architecture_design="(not given)"))
        assert without == expected, name
