"""A fake external system in the sandbox, with the model bridge as its only way out: it gets its files from
the model through the bridge (every call recorded in the run folder), reaches nothing else, is refused
once its budget is spent, and a killed run started again replays the calls it had made. The model behind
the bridge is a scripted replay (`ScriptedChatModel`), labelled as such in every record."""
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
from projectgen.llm.budgets import TokenBudget
from projectgen.llm.call_cache import CallCache
from projectgen.llm.door import DoorSettings
from projectgen.llm.prompt_store import PromptStore, read_prompts
from projectgen.llm.scripted import scripted_chat_model_class
from projectgen.llm.usage import UsageRecorder
from test_support import make_task

HERE = Path(__file__).resolve().parent
FILES = ("calc/__init__.py", "calc/add.py")
PRD = "# Calculator\n\nFiles:\n" + "".join(f"- {path}\n" for path in FILES)
SCRIPT = {"label": "fake system's replay", "responses": [
    {"role": BRIDGE_ROLE, "target": "Write the file calc/__init__.py", "content": "from calc.add import add\n"},
    {"role": BRIDGE_ROLE, "target": "Write the file calc/add.py", "content": "def add(a, b):\n    return a + b\n"},
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


def fake_system(*args: str) -> SystemCommand:
    return SystemCommand(argv=(sys.executable, str(HERE / "fake_system.py"), *args), timeout=120,
                         binds=(sys.prefix, str(HERE)))


def run_fake(model: Any, settings: DoorSettings, containment: Containment, tmp_path: Path, *args: str) -> SystemRun:
    bridge = ModelBridge(model, BridgeSettings(system="fake-system", door=settings))
    with serve_bridge(bridge) as served:
        return run_system(fake_system(*args), served, containment, {"docs/PRD.md": PRD}, workdir=tmp_path)


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
    for entry in SCRIPT["responses"]:
        path = root / entry["target"].removeprefix("Write the file ")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(entry["content"], encoding="utf-8")
    return task.model_copy(update={"reference": FILES})


def test_the_system_gets_its_files_through_the_bridge_reaches_nothing_else_and_is_scored(
        tmp_path: Path, containment: Containment, host_listener: int, env_cache: Path) -> None:
    addresses = [f"127.0.0.1:{host_listener}"] + ([f"{a}:{host_listener}"] if (a := host_address()) else [])
    for address in addresses:  # the control: from the host, each one answers
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=3):
            pass
    model = scripted()
    run = tmp_path / "run"
    done = run_fake(model, door(run), containment, tmp_path,
                    *[arg for address in addresses for arg in ("--probe", address)])
    assert done.succeeded, done.output
    assert done.repository["calc/add.py"] == "def add(a, b):\n    return a + b\n"
    assert done.repository["calc/__init__.py"] == "from calc.add import add\n"
    network = json.loads(done.repository["network.json"])
    assert network["served"] == ["scripted:fake system's replay"]
    assert set(network["probes"]) == set(addresses)
    assert all(result.startswith("blocked") for result in network["probes"].values()), network["probes"]

    records = UsageRecorder.load(run / "usage.jsonl").records
    assert [(r.role, r.stage, r.target, r.iteration) for r in records] == [
        (BRIDGE_ROLE, "fake-system", f"Write the file {path}", 1) for path in FILES]
    assert {r.model for r in records} == {"scripted:fake system's replay"}  # a replay, named as one
    prompts = read_prompts(run / "prompts.jsonl")
    assert [prompts[r.prompt_id or ""][-1]["content"] for r in records] == [f"Write the file {p}" for p in FILES]
    assert len(model.calls) == 2

    runner = SandboxRunner(RunnerSettings(cache_dir=env_cache, expectations_dir=tmp_path / "expected", timeout=60))
    scored = runner.score(scoring_task(tmp_path / "task"), done.repository)
    assert (scored.score.passed, scored.score.expected) == (2, 2)


def test_a_call_over_the_budget_is_refused_with_a_clear_error(tmp_path: Path, containment: Containment) -> None:
    model = scripted()
    run = tmp_path / "run"
    # each call is about 30 tokens (estimated): the first fits in 40, the second takes the run past it
    done = run_fake(model, door(run, TokenBudget(40)), containment, tmp_path)
    assert done.exit_status == 3, done.output
    assert "model call refused (429)" in done.output
    assert "projectgen bridge refused the call: token budget exceeded" in done.output
    assert "calc/__init__.py" in done.repository and "calc/add.py" not in done.repository
    records = UsageRecorder.load(run / "usage.jsonl").records
    assert [r.target for r in records] == [f"Write the file {path}" for path in FILES]  # what was spent is recorded
    assert sum(r.total_tokens for r in records) > 40


def test_a_killed_run_started_again_replays_the_calls_it_had_made(tmp_path: Path, containment: Containment) -> None:
    run = tmp_path / "run"
    first = scripted()
    killed = run_fake(first, door(run), containment, tmp_path, "--die-after", "1")
    assert killed.exit_status == 128 + 9 and "calc/add.py" not in killed.repository, killed.output
    assert len(first.calls) == 1
    again = scripted()  # a new process: a new model, bridge and door over the same run folder
    done = run_fake(again, door(run), containment, tmp_path)
    assert done.succeeded, done.output
    assert done.repository["calc/add.py"] == "def add(a, b):\n    return a + b\n"
    assert [call["target"] for call in again.calls] == ["Write the file calc/add.py"]  # the first was replayed
    records = UsageRecorder.load(run / "usage.jsonl").records
    assert [r.target for r in records] == [f"Write the file {path}" for path in FILES]  # each call once
    assert os.path.getsize(run / "call_cache.jsonl") > 0
