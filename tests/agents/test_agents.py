"""The agents bundle (projectgen.agents.Agents): a model per role, and roles that match its fields."""
from __future__ import annotations

from projectgen.agents import Agents, Coder
from projectgen.config import Settings
from projectgen.llm import ModelRoles
from projectgen.prompts import Prompt
from agent_fakes import scripted


def test_agents_from_models_gives_each_role_its_model():
    default, coder_model = scripted(label="default"), scripted(label="coder")
    agents = Agents.from_models(ModelRoles(default=default, overrides={"coder": coder_model}))
    assert agents.coder.model is coder_model
    assert all(getattr(agents, name).model is default for name in
               ("architect", "architecture_judge", "skeleton", "skeleton_judge", "code_judge"))
    summarizer = scripted(label="summarizer")
    assert Agents.from_models(ModelRoles(default=default, overrides={"memory_summary": summarizer})
                              ).memory_summarizer.model is summarizer  # distilled memory's own role
    single = Agents.from_models(default)
    assert single.coder.model is default and single.extra_code_judges == ()
    custom = Coder(coder_model, prompt=Prompt.from_text("s\n=== user ===\nu"))
    swapped = agents.replace(coder=custom)
    assert swapped.coder is custom and agents.coder is not custom and swapped.architect is agents.architect


def test_the_coder_names_the_suite_the_code_judge_runs():
    """The repair prompt shows the code judge's test output, so both take the settings' feedback suite."""
    model = scripted()
    for suite in ("check", "unit"):
        agents = Agents.from_models(model, Settings(feedback_suite=suite))
        assert (agents.code_judge.suite, agents.coder.suite) == (suite, suite)


def test_the_stage_roles_are_the_agents_fields() -> None:
    """describe_agents and --role-model name the agents by STAGE_ROLES: the two lists must not drift."""
    import dataclasses

    from projectgen.agents import Agents
    from projectgen.llm import STAGE_ROLES

    assert tuple(f.name for f in dataclasses.fields(Agents)
                 if f.name not in ("extra_code_judges", "memory_summarizer")) == STAGE_ROLES
