"""The SkeletonWriter (agents/skeleton.py): stubs from replies, starter files, revision prompts, a custom
prompt."""
from __future__ import annotations

from projectgen.agents import SkeletonWriter
from projectgen.prompts import Prompt
from projectgen.ssat import render_file, render_tree
from agent_fakes import F, STUB, PromptModel, gateway, only_record, run, scripted, tree


def test_agents_take_a_custom_prompt():
    model = PromptModel(answer=f"{F}python\nx = 1\n{F}")
    custom = Prompt.from_text("CUSTOM SYSTEM\n=== user ===\nWrite ${path} (${overview}${file_spec}${revision})")
    code = run(SkeletonWriter(model, prompt=custom).write(gateway(), tree(), "calc/errors.py", iteration=1))
    assert code == "x = 1\n"
    assert model.prompts[0].startswith("CUSTOM SYSTEM\n\nWrite calc/errors.py (Project calc")


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
