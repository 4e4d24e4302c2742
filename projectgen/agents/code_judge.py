"""The code judge: runs the task's check tests in the sandbox (or, with `Settings.feedback_suite` "unit", the
hidden tests the score comes from, as LiveCoder does where no visible tests exist); on failures an LLM names
the files to change, with a suggestion for each. Uses no memory."""
from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from projectgen.agents.base import CheckStatus, ModelGateway, Verdict
from projectgen.config import FeedbackSuite
from projectgen.datasets.task import Task
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.llm.parsing import StructuredOutputError, parse_model
from projectgen.prompts import Prompt, load_prompt
from projectgen.prompts.suite_words import suite_words


class FileToFix(BaseModel):
    path: str
    suggestion: str = ""


class CodeReview(BaseModel):
    summary: str = ""
    files: list[FileToFix] = Field(default_factory=list)


def error_log(report: TestReport, limit: int) -> str:
    """What went wrong, for a model: failing tests with their messages, collection errors, output tail."""
    parts: list[str] = []
    if report.error:
        parts.append(f"harness error: {report.error}")
    if report.install_error:
        parts.append(f"{report.install_error}; the tests did not run (its output is below)")
    if report.timed_out:
        parts.append("the test run timed out")
    for error in report.collection_errors:
        parts.append(f"COLLECTION ERROR {error.nodeid}\n{error.message}")
    for test in report.failures():
        parts.append(f"{test.outcome.value.upper()} {test.nodeid}\n{test.message}")
    text = "\n\n".join(parts)
    if len(text) < limit // 2 and report.output_tail:
        text += "\n\n--- pytest output (end) ---\n" + report.output_tail
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters ...]"


def mentioned_files(log: str, paths: list[str]) -> list[str]:
    """Repository files a log mentions (by path, or by module name in an import error)."""
    found = []
    for path in paths:
        module = path[:-3].replace("/", ".") if path.endswith(".py") else None
        if path in log or (module and re.search(rf"\b{re.escape(module)}\b", log)):
            found.append(path)
    return found


FEEDBACK_WORDS: Mapping[str, str] = {"check": "check", "unit": "hidden unit"}  # "all 5 check tests pass"


def feedback_tests(suite: FeedbackSuite) -> str:
    """How feedback names the tests it ran: "check", or "hidden unit" (never passed off as check tests)."""
    return FEEDBACK_WORDS[suite]


def run_feedback_tests(task: Task, repository: Mapping[str, str], runner: SandboxRunner,
                       suite: FeedbackSuite) -> TestReport | None:
    """The feedback suite's report on `repository`, or None when the task has no such tests (no execution
    feedback then: a verdict that says so, never a made-up pass)."""
    name = task.role_suite(suite)
    return runner.evaluate(task, dict(repository), name) if name in task.suites else None


def check_status(report: TestReport) -> CheckStatus:
    return CheckStatus(passed=report.passed, total=report.total, status=report.status,
                       failing=[t.nodeid for t in report.failures()] + [e.nodeid for e in report.collection_errors])


@dataclass
class CodeJudge:
    """Accepts when every test of its feedback suite passes (check tests by default); the score is 10 x their
    pass rate."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("code_judge"))
    role: str = "code_judge"
    name: str = "code_judge"
    log_chars: int = 6000
    suite: FeedbackSuite = "check"  # `Settings.feedback_suite`

    async def review(self, gateway: ModelGateway, task: Task, repository: Mapping[str, str], *,
                     runner: SandboxRunner, iteration: int) -> Verdict:
        tests = feedback_tests(self.suite)
        report = await asyncio.to_thread(run_feedback_tests, task, repository, runner, self.suite)
        if report is None:
            return Verdict(judge=self.name, stage="code", iteration=iteration, score=10, accepted=True,
                           feedback=f"the task has no {self.suite} tests; nothing was run")
        status = check_status(report)
        base = dict(judge=self.name, stage="code", iteration=iteration, check=status)
        if report.error:
            return Verdict(**base, score=0, accepted=False, stop=True,
                           feedback=f"the {tests} tests could not be run: {report.error}")
        if status.status == "passed":
            return Verdict(**base, score=10, accepted=True, feedback=f"all {status.total} {tests} tests pass")
        log = error_log(report, self.log_chars)
        score = round(10 * report.pass_rate, 2)
        files, ignored = await self._files_to_fix(gateway, repository, log, status, iteration)
        feedback = f"{status.passed} of {status.total} {tests} tests pass; failing: " + ", ".join(status.failing[:10])
        reasons = f"ignored file(s) the judge named that are not in the repository: {ignored}" if ignored else ""
        return Verdict(**base, score=score, accepted=False, feedback=feedback, files=files, log=log, reasons=reasons)

    async def _files_to_fix(self, gateway: ModelGateway, repository: Mapping[str, str], log: str,
                            status: CheckStatus, iteration: int) -> tuple[dict[str, str], list[str]]:
        """The model's choice, limited to real repository files; if it names none, the files the log
        mentions; failing that, every Python file. Also the named paths that were ignored (not in
        the repository, e.g. outside it), so the verdict records them."""
        listing = "\n".join(sorted(repository))
        words = suite_words(self.suite)  # the prompt names the suite it shows ("check tests", or "tests")
        messages = self.prompt.messages(files=listing, passed=status.passed, total=status.total, error_log=log,
                                        **words.values())
        reply = await gateway.ask(self.model, messages, role=self.role, stage="code", iteration=iteration)
        try:
            review = parse_model(reply, CodeReview)
            chosen = {f.path.strip().removeprefix("./"): f.suggestion for f in review.files}
            summary = review.summary
        except StructuredOutputError:
            chosen, summary = {}, ""
        files = {p: (s or summary) for p, s in chosen.items() if p in repository}
        ignored = sorted(p for p in chosen if p not in repository)
        if not files:
            paths = sorted(p for p in repository if p.endswith(".py"))
            named = mentioned_files(log, paths) or paths
            files = {p: summary or f"make the failing {words.tests} pass" for p in named}
        return files, ignored
