"""LiveRepoReflection's protocol graph on one exercise: what the model is shown at each try, what a reply may
change, how a try's tests and its well-formedness are recorded, timeouts, and harness failures."""
from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from projectgen.agents.protocols import ReflectionGenerator
from projectgen.datasets.examples import example_exercises_dir
from projectgen.datasets.exercism import load_exercise
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.graphs import ReflectionContext
from projectgen.llm import message_text
from projectgen.llm.scripted import scripted_chat_model_class
from projectgen.protocols.reflection.coder import ReflectionCoder
from projectgen.protocols.reflection.graph import TestHarnessError, build_reflection_graph, initial_reflection_state
from projectgen.repository.edits import make_whole_file_reply

F = "```"


@pytest.fixture(scope="module")
def runner(env_cache: Path) -> SandboxRunner:
    return SandboxRunner(RunnerSettings(cache_dir=env_cache, timeout=60))


class Recording:
    """A scripted model that also keeps each call's prompt, by iteration (the try)."""

    def __init__(self, replies: dict[int, str], target: str, fmt: str = "whole") -> None:
        base = scripted_chat_model_class()
        prompts: dict[int, str] = {}

        class Model(base):  # type: ignore[misc, valid-type]
            def _reply(self, messages, stop, metadata):  # noqa: ANN001 - the base class's signature
                prompts[int(metadata.get("projectgen_iteration") or 0)] = "\n".join(message_text(m) for m in messages)
                return super()._reply(messages, stop, metadata)

        self.prompts = prompts
        self.model = Model.from_responses([
            {"role": "reflection", "stage": f"reflection_{fmt}", "target": target, "iteration": i, "content": text}
            for i, text in replies.items()])


def run(exercise, model, runner, fmt: str = "whole", tries: int = 2) -> dict[str, Any]:
    graph = build_reflection_graph(ReflectionCoder(model), tries)
    context = ReflectionContext(exercise=exercise, edit_format=fmt, runner=runner)
    return asyncio.run(graph.ainvoke(initial_reflection_state(exercise), context=context))


def word_index():
    return load_exercise(example_exercises_dir() / "word_index")


def test_the_default_coder_is_a_reflection_generator() -> None:
    assert isinstance(ReflectionCoder(model=None), ReflectionGenerator)


def test_try_one_shows_instructions_stubs_and_file_list_and_a_repair_shows_the_cleaned_test_output(
        runner: SandboxRunner) -> None:
    exercise = word_index()
    reference = exercise.reference()
    buggy = {**reference, "index.py": reference["index.py"].replace("found &=", "found |=")}
    recording = Recording({1: make_whole_file_reply(["index.py", "words.py"], buggy),
                           2: make_whole_file_reply(["index.py"], reference)}, exercise.id)
    state = run(exercise, recording.model, runner)
    first, second = recording.prompts[1], recording.prompts[2]
    assert exercise.instructions.strip() in first
    assert "__init__.py, words.py, index.py" in first  # the file list
    assert "words.py\n```python\n\"\"\"Splitting a text into words.\"\"\"\n\n\ndef words(text):\n    pass\n" in first
    assert "word_index_test.py" in first and "def test_" not in first  # named, never shown
    # The repair: the current files and the failing tests, with no temporary path or timing.
    assert "found |= set(index.get(word, []))" in second
    assert "4 of 6 tests passed." in second and "test_search_needs_every_word" in second
    assert "AssertionError" in second
    assert "/tmp" not in second and "projectgen-" not in second and " in 0." not in second
    assert "See the testing errors above" in second
    assert state["passed_at"] == 2
    assert [(t["try"], t["well_formed"], t["tests_passed"], t["tests_total"]) for t in state["tries"]] == [
        (1, True, 4, 6), (2, True, 6, 6)]


def test_a_reply_cannot_change_the_tests_and_editing_them_is_not_well_formed(runner: SandboxRunner) -> None:
    exercise = word_index()
    cheat = "def test_nothing():\n    pass\n"
    reply = make_whole_file_reply(["word_index_test.py"], {"word_index_test.py": cheat})
    recording = Recording({1: reply}, exercise.id)
    state = run(exercise, recording.model, runner, tries=1)
    [attempt] = state["tries"]
    assert not attempt["well_formed"] and attempt["failed"] == 1
    assert attempt["tests_total"] == 6 and attempt["tests_passed"] == 0  # the task's tests ran, on the stubs
    assert "word_index_test.py is not one of the files you may edit" in state["edit_feedback"]
    assert "word_index_test.py" not in state["repository"]


def test_an_ill_formed_reply_is_told_back_and_a_reindented_patch_is_not_well_formed(runner: SandboxRunner) -> None:
    exercise = word_index()
    reference = exercise.reference()
    # Try 1: a patch whose ORIGINAL is indented by 4 more spaces than the stub: it applies, but only leniently.
    lenient = (f"words.py\n{F}python\n<<<<<<< ORIGINAL\n    def words(text):\n        pass\n=======\n"
               f"    def words(text):\n        return []\n>>>>>>> UPDATED\n{F}\n")
    # Try 2: a block whose ORIGINAL is not in the file at all.
    missing = f"index.py\n{F}python\n<<<<<<< ORIGINAL\nnot there\n=======\nx = 1\n>>>>>>> UPDATED\n{F}\n"
    recording = Recording({1: lenient, 2: missing, 3: make_whole_file_reply(sorted(reference), reference)},
                          exercise.id, fmt="patch")
    state = run(exercise, recording.model, runner, fmt="patch", tries=3)
    tries = state["tries"]
    assert tries[0]["reindented"] == 1 and tries[0]["failed"] == 0 and not tries[0]["well_formed"]
    assert "\ndef words(text):\n    return []\n" in state["repository"]["words.py"]  # re-indented into place
    assert tries[1]["failed"] == 1 and not tries[1]["well_formed"]
    assert "SEARCH text not found in index.py" in recording.prompts[3]  # the failed block is told back
    # Try 3 is whole files: in the patch format they are no edits at all.
    assert not tries[2]["well_formed"] and state["passed_at"] is None


def test_tries_go_up_to_the_cap_and_a_pass_ends_the_task(runner: SandboxRunner) -> None:
    exercise = word_index()
    reference = exercise.reference()
    wrong = make_whole_file_reply(["index.py"], {"index.py": "def build_index(d):\n    return {}\n"})
    recording = Recording({1: wrong, 3: make_whole_file_reply(sorted(reference), reference)}, exercise.id)
    state = run(exercise, recording.model, runner, tries=5)
    assert state["passed_at"] == 3 and [t["try"] for t in state["tries"]] == [1, 2, 3]
    assert sorted(recording.prompts) == [1, 2, 3]


def test_a_timeout_is_a_failure_not_an_error(tmp_path: Path, runner: SandboxRunner) -> None:
    exercise = word_index()
    slow = SandboxRunner(RunnerSettings(cache_dir=runner.settings.cache_dir, timeout=3))
    reference = exercise.reference()
    looping = {**reference, "words.py": "def words(text):\n    while True:\n        pass\n"}
    recording = Recording({1: make_whole_file_reply(sorted(looping), looping)}, exercise.id)
    state = run(exercise, recording.model, slow, tries=1)
    [attempt] = state["tries"]
    assert attempt["status"] == "timeout" and attempt["timed_out"] and state["passed_at"] is None


class BrokenHarness:
    """A runner whose environment never builds: the tests cannot run at all."""

    def evaluate(self, task, candidate, suite="unit") -> TestReport:  # noqa: ANN001
        return TestReport(task_id=task.id, suite=suite, error="environment: pip failed")


def test_a_harness_failure_raises_instead_of_scoring_the_try(tmp_path: Path) -> None:
    exercise = word_index()
    recording = Recording({1: "nothing useful"}, exercise.id)
    with pytest.raises(TestHarnessError, match="could not be run: environment: pip failed"):
        run(exercise, recording.model, BrokenHarness())


def test_an_unknown_edit_format_is_one_clear_error() -> None:
    from projectgen.errors import ProjectGenError

    with pytest.raises(ProjectGenError, match="unknown edit format 'diff'"):
        ReflectionContext(exercise=word_index(), edit_format="diff", runner=BrokenHarness())  # type: ignore[arg-type]


def test_the_graph_takes_any_coder(tmp_path: Path, runner: SandboxRunner) -> None:
    """Compose your own: a coder that writes the reference without a model."""
    from projectgen.repository.edits import apply_edits

    class Oracle:
        async def write(self, gateway, exercise, repository, edit_format):  # noqa: ANN001
            ref = exercise.reference()
            return apply_edits(repository, make_whole_file_reply(sorted(ref), ref), "whole")

        async def repair(self, *args, **kwargs):  # noqa: ANN002, ANN003
            raise AssertionError("never asked")

    folder = tmp_path / "unit_convert"
    shutil.copytree(example_exercises_dir() / "unit_convert", folder)
    exercise = load_exercise(folder)
    graph = build_reflection_graph(Oracle(), 2)
    state = asyncio.run(graph.ainvoke(initial_reflection_state(exercise),
                                      context=ReflectionContext(exercise=exercise, runner=runner)))
    assert state["passed_at"] == 1 and state["tries"][0]["tests_passed"] == 8


def test_a_trys_record_carries_the_integrity_flags_of_its_candidate(runner: SandboxRunner) -> None:
    exercise = word_index()
    reply = make_whole_file_reply(["words.py"], {"words.py": "import ctypes\n"})
    state = run(exercise, Recording({1: reply}, exercise.id).model, runner, tries=1)
    [attempt] = state["tries"]
    assert attempt["well_formed"]
    assert [(f["kind"], f["path"].rsplit("/", 1)[-1], f["line"]) for f in attempt["integrity_flags"]] == [
        ("ctypes", "words.py", 1)]
