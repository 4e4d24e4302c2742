"""The CodeJudge (agents/code_judge.py): the error log, the files it names, and verdicts from a real
sandbox on the bundled kvstore task (runs memoized per repository)."""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from projectgen.agents import CheckStatus, CodeJudge, ModelGateway, Verdict
from projectgen.agents.code_judge import error_log, mentioned_files
from projectgen.datasets.task import Task
from projectgen.evaluation.report import CollectionError, Outcome, TestReport, TestResult
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.llm import CallCache, UsageRecorder
from projectgen.oracles.reference_replay import Breakage, break_function
from agent_fakes import PromptModel, gateway, only_record, run, scripted


def _report(tests: list[TestResult], **fields: Any) -> TestReport:
    return TestReport(task_id="t", suite="check", tests=tests, **fields)


def test_error_log_lists_failures_and_truncates():
    report = _report([TestResult(nodeid="t::a", outcome=Outcome.PASSED),
                      TestResult(nodeid="t::b", outcome=Outcome.FAILED, message="assert 1 == 2"),
                      TestResult(nodeid="t::c", outcome=Outcome.ERROR, message="fixture broke")],
                     collection_errors=[CollectionError(nodeid="t2.py", message="ImportError: calc.core")],
                     output_tail="TAIL-MARKER")
    log = error_log(report, 6000)
    assert "FAILED t::b\nassert 1 == 2" in log and "ERROR t::c\nfixture broke" in log
    assert "COLLECTION ERROR t2.py" in log and "t::a" not in log
    assert log.endswith("TAIL-MARKER")
    short = error_log(_report([TestResult(nodeid="t::b", outcome=Outcome.FAILED, message="x" * 500)]), 100)
    assert short.startswith("FAILED t::b") and short.endswith("more characters ...]") and len(short) < 160


def test_mentioned_files_by_path_and_by_module_name():
    paths = ["calc/core.py", "calc/errors.py", "calc/storage.py", "calc/store.py"]
    log = "File calc/errors.py, line 3\nModuleNotFoundError: No module named 'calc.storage'\ncalc.stores here"
    assert mentioned_files(log, paths) == ["calc/errors.py", "calc/storage.py"]


# --------------------------------------------------------------------------- code judge: real sandbox


class MemoRunner:
    """A real `SandboxRunner` whose reports are memoized per (task, suite, repository), to keep runs few."""

    def __init__(self) -> None:
        self.runner = SandboxRunner()
        self.cache: dict[Any, TestReport] = {}
        self.runs = 0

    def evaluate(self, task: Task, candidate: Mapping[str, str], suite: str = "unit") -> TestReport:
        key = (task.id, suite, tuple(sorted(candidate.items())))
        if key not in self.cache:
            self.runs += 1
            self.cache[key] = self.runner.evaluate(task, dict(candidate), suite)
        return self.cache[key]


class FakeRunner:
    """Returns a prepared report (or fails the test if it is asked to run at all)."""

    def __init__(self, report: TestReport | None = None) -> None:
        self.report = report
        self.calls = 0

    def evaluate(self, task: Task, candidate: Any, suite: str = "unit") -> TestReport:
        self.calls += 1
        assert self.report is not None, "the runner must not be used"
        return self.report


@pytest.fixture(scope="module")
def reference(task: Task) -> dict[str, str]:
    return task.reference_repository()


@pytest.fixture(scope="module")
def broken(reference: dict[str, str]) -> dict[str, str]:
    repo = dict(reference)
    repo["kvstore/store.py"] = break_function(repo["kvstore/store.py"], Breakage("kvstore/store.py", "_expired"))
    assert repo["kvstore/store.py"] != reference["kvstore/store.py"]
    return repo


@pytest.fixture(scope="module")
def sandbox() -> MemoRunner:
    return MemoRunner()


def judge_code(task: Task, repo: Mapping[str, str], model: Any, runner: Any,
               iteration: int = 1) -> tuple[Verdict, ModelGateway]:
    gw = gateway()
    verdict = run(CodeJudge(model).review(gw, task, repo, runner=runner, iteration=iteration))
    return verdict, gw


def test_code_judge_accepts_passing_code_without_a_model_call(task, reference, sandbox):
    model = scripted()  # any call would raise
    verdict, gw = judge_code(task, reference, model, sandbox)
    assert verdict.accepted and verdict.score == 10 and not verdict.stop
    assert verdict.check is not None and verdict.check.status == "passed"
    assert verdict.check.passed == verdict.check.total == 5 and verdict.check.failing == []
    assert verdict.files == {} and verdict.log == ""
    assert model.calls == [] and gw.recorder.records == []


def test_code_judge_broken_code_uses_the_files_the_model_names(task, broken, sandbox):
    answer = json.dumps({"summary": "SUMMARY-MARKER", "files": [
        {"path": "kvstore/store.py", "suggestion": "implement _expired"},
        {"path": "./kvstore/errors.py", "suggestion": ""},  # "./" stripped; empty suggestion -> the summary
        {"path": "check_tests/test_kvstore_check.py", "suggestion": "change the test"},  # not a repo file
    ]})
    model = PromptModel(answer=answer)
    verdict, gw = judge_code(task, broken, model, sandbox, iteration=2)
    assert not verdict.accepted and not verdict.stop
    assert verdict.check is not None and verdict.check.status == "failed"
    assert verdict.check.passed < verdict.check.total == 5 and verdict.check.failing
    assert all(n.startswith("check_tests/test_kvstore_check.py::") for n in verdict.check.failing)
    assert verdict.score == round(10 * verdict.check.passed / 5, 2) < 10
    assert f"{verdict.check.passed} of 5 check tests pass" in verdict.feedback
    assert "NotImplementedError" in verdict.log
    assert verdict.files == {"kvstore/store.py": "implement _expired", "kvstore/errors.py": "SUMMARY-MARKER"}
    prompt = model.prompts[0]
    assert "\n".join(sorted(broken)) in prompt and "NotImplementedError" in prompt
    assert f"{verdict.check.passed} of 5 passed" in prompt
    record = only_record(gw)
    assert (record.role, record.stage, record.iteration) == ("code_judge", "code", 2)


@pytest.mark.parametrize("reply,suggestion", [
    ('{"summary": "S-MARKER", "files": [{"path": "kvstore/ghost.py", "suggestion": "x"}]}', "S-MARKER"),
    ("The store is broken somewhere.", "make the failing check tests pass"),
])
def test_code_judge_falls_back_to_files_the_log_mentions(task, broken, sandbox, reply, suggestion):
    verdict, _ = judge_code(task, broken, scripted({"role": "code_judge", "content": reply}), sandbox)
    assert not verdict.accepted
    assert verdict.files == {"kvstore/store.py": suggestion}


def test_code_judge_runs_the_sandbox_once_per_distinct_repository(sandbox):
    assert sandbox.runs <= 2  # reference + broken, shared by every test above


def test_a_resumed_code_judge_sends_the_same_prompt_and_is_answered_from_the_call_cache(task, reference, env_cache,
                                                                                       tmp_path):
    """A run killed after the judge's call and before its node's checkpoint judges again on resume, in another
    process: another sandbox run (other object addresses, another session folder). The prompt must be the same, so
    the call cache answers it and the model is not called twice (the slow kill-and-resume test saw
    `<kvstore.store.KVStore object at 0x7f...>` differ). The store's expiry off by one, as in its script."""
    broken = {**reference, "kvstore/store.py": reference["kvstore/store.py"].replace("now >= expires_at",
                                                                                     "now > expires_at")}
    answer = json.dumps({"summary": "s", "files": [{"path": "kvstore/store.py", "suggestion": "fix expiry"}]})
    models, verdicts = [], []
    for workdir in ("w", "a-longer-work-folder"):  # the killed run's sessions, then the resumed run's
        runner = SandboxRunner(RunnerSettings(cache_dir=env_cache, workdir=tmp_path / workdir))
        door = ModelGateway(recorder=UsageRecorder(tmp_path / "usage.jsonl"), retries=0,
                            cache=CallCache(tmp_path / "calls.jsonl", scope="run"))
        models.append(PromptModel(answer=answer))
        verdicts.append(run(CodeJudge(models[-1]).review(door, task, broken, runner=runner, iteration=1)))
    assert "KVStore object at 0x" in models[0].prompts[0]  # what used to differ is in the prompt
    assert models[1].prompts == []  # answered from calls.jsonl
    assert len(UsageRecorder.load(tmp_path / "usage.jsonl").records) == 1
    assert verdicts[0].log == verdicts[1].log and verdicts[1].files == {"kvstore/store.py": "fix expiry"}


def test_code_judge_falls_back_to_every_python_file_when_the_log_names_none(task):
    report = _report([TestResult(nodeid="check_tests/t.py::a", outcome=Outcome.FAILED, message="assert 1 == 2"),
                      TestResult(nodeid="check_tests/t.py::b", outcome=Outcome.PASSED)])
    repo = {"pkg/a.py": "x = 1\n", "pkg/b.py": "y = 2\n", "README.md": "docs"}
    runner = FakeRunner(report)
    verdict, _ = judge_code(task, repo, scripted({"role": "code_judge", "content": {"files": []}}), runner)
    assert runner.calls == 1
    assert verdict.files == {"pkg/a.py": "make the failing check tests pass",
                             "pkg/b.py": "make the failing check tests pass"}
    assert verdict.score == 5 and not verdict.accepted
    assert verdict.check == CheckStatus(passed=1, total=2, status="failed", failing=["check_tests/t.py::a"])


def test_code_judge_harness_error_stops_without_a_model_call(task):
    model = scripted()
    verdict, _ = judge_code(task, {"a.py": ""}, model, FakeRunner(_report([], error="venv build failed")))
    assert verdict.stop and not verdict.accepted and verdict.score == 0
    assert "venv build failed" in verdict.feedback and model.calls == []


def test_code_judge_without_check_tests_accepts_without_running(task):
    no_check = task.model_copy(update={"suites": {k: v for k, v in task.suites.items() if k != "check"}})
    assert "check" not in no_check.suites and "unit" in no_check.suites
    runner, model = FakeRunner(), scripted()
    verdict, _ = judge_code(no_check, {"a.py": "broken("}, model, runner)
    assert verdict.accepted and verdict.score == 10 and verdict.check is None
    assert runner.calls == 0 and model.calls == []
