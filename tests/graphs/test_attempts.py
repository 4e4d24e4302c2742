"""LiveCoder's attempts loop: reuse, selection of the best, ablations, knowledge in prompts, budgets."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from projectgen.llm import ModelRoles
from projectgen.runs import Run, RunParts
from projectgen.runs import RunRequest
from projectgen.config import AttemptSettings, Settings
from projectgen.evaluation.report import Outcome, TestReport, TestResult
from projectgen.graphs import ProjectState, RunContext
from projectgen.llm import META_ATTEMPT, ScriptedChatModel
from projectgen.runs import Run, RunParts
from projectgen.runs.trace import read_trace

from test_support import attempt_script

# --------------------------------------------------------------------------- fakes


class ScoreRunner:
    """A sandbox stand-in: a repository's `SCORE = x` line decides its pass rate (10 tests)."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, float]] = []

    def evaluate(self, task, candidate, suite="unit") -> TestReport:
        score = float(candidate["mod.py"].split("SCORE = ")[1].split()[0])
        self.runs.append((suite, score))
        passed = round(score * 10)
        tests = [TestResult(nodeid=f"t::{i}", outcome=Outcome.PASSED if i < passed else Outcome.FAILED)
                 for i in range(10)]
        return TestReport(task_id=task.id, suite=suite, tests=tests)


def scored_project_graph(scores: list[float]):
    """A stand-in for the project graph: attempt t writes a repository scoring scores[t-1]."""

    async def generate(state: ProjectState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        attempt = runtime.context.gateway.metadata[META_ATTEMPT]
        return {"repository": {"mod.py": f"# attempt {attempt}\nSCORE = {scores[attempt - 1]}\n"}}

    graph = StateGraph(ProjectState, context_schema=RunContext)
    graph.add_node("generate", generate)
    graph.add_edge(START, "generate")
    return graph.compile()


class NoKnowledge:
    def __init__(self) -> None:
        self.added: list[Any] = []

    def retrieve(self, task_id, query, kind, k=3, run_id=None):
        return []

    def add(self, task_id, entry, run_id=None):
        self.added.append(entry)


def run_scores(task, scores: list[float], tmp_path: Path, **settings: Any) -> dict[str, Any]:
    import asyncio

    from projectgen.graphs import AttemptsContext, build_attempts_graph
    from projectgen.memory.best_repo import BestRepositoryStore

    graph = build_attempts_graph(scored_project_graph(scores), settings=AttemptSettings(**settings))
    runner = ScoreRunner()
    context = AttemptsContext(task=task, runner=runner, knowledge=NoKnowledge(), best=BestRepositoryStore(tmp_path))
    state = asyncio.run(graph.ainvoke({"task_id": task.id, "attempt": 1}, context=context))
    return {"state": state, "runner": runner}


# --------------------------------------------------------------------------- selection and ablations


def test_the_output_is_the_historical_best_not_the_last_attempt(task, tmp_path: Path) -> None:
    result = run_scores(task, [0.6, 0.4, 0.5, 0.3], tmp_path)
    state = result["state"]
    assert state["final"] == {"source": "best", "attempt": 1, "score": 0.6}
    assert state["repository"]["mod.py"].startswith("# attempt 1")
    scores = [r["score"] for r in state["records"]]
    assert scores == [0.6, 0.4, 0.5, 0.3]
    assert [r["best_attempt"] for r in state["records"]] == [1, 1, 1, 1]  # never regresses


def test_without_the_historical_best_the_output_is_the_last_attempt(task, tmp_path: Path) -> None:
    state = run_scores(task, [0.6, 0.4, 0.5, 0.3], tmp_path, historical_best=False)["state"]
    assert state["final"]["source"] == "last" and state["final"]["attempt"] == 4
    assert state["repository"]["mod.py"].startswith("# attempt 4")


def test_a_full_score_is_reused_and_ends_the_run(task, tmp_path: Path) -> None:
    result = run_scores(task, [0.5, 1.0, 0.2, 0.2], tmp_path)
    state = result["state"]
    assert [(r["attempt"], r["reused"]) for r in state["records"]] == [(1, False), (2, False), (3, True)]
    assert state["final"] == {"source": "reused", "attempt": 2, "score": 1.0}
    assert state["repository"]["mod.py"].startswith("# attempt 2")
    assert len([s for s in result["runner"].runs if s[0] == "check"]) == 2  # attempt 3 generated nothing


def test_an_equal_score_does_not_replace_the_best(task, tmp_path: Path) -> None:
    state = run_scores(task, [0.5, 0.5, 0.5, 0.5], tmp_path)["state"]
    assert state["final"]["attempt"] == 1
    assert [r["improved"] for r in state["records"]] == [True, False, False, False]


def test_selection_by_unit_tests_is_the_oracle_setting(task, tmp_path: Path) -> None:
    result = run_scores(task, [0.3, 0.9, 0.1, 0.1], tmp_path, selection="unit", measure_unit_tests=True)
    assert {suite for suite, _ in result["runner"].runs} == {"unit"}  # the check suite is not consulted
    assert result["state"]["final"]["attempt"] == 2


# --------------------------------------------------------------------------- the real pipeline


def recording_model(script: dict[str, Any]):
    """The scripted model, also keeping (role, attempt, prompt text) of every call."""
    from pydantic import PrivateAttr

    from projectgen.llm import input_text

    class Recording(ScriptedChatModel):
        _prompts: list[tuple[str, int, str]] = PrivateAttr(default_factory=list)

        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            metadata = getattr(run_manager, "metadata", None) or {}
            self._prompts.append((metadata.get("projectgen_role"), metadata.get(META_ATTEMPT), input_text(messages)))
            return await super()._agenerate(messages, stop, run_manager, **kwargs)

    return Recording.from_responses(script)


@pytest.fixture(scope="module")
def two_attempt_run(task, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("livecoder") / "run"
    model = recording_model(attempt_script(task))
    outcome = Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=4), settings=Settings(code_iterations=1)), out, RunParts(models=ModelRoles(model))).run()
    outcome.prompts = model._prompts
    return outcome


def test_attempt_two_fixes_attempt_one_and_attempt_three_reuses_it(two_attempt_run) -> None:
    summary = two_attempt_run.summary
    rows = summary["attempts"]
    assert [(r["attempt"], r["reused"]) for r in rows] == [(1, False), (2, False), (3, True)]
    assert rows[0]["score"] == pytest.approx(0.8) and rows[1]["score"] == 1.0
    assert summary["final"] == {"source": "reused", "attempt": 2, "score": 1.0}
    out = two_attempt_run.out_dir
    final = (out / "repository" / "kvstore" / "store.py").read_text()
    assert final == (out / "attempts" / "2" / "repository" / "kvstore" / "store.py").read_text()
    assert "now >= expires_at" in final
    assert rows[1]["unit"]["passed"] == rows[1]["unit"]["total"] == 29


def test_the_trace_shows_the_knowledge_attempt_two_received(two_attempt_run) -> None:
    events = read_trace(two_attempt_run.out_dir / "events.jsonl")
    given = [e for e in events if e.get("node") == "retrieve_knowledge"]
    assert [e["attempt"] for e in given] == [1, 2]
    assert given[0]["data"]["knowledge_used"] == {"success": [], "failure": []}
    second = given[1]["data"]["knowledge_used"]
    assert any("keep the storage layering" in k["text"] for k in second["success"])
    assert any("now >= expires_at" in k["text"] for k in second["failure"])
    assert all(k["attempt"] == 1 for k in second["success"] + second["failure"])


def test_attempt_two_prompts_carry_the_guidance(two_attempt_run) -> None:
    prompts = two_attempt_run.prompts
    generators = {"architect", "skeleton", "coder"}
    first = [text for role, attempt, text in prompts if role in generators and attempt == 1]
    second = [text for role, attempt, text in prompts if role in generators and attempt == 2]
    assert first and second
    assert not any("Lessons from earlier attempts" in text for text in first)
    assert all("keep the storage layering" in text and "now >= expires_at" in text for text in second)
    judges = [text for role, attempt, text in prompts if role.endswith("judge") and attempt == 2]
    assert not any("Lessons from earlier attempts" in text for text in judges)  # judges use no memory
    usage = [json.loads(line) for line in (two_attempt_run.out_dir / "usage.jsonl").read_text().splitlines()]
    assert {u["attempt"] for u in usage} == {1, 2}  # attempt 3 made no model call
    assert [u["role"] for u in usage].count("knowledge") == 2  # after attempts 1 and 2, not after the last


@pytest.mark.slow  # the cost budget's twin test stays in the default suite
def test_a_small_token_budget_stops_cleanly_with_the_best_so_far(task, tmp_path: Path) -> None:
    model = ScriptedChatModel.from_responses(attempt_script(task))
    first = Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=2), settings=Settings(code_iterations=1)), tmp_path / "full", RunParts(models=ModelRoles(model))).run()
    attempt_one = sum(r["tokens"]["total_tokens"] for r in first.summary["attempts"] if r["attempt"] == 1)
    limited = Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=4), settings=Settings(code_iterations=1), max_tokens=attempt_one + 500), tmp_path / "limited", RunParts(models=ModelRoles(ScriptedChatModel.from_responses(attempt_script(task))))).run()
    summary = limited.summary
    assert summary["budget_limited"] and "budget" in summary["stopped"]
    assert summary["final"]["source"] == "best" and summary["final"]["attempt"] == 1
    assert [r.get("budget_limited", False) for r in summary["attempts"]] == [False, True]
    assert (tmp_path / "limited" / "repository" / "kvstore" / "store.py").exists()
    manifest = json.loads((tmp_path / "limited" / "run.json").read_text())
    assert manifest["status"] == "budget-limited"


def priced_model(script: dict[str, Any]):
    """The scripted replay under a made-up priced name, so that a price file gives its calls a cost."""

    class Priced(ScriptedChatModel):
        model_name: str = "test-priced-double"

        @property
        def _llm_type(self) -> str:
            return "priced test double (scripted replay)"

    return Priced.from_responses(script)


def test_a_small_cost_budget_stops_cleanly_with_the_best_so_far(task, tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."test-priced-double"]\ninput = 100.0\noutput = 400.0\n')
    from projectgen.llm.pricing import PriceTable

    table = PriceTable.from_file(prices)
    Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=2), settings=Settings(code_iterations=1)), tmp_path / "full", RunParts(models=ModelRoles(priced_model(attempt_script(task))))).run()
    calls = [json.loads(line) for line in (tmp_path / "full" / "usage.jsonl").read_text().splitlines()]
    assert {c["model"] for c in calls} == {"test-priced-double"}
    attempt_one = table.total(c for c in calls if c["attempt"] == 1).value
    assert attempt_one and attempt_one > 0

    limited = Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=4), settings=Settings(code_iterations=1), max_cost_usd=attempt_one * 1.02, prices_file=prices), tmp_path / "limited", RunParts(models=ModelRoles(priced_model(attempt_script(task))))).run()
    summary = limited.summary
    assert summary["budget_limited"] and "cost budget" in summary["stopped"]
    assert summary["final"]["attempt"] == 1 and summary["final"]["source"] == "best"
    spent = table.total(json.loads(line) for line in (tmp_path / "limited" / "usage.jsonl").read_text().splitlines())
    assert attempt_one * 1.02 < spent.value < attempt_one * 1.5  # stopped by the first call over the line
    manifest = json.loads((tmp_path / "limited" / "run.json").read_text())
    assert manifest["status"] == "budget-limited" and manifest["max_cost_usd"] == attempt_one * 1.02


def test_a_resumed_run_is_charged_with_what_it_spent_before(tmp_path: Path) -> None:
    from projectgen.runs import RunManifest, run_budget
    from projectgen.llm import AllBudgets, CallRecord, UsageRecorder

    recorder = UsageRecorder()
    for _ in range(3):
        recorder.record(CallRecord(role="coder", stage="code", model="gpt-4o-mini", input_tokens=1_000_000,
                                output_tokens=0))
    manifest = RunManifest(run_id="r", task_path="t", task_id="t", max_tokens=50_000_000, max_cost_usd=1.0)
    budget = run_budget(manifest, recorder)
    assert isinstance(budget, AllBudgets)
    tokens, cost = budget.budgets
    assert tokens.used == 3_000_000
    assert cost.spent == pytest.approx(0.45)  # 3M input tokens at $0.15 per 1M
    budget.before_call()  # under both limits: allowed
    from projectgen.llm import BudgetExceededError

    with pytest.raises(BudgetExceededError, match="cost budget"):
        budget.check(CallRecord(role="coder", stage="code", model="gpt-4o-mini", input_tokens=4_000_000,
                                output_tokens=0))
    assert tokens.used == 7_000_000  # every budget still counted the call
    with pytest.raises(BudgetExceededError):
        budget.before_call()
    assert run_budget(RunManifest(run_id="r", task_path="t", task_id="t")) is None


def test_warm_start_reuses_the_best_attempts_tree_and_skeleton(task, tmp_path: Path) -> None:
    model = recording_model(attempt_script(task))
    outcome = Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=2, warm_start=True), settings=Settings(code_iterations=1)), tmp_path / "warm", RunParts(models=ModelRoles(model))).run()
    roles_by_attempt = {(role, attempt) for role, attempt, _ in model._prompts}
    assert ("architect", 1) in roles_by_attempt and ("skeleton", 1) in roles_by_attempt
    assert ("architect", 2) not in roles_by_attempt and ("skeleton", 2) not in roles_by_attempt
    assert ("coder", 2) in roles_by_attempt
    rows = outcome.summary["attempts"]
    assert set(rows[1]["stages"]) == {"code"} and rows[1]["score"] == 1.0
    assert outcome.summary["final"]["attempt"] == 2


def counting_runner() -> tuple[Any, list[str]]:
    """A real sandbox runner, and the suites it is asked to evaluate, in order."""
    from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

    runner = SandboxRunner(RunnerSettings(timeout=120))
    suites: list[str] = []
    evaluate = runner.evaluate

    def counting(task_, candidate, suite="unit"):
        suites.append(suite)
        return evaluate(task_, candidate, suite)

    runner.evaluate = counting  # type: ignore[method-assign]
    return runner, suites


def test_an_attempt_is_scored_from_the_code_judges_last_check_run(task, tmp_path: Path) -> None:
    """Check tests run once per code iteration: scoring the attempt reuses the judge's report of the same
    repository instead of running the same tests again."""
    from projectgen.oracles.reference_replay import reference_model

    runner, runs = counting_runner()
    outcome = Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=1, measure_unit_tests=False)), tmp_path / "run", RunParts(models=ModelRoles(reference_model(task)), runner=runner)).run()
    assert outcome.summary["final"]["score"] == 1.0
    assert runs.count("check") == 2 and runner.recent.hits == 1  # the judge's run, then the score: one sandbox run


def test_resuming_a_finished_run_does_not_run_its_hidden_tests_again(task, tmp_path: Path) -> None:
    from projectgen.oracles.reference_replay import reference_model

    runner, suites = counting_runner()
    first = Run.open(RunRequest.for_task(task, attempt_settings=AttemptSettings(attempts=1)), tmp_path / "run", RunParts(models=ModelRoles(reference_model(task)), runner=runner)).run()
    assert suites.count("unit") == 2 and first.unit_report.passed == 29  # the attempt's figures, then the final
    suites.clear()
    again = Run.resume(tmp_path / "run", RunParts(models=ModelRoles(reference_model(task)), runner=runner)).run()
    assert suites == [] and again.unit_report.passed == 29 and again.summary["unit_tests"]["passed"] == 29
