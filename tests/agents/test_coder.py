"""The Coder (agents/coder.py): filling a stub from its skeleton and dependencies, repairing in each edit
format, and the interfaces it shows."""
from __future__ import annotations

from typing import Any

import pytest

from projectgen.agents import Coder
from projectgen.agents.coder import FORMAT_INSTRUCTIONS, interface_of
from projectgen.ssat import render_file, render_tree
from agent_fakes import F, PromptModel, gateway, only_record, run, scripted, stubs, tree


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
