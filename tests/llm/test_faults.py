"""Fault injection (`projectgen.llm.faults`) and the fault matrix: real runs under a misbehaving model.

The unit tests check the wrapper itself. The matrix runs LiveCoder for real (every agent,
graph, stage loop, the knowledge store and the sandbox) on the bundled kvstore task, with a
reference replay wrapped in a `FaultyChatModel`, 2 attempts, stage caps 2/2/2 and a token
budget, and checks the same contract in every cell (`check_run`):

- the run ends with a clear status in run.json (finished, budget-limited or failed), with a
  one-line reason unless finished; a failed run raised the model's error, left the best so
  far in ``repository/`` and no summary.json;
- every model call is within the attempts cap and its stage's iteration cap, and made once
  per (attempt, stage, role, target, iteration) -- retries stay inside one call;
- the tokens spent stay within the budget (beyond it only by the calls in flight when it
  tripped);
- nothing is written outside the output folder: a sentinel parent folder (the escaping paths
  ``../../x`` land there), HOME (``~/.ssh/x``), the project checkout and ``/etc`` are
  unchanged, and no file of an escaping name exists anywhere; the sandbox leaves nothing behind;
- the output is bounded: no repository file is longer than the door's reply cap, and the
  run folder stays small.

Heavier cells (every fault at rate 1, mixed faults over several seeds, the other edit
format, the CLI with 5 MB replies) are marked slow: ``make test-slow``.
"""
from __future__ import annotations

import dataclasses
import json
import os
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from projectgen.runs import Run, RunParts
from projectgen.runs import RunRequest
from projectgen.config import AttemptSettings, Settings
from projectgen.errors import ProjectGenError
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.llm import (
    MAX_REPLY_CHARS, CallLabels, DoorSettings, ModelCallError, ModelRoles, ScriptedChatModel, UsageRecorder,
    call_model, describe_model, model_name,
)
from projectgen.llm.faults import (
    CONTENT_FAULTS, ESCAPE_PREFIX, FAULT_KINDS, GLITCHES, FaultPlan, FaultyChatModel, escape_paths, inject_faults,
)
from projectgen.llm.parsing import StructuredOutputError, find_json
from projectgen.oracles.reference_replay import Breakage, reference_script
from projectgen.repository import safe_relpath
from projectgen.runs import Run, RunParts

CHECKOUT = Path(__file__).resolve().parents[2]
CAPS = {"architecture": 2, "skeleton": 2, "code": 2}
SETTINGS = Settings(architecture_iterations=2, skeleton_iterations=2, code_iterations=2, retry_backoff=0)
ATTEMPTS = AttemptSettings(attempts=2, measure_unit_tests=False)
BUDGET = 2_000_000
KNOWLEDGE = {"success": {"task_summary": "kvstore", "carry_over": ["keep the storage layering"]},
             "failure": {"observed_failures": ["expiry is off by one"],
                         "carry_over_constraints": ["now >= expires_at"]}}


def replay(task, *, broken: bool = False, off_by_one: bool = False) -> dict[str, Any]:
    """The reference replay plus knowledge. `broken`: every first store.py has `KVStore.get`
    unimplemented and a repair (a whole-file edit naming its path) fixes it. `off_by_one`: attempt 1's
    store.py expires entries one instant late (4 of 5 check tests, no repair), attempt 2's is right."""
    breakage = Breakage("kvstore/store.py", "KVStore.get") if broken else None
    script = reference_script(task, breakage=breakage).model_dump(mode="json", exclude_none=True)
    if off_by_one:
        entry = next(e for e in script["responses"] if e["role"] == "coder" and e["target"] == "kvstore/store.py")
        fixed = entry["content"]
        entry.update(attempt=1, content=fixed.replace("now >= expires_at", "now > expires_at"))
        script["responses"].append({"role": "coder", "target": "kvstore/store.py", "attempt": 2, "content": fixed})
    next(e for e in script["responses"] if e["role"] == "knowledge")["content"] = KNOWLEDGE
    script["label"] = "fault matrix replay (not a model)"
    return script


@pytest.fixture(scope="module")
def runner(task) -> SandboxRunner:
    """The sandbox (the usual environment cache), its environment made ready up front under the real
    HOME, so that no cell's snapshot sees the cache being filled."""
    from projectgen.evaluation.environments import default_cache_dir

    sandbox = SandboxRunner(RunnerSettings(cache_dir=default_cache_dir(), timeout=120))
    sandbox.environments.ensure(task.env)
    return sandbox


def cell_runner(runner: SandboxRunner, sentinels: Sentinels) -> SandboxRunner:
    """The same sandbox with its workspaces in the sentinel folder, so that a leftover shows."""
    return SandboxRunner(dataclasses.replace(runner.settings, workdir=sentinels.sandbox))


# --------------------------------------------------------------------------- the plan and the wrapper


def test_a_fault_spec_parses_and_bad_ones_are_one_line() -> None:
    plan = FaultPlan.parse("rate_limit=0.2, prose=0.1, seed=7, roles=coder+architect, attempts=2, max=3")
    assert plan.rates == {"rate_limit": 0.2, "prose": 0.1} and plan.seed == 7 and plan.max_faults == 3
    assert plan.roles == ("coder", "architect") and plan.attempts == (2,)
    assert plan.describe() == "rate_limit=0.2, prose=0.1, seed 7, roles coder+architect, attempts 2, at most 3"
    assert set(FaultPlan.parse("all=0.01").rates) == set(GLITCHES) and "auth_error" not in GLITCHES
    for spec, message in [("bogus=0.1", "unknown fault kind(s) bogus"), ("prose=2", "between 0 and 1"),
                          ("prose=0.6,empty=0.6", "add up to 1.2"), ("prose", "expected KIND=RATE"),
                          ("roles=poet", "unknown role(s) poet"), ("seed=x", "invalid literal")]:
        with pytest.raises(ProjectGenError, match="bad fault spec") as raised:
            FaultPlan.parse(spec)
        assert message in str(raised.value) and "\n" not in str(raised.value)


def test_fault_decisions_are_seeded_and_independent_of_call_order() -> None:
    plan = FaultPlan.uniform(0.05, seed=3)
    keys = [("coder", "code", f"pkg/m{i}.py", 1, 1, 1) for i in range(400)]
    first = [plan.decide(*key) for key in keys]
    assert [plan.decide(*key) for key in reversed(keys)] == first[::-1]
    assert [FaultPlan.uniform(0.05, seed=4).decide(*key) for key in keys] != first
    counts = Counter(first)
    assert 0.35 * 400 < sum(v for k, v in counts.items() if k) < 0.65 * 400  # 9 kinds x 5%
    assert FaultPlan.always("prose", roles=("coder",)).decide("architect", "architecture", None, 1, 1, 1) is None
    assert FaultPlan.always("prose", attempts=(2,)).decide("coder", "code", "a.py", 1, 1, 1) is None
    assert FaultPlan.always("prose", attempts=(2,)).decide("coder", "code", "a.py", 1, 2, 1) == "prose"


def test_a_latency_fault_delays_every_call_by_a_fixed_or_seeded_drawn_time(monkeypatch) -> None:
    import asyncio
    import time

    assert FaultPlan.parse("latency=1.5s").latency == (1.5, 1.5) == FaultPlan.parse("latency=1.5").latency
    plan = FaultPlan.parse("latency=0.5s-2s,seed=3")
    assert plan.describe() == "no faults, seed 3, latency 0.5s-2s" and not plan.rates
    keys = [("coder", "code", f"m{i}.py", 1, 1, 1) for i in range(200)]
    delays = [plan.delay(*key) for key in keys]
    assert all(0.5 <= d <= 2 for d in delays) and len(set(delays)) > 150  # drawn per call ...
    assert [plan.delay(*key) for key in reversed(keys)] == delays[::-1]  # ... seeded, whatever the order
    assert FaultPlan.parse("latency=2s").delay(*keys[0]) == 2 and FaultPlan().delay(*keys[0]) == 0
    for spec in ("latency=2s-1s", "latency=fast"):
        with pytest.raises(ProjectGenError, match="bad fault spec.*latency"):
            FaultPlan.parse(spec)
    # the wrapper waits before every call, blocking or async, and the reply is the wrapped model's
    waited: list[float] = []
    monkeypatch.setattr(time, "sleep", waited.append)

    async def asleep(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", asleep)
    inner = ScriptedChatModel.from_responses({"label": "unit replay", "fallback": '{"overall": 9}'})
    model = FaultyChatModel(wrapped=inner, plan=FaultPlan.parse("latency=1.5s,prose=0"))
    reply, recorder, _ = ask(model)
    asked = asyncio.run(model.ainvoke("hello"))
    assert waited == [1.5, 1.5] and json.loads(reply.content) == json.loads(asked.content) == {"overall": 9}
    assert model.injected == [] and recorder.records[0].error is None


def scripted(responses: list[dict[str, Any]]) -> Any:
    return ScriptedChatModel.from_responses(responses, label="unit replay")


def ask(model: Any, **options: Any) -> tuple[Any, UsageRecorder, list[float]]:
    recorder, sleeps = UsageRecorder(), []
    reply = call_model(model, "hello", CallLabels("architecture_judge", "architecture", None, 1),
                       DoorSettings(recorder=recorder, **options), sleep=sleeps.append)
    return reply, recorder, sleeps


def test_transient_faults_are_retried_by_the_door_and_persistent_ones_fail() -> None:
    inner = scripted([{"role": "architecture_judge", "content": {"overall": 9}}])
    for kind, name in [("rate_limit", "RateLimitError"), ("timeout", "APITimeoutError"),
                       ("server_error", "InternalServerError")]:
        model = FaultyChatModel(wrapped=inner, plan=FaultPlan(rates={kind: 0.5}, seed=1))
        # the door retries until a try is not faulty (seeded: the same tries fail every time)
        reply, recorder, sleeps = ask(model, retries=20)
        (record,) = recorder.records
        assert json.loads(reply.content) == {"overall": 9} and record.error is None
        assert record.attempts == len(model.injected) + 1 and len(sleeps) == len(model.injected)
        assert {f["kind"] for f in model.injected} <= {kind}
        always = FaultyChatModel(wrapped=inner, plan=FaultPlan.always(kind))
        with pytest.raises(ModelCallError, match=f"after 4 attempt.*transient error persisted.*{name}"):
            ask(always, backoff=0.5)
    rejected = FaultyChatModel(wrapped=inner, plan=FaultPlan.always("auth_error"))
    with pytest.raises(ModelCallError, match="after 1 attempt.*non-retryable.*AuthenticationError"):
        ask(rejected)


def test_content_faults_transform_the_wrapped_reply() -> None:
    answer = {"files": [{"path": "kvstore/store.py", "suggestion": "fix get"}], "summary": "one bug"}
    inner = scripted([{"role": "architecture_judge", "content": answer}])

    def faulty(kind: str, **options: Any) -> str:
        reply, recorder, _ = ask(FaultyChatModel(wrapped=inner, plan=FaultPlan.always(kind, **options)))
        assert reply.response_metadata["projectgen_fault"] == kind
        return reply.content

    assert faulty("empty") == ""
    truncated, _, _ = ask(FaultyChatModel(wrapped=inner, plan=FaultPlan.always("truncated")))
    assert truncated.response_metadata["finish_reason"] == "length"
    assert json.dumps(answer, indent=2).startswith(truncated.content) and truncated.content
    with pytest.raises(StructuredOutputError, match="Invalid JSON"):
        find_json(faulty("malformed"))
    with pytest.raises(StructuredOutputError, match="No JSON"):
        find_json(faulty("prose"))
    escaped = json.loads(faulty("escaping_paths"))["files"][0]["path"]
    assert ESCAPE_PREFIX in escaped
    with pytest.raises(ProjectGenError, match="unsafe repository path"):
        safe_relpath(escaped)
    huge = faulty("enormous", enormous_chars=300_000)
    assert len(huge) == MAX_REPLY_CHARS and huge.startswith("{")  # cut at the door


def test_a_code_reply_is_broken_inside_its_code_block() -> None:
    inner = scripted([{"role": "coder", "content": "```python\nx = {'a': 1}\n```\n"}])
    model = FaultyChatModel(wrapped=inner, plan=FaultPlan.always("malformed"))
    reply = call_model(model, "hi", CallLabels("coder", "code", "a.py", 1))
    code = reply.content.split("```python\n")[1].split("```")[0]
    with pytest.raises(SyntaxError):
        compile(code, "a.py", "exec")


def test_every_escaping_path_is_refused_by_safe_relpath() -> None:
    text = "\n".join(f"pkg/mod{i}.py" for i in range(8))
    escaped = escape_paths(text).splitlines()
    assert len(set(p.split(ESCAPE_PREFIX)[0] for p in escaped)) == 4  # ../../, /etc/, ~/.ssh/, pkg/../../../
    for path in escaped:
        with pytest.raises(ProjectGenError, match="unsafe repository path"):
            safe_relpath(path)
    # a reply without a path gains one where a whole-file edit names its file
    assert escape_paths("```python\nx = 1\n```\n").splitlines()[0] == f"../../{ESCAPE_PREFIX}module.py"


def test_the_door_cuts_an_oversized_reply_and_records_it() -> None:
    inner = scripted([{"role": "architecture_judge", "content": "x" * 5000}])
    reply, recorder, _ = ask(inner, max_reply_chars=1000)
    (record,) = recorder.records
    assert len(reply.content) == 1000 and reply.response_metadata["finish_reason"] == "length"
    assert record.cut_chars == 4000 and record.output_tokens == 5000 // 4 + 1  # the tokens were spent
    assert record.finish_reason == "length"
    reply, recorder, _ = ask(inner, max_reply_chars=None)
    assert len(reply.content) == 5000 and recorder.records[0].cut_chars == 0


def test_the_wrapper_is_named_as_such_and_priced_as_the_wrapped_model() -> None:
    inner = scripted([])
    model = FaultyChatModel(wrapped=inner, plan=FaultPlan.parse("prose=0.1,seed=2"))
    assert model_name(model) == model_name(inner) == "scripted:unit replay"
    described = describe_model(model)
    assert described.startswith("fault-injecting wrapper (prose=0.1, seed 2) around scripted model (unit replay)")
    roles = inject_faults(ModelRoles(default=inner, overrides={"coder": inner, "knowledge": scripted([])}), "empty=1")
    assert roles.for_role("coder") is roles.for_role("architect")  # one shared wrapper per shared model
    assert roles.for_role("knowledge") is not roles.for_role("coder")
    assert all(text.startswith("fault-injecting wrapper (empty=1, seed 0) around scripted model (")
               for text in roles.describe().values())


def test_the_fault_kinds_are_documented() -> None:
    import projectgen.llm.faults as faults

    assert all(f"``{kind}``" in faults.__doc__ for kind in FAULT_KINDS)
    assert set(CONTENT_FAULTS) < set(FAULT_KINDS)


# --------------------------------------------------------------------------- what the faults exposed


def test_the_skeleton_judge_records_files_it_named_outside_the_skeleton(task) -> None:
    import asyncio

    from projectgen.agents import ModelGateway, SkeletonJudge
    from projectgen.oracles.reference_replay import reference_ssat
    from projectgen.ssat import render_stub

    ssat = reference_ssat(task)
    files = {node.path: render_stub(node) for node in ssat.files()}
    review = {"score": 9, "feedback": "", "files": {"../../pgfault_x.py": "write here", "kvstore/store.py": "ok"}}
    judge = SkeletonJudge(scripted([{"role": "skeleton_judge", "content": review}]))
    verdict = asyncio.run(judge.review(ModelGateway(), ssat, files, iteration=1, threshold=8))
    assert verdict.files == {"kvstore/store.py": "ok"}
    assert verdict.reasons == "ignored file(s) the judge named that are not in the skeleton: ['../../pgfault_x.py']"


# --------------------------------------------------------------------------- the matrix


def _files(root: Path, skip: tuple[str, ...] = ()) -> dict[str, tuple[int, int]]:
    found = {}
    if not root.exists():
        return found
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for name in filenames:
            path = Path(dirpath) / name
            stat = path.lstat()
            found[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


CHECKOUT_SKIP = (".git", "__pycache__", ".pytest_cache", ".venv", ".mypy_cache", ".ruff_cache", "runs",
                 "demo-output", "projectgen-reports")


class Sentinels:
    """Everything a run must not touch, snapshotted before and compared after."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.cwd = base / "work" / "cwd"  # ../../x from here lands in base
        self.out = base / "runs" / "out"  # ../../x from its repository/ lands in base/runs
        self.sandbox = base / "sandbox"
        for folder in (self.home / ".ssh", self.cwd, self.sandbox, self.out.parent):
            folder.mkdir(parents=True, exist_ok=True)
        (base / "sentinel.txt").write_text("do not touch\n")
        (self.home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA sentinel\n")
        self.real_home = Path(os.path.expanduser("~"))
        self.before = self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        base = {k: v for k, v in _files(self.base).items() if not k.startswith(("runs/out/", "sandbox/"))}
        return {"base": base, "checkout": _files(CHECKOUT, CHECKOUT_SKIP),
                "etc": sorted(p.name for p in Path("/etc").iterdir() if p.name.startswith(ESCAPE_PREFIX)),
                "real_ssh": sorted(p.name for p in (self.real_home / ".ssh").glob(f"{ESCAPE_PREFIX}*"))}

    def check(self) -> None:
        after = self.snapshot()
        for part in ("base", "etc", "real_ssh"):
            assert after[part] == self.before[part], f"a run wrote outside its output folder ({part})"
        changed = {k for k in set(after["checkout"]) | set(self.before["checkout"])
                   if after["checkout"].get(k) != self.before["checkout"].get(k)}
        assert not changed, f"a run changed the project checkout: {sorted(changed)[:5]}"
        assert not list(self.sandbox.iterdir()), "the sandbox left a workspace behind"
        escaped = [p for p in self.base.rglob(f"{ESCAPE_PREFIX}*")]
        assert not escaped, f"a file with an escaping path was written: {escaped}"


@pytest.fixture
def sentinels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sentinels:
    guard = Sentinels(tmp_path / "sentinel")
    monkeypatch.setenv("HOME", str(guard.home))
    monkeypatch.chdir(guard.cwd)
    return guard


def run_cell(task, runner: SandboxRunner, sentinels: Sentinels, plan: FaultPlan | str, *, broken: bool = False,
             off_by_one: bool = False, settings: Settings = SETTINGS, attempts: AttemptSettings = ATTEMPTS,
             max_tokens: int = BUDGET, expect_failure: bool | None = False) -> dict[str, Any]:
    """One LiveCoder run under `plan` (`expect_failure` None: either way); returns what `check_run` found."""
    model = FaultyChatModel(wrapped=ScriptedChatModel.from_responses(replay(task, broken=broken,
                                                                            off_by_one=off_by_one)),
                            plan=FaultPlan.parse(plan) if isinstance(plan, str) else plan)
    outcome, error = None, None
    try:
        outcome = Run.open(RunRequest.for_task(task, attempt_settings=attempts.model_copy(update={"measure_unit_tests": False}), settings=settings, max_tokens=max_tokens), sentinels.out, RunParts(models=ModelRoles(model), runner=cell_runner(runner, sentinels)), force=True).run()
    except ModelCallError as exc:
        error = exc
    if expect_failure is not None:
        assert (error is not None) == expect_failure, f"unexpected {'failure' if error else 'success'}: {error}"
    assert (error is not None) == (json.loads((sentinels.out / "run.json").read_text())["status"] == "failed")
    found = check_run(sentinels, settings, attempts, max_tokens)
    found.update(model=model, outcome=outcome, error=error)
    return found


def check_run(sentinels: Sentinels, settings: Settings, attempts: AttemptSettings, max_tokens: int) -> dict[str, Any]:
    """The contract every cell must meet (see the module docstring)."""
    out = sentinels.out
    manifest = json.loads((out / "run.json").read_text())
    status, reason = manifest["status"], manifest.get("reason")
    assert status in {"finished", "budget-limited", "failed"}
    assert (reason is None) == (status == "finished") and "\n" not in (reason or "")
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else None
    if status == "failed":
        assert summary is None and (out / "repository").is_dir()
    else:
        assert summary["status"] == status and summary["reason"] == reason
        assert len(summary["attempts"]) <= attempts.attempts
        for row in summary["attempts"]:
            for stage, figures in (row.get("stages") or {}).items():
                assert figures["iterations"] <= settings.cap(stage)
    calls = [json.loads(line) for line in (out / "usage.jsonl").read_text().splitlines()] if (
        out / "usage.jsonl").exists() else []
    # once each: a retry stays inside its call's record; only a call that failed for good is made
    # again, by a resume
    keys = Counter((c["attempt"], c["stage"], c["role"], c["target"], c["iteration"]) for c in calls
                   if not c["error"])
    assert not keys or max(keys.values()) == 1, [k for k, n in keys.items() if n > 1]
    for call in calls:
        assert 1 <= call["attempt"] <= attempts.attempts
        assert call["attempts"] <= settings.retries + 1
        if call["stage"] == "knowledge":
            assert call["iteration"] == call["attempt"] < attempts.attempts
        else:
            assert 1 <= call["iteration"] <= settings.cap(call["stage"])
    tokens = sorted(c["input_tokens"] + c["output_tokens"] for c in calls)
    in_flight = sum(tokens[-settings.max_concurrency:])
    assert sum(tokens) - in_flight <= max_tokens
    if sum(tokens) > max_tokens:
        assert status == "budget-limited"
    repository = out / "repository"
    for path in repository.rglob("*"):
        assert not path.is_file() or path.stat().st_size <= settings.max_reply_chars + 1
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert size < 60_000_000, f"the run folder grew to {size} bytes"
    sentinels.check()
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert events[-1]["event"] == "run_end" and events[-1]["status"] == status
    return {"status": status, "reason": reason, "summary": summary, "calls": calls, "events": events}


def test_transient_errors_are_retried_and_the_run_finishes(task, runner, sentinels) -> None:
    found = run_cell(task, runner, sentinels, "rate_limit=0.15,timeout=0.1,server_error=0.1,seed=11")
    assert found["status"] == "finished" and found["summary"]["final"]["score"] == 1.0
    retried = [c for c in found["calls"] if c["attempts"] > 1]
    assert retried and not any(c["error"] for c in found["calls"])
    assert sum(c["attempts"] - 1 for c in found["calls"]) == len(found["model"].injected)


def test_an_attempt_without_a_tree_still_gets_its_record(task, runner, sentinels) -> None:
    found = run_cell(task, runner, sentinels, "prose=1,roles=architect",
                     attempts=AttemptSettings(attempts=1, measure_unit_tests=False))
    (row,) = found["summary"]["attempts"]
    assert row["stopped"].startswith("architecture: no usable tree after 2 iteration(s)") and row["files"] == 0
    assert json.loads((sentinels.out / "attempts" / "1" / "attempt.json").read_text())["score"] == 0.0


def test_a_model_that_keeps_failing_ends_the_run_failed(task, runner, sentinels) -> None:
    found = run_cell(task, runner, sentinels, "rate_limit=1", expect_failure=True)
    assert found["status"] == "failed" and "RateLimitError" in found["reason"]
    (call,) = found["calls"]
    assert call["attempts"] == 4 and call["error"].startswith("RateLimitError")
    assert not list((sentinels.out / "repository").iterdir())  # no best so far: an empty output


def test_a_failure_keeps_the_best_so_far_and_the_run_resumes(task, runner, sentinels) -> None:
    # attempt 1 scores 0.8 (4 of 5 check tests); attempt 2's coder calls are refused
    found = run_cell(task, runner, sentinels, "auth_error=1,roles=coder,attempts=2", off_by_one=True,
                     expect_failure=True)
    assert found["status"] == "failed" and "AuthenticationError" in found["reason"]
    kept = (sentinels.out / "repository" / "kvstore" / "store.py").read_text()
    assert "now > expires_at" in kept  # attempt 1's repository, the best so far
    assert found["events"][-1]["final"] == {"source": "best", "attempt": 1, "score": pytest.approx(0.8)}
    # the model is back: the run continues from the failed step and finishes
    model = ScriptedChatModel.from_responses(replay(task, off_by_one=True))
    resumed = Run.resume(sentinels.out, RunParts(models=ModelRoles(model), runner=cell_runner(runner, sentinels))).run()
    assert resumed.summary["status"] == "finished"
    assert {c["role"] for c in model.calls} == {"coder"}  # attempt 2's code stage, nothing done before again
    assert resumed.summary["final"] == {"source": "best", "attempt": 2, "score": 1.0}
    assert "now >= expires_at" in (sentinels.out / "repository" / "kvstore" / "store.py").read_text()
    check_run(sentinels, SETTINGS, ATTEMPTS, BUDGET)


def test_a_failing_knowledge_call_keeps_the_scored_attempt(task, runner, sentinels) -> None:
    found = run_cell(task, runner, sentinels, "auth_error=1,roles=knowledge", expect_failure=True)
    assert found["events"][-1]["final"] == {"source": "best", "attempt": 1, "score": 1.0}
    assert (sentinels.out / "repository" / "kvstore" / "store.py").exists()


def test_a_budget_reached_by_the_knowledge_call_stops_cleanly(task, runner, sentinels) -> None:
    # the generation of attempt 1 fits in 80k tokens; its knowledge reply (400k characters) does not
    found = run_cell(task, runner, sentinels, "enormous=1,roles=knowledge,enormous_chars=400000",
                     max_tokens=80_000)
    assert found["status"] == "budget-limited" and "role=knowledge" in found["reason"]
    assert found["summary"]["final"] == {"source": "best", "attempt": 1, "score": 1.0}
    assert [r["attempt"] for r in found["summary"]["attempts"]] == [1]


def test_garbled_replies_end_within_the_caps(task, runner, sentinels) -> None:
    found = run_cell(task, runner, sentinels, "empty=0.1,truncated=0.1,malformed=0.1,prose=0.1,seed=5",
                     attempts=AttemptSettings(attempts=1, measure_unit_tests=False))
    kinds = {f["kind"] for f in found["model"].injected}
    assert kinds == {"empty", "truncated", "malformed", "prose"}
    assert found["status"] == "finished"


def test_escaping_paths_are_refused_recorded_and_the_run_goes_on(task, runner, sentinels) -> None:
    # seed 15 makes the first tree, the code judge's choice of files and the repair name escaping paths,
    # and the second tree a clean one
    found = run_cell(task, runner, sentinels, "escaping_paths=0.5,roles=architect+code_judge+coder,seed=15",
                     broken=True, attempts=AttemptSettings(attempts=1, measure_unit_tests=False))
    injected = {(f["role"], f["iteration"]) for f in found["model"].injected}
    assert {("architect", 1), ("code_judge", 1), ("coder", 2)} <= injected and ("architect", 2) not in injected
    (row,) = found["summary"]["attempts"]
    assert row["stages"]["architecture"]["scores"] == [0.0, 9.0] and row["stages"]["code"]["iterations"] == 2
    verdicts = [v for e in found["events"] for v in (e.get("data") or {}).get("verdicts", [])]
    assert "unsafe repository path" in verdicts[0]["feedback"]  # the tree, refused and fed back
    assert any("ignored file(s) the judge named that are not in the repository" in v.get("reasons", "")
               for v in verdicts if v["stage"] == "code")
    (repair,) = [e["data"]["edits"][0] for e in found["events"] if e.get("node") == "repair_file"]
    assert repair["failed"] == 1 and "is outside the repository" in repair["feedback"]


def test_enormous_replies_are_cut_and_the_run_stays_small(task, runner, sentinels) -> None:
    settings = SETTINGS.model_copy(update={"max_reply_chars": 50_000})
    found = run_cell(task, runner, sentinels, "enormous=0.2,enormous_chars=2000000,seed=2", settings=settings,
                     max_tokens=10_000_000)
    injected = found["model"].injected
    assert injected
    cut = [c for c in found["calls"] if c["cut_chars"]]
    assert len(cut) == len(injected) and all(c["cut_chars"] >= 2_000_000 - 50_000 for c in cut)
    assert all(c["output_tokens"] > 2_000_000 // 4 for c in cut)  # what was spent is counted
    assert found["status"] == "finished"
    assert sum(p.stat().st_size for p in sentinels.out.rglob("*") if p.is_file()) < 15_000_000


def _cli(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": os.pathsep.join(
        filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "projectgen.cli", "run", "kvstore", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=600)


def test_the_cli_ends_a_failing_run_with_one_line(task, runner, sentinels, capsys) -> None:
    from projectgen.cli import main

    script = sentinels.base / "runs" / "replay.json"
    script.write_text(json.dumps(replay(task)))
    sentinels.before = sentinels.snapshot()
    # refused in the parallel skeleton step: LangGraph drops the sibling tasks, Python would warn
    done = _cli("--model", f"scripted:{script}", "--inject-faults", "auth_error=1,roles=skeleton", "--out",
                str(sentinels.out), "--attempts", "2", "--iterations", "2,2,2", "--no-unit-tests",
                "--cache-dir", str(runner.settings.cache_dir), cwd=sentinels.cwd, home=sentinels.home)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("projectgen: error: the run failed (model: ModelCallError: ")
    assert "AuthenticationError" in done.stderr and f"--resume {sentinels.out}" in done.stderr
    assert "the run failed" not in done.stdout, done.stdout  # said once, not also as a progress line
    check_run(sentinels, SETTINGS, ATTEMPTS, 10**9)
    assert main(["run", "kvstore", "--model", f"scripted:{script}", "--inject-faults", "bogus=1",
                 "--out", str(sentinels.base / "x")]) == 2
    assert "bad fault spec 'bogus=1': unknown fault kind(s) bogus" in capsys.readouterr().err
    assert not (sentinels.base / "x").exists()


# --------------------------------------------------------------------------- slow cells

@pytest.mark.slow
@pytest.mark.parametrize("kind", [k for k in FAULT_KINDS if k != "rate_limit"])
def test_every_fault_at_every_call(task, runner, sentinels, kind: str) -> None:
    plan = FaultPlan.always(kind, enormous_chars=1_000_000)
    failing = kind in ("timeout", "server_error", "auth_error")
    found = run_cell(task, runner, sentinels, plan, expect_failure=failing, max_tokens=BUDGET)
    if failing:
        assert found["status"] == "failed" and len(found["calls"]) == 1
    elif kind == "enormous":  # cut to the cap, the replies still parse: the budget ends it
        assert found["status"] == "budget-limited"
    else:  # no usable tree, twice: both attempts stop in the architecture stage
        rows = found["summary"]["attempts"]
        assert [r["stopped"].split(":")[0] for r in rows] == ["architecture", "architecture"]


@pytest.mark.slow
@pytest.mark.parametrize("rate", [0.04, 0.1])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_mixed_glitches(task, runner, sentinels, rate: float, seed: int) -> None:
    plan = FaultPlan.uniform(rate, seed=seed, enormous_chars=1_000_000)
    found = run_cell(task, runner, sentinels, plan, max_tokens=6_000_000, expect_failure=None)
    assert found["status"] in ("finished", "budget-limited", "failed")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_mixed_glitches_with_search_replace_repairs(task, runner, sentinels, seed: int) -> None:
    settings = SETTINGS.model_copy(update={"edit_format": "search_replace"})
    plan = FaultPlan.uniform(0.08, seed=seed, enormous_chars=1_000_000)
    found = run_cell(task, runner, sentinels, plan, broken=True, settings=settings, max_tokens=6_000_000,
                     expect_failure=None)
    assert found["status"] in ("finished", "budget-limited", "failed")


@pytest.mark.slow
def test_the_cli_survives_five_megabyte_replies_in_bounded_memory(task, runner, sentinels) -> None:
    script = sentinels.base / "runs" / "replay.json"
    script.write_text(json.dumps(replay(task)))
    sentinels.before = sentinels.snapshot()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = _cli("--model", f"scripted:{script}", "--inject-faults", "enormous=0.3,seed=2", "--out",
                str(sentinels.out), "--attempts", "2", "--iterations", "2,2,2", "--no-unit-tests",
                "--cache-dir", str(runner.settings.cache_dir), cwd=sentinels.cwd, home=sentinels.home)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mb < 1024 or peak_mb <= before / 1024, f"peak memory {peak_mb:.0f} MB"
    found = check_run(sentinels, SETTINGS, ATTEMPTS, 10**9)
    cut = [c["cut_chars"] for c in found["calls"] if c["cut_chars"]]
    assert cut and all(n >= 5_000_000 - MAX_REPLY_CHARS for n in cut), cut
