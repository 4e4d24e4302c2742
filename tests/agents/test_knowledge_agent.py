"""LiveCoder's knowledge agent and what it reads (repository observation, execution feedback), offline:
scripted and prompt-reading fake models, no sandbox."""
from __future__ import annotations

import asyncio
import json
from string import Template
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from projectgen.agents import KnowledgeExtractor, ModelGateway, render_guidance
from projectgen.agents.base import guidance_section
from projectgen.agents.knowledge import fallback_knowledge, knowledge_from_reply, summary_of
from projectgen.datasets.examples import example_task_path
from projectgen.datasets.loaders import load_task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.report import CollectionError, Outcome, TestReport, TestResult
from projectgen.llm import ScriptedChatModel, UsageRecorder
from projectgen.memory.knowledge_entries import ExtractedKnowledge, FailureKnowledge, SuccessKnowledge
from projectgen.agents.observations import (
    ExecutionFeedback,
    RepositoryObservation,
    execution_feedback,
    fit_lines,
    fit_tree,
    message_line,
    observe_repository,
)
from projectgen.llm.parsing import StructuredOutputError
from projectgen.prompts import load_prompt

PRD = "# KV store\n\nA small key-value store with TTL expiry, namespaces and transactions.\n"

ASSERT_MESSAGE = """\
    def test_ttl():
>       assert store.ttl("a") is None
E       AssertionError: assert 5.0 is None
E        +  where 5.0 = ttl('a')

tests/test_store.py:12: AssertionError"""

IMPORT_MESSAGE = """\
ImportError while importing test module '/w/tests/test_cli.py'.
Traceback:
tests/test_cli.py:3: in <module>
    from kvstore.cli import main
E   ModuleNotFoundError: No module named 'kvstore.cli'"""

SUCCESS = {"task_summary": "A key-value store with TTL.",
           "repository_signals": ["kvstore/store.py defines KVStore"],
           "functional_signals": ["get/set round-trips pass"],
           "carry_over": ["keep KVStore(storage, namespace=, clock=)"]}
FAILURE = {"task_summary": "A key-value store with TTL.",
           "observed_failures": ["tests/test_store.py::test_ttl: ttl returns 5.0 for a key without expiry"],
           "repository_failures": ["kvstore/cli.py is missing"],
           "carry_over_constraints": ["KVStore.ttl must return None for keys without expiry"]}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def gateway() -> ModelGateway:
    return ModelGateway(recorder=UsageRecorder(), retries=0)


def scripted(content: Any) -> Any:
    return ScriptedChatModel.from_responses([{"role": "knowledge", "content": content}])


class PromptModel(BaseChatModel):
    """Answers with a fixed text; remembers every prompt."""

    answer: str = ""
    prompts: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "prompt-reading-fake"

    def _generate(self, messages: list[Any], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.prompts.append("\n".join(str(m.content) for m in messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.answer))])


def report(*tests: tuple[str, Outcome, str], collection: tuple[tuple[str, str], ...] = (), **kwargs: Any
           ) -> TestReport:
    return TestReport(task_id="kvstore", suite="unit",
                      tests=[TestResult(nodeid=n, outcome=o, message=m) for n, o, m in tests],
                      collection_errors=[CollectionError(nodeid=n, message=m) for n, m in collection], **kwargs)


def failing_report() -> TestReport:
    return report(("tests/test_store.py::test_get", Outcome.PASSED, ""),
                  ("tests/test_store.py::test_set", Outcome.PASSED, ""),
                  ("tests/test_store.py::test_ttl", Outcome.FAILED, ASSERT_MESSAGE),
                  collection=(("tests/test_cli.py", IMPORT_MESSAGE),))


@pytest.fixture(scope="module")
def kvstore() -> dict[str, str]:
    return load_task(example_task_path("kvstore")).reference_repository()


def big_repository(files: int = 120) -> dict[str, str]:
    """A synthetic repository larger than any CodeProjectEval task: many files, classes, methods, imports."""
    repo: dict[str, str] = {"bigpkg/__init__.py": '"""Big package."""\n'}
    for i in range(files):
        prev = f"from bigpkg.sub{(i - 1) % 7}.module_{i - 1:03d} import Service{i - 1:03d}\n" if i else ""
        methods = "".join(f"    def operation_{j}(self, value: int, *, scale: float = 1.0) -> int:\n"
                          f"        return int(value * scale) + {j}\n\n" for j in range(12))
        repo[f"bigpkg/sub{i % 7}/module_{i:03d}.py"] = (
            f'"""Module {i}: a service with a fairly long description to make the tree verbose."""\n{prev}\n'
            f"class Service{i:03d}:\n    \"\"\"Service number {i}.\"\"\"\n\n{methods}"
            f"def helper_{i}(a: int, b: int = 2) -> int:\n    return a + b\n")
    for k in range(7):
        repo[f"bigpkg/sub{k}/__init__.py"] = ""
    return repo


# --------------------------------------------------------------------------- repository observation

def test_observation_of_the_kvstore_reference(kvstore: dict[str, str]) -> None:
    obs = observe_repository(kvstore)
    assert [f.path for f in obs.files] == sorted(kvstore)
    store_lines = next(f.lines for f in obs.files if f.path == "kvstore/store.py")
    assert store_lines == len(kvstore["kvstore/store.py"].splitlines()) > 100
    assert ("kvstore/store.py", "kvstore/errors.py") in obs.edges
    assert ("kvstore/__main__.py", "kvstore/cli.py") in obs.edges
    assert obs.dependencies()["kvstore/codec.py"] == ["kvstore/errors.py"]
    assert obs.cycles == [] and obs.unparsable == [] and obs.placeholders == [] and not obs.note
    assert "class KVStore" in obs.interfaces and "def ttl(self, key: str) -> float | None" in obs.interfaces

    text = obs.text(8000)
    assert len(text) <= 8000
    for expected in ("7 files", "store.py 218" if store_lines == 218 else "store.py",
                     "kvstore/store.py -> kvstore/codec.py, kvstore/errors.py, kvstore/storage.py",
                     "class KVStore", "class Transaction(KVStore)", "def ttl(self, key: str)"):
        assert expected in text, expected


def test_observation_reports_unparsable_files_cycles_and_placeholders(kvstore: dict[str, str]) -> None:
    repo = dict(kvstore)
    repo["kvstore/broken.py"] = "def oops(:\n    pass\n"
    repo["kvstore/a.py"] = "from kvstore import b\n\ndef f():\n    pass\n"
    repo["kvstore/b.py"] = ("from kvstore.a import f\n\nclass C:\n    def g(self):\n"
                            "        raise NotImplementedError\n\n"
                            "    def h(self):\n        ...\n")
    repo["README.md"] = "# kv\n"
    obs = observe_repository(repo)
    assert obs.unparsable == ["kvstore/broken.py"]
    assert obs.syntax_errors["kvstore/broken.py"].startswith("line 1")
    assert obs.cycles == [["kvstore/a.py", "kvstore/b.py"]]
    assert obs.placeholders == ["kvstore/a.py:f", "kvstore/b.py:C.g", "kvstore/b.py:C.h"]
    assert "README.md" in [f.path for f in obs.files] and "README.md" not in obs.python_files
    text = obs.text(4000)
    assert "does not parse: kvstore/broken.py (line 1" in text
    assert "import cycle: kvstore/a.py <-> kvstore/b.py" in text
    assert "kvstore/b.py:C.g" in text
    assert "class KVStore" in obs.interfaces  # the rest is still read


def test_abstract_methods_hooks_and_refusals_are_not_placeholders() -> None:
    code = ("from abc import ABC, abstractmethod\n\nclass Base(ABC):\n    @abstractmethod\n    def run(self):\n"
            "        ...\n\nclass Impl:\n    @abstractmethod\n    def x(self):\n        pass\n\n"
            "class Hooks:\n    def on_start(self):\n        pass\n\nclass Mine(Hooks):\n    pass\n\n"
            "class ReadOnly:\n    def save(self):\n        raise NotImplementedError('read-only')\n\n"
            "    def todo(self):\n        \"\"\"Later.\"\"\"\n        raise NotImplementedError\n")
    assert observe_repository({"m.py": code}).placeholders == ["m.py:ReadOnly.todo"]


def test_observation_of_an_empty_or_hostile_repository() -> None:
    empty = observe_repository({})
    assert "0 files" in empty.text(500) and "empty" in empty.text(500)
    odd = observe_repository({"/abs/x.py": "x = 1\n", "ok.py": "y = 2\n"})  # a path the SSAT refuses
    assert odd.note.startswith("the interfaces could not be read")
    assert len(odd.text(300)) <= 300


def test_observation_text_stays_within_budget_on_a_large_repository() -> None:
    repo = big_repository()
    obs = observe_repository(repo)  # ~1.5 s: SSAT validation of ~1500 signatures
    assert len(obs.files) == len(repo) and len(obs.edges) == 119
    assert len(obs.interfaces) <= 60_000
    for limit in (300, 1500, 4000, 8000, 20000):
        text = obs.text(limit)
        assert len(text) <= limit
        assert text.startswith(f"Repository: {len(repo)} files")
        if limit >= 1500:
            assert "Layout" in text and "Internal imports" in text and "Interfaces" in text
            assert "[... " in text or "left out" in text or "names only" in text


def test_observation_interfaces_degrade_before_they_are_cut() -> None:
    obs = observe_repository(big_repository(30))
    text = obs.text(6000)
    assert "Service029" in text  # every class is still named: members went first
    assert "operation_3" not in text


def test_fit_tree_never_exceeds_its_budget() -> None:
    obs = observe_repository(big_repository(40))
    assert "package bigpkg/sub3/" in obs.interfaces
    for budget in range(0, 9000, 53):
        assert len(fit_tree(obs.interfaces, budget)) <= budget


def test_fit_lines_marks_the_cut() -> None:
    lines = [f"line {i}" for i in range(100)]
    text = fit_lines(lines, 60, "lines")
    assert len(text) <= 60 and text.endswith("more lines]") and text.startswith("line 0\nline 1")
    assert fit_lines(lines[:2], 100) == "line 0\nline 1"


# --------------------------------------------------------------------------- execution feedback

def test_message_line_picks_the_error() -> None:
    assert message_line(ASSERT_MESSAGE) == "AssertionError: assert 5.0 is None (at tests/test_store.py:12)"
    assert message_line(IMPORT_MESSAGE) == "ModuleNotFoundError: No module named 'kvstore.cli'"
    assert message_line("something\nbroke badly\n") == "broke badly"
    assert message_line("") == ""


def test_feedback_lists_failing_tests_and_collection_errors() -> None:
    fb = execution_feedback(failing_report(), 0.5, "unit")
    assert (fb.passed, fb.failed, fb.total, fb.score, fb.suite) == (2, 1, 4, 0.5, "unit")
    assert fb.failing_ids() == ["tests/test_store.py::test_ttl"]
    assert fb.collection_errors[0].nodeid == "tests/test_cli.py"
    text = fb.text(2000)
    assert "2 of 4 tests passed, 1 failed" in text and "score 0.50" in text
    assert "tests/test_store.py::test_ttl [failed]: AssertionError: assert 5.0 is None" in text
    assert "tests/test_cli.py [collection error]: ModuleNotFoundError: No module named 'kvstore.cli'" in text
    assert fb.output_tail == ""  # the failures explain the result


def test_feedback_without_report_with_harness_error_and_timeout() -> None:
    none = execution_feedback(None, 0.0, "unit")
    assert not none.ran and "no test report" in none.text()
    broken = execution_feedback(report(error="could not build the environment", output_tail="pip failed\nboom"),
                                0.0, "unit")
    text = broken.text()
    assert "The test harness failed: could not build the environment" in text and "boom" in text
    slow = execution_feedback(report(("t.py::a", Outcome.PASSED, ""), timed_out=True), 1 / 3, "check")
    assert "timed out" in slow.text() and "score 0.33" in slow.text()


def test_feedback_text_stays_within_budget_with_many_failures() -> None:
    tests = [(f"tests/test_m{i}.py::test_case_{j}", Outcome.FAILED, ASSERT_MESSAGE) for i in range(40)
             for j in range(20)]
    fb = execution_feedback(report(*tests), 0.0, "unit")
    assert fb.failed == 800
    for limit in (200, 1000, 4000):
        text = fb.text(limit)
        assert len(text) <= limit
        assert "0 of 800 tests passed" in text
    assert "more failing tests]" in fb.text(4000)


# --------------------------------------------------------------------------- extraction

def extract(model: Any, *, score: float, attempt: int = 2, feedback: Any = None, observation: Any = None,
            gw: ModelGateway | None = None) -> ExtractedKnowledge:
    return run(KnowledgeExtractor(model).extract(
        gw or gateway(), task_summary_source=PRD, attempt=attempt, score=score,
        observation=observation if observation is not None else observe_repository({"kvstore/x.py": "x = 1\n"}),
        feedback=feedback if feedback is not None else execution_feedback(failing_report(), score, "unit")))


def test_extraction_parses_the_reply_and_overrides_attempt_and_score() -> None:
    reply = {"success": {**SUCCESS, "attempt": 9, "score": 0.99}, "failure": {**FAILURE, "attempt": 9, "score": 0.0}}
    gw = gateway()
    knowledge = extract(scripted(reply), score=0.5, attempt=2, gw=gw)
    assert knowledge.source == "model"
    assert isinstance(knowledge.success, SuccessKnowledge) and isinstance(knowledge.failure, FailureKnowledge)
    assert (knowledge.success.attempt, knowledge.success.score) == (2, 0.5)
    assert (knowledge.failure.attempt, knowledge.failure.score) == (2, 0.5)
    assert knowledge.success.repository_signals == ["kvstore/store.py defines KVStore"]
    assert knowledge.failure.carry_over_constraints == ["KVStore.ttl must return None for keys without expiry"]
    assert knowledge.success.task_summary == "A key-value store with TTL."
    [record] = gw.recorder.records  # type: ignore[union-attr]
    assert (record.role, record.stage, record.iteration) == ("knowledge", "knowledge", 2)


@pytest.mark.parametrize("wrap", [
    lambda j: f"```json\n{j}\n```",
    lambda j: f"Here is what I learned from this attempt:\n{j}\nHope this helps.",
    lambda j: j[:-3],  # cut off at the token limit
])
def test_extraction_reads_fenced_prose_and_truncated_replies(wrap: Any) -> None:
    reply = json.dumps({"success": SUCCESS, "failure": FAILURE})
    knowledge = extract(scripted(wrap(reply)), score=0.5)
    assert knowledge.source == "model"
    assert knowledge.success is not None and knowledge.failure is not None
    assert knowledge.failure.observed_failures[0].startswith("tests/test_store.py::test_ttl")


def test_extraction_drops_success_at_score_zero_and_failure_at_score_one() -> None:
    reply = {"success": SUCCESS, "failure": FAILURE}
    at_zero = extract(scripted(reply), score=0.0)
    assert at_zero.success is None and at_zero.failure is not None and at_zero.failure.score == 0.0
    all_passed = execution_feedback(report(("a", Outcome.PASSED, "")), 1.0, "unit")
    at_one = extract(scripted(reply), score=1.0, feedback=all_passed)
    assert at_one.failure is None and at_one.success is not None and at_one.success.score == 1.0
    clamped = extract(scripted(reply), score=1.7)
    assert clamped.failure is None and clamped.success is not None and clamped.success.score == 1.0


@pytest.mark.parametrize("reply", ["I could not find anything useful.", "[1, 2, 3]", '{"notes": "nothing"}',
                                   '{"success": '])
def test_extraction_falls_back_on_unreadable_replies(reply: str) -> None:
    obs = observe_repository({"kvstore/broken.py": "def oops(:\n"})
    knowledge = extract(scripted(reply), score=0.5, observation=obs)
    assert knowledge.source == "fallback" and knowledge.note
    assert knowledge.success is None
    failure = knowledge.failure
    assert failure is not None and (failure.attempt, failure.score) == (2, 0.5)
    observed = "\n".join(failure.observed_failures)
    assert "tests/test_store.py::test_ttl" in observed and "AssertionError: assert 5.0 is None" in observed
    assert "tests/test_cli.py" in observed
    assert any("kvstore/broken.py does not parse" in r for r in failure.repository_failures)
    assert failure.task_summary == "A small key-value store with TTL expiry, namespaces and transactions."


def test_fallback_at_score_one_has_no_entries() -> None:
    knowledge = extract(scripted("no json"), score=1.0, feedback=execution_feedback(report(), 1.0, "unit"))
    assert knowledge.source == "fallback" and knowledge.entries() == []


def test_fallback_from_plain_text_feedback() -> None:
    knowledge = fallback_knowledge(attempt=1, score=0.0, feedback="FAILED t.py::a\n\nFAILED t.py::b\n")
    assert knowledge.failure is not None and knowledge.failure.observed_failures == ["FAILED t.py::a", "FAILED t.py::b"]


def test_reply_shapes_the_models_write() -> None:
    as_list = json.dumps([{"kind": "failure", **FAILURE}, {"kind": "success", **SUCCESS}])
    k = knowledge_from_reply(as_list, attempt=1, score=0.5)
    assert k.success is not None and k.failure is not None
    bare = json.dumps({"observed_failures": "one\ntwo", "carry_over_constraints": "keep it simple"})
    k = knowledge_from_reply(bare, attempt=1, score=0.5, default_summary="task")
    assert k.success is None and k.failure is not None
    assert k.failure.observed_failures == ["one", "two"] and k.failure.carry_over_constraints == ["keep it simple"]
    assert k.failure.task_summary == "task"
    several = json.dumps({"success": [SUCCESS, {"carry_over": ["more"]}], "failure": None})
    k = knowledge_from_reply(several, attempt=1, score=0.5)
    assert k.success is not None and k.success.carry_over == [*SUCCESS["carry_over"], "more"] and k.failure is None
    empty = knowledge_from_reply('{"success": {"carry_over": []}, "failure": null}', attempt=1, score=0.5)
    assert empty.entries() == [] and empty.source == "model"
    with pytest.raises(StructuredOutputError):
        knowledge_from_reply('{"notes": 1}', attempt=1, score=0.5)


def test_the_prompt_holds_the_prd_observation_and_feedback(kvstore: dict[str, str]) -> None:
    model = PromptModel(answer=json.dumps({"success": SUCCESS, "failure": FAILURE}))
    knowledge = extract(model, score=0.5, attempt=3, observation=observe_repository(kvstore))
    assert knowledge.source == "model"
    [prompt] = model.prompts
    assert "A small key-value store with TTL expiry" in prompt
    assert "Attempt 3: score 0.50" in prompt
    assert "class KVStore" in prompt and "kvstore/store.py -> kvstore/codec.py" in prompt
    assert "tests/test_store.py::test_ttl [failed]" in prompt
    for name in ("repository_signals", "functional_signals", "carry_over", "observed_failures",
                 "repository_failures", "carry_over_constraints", "task_summary"):
        assert f'"{name}"' in prompt, name


def test_prompt_placeholders_and_schema_field_names() -> None:
    prompt = load_prompt("knowledge")
    placeholders = set(Template(prompt.user).get_identifiers()) | set(Template(prompt.system).get_identifiers())
    assert placeholders == {"prd", "attempt", "score", "observation", "feedback"}
    fields = (set(SuccessKnowledge.model_fields) | set(FailureKnowledge.model_fields)) - {"attempt", "score", "kind"}
    assert all(f'"{name}"' in prompt.system for name in fields)


def test_attempt_must_be_positive() -> None:
    with pytest.raises(ProjectGenError):
        extract(scripted("{}"), score=0.5, attempt=0)


def test_summary_of_a_prd() -> None:
    assert summary_of(PRD) == "A small key-value store with TTL expiry, namespaces and transactions."
    assert summary_of("# Title only\n") == "Title only"
    assert summary_of("") == ""


# --------------------------------------------------------------------------- guidance

def test_render_guidance() -> None:
    assert render_guidance([], []) == ""
    success = SuccessKnowledge(attempt=1, score=0.5, **{k: v for k, v in SUCCESS.items()})
    failure = FailureKnowledge(attempt=1, score=0.5, **{k: v for k, v in FAILURE.items()})
    text = render_guidance([success], [failure])
    keep, avoid = text.index("## Keep doing"), text.index("## Avoid")
    assert keep < avoid
    assert "keep KVStore(storage, namespace=, clock=)" in text[keep:avoid]
    assert "KVStore.ttl must return None for keys without expiry" in text[avoid:]
    section = guidance_section(text)  # how the generators' prompts take it: one heading, then ours
    assert section.count("\n# ") == 1 and "## Keep doing" in section
    only_failure = render_guidance([], [failure, "a retrieved document text"])
    assert "## Keep doing" not in only_failure and "a retrieved document text" in only_failure
    many = [FailureKnowledge(attempt=i, score=0.1, carry_over_constraints=["x" * 300]) for i in range(1, 30)]
    limited = render_guidance([success], many, limit=1500)
    assert len(limited) <= 1500 and "## Keep doing" in limited and "more entries]" in limited


def test_guidance_from_extracted_knowledge_end_to_end() -> None:
    knowledge = extract(scripted({"success": SUCCESS, "failure": FAILURE}), score=0.5)
    text = render_guidance([knowledge.success], [knowledge.failure])
    assert "Attempt 2 (score 0.50) validated:" in text and "Attempt 2 (score 0.50) failed:" in text


def test_observation_and_feedback_round_trip_as_json(kvstore: dict[str, str]) -> None:
    obs = observe_repository(kvstore)
    fb = execution_feedback(failing_report(), 0.5, "unit")
    assert RepositoryObservation.model_validate_json(obs.model_dump_json()) == obs
    assert ExecutionFeedback.model_validate_json(fb.model_dump_json()) == fb


def test_entries_that_are_not_objects_fall_back() -> None:
    with pytest.raises(StructuredOutputError):
        knowledge_from_reply('{"success": "it went well", "failure": ["it broke"]}', attempt=1, score=0.5)
    knowledge = extract(scripted('{"success": "it went well", "failure": "it broke"}'), score=0.5)
    assert knowledge.source == "fallback" and knowledge.failure is not None
