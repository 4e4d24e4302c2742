"""The prompts that show execution feedback name its suite (`Settings.feedback_suite`, issue 37 item 2).

With "check" each prompt is byte for byte what it was before the suite was named (recorded replays and the
call cache key on the prompt text): the hashes below were taken by rendering the same calls with the code
of main at 6985006, before prompts named their suite. With "unit" (RAL-Bench, NL2Repo-Bench: the hidden
tests' output is the feedback) no prompt says "check test", and none says "hidden".
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from projectgen.agents import CodeJudge, Coder, DirectGenerator
from projectgen.agents.base import Verdict
from projectgen.config import FeedbackSuite
from projectgen.datasets.task import Documents, Task
from projectgen.evaluation.report import Outcome, TestReport, TestResult
from projectgen.graphs.code import repair_jobs
from projectgen.graphs.loop import memory_record
from projectgen.graphs.state import verdict_record
from projectgen.memory import MemoryEntry

MAIN_HASHES = {  # sha256 of the JSON of each call's messages, rendered by main's code (feedback suite "check")
    "code_judge": "f4c4ac0a50fffb68c35f499b0f1a2871f456ce05678c7bb9302c92751b769211",
    "repair": "e96407931dabf71d53fe4c1ca3a2a8f3b5437dd2ac5ffff44981a1d889084127",
    "self_reflection": "b46f4ecb7ac5f0d7334d15bf1753f915768e303c3547c85ac7ea5ac7557cbb2d",
    "self_reflection_verbal": "728234dcb21f5ac367aa51dc7f69394773033faf2345c1c9965dfafad878c5bd",
}
MAIN_MEMORY = ("Memory of earlier revisions (1 of 1 shown, oldest first; skipped revisions are marked):\n\n"
               "### Iteration 1 (pkg/a.py) - check tests passed: 1 -> 2\nJudge feedback:\nFEEDBACK\n"
               "Change made:\nDIFF")
DOCUMENTS = Documents(prd="PRD", uml_class="CLASSES", uml_sequence="SEQUENCE", architecture_design="DESIGN")
REPOSITORY = {"pkg/a.py": "x = 1\n"}
FIXED_FILE = "pkg/a.py\n```python\nx = 2\n```\n"


class RecordingGateway:
    """Answers every call with `reply` and keeps the messages each call was sent."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.sent: list[Sequence[Any]] = []

    async def ask(self, model: Any, messages: Sequence[Any], *, role: str, stage: str, target: str | None = None,
                  iteration: int = 0) -> str:
        self.sent.append(messages)
        return self.reply


class OneFailureRunner:
    """One failing and one passing test, of whichever suite is asked for (nothing runs)."""

    def evaluate(self, task: Task, candidate: Any, suite: str = "unit") -> TestReport:
        return TestReport(task_id="t", suite=suite, tests=[
            TestResult(nodeid="tests/t.py::a", outcome=Outcome.FAILED, message="assert 1 == 2"),
            TestResult(nodeid="tests/t.py::b", outcome=Outcome.PASSED)])


def memory_of_one_repair(suite: FeedbackSuite) -> str:
    """The memory a second repair of pkg/a.py is given, through the code stage's `repair_jobs`."""
    entry = MemoryEntry(stage="code", iteration=1, target="pkg/a.py", feedback="FEEDBACK", diff="DIFF",
                        passed_before=1, passed_after=2)
    verdict = Verdict(judge="code_judge", stage="code", iteration=1, score=5, accepted=False, feedback="F",
                      files={"pkg/a.py": "S"}, log="LOG")
    state = {"iterations": {"code": 2}, "verdicts": [verdict_record(verdict)], "repository": dict(REPOSITORY),
             "memory": [memory_record(entry)]}
    (job,) = repair_jobs(state, gamma=2, suite=suite)
    return job.arg["memory"]


def rendered_calls(task: Task, suite: FeedbackSuite) -> tuple[dict[str, Sequence[Any]], dict[str, str], str]:
    """(prompt name -> the messages its agent sent, the code judge's fallback suggestions, the repair memory)
    for one call of each agent whose prompt shows the feedback suite's output, on fixed inputs."""
    sent: dict[str, Sequence[Any]] = {}
    gateway = RecordingGateway('{"files": []}')  # names no file: the judge falls back to its own suggestion
    verdict = asyncio.run(CodeJudge("m", suite=suite).review(gateway, task, REPOSITORY, runner=OneFailureRunner(),
                                                             iteration=2))
    sent["code_judge"] = gateway.sent[0]
    memory = memory_of_one_repair(suite)
    gateway = RecordingGateway(FIXED_FILE)
    asyncio.run(Coder("m", suite=suite).repair(gateway, "pkg/a.py", "x = 1\n", suggestion="SUGGESTION",
                                               error_log="LOG", memory=memory, iteration=2))
    sent["repair"] = gateway.sent[0]
    generator = DirectGenerator("m", suite=suite)
    gateway = RecordingGateway(FIXED_FILE)
    asyncio.run(generator.reflect(gateway, DOCUMENTS, REPOSITORY, error_log="LOG", passed=1, total=2, iteration=2,
                                  reflections=["R1"]))
    sent["self_reflection"] = gateway.sent[0]
    gateway = RecordingGateway("REFLECTION")
    asyncio.run(generator.reflect_verbally(gateway, DOCUMENTS, REPOSITORY, error_log="LOG", passed=1, total=2,
                                           iteration=2, reflections=["R1"]))
    sent["self_reflection_verbal"] = gateway.sent[0]
    return sent, verdict.files, memory


def sha256(messages: Sequence[Any]) -> str:
    return hashlib.sha256(json.dumps(messages).encode()).hexdigest()


def text_of(messages: Sequence[Any]) -> str:
    return "\n".join(content for _, content in messages)


def test_with_check_tests_every_prompt_is_byte_identical_to_mains(task: Task) -> None:
    sent, suggestions, memory = rendered_calls(task, "check")
    assert memory == MAIN_MEMORY
    assert {name: sha256(messages) for name, messages in sent.items()} == MAIN_HASHES
    assert suggestions == {"pkg/a.py": "make the failing check tests pass"}
    assert CodeJudge("m").suite == Coder("m").suite == DirectGenerator("m").suite == "check"  # the default


def test_with_the_unit_tests_as_feedback_the_prompts_say_tests_and_nothing_more(task: Task) -> None:
    checked, _, _ = rendered_calls(task, "check")
    sent, suggestions, memory = rendered_calls(task, "unit")
    for name, messages in sent.items():
        text = text_of(messages)
        assert "check test" not in text.lower() and "check-test" not in text.lower(), name
        assert "hidden" not in text.lower(), name
        assert text == reworded(text_of(checked[name])), name  # only the suite's name differs
    assert "You read the failing tests of a Python repository" in text_of(sent["code_judge"])
    assert "# Test results: 1 of 2 passed" in text_of(sent["code_judge"])
    assert "whose tests fail." in text_of(sent["repair"]) and "# The test errors\nLOG" in text_of(sent["repair"])
    for name in ("self_reflection", "self_reflection_verbal"):
        assert "and its tests fail." in text_of(sent[name])
        assert "# The test errors (1 of 2 tests pass)\nLOG" in text_of(sent[name])
    assert suggestions == {"pkg/a.py": "make the failing tests pass"}
    assert "### Iteration 1 (pkg/a.py) - tests passed: 1 -> 2" in memory and "check" not in memory


def reworded(text: str) -> str:
    """A check-test prompt's text as the unit tests' feedback words it."""
    return (text.replace("Check-test results", "Test results").replace("check-test errors", "test errors")
            .replace("check tests", "tests"))
