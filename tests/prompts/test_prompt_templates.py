"""The bundled prompt templates: every one loads and fills, missing values are named, JSON braces survive."""
from __future__ import annotations

from string import Template

import pytest

from projectgen.errors import ProjectGenError
from projectgen.prompts import Prompt, load_prompt, prompt_names


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
