"""An external system as an experiment method, offline: the fake system (projectgen/external/adapters/fake.py, a
stdlib script) driven through `projectgen experiment` with the reference replay behind the model bridge, in the
namespace sandbox. Its calls are recorded in its run folder, its output is scored beside projectgen's own
method in one table, its call budget is enforced, a killed pair reruns replaying its paid calls, and what it
tries to reach besides the bridge (the host's listener, a DNS name) it does not reach."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from projectgen.bridge.sandboxed import SystemRun
from projectgen.datasets.examples import example_tasks_dir
from projectgen.errors import ProjectGenError
from projectgen.evaluation.sandbox import NAMESPACES
from projectgen.evaluation.sandbox_session import FINISHED
from projectgen.evaluation.sandbox_probe import probe_containment
from projectgen.experiments import ExperimentSpec
from projectgen.external import runner as external_runner
from projectgen.external.call_budget import CallBudget
from projectgen.external.methods import parse_system_paths
from projectgen.external.systems import SYSTEMS_FILE, SYSTEMS_FILE_VARIABLE, load_systems
from projectgen.llm.naming import REFERENCE_LABEL
from projectgen.llm.usage import UsageRecorder
from openai_server import fake_llama_server
from test_support import experiment_cli

ADAPTERS = SYSTEMS_FILE.parent / "adapters"
FAKE_ADAPTER = ADAPTERS / "fake.py"
FAKE = """
[fake]
label = "Fake"
source = "pypi"
requirements = []
python = ""
distribution = ""
adapter = "adapters/fake.py"
documents = ["PRD.md"]
max_iterations = 0
max_calls = {max_calls}
timeout_s = 120
[fake.env]
FAKE_SYSTEM_PROBES = "{probes}"
FAKE_SYSTEM_PAUSE_S = "{pause}"
"""
RUN = Path("fake") / "reference" / "wordfreq"


@pytest.fixture(scope="module")
def namespaces() -> None:
    """Skips a test that runs a system when the namespace sandbox is missing (a system runs only in it)."""
    with tempfile.TemporaryDirectory(prefix="projectgen-probe-") as scratch:
        if probe_containment("auto", Path(scratch)).isolation != NAMESPACES:
            pytest.skip("the namespace sandbox is not available here")


def systems_file(folder: Path, *, max_calls: int = 4, probes: str = "", pause: float = 0) -> Path:
    """A systems file holding the fake system (its adapter and the contract module it imports copied beside it,
    as the file's folder is its root)."""
    (folder / "adapters").mkdir(parents=True, exist_ok=True)
    for name in ("fake.py", "contract.py"):
        shutil.copy(ADAPTERS / name, folder / "adapters" / name)
    path = folder / "systems.toml"
    path.write_text(FAKE.format(max_calls=max_calls, probes=probes, pause=pause), encoding="utf-8")
    return path


def experiment(out: Path, env_cache: Path, methods: str = "fake") -> tuple[int, str]:
    return experiment_cli("--dataset", str(example_tasks_dir()), "--tasks", "wordfreq", "--model", "reference",
                          "--method", methods, "--out", str(out), "--cache-dir", str(env_cache))


def pair(out: Path, method: str = "fake") -> dict:
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    report = next(report for report in results["models"] if report["method"] == method)
    return report["pairs"][0]


@pytest.fixture
def host_listener() -> Iterator[int]:
    """A TCP server on every address of the host: what the system must not reach."""
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
    """The host's address on its default route (no packet is sent), or None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_the_fake_system_is_a_method_its_calls_recorded_its_output_scored_in_one_table_and_it_reaches_nothing_else(
        tmp_path: Path, env_cache: Path, host_listener: int, monkeypatch: pytest.MonkeyPatch, namespaces: None) -> None:
    addresses = [f"127.0.0.1:{host_listener}"] + ([f"{a}:{host_listener}"] if (a := host_address()) else [])
    for address in addresses:  # the control: from the host, each one answers
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=3):
            pass
    probes = [*addresses, "dns:pypi.org"]
    monkeypatch.setenv(SYSTEMS_FILE_VARIABLE, str(systems_file(tmp_path / "systems", probes=",".join(probes))))
    out = tmp_path / "out"
    code, printed = experiment(out, env_cache, "fake,direct")
    assert code == 0, printed

    run = out / RUN
    records = UsageRecorder.load(run / "usage.jsonl").records
    assert [(r.role, r.stage, r.attempt, r.target) for r in records] == [
        ("external", "fake", 1, "Plan the repository for these documents."),
        ("external", "fake", 1, "Write the repository for these documents.")]
    assert {r.model for r in records} == {f"scripted:{REFERENCE_LABEL}"}
    assert all(r.prompt_id and r.prompt_id in (run / "prompts.jsonl").read_text() for r in records)

    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert manifest["method"] == "fake" and manifest["status"] == "finished"
    system = manifest["protocol"]
    assert (system["system"], system["source"], system["documents"]) == ("fake", "pypi", ["PRD.md"])
    assert system["adapter_sha256"] == load_systems(SYSTEMS_FILE)["fake"].adapter_sha256()
    assert system["python"] and system["environment"].startswith("fake-")

    fake, direct = pair(out, "fake"), pair(out, "direct")
    assert fake["status"] == "finished" and fake["final_unit_total"] == direct["final_unit_total"] > 0
    assert fake["final_unit_passed"] == fake["final_unit_total"]  # the reference, written by the system
    assert fake["sketchbleu"] == pytest.approx(100.0) and fake["tokens"]["calls"] == 2
    markdown = (out / "results.md").read_text(encoding="utf-8")
    assert "fake / reference" in markdown and "direct / reference" in markdown

    network = json.loads((run / "repository" / "network.json").read_text(encoding="utf-8"))
    assert set(network) == set(probes)
    assert all(result.startswith("blocked") for result in network.values()), network

    code, printed = experiment(out, env_cache, "fake,direct")  # a finished pair is not run again
    assert code == 0 and pair(out)["how"] == "ledger", printed
    assert len(UsageRecorder.load(run / "usage.jsonl").records) == 2


def test_the_call_budget_is_enforced_by_the_bridge_and_the_run_says_so(
        tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, namespaces: None) -> None:
    monkeypatch.setenv(SYSTEMS_FILE_VARIABLE, str(systems_file(tmp_path / "systems", max_calls=1)))
    out = tmp_path / "out"
    code, printed = experiment(out, env_cache)
    assert code == 0, printed
    records = UsageRecorder.load(out / RUN / "usage.jsonl").records
    assert [r.target for r in records] == ["Plan the repository for these documents."]  # the second was refused
    manifest = json.loads((out / RUN / "run.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "budget-limited"
    assert manifest["reason"] == "the bridge refused 1 call(s): 1 model calls answered"
    summary = json.loads((out / RUN / "summary.json").read_text(encoding="utf-8"))
    assert summary["exit_status"] == 3 and "model call refused (429)" in summary["output"]
    row = pair(out)
    assert row["status"] == "budget-limited" and row["run_note"] == manifest["reason"]


def test_a_killed_pair_reruns_replaying_the_calls_it_had_paid_for(
        tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, namespaces: None) -> None:
    monkeypatch.setenv(SYSTEMS_FILE_VARIABLE, str(systems_file(tmp_path / "systems")))
    out = tmp_path / "out"
    scored = external_runner.hidden_unit_tests

    def killed(*args: object) -> None:
        raise KeyboardInterrupt  # the experiment is stopped after the system ran, before its output was scored

    monkeypatch.setattr(external_runner, "hidden_unit_tests", killed)
    with pytest.raises(KeyboardInterrupt):
        experiment(out, env_cache)
    run = out / RUN
    ledger = out / "ledger.jsonl"
    assert not (run / "summary.json").exists() and not (ledger.exists() and ledger.read_text(encoding="utf-8"))
    paid = (run / "calls.jsonl").read_text(encoding="utf-8")
    stopped = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert stopped["status"] == "interrupted"
    first_id = stopped["run_id"]

    monkeypatch.setattr(external_runner, "hidden_unit_tests", scored)
    code, printed = experiment(out, env_cache)
    assert code == 0, printed
    row = pair(out)
    assert row["how"] == "resumed" and row["status"] == "finished"
    assert row["final_unit_passed"] == row["final_unit_total"] > 0
    assert len(UsageRecorder.load(run / "usage.jsonl").records) == 2  # each call once: the rerun's were replayed
    assert (run / "calls.jsonl").read_text(encoding="utf-8") == paid
    assert json.loads((run / "run.json").read_text(encoding="utf-8"))["run_id"] == first_id


@pytest.mark.slow
def test_a_pair_killed_while_its_system_runs_reruns_without_paying_a_call_twice(
        tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, namespaces: None) -> None:
    """The experiment process SIGKILLed between the system's two calls (its sandbox dies with it), then run again."""
    systems = systems_file(tmp_path / "systems", pause=600)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "projectgen", "experiment", "--dataset", str(example_tasks_dir()), "--tasks",
            "wordfreq", "--model", "reference", "--method", "fake", "--out", str(out), "--cache-dir", str(env_cache)]
    usage = out / RUN / "usage.jsonl"
    process = subprocess.Popen(argv, env={**os.environ, SYSTEMS_FILE_VARIABLE: str(systems)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300  # a bound on waiting, not a timing assertion
        while not (usage.exists() and usage.read_text(encoding="utf-8").count("\n") == 1):
            assert process.poll() is None and time.monotonic() < deadline, "the first call was never recorded"
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert not (out / RUN / "summary.json").exists()

    systems_file(tmp_path / "systems")  # the same system, without the pause
    monkeypatch.setenv(SYSTEMS_FILE_VARIABLE, str(systems))
    code, printed = experiment(out, env_cache)
    assert code == 0, printed
    row = pair(out)
    assert row["how"] == "resumed" and row["final_unit_passed"] == row["final_unit_total"] > 0
    records = UsageRecorder.load(usage).records
    assert [r.target for r in records] == ["Plan the repository for these documents.",
                                           "Write the repository for these documents."]  # the first one once


@pytest.mark.slow
def test_against_a_served_model_every_request_the_server_saw_is_a_recorded_call(
        tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, namespaces: None) -> None:
    """The smoke's check offline: a model behind an OpenAI-compatible server (llama-cpp-python's behaviour), the
    system's calls through the bridge, each sent once with the experiment's sampling (the model's own)."""
    from projectgen.datasets.examples import example_task_path
    from projectgen.datasets.loaders import load_task
    from projectgen.repository.edits import make_whole_file_reply

    files = load_task(example_task_path("wordfreq")).reference_repository()
    monkeypatch.setenv(SYSTEMS_FILE_VARIABLE, str(systems_file(tmp_path / "systems")))
    out = tmp_path / "out"
    with fake_llama_server(reply=make_whole_file_reply(sorted(files), files), n_ctx=100_000) as server:
        code, printed = experiment_cli(
            "--dataset", str(example_tasks_dir()), "--tasks", "wordfreq", "--model", "smollm2", "--base-url",
            server.url, "--method", "fake", "--out", str(out), "--cache-dir", str(env_cache), "--temperature", "0.5",
            "--max-output-tokens", "4000")
    assert code == 0, printed
    records = UsageRecorder.load(out / "fake" / "smollm2" / "wordfreq" / "usage.jsonl").records
    assert len(server.requests) == sum(r.attempts for r in records) == 2
    assert {(body["temperature"], body["max_tokens"]) for body in server.requests} == {(0.5, 4000)}
    assert not any(r.tokens_estimated for r in records)  # the server's own counts
    row = pair(out)
    assert row["final_unit_passed"] == row["final_unit_total"] > 0


# ------------------------------------------------------------------ refused before anything runs


def test_a_system_without_an_adapter_is_refused_as_a_method_in_one_line() -> None:
    with pytest.raises(ProjectGenError, match="external system se-agent cannot run yet: SE-Agent .* no Docker"):
        ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("se-agent",))
    with pytest.raises(ProjectGenError, match="unknown method"):
        ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("no-such-system",))


def test_a_checkout_system_needs_its_system_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = systems_file(tmp_path / "systems")
    path.write_text(path.read_text(encoding="utf-8").replace('source = "pypi"', 'source = "checkout"'),
                    encoding="utf-8")
    monkeypatch.setenv(SYSTEMS_FILE_VARIABLE, str(path))
    with pytest.raises(ProjectGenError, match="runs from a checkout of its repository: pass --system-path DIR"):
        ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("fake",))
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    paths = parse_system_paths([str(checkout)], ("fake", "direct"))
    spec = ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("fake",), system_paths=paths)
    assert spec.system_paths == {"fake": str(checkout.resolve())}
    with pytest.raises(ProjectGenError, match="not a checkout system among the methods"):
        ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("direct",),
                       system_paths={"fake": str(checkout)})


@pytest.mark.parametrize(("change", "message"), [
    (('source = "pypi"', 'source = "git"'), r"\[fake\]: source must be one of pypi, checkout"),
    (('max_iterations = 0', 'max_iterations = 0\nmax_itertions = 4'), r"\[fake\]: unknown key\(s\) max_itertions"),
    (('documents = ["PRD.md"]', 'documents = ["PRD.txt"]'), r"\[fake\]: unknown document\(s\) PRD.txt"),
    (('adapter = "adapters/fake.py"', 'adapter = "../fake.py"'), r"\[fake\]: adapter must be a .py file below"),
    (('adapter = "adapters/fake.py"', 'adapter = ""'), r"\[fake\]: an entry without an adapter says why"),
    (('max_calls = 4', 'max_calls = 0'), r"\[fake\]: max_calls and timeout_s must be positive"),
])
def test_a_bad_systems_entry_is_one_line_naming_it(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = systems_file(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace(*change), encoding="utf-8")
    with pytest.raises(ProjectGenError, match=message):
        load_systems(path)


def test_the_recorded_adapter_hash_covers_the_contract_module_it_imports(tmp_path: Path) -> None:
    """run.json's adapter_sha256 (what a continue compares): a change to the shared contract.py changes it for
    every adapter that imports it, as a change to the adapter does, and leaves an adapter that does not alone."""
    shutil.copytree(SYSTEMS_FILE.parent / "adapters", tmp_path / "adapters")
    shutil.copy(SYSTEMS_FILE, tmp_path / "systems.toml")
    (tmp_path / "adapters" / "alone.py").write_text("import json\n", encoding="utf-8")
    (tmp_path / "systems.toml").write_text((tmp_path / "systems.toml").read_text(encoding="utf-8") + FAKE.format(
        max_calls=4, probes="", pause=0).replace("[fake", "[alone").replace("adapters/fake.py", "adapters/alone.py"),
        encoding="utf-8")

    def hashes() -> dict[str, str]:
        return {name: entry.adapter_sha256() for name, entry in load_systems(tmp_path / "systems.toml").items()
                if entry.adapter}

    before = hashes()
    assert hashes() == before  # the same files, the same hashes
    assert before["alone"] == hashlib.sha256(b"import json\n").hexdigest()  # nothing beside it imported
    contract = tmp_path / "adapters" / "contract.py"
    contract.write_text(contract.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
    after = hashes()
    changed = {name for name in before if before[name] != after[name]}
    assert changed == set(before) - {"alone"}
    assert {"fake", "metagpt", "gpt-engineer", "openevolve", "mini-swe-agent", "aider"} <= changed


def test_a_failed_run_gives_the_adapters_own_line_as_its_reason_not_what_a_library_printed_after_it() -> None:
    """As mini-swe-agent's run against the tiny model ended: its adapter's line, then litellm's hint flushed at exit."""
    output = ('{"config": "mini", "exit_status": "RepeatedFormatError"}\n'
              "mini-swe-agent adapter: the agent ended (RepeatedFormatError) without writing a file\n\n"
              "\x1b[1;31mProvider List: https://docs.litellm.ai/docs/providers\x1b[0m\n\n")
    ran = SystemRun(stop=FINISHED, exit_status=1, output=output, repository={})
    assert external_runner.run_status(ran, CallBudget(4), None) == (
        "failed", "the system exited with status 1: mini-swe-agent adapter: the agent ended (RepeatedFormatError) "
                  "without writing a file")
    ran = SystemRun(stop=FINISHED, exit_status=1, output="Traceback ...\n\x1b[31mValueError: bad\x1b[0m\n",
                    repository={})
    assert external_runner.run_status(ran, CallBudget(4), None) == (
        "failed", "the system exited with status 1: ValueError: bad")  # no adapter line: the last one, uncoloured


def test_the_bundled_systems_file_loads_and_its_adapters_exist() -> None:
    systems = load_systems(SYSTEMS_FILE)
    assert "fake" in systems
    for entry in systems.values():
        assert entry.not_ready if not entry.adapter else entry.adapter_path.is_file(), entry.name


def test_a_broken_systems_file_stops_only_the_external_methods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "systems.toml"
    broken.write_text("[fake\n", encoding="utf-8")
    monkeypatch.setenv(SYSTEMS_FILE_VARIABLE, str(broken))
    spec = ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("direct", "projectgen"))
    assert spec.methods == ("direct", "projectgen")
    with pytest.raises(ProjectGenError, match="systems.toml: unreadable"):
        ExperimentSpec(dataset=example_tasks_dir(), models=["reference"], methods=("fake",))


def test_on_a_benchmark_whose_methods_get_the_hidden_tests_a_system_still_gets_only_the_check_tests(
        tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, namespaces: None) -> None:
    """RAL-Bench's paper profile gives projectgen's methods the hidden tests' output (`feedback_suite = "unit"`);
    a system is given DOCS/check_tests and never the hidden tests. Its run.json and the results once said
    "feedback unit (the hidden unit tests' output was given to the generators)" and listed projectgen's
    pipeline settings (stage memory, judges) as if they had steered it."""
    monkeypatch.setenv(SYSTEMS_FILE_VARIABLE, str(systems_file(tmp_path / "systems")))
    out = tmp_path / "out"
    layout = Path(__file__).parents[1] / "datasets" / "benchmark_layouts" / "ralbench"
    code, printed = experiment_cli("--dataset", str(layout), "--model", "reference", "--method", "fake",
                                   "--out", str(out), "--cache-dir", str(env_cache))
    assert code == 0, printed
    manifest = json.loads((out / "fake" / "reference" / "wordcount" / "run.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["profile"] == "paper" and manifest["settings"]["feedback_suite"] == "check"
    row = pair(out)
    assert (row["profile"], row["feedback_suite"], row["fidelity_settings"]) == ("paper", "check", {})
    arm = next(line for line in (out / "results.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("- fake / reference"))
    assert "feedback check, profile paper" in arm and "hidden unit tests' output" not in arm
    assert "stage_memory" not in arm
