"""The fake external system (projectgen/external/adapters/fake.py, run as the adapter contract says) in the
sandbox, with the model bridge as its only way out: it gets its files from the model through the bridge
(every call recorded in the run folder), reaches nothing else, is refused once its budget is spent, and a
killed run started again replays the calls it had made. The model behind the bridge is a scripted replay
(`ScriptedChatModel`), labelled as such in every record. The same fake runs as an experiment method in
tests/external/test_external_methods.py; here it meets the bridge and the sandbox alone."""
from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from projectgen.bridge.sandboxed import SystemCommand, SystemRun, run_system
from projectgen.bridge.server import BRIDGE_ROLE, BridgeSettings, ModelBridge
from projectgen.bridge.serving import serve_bridge
from projectgen.datasets.task import Task
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.evaluation.sandbox import NAMESPACES, Containment
from projectgen.evaluation.sandbox_probe import probe_containment
from projectgen.external.systems import SYSTEMS_FILE
from projectgen.llm.budgets import TokenBudget
from projectgen.llm.call_cache import CallCache
from projectgen.llm.door import DoorSettings
from projectgen.llm.prompt_store import PromptStore, read_prompts
from projectgen.llm.scripted import scripted_chat_model_class
from projectgen.llm.usage import UsageRecorder
from projectgen.repository.edits import make_whole_file_reply
from test_support import make_task

ADAPTERS = SYSTEMS_FILE.parent / "adapters"
FILES = {"calc/__init__.py": "from calc.add import add\n", "calc/add.py": "def add(a, b):\n    return a + b\n"}
PRD = "# Calculator\n\nFiles:\n" + "".join(f"- {path}\n" for path in FILES)
PLAN, WRITE = "Plan the repository for these documents.", "Write the repository for these documents."
SCRIPT = {"label": "fake system's replay", "responses": [
    {"role": BRIDGE_ROLE, "target": PLAN, "content": "One package, calc, with add."},
    {"role": BRIDGE_ROLE, "target": WRITE, "content": make_whole_file_reply(sorted(FILES), FILES)},
]}


@pytest.fixture(scope="module")
def containment() -> Containment:
    with tempfile.TemporaryDirectory(prefix="projectgen-probe-") as scratch:
        found = probe_containment("auto", Path(scratch))
    if found.isolation != NAMESPACES:
        pytest.skip("the namespace sandbox is not available here")
    return found


def door(run: Path, budget: TokenBudget | None = None) -> DoorSettings:
    """The run folder's door, as a durable run makes it: usage, prompts, call cache."""
    run.mkdir(exist_ok=True)
    return DoorSettings(recorder=UsageRecorder(run / "usage.jsonl"), prompts=PromptStore(run / "prompts.jsonl"),
                        cache=CallCache(run / "call_cache.jsonl", scope="fake-system"), budget=budget, retries=0)


def scripted() -> Any:
    return scripted_chat_model_class().from_responses(SCRIPT)


def fake_system(bridge: ModelBridge, **knobs: str) -> SystemCommand:
    """The fake adapter's command as the runner builds it (its variables, its folder bound read-only), run with
    projectgen's own Python: the fake needs nothing else. `knobs`: its test-only ``FAKE_SYSTEM_*`` variables."""
    variables = {"PROJECTGEN_MODEL": bridge.served_name, "PROJECTGEN_TEMPERATURE": "", "PROJECTGEN_TOP_P": "",
                 "PROJECTGEN_MAX_TOKENS": "", "PROJECTGEN_MAX_ITERATIONS": "0",
                 **{f"FAKE_SYSTEM_{name.upper()}": value for name, value in knobs.items()}}
    return SystemCommand(argv=(sys.executable, str(ADAPTERS / "fake.py"), "--docs", "docs", "--out", "out"),
                         timeout=120, env=variables, binds=(sys.prefix, str(ADAPTERS)))


def run_fake(model: Any, settings: DoorSettings, containment: Containment, tmp_path: Path, **knobs: str) -> SystemRun:
    bridge = ModelBridge(model, BridgeSettings(system="fake-system", door=settings))
    with serve_bridge(bridge) as served:
        return run_system(fake_system(bridge, **knobs), served, containment, {"docs/PRD.md": PRD}, workdir=tmp_path)


@pytest.fixture
def host_listener() -> Iterator[int]:
    """A TCP server on every host address: what the system must not reach."""
    server = socket.create_server(("0.0.0.0", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def host_address() -> str | None:
    """This machine's address on its default route (no packet is sent), or None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def scoring_task(root: Path) -> Task:
    """A task whose unit suite tests the calculator the script's replies make (its reference: those replies)."""
    task = make_task(root, {"test_calc.py": """
        from calc import add
        def test_small(): assert add(1, 2) == 3
        def test_negative(): assert add(-1, 1) == 0
    """})
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return task.model_copy(update={"reference": tuple(FILES)})


def test_the_system_gets_its_files_through_the_bridge_reaches_nothing_else_and_is_scored(
        tmp_path: Path, containment: Containment, host_listener: int, env_cache: Path) -> None:
    addresses = [f"127.0.0.1:{host_listener}"] + ([f"{a}:{host_listener}"] if (a := host_address()) else [])
    for address in addresses:  # the control: from the host, each one answers
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=3):
            pass
    model = scripted()
    run = tmp_path / "run"
    done = run_fake(model, door(run), containment, tmp_path, probes=",".join([*addresses, "dns:pypi.org"]))
    assert done.succeeded, done.output
    assert {path: done.repository[f"out/{path}"] for path in FILES} == FILES
    network = json.loads(done.repository["out/network.json"])
    assert set(network) == {*addresses, "dns:pypi.org"}
    assert all(result.startswith("blocked") for result in network.values()), network

    records = UsageRecorder.load(run / "usage.jsonl").records
    assert [(r.role, r.stage, r.target, r.iteration) for r in records] == [
        (BRIDGE_ROLE, "fake-system", target, 1) for target in (PLAN, WRITE)]
    assert {r.model for r in records} == {"scripted:fake system's replay"}  # a replay, named as one
    prompts = read_prompts(run / "prompts.jsonl")
    assert [prompts[r.prompt_id or ""][-1]["content"] for r in records] == [PLAN, WRITE]
    assert len(model.calls) == 2

    runner = SandboxRunner(RunnerSettings(cache_dir=env_cache, expectations_dir=tmp_path / "expected", timeout=60))
    scored = runner.score(scoring_task(tmp_path / "task"), {path: done.repository[f"out/{path}"] for path in FILES})
    assert (scored.score.passed, scored.score.expected) == (2, 2)


def test_a_call_over_the_budget_is_refused_with_a_clear_error(tmp_path: Path, containment: Containment) -> None:
    model = scripted()
    run = tmp_path / "run"
    # the plan call is about 35 tokens (estimated) and fits in 50; the write call takes the run past it
    done = run_fake(model, door(run, TokenBudget(50)), containment, tmp_path)
    assert done.exit_status == 3, done.output
    assert "model call refused (429)" in done.output
    assert "projectgen bridge refused the call: token budget exceeded" in done.output
    assert not any(path.startswith("out/calc/") for path in done.repository)
    records = UsageRecorder.load(run / "usage.jsonl").records
    assert [r.target for r in records] == [PLAN, WRITE]  # what was spent is recorded
    assert records[0].total_tokens <= 50 < sum(r.total_tokens for r in records)


def test_a_killed_run_started_again_replays_the_calls_it_had_made(tmp_path: Path, containment: Containment) -> None:
    run = tmp_path / "run"
    first = scripted()
    killed = run_fake(first, door(run), containment, tmp_path, killed_after_plan="1")
    assert killed.exit_status == 128 + 9 and "out/calc/add.py" not in killed.repository, killed.output
    assert len(first.calls) == 1
    again = scripted()  # a new process: a new model, bridge and door over the same run folder
    done = run_fake(again, door(run), containment, tmp_path)
    assert done.succeeded, done.output
    assert {path: done.repository[f"out/{path}"] for path in FILES} == FILES
    assert [call["target"] for call in again.calls] == [WRITE]  # the plan was replayed
    records = UsageRecorder.load(run / "usage.jsonl").records
    assert [r.target for r in records] == [PLAN, WRITE]  # each call once
    assert os.path.getsize(run / "call_cache.jsonl") > 0


def test_the_output_keeps_the_order_it_was_printed_in_so_its_end_is_the_systems_last_words(
        tmp_path: Path, containment: Containment) -> None:
    """A library's stdout, block-buffered into a pipe, would be flushed at exit after the adapter's stderr line."""
    script = "import sys; print('a library talks'); print('fake adapter: why it failed', file=sys.stderr); sys.exit(1)"
    bridge = ModelBridge(scripted(), BridgeSettings(system="fake-system", door=door(tmp_path / "run")))
    with serve_bridge(bridge) as served:
        ran = run_system(SystemCommand(argv=(sys.executable, "-c", script), timeout=60, binds=(sys.prefix,)), served,
                         containment, {}, workdir=tmp_path)
    assert ran.exit_status == 1
    assert [line for line in ran.output.splitlines() if line.strip()][-2:] == ["a library talks",
                                                                               "fake adapter: why it failed"]
