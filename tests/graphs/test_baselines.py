"""The baselines as graphs: Direct (one call), Self-Reflection (check tests -> errors back -> rewrite),
and ProjectGen w/o iter (each generator once, no judge)."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any


from projectgen.agents import Agents, DirectGenerator, ModelGateway, RepositoryGenerator
from projectgen.config import Settings
from projectgen.graphs import (RunContext, build_direct_graph, build_project_graph, build_self_reflection_graph,
                               default_stages, initial_state)
from projectgen.llm import ScriptedChatModel
from projectgen.oracles.reference_replay import Breakage, break_function, reference_python_files, reference_script
from test_support import recording_generator

BREAKAGE = Breakage("kvstore/store.py", "_expired")


def replay(task, **kwargs: Any):
    return ScriptedChatModel.from_responses(reference_script(task, **kwargs).model_dump(mode="json", exclude_none=True))


def run_graph(graph, task, runner) -> dict[str, Any]:
    return asyncio.run(graph.ainvoke(initial_state(task), context=RunContext(task=task, runner=runner,
                                                                              gateway=ModelGateway())))


def test_the_direct_generator_satisfies_its_protocol() -> None:
    assert isinstance(DirectGenerator(model=None), RepositoryGenerator)


def test_direct_makes_one_call_and_its_reply_is_the_repository(task, runner) -> None:
    model = replay(task)
    state = run_graph(build_direct_graph(DirectGenerator(model)), task, runner)
    assert [(c["role"], c["iteration"]) for c in model.calls] == [("direct", 1)]
    assert state["repository"] == reference_python_files(task)
    assert not state.get("verdicts")  # the attempts graph scores it; the graph itself runs nothing


def test_a_reply_without_files_gives_an_empty_repository_and_says_why(task, runner) -> None:
    model = ScriptedChatModel.from_responses([{"role": "direct", "content": "I cannot do that."}])
    state = run_graph(build_direct_graph(DirectGenerator(model)), task, runner)
    assert state["repository"] == {}
    assert "no edits in the expected format" in state["generation_errors"]["code"]


def test_self_reflection_repairs_a_failing_check_test_in_round_two_and_stops(task, runner) -> None:
    model = replay(task, breakage=BREAKAGE)
    generator = recording_generator(model)
    state = run_graph(build_self_reflection_graph(generator), task, runner)
    assert [(c["role"], c["iteration"]) for c in model.calls] == [("direct", 1), ("direct", 2)]
    first, second = state["verdicts"]
    assert (first["iteration"], first["accepted"], second["iteration"], second["accepted"]) == (1, False, 2, True)
    assert first["check"]["passed"] < first["check"]["total"] == second["check"]["passed"]
    assert first["judge"] == "check_tests" and first["stage"] == "code"
    (shown,) = generator.shown
    assert any(node in shown["error_log"] for node in first["check"]["failing"])  # the errors went back
    assert shown["passed"] == first["check"]["passed"] and shown["iteration"] == 2
    reference = reference_python_files(task)
    assert shown["repository"][BREAKAGE.path] == break_function(reference[BREAKAGE.path], BREAKAGE)
    assert state["repository"] == reference
    assert state["edits"][0]["well_formed"] and state["edits"][0]["applied"] == 1


def test_self_reflection_stops_after_its_rounds_when_the_tests_keep_failing(task, runner) -> None:
    files = reference_python_files(task)
    broken = break_function(files[BREAKAGE.path], BREAKAGE)
    from projectgen.repository.edits import make_whole_file_reply

    model = ScriptedChatModel.from_responses([{"role": "direct", "content": make_whole_file_reply(
        sorted(files), {**files, BREAKAGE.path: broken})}])
    state = run_graph(build_self_reflection_graph(DirectGenerator(model), rounds=2), task, runner)
    assert [c["iteration"] for c in model.calls] == [1, 2, 3]  # the direct reply and two rounds
    assert [v["iteration"] for v in state["verdicts"]] == [1, 2, 3]
    assert not any(v["accepted"] for v in state["verdicts"])


def test_projectgen_without_iteration_asks_no_judge(task, runner) -> None:
    model = replay(task)
    agents = Agents.from_models(model)
    graph = build_project_graph(stages=default_stages(agents, Settings(), judges=False))
    state = run_graph(graph, task, runner)
    roles = {c["role"] for c in model.calls}
    assert roles == {"architect", "skeleton", "coder"}
    assert not state.get("verdicts")
    assert state["iterations"] == {"architecture": 1, "skeleton": 1, "code": 1}
    assert state["repository"] == reference_python_files(task)


def test_projectgen_without_iteration_does_not_repair_a_broken_file(task, runner) -> None:
    model = replay(task, breakage=BREAKAGE)
    graph = build_project_graph(stages=default_stages(Agents.from_models(model), Settings(), judges=False))
    state = run_graph(graph, task, runner)
    assert [c["iteration"] for c in model.calls if c["role"] == "coder" and c["target"] == BREAKAGE.path] == [1]
    assert "raise NotImplementedError" in state["repository"][BREAKAGE.path]


def test_an_unusable_tree_without_a_judge_stops_the_run(task, runner, tmp_path: Path) -> None:
    model = ScriptedChatModel.from_responses([{"role": "architect", "content": "no tree here"}])
    graph = build_project_graph(stages=default_stages(Agents.from_models(model), Settings(), judges=False))
    state = run_graph(graph, task, runner)
    assert state["stopped"].startswith("architecture: no usable tree after 1 iteration")
    assert len(model.calls) == 1


def _without_check_tests(task):
    return task.model_copy(update={"suites": {name: suite for name, suite in task.suites.items() if name != "check"}})


def test_without_check_tests_self_reflection_gets_feedback_only_from_the_suite_its_settings_name(task, runner) -> None:
    """RAL-Bench and NL2Repo-Bench publish no visible tests: under check-test feedback Self-Reflection has
    nothing to reflect on and equals Direct; with the hidden tests as feedback (LiveCoder's protocol,
    `feedback_suite="unit"`) it repairs the broken function as the paper's baseline does."""
    bare = _without_check_tests(task)
    model = replay(bare, breakage=BREAKAGE)
    state = run_graph(build_self_reflection_graph(DirectGenerator(model)), bare, runner)
    assert [c["iteration"] for c in model.calls] == [1]  # nothing ran: no round
    (verdict,) = state["verdicts"]
    assert verdict["feedback"] == "the task has no check tests; nothing was run" and verdict["check"] is None
    assert state["repository"][BREAKAGE.path] != reference_python_files(bare)[BREAKAGE.path]

    model = replay(bare, breakage=BREAKAGE)
    graph = build_self_reflection_graph(DirectGenerator(model), settings=Settings(feedback_suite="unit"))
    state = run_graph(graph, bare, runner)
    assert [c["iteration"] for c in model.calls] == [1, 2]
    first, second = state["verdicts"]
    assert not first["accepted"] and second["accepted"]
    assert first["feedback"].endswith("hidden unit tests pass")  # never called check tests
    assert first["check"]["passed"] < first["check"]["total"] == 29  # kvstore's 29 hidden unit tests
    assert state["repository"] == reference_python_files(bare)


def test_the_code_judge_runs_the_feedback_suite_its_settings_name(task, runner) -> None:
    bare = _without_check_tests(task)
    model = replay(bare, breakage=BREAKAGE)
    settings = Settings(feedback_suite="unit")
    graph = build_project_graph(stages=default_stages(Agents.from_models(model, settings), settings))
    state = run_graph(graph, bare, runner)
    code = [v for v in state["verdicts"] if v["stage"] == "code"]
    assert [v["accepted"] for v in code] == [False, True] and "hidden unit tests pass" in code[0]["feedback"]
    assert state["repository"] == reference_python_files(bare)


def test_every_method_gets_at_most_four_rounds_of_hidden_test_feedback_without_check_tests(task, runner) -> None:
    """LiveCoder: every method the same execution feedback, at most 4 iterations. Self-Reflection: the direct
    reply and at most 4 rounds on the hidden tests' errors; ProjectGen's code stage under RAL-Bench's and
    NL2Repo-Bench's settings: the first fill and at most 4 repairs."""
    from projectgen.datasets.task import PAPER_SETTINGS
    from projectgen.repository.edits import make_whole_file_reply

    bare = _without_check_tests(task)
    files = reference_python_files(bare)
    broken = {**files, BREAKAGE.path: break_function(files[BREAKAGE.path], BREAKAGE)}
    model = ScriptedChatModel.from_responses([{"role": "direct", "content": make_whole_file_reply(sorted(files),
                                                                                                   broken)}])
    settings = Settings(**PAPER_SETTINGS["ralbench"])
    state = run_graph(build_self_reflection_graph(DirectGenerator(model), settings=settings), bare, runner)
    # never repaired: the cap stops it (each round a verbal reflection and a fix, the paper profile's baseline)
    assert [c["iteration"] for c in model.calls] == [1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert [(v["iteration"], v["accepted"]) for v in state["verdicts"]] == [(i, False) for i in range(1, 6)]
    assert {PAPER_SETTINGS[name].get("feedback_suite") for name in ("ralbench", "nl2repobench")} == {"unit"}
    assert Settings(**PAPER_SETTINGS["nl2repobench"]).cap("code") == settings.cap("code") == 5
