"""One external system on one task, in its run folder: environment, bridge, sandbox, output, scores.

`run_external` is what an experiment's pair of an external method runs (`projectgen.experiments.pairs`):

1. the system's environment, built on first use (`projectgen.external.environment`);
2. the run folder opened for its request (`RunFolder.open_unit`): run.json names the system, its version,
   source and adapter hash (``protocol``); a folder holding the same request (a killed pair) is run again
   in place, its usage, prompts and call cache kept, so the calls it had paid for are replayed, not made
   again; a folder of another request is cleared first;
3. the model bridge served on a unix socket for the experiment's model, through the run folder's door
   (usage.jsonl, prompts.jsonl, calls.jsonl, the token/cost budget of run.json, and `CallBudget`);
4. the adapter run in the sandbox (`projectgen.bridge.sandboxed.run_system`) as the adapter contract says
   (docs/external-systems.md), under the system's time limit;
5. what it wrote under OUT collected as the run's repository, its hidden unit tests run and the reference
   scorers applied, as for every method; summary.json and log.json (kind ``external``) written last.

How it ended (run.json's status): ``finished`` (the adapter exited 0), ``budget-limited`` (the bridge refused
a call: the call budget, or run.json's token or cost budget) or ``failed`` (the adapter exited non-zero or ran
out of time), each with the output it left scored; the reason says which in one line.
"""
from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from projectgen.bridge.sandboxed import SystemCommand, SystemRun, run_system
from projectgen.bridge.server import BRIDGE_ROLE, BridgeSettings, ModelBridge
from projectgen.bridge.serving import serve_bridge
from projectgen.config import AttemptSettings, Settings
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError, first_line
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.evaluation.sandbox_session import FINISHED
from projectgen.external.call_budget import CallBudget
from projectgen.external.checkout import checkout_version
from projectgen.external.environment import SystemEnvironment, SystemEnvironments
from projectgen.external.systems import CHECK_TESTS, DOCUMENT_FIELDS, SystemEntry, describe_system
from projectgen.llm import AllBudgets
from projectgen.llm.door import DoorSettings
from projectgen.llm.errors import BudgetExceededError
from projectgen.llm.sampling import sampling_of
from projectgen.runs.folder import RunFolder
from projectgen.runs.lifecycle import INTERRUPTED_REASON
from projectgen.runs.manifest import RunManifest
from projectgen.runs.output_scorers import Scorer, score_output
from projectgen.runs.request import RunRequest
from projectgen.runs.run_log import EXTERNAL_KIND, write_run_log

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

DOCS_DIR = ".projectgen-docs"  # in the sandbox's workspace: what the system is given
OUT_DIR = "out"  # in the sandbox's workspace: what the system writes, collected as its repository
OUTPUT_TAIL = 4000  # characters of the system's own output kept in summary.json
ADAPTER_SAYS = re.compile(r"^[\w.-]+ adapter: ")  # an adapter's own line on why it failed
TERMINAL_CODES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
ONE_PASS = {"attempts": 1, "success_knowledge": False, "failure_knowledge": False, "historical_best": False}


@dataclass(frozen=True)
class ExternalRun:
    """What `run_external` needs besides the system: the task, the folder, the model and its records."""

    task: Task
    run_dir: Path
    model: BaseChatModel  # the experiment's model (a real one or a replay)
    model_specs: Mapping[str, str]  # run.json's models (role -> spec, and the base URL / sampling entries)
    model_label: str | None = None  # a replay's label (run.json's model_label)
    settings: Settings = field(default_factory=Settings)
    max_tokens: int | None = None
    measure_unit_tests: bool = True  # False: --no-unit-tests (tokens and cost only)
    system_path: Path | None = None
    run_id: str = ""
    progress: Callable[[str], None] | None = None
    sync: Callable[[], None] | None = None


def system_documents(entry: SystemEntry, task: Task) -> dict[str, str]:
    """The documents the system is given, by path under DOCS: those its entry lists that the task has; its check
    tests (`CHECK_TESTS`) under DOCS/check_tests, as in the task's folder (a task without them gives none)."""
    given = {}
    for name in entry.documents:
        if name == CHECK_TESTS:
            given.update(check_test_files(task))
            continue
        text = getattr(task.docs, DOCUMENT_FIELDS[name])
        if text:
            given[name] = text
    return given


CHECK_SUITE = "check"


def check_test_files(task: Task) -> dict[str, str]:
    """The task's check suite's files by path under DOCS/check_tests (a leading check_tests/ not doubled)."""
    if CHECK_SUITE not in task.suites:
        return {}
    files = {}
    for relative in task.suite_files(CHECK_SUITE):
        inside = relative.removeprefix(f"{CHECK_TESTS}/")
        files[f"{CHECK_TESTS}/{inside}"] = (task.root / relative).read_text(encoding="utf-8", errors="replace")
    return files


def system_record(entry: SystemEntry, env: SystemEnvironment, system_path: Path | None,
                  documents: Mapping[str, str]) -> dict[str, Any]:
    """run.json's ``protocol`` of an external run: which system, which version, from where, with which adapter.
    A checkout system's version is the git commit of its checkout (`checkout_version`)."""
    version = checkout_version(system_path) if entry.source == "checkout" and system_path else env.version
    return {"system": entry.name, "label": entry.label, "source": entry.source, "distribution": entry.distribution,
            "version": version, "python": env.python_version, "environment": env.key,
            "adapter": entry.adapter, "adapter_sha256": entry.adapter_sha256(),
            "system_path": str(system_path.resolve()) if system_path else None, "documents": sorted(documents),
            "max_iterations": entry.max_iterations, "max_calls": entry.max_calls, "timeout_s": entry.timeout_s}


def adapter_command(entry: SystemEntry, env: SystemEnvironment, bridge: ModelBridge,
                    system_path: Path | None) -> SystemCommand:
    """The adapter's command line, environment and read-only folders, as the adapter contract says."""
    sampling = sampling_of(bridge.model)
    variables = {
        "PROJECTGEN_MODEL": bridge.served_name,
        "PROJECTGEN_TEMPERATURE": _text(sampling.get("temperature")),
        "PROJECTGEN_TOP_P": _text(sampling.get("top_p")),
        "PROJECTGEN_MAX_TOKENS": _text(sampling.get("max_tokens")),
        "PROJECTGEN_MAX_ITERATIONS": str(entry.max_iterations),
        **{name: value.replace("{env}", str(env.path)) for name, value in entry.env.items()},
    }
    binds = [str(env.path), str(env.base_prefix()), str(entry.adapter_path.parent)]
    if system_path is not None:
        variables["PROJECTGEN_SYSTEM_PATH"] = str(system_path.resolve())
        binds.append(str(system_path.resolve()))
    return SystemCommand(argv=(str(env.python), str(entry.adapter_path), "--docs", DOCS_DIR, "--out", OUT_DIR),
                         timeout=entry.timeout_s, env=variables, binds=tuple(binds))


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def system_output(ran: SystemRun) -> dict[str, str]:
    """The files the system wrote under OUT, as repository paths (the documents it was given are not)."""
    prefix = OUT_DIR + "/"
    return {path[len(prefix):]: text for path, text in ran.repository.items() if path.startswith(prefix)}


@dataclass(frozen=True)
class SystemOutcome:
    """How the system's run in the sandbox ended: what it left, its status and why, the calls refused."""

    ran: SystemRun
    status: str
    reason: str | None
    calls_refused: int
    duration_s: float


def run_external(entry: SystemEntry, run: ExternalRun, runner: SandboxRunner,
                 scorers: tuple[Scorer, ...] = ()) -> RunFolder:
    """Run `entry` on `run.task` into `run.run_dir` (see the module docstring); the folder, finished."""
    entry.check_runnable(run.system_path)
    say = run.progress or (lambda message: None)
    env = SystemEnvironments(runner.environments.root / "systems", log=say).ensure(entry, run.system_path)
    documents = system_documents(entry, run.task)
    # A system is given the task's check tests (DOCS/check_tests) and never the hidden ones, whatever a task's
    # profile gives projectgen's own methods (`unit` on RAL-Bench and NL2Repo-Bench): run.json says so.
    settings = run.settings.model_copy(update={"feedback_suite": "check"})
    request = RunRequest(task_path=str(run.task.load_path()), task_id=run.task.id, method=entry.name,
                         models=dict(run.model_specs), model_label=run.model_label,
                         sampling={BRIDGE_ROLE: sampling_of(run.model)} if sampling_of(run.model) else {},
                         settings=settings,
                         attempt_settings=AttemptSettings(**ONE_PASS, measure_unit_tests=run.measure_unit_tests),
                         protocol=system_record(entry, env, run.system_path, documents), max_tokens=run.max_tokens)
    folder = RunFolder(run.run_dir)
    with folder.open_unit(request, run_id=run.run_id or "external") as (lifecycle, again):
        manifest = lifecycle.manifest
        trace = folder.trace()
        trace.write("run_resumed" if again else "run_start", run_id=manifest.run_id, method=entry.name,
                    system=entry.name)
        try:
            say(f"running {entry.name} in the sandbox")
            outcome = ask_system(entry, env, run, runner, folder, manifest, documents)
            trace.write("system_end", system=entry.name, stop=outcome.ran.stop, exit_status=outcome.ran.exit_status)
            record_outcome(entry, run, runner, scorers, folder, manifest, outcome)
        except (KeyboardInterrupt, SystemExit):  # Ctrl-C or SIGTERM: the next invocation runs it again
            lifecycle.interrupted()
            trace.write("run_end", status="interrupted", stopped=INTERRUPTED_REASON)
            raise
        except ProjectGenError as exc:  # the sandbox or the scoring could not run: the pair is an error row
            lifecycle.failed(first_line(exc))
            trace.write("run_end", status="failed", stopped=first_line(exc))
            raise
        lifecycle.record(outcome.status, outcome.reason)
        trace.write("run_end", status=outcome.status, **({"stopped": outcome.reason} if outcome.reason else {}))
    return folder


def ask_system(entry: SystemEntry, env: SystemEnvironment, run: ExternalRun, runner: SandboxRunner,
               folder: RunFolder, manifest: RunManifest, documents: Mapping[str, str]) -> SystemOutcome:
    """The adapter in the sandbox with the bridge, through the run folder's door, as its only way out."""
    calls = CallBudget(entry.max_calls)
    spending = folder.budget(manifest)
    gateway = folder.gateway(run.settings, scope=manifest.run_id, sync=run.sync)
    door = DoorSettings(recorder=gateway.recorder, cache=gateway.cache, prompts=gateway.prompts,
                        budget=AllBudgets(*([spending] if spending else []), calls), retries=gateway.retries,
                        backoff=gateway.backoff, max_backoff=gateway.max_backoff,
                        max_reply_chars=gateway.max_reply_chars)
    bridge = ModelBridge(run.model, BridgeSettings(system=entry.name, door=door, attempt=1))
    started = time.monotonic()
    with serve_bridge(bridge) as served:
        ran = run_system(adapter_command(entry, env, bridge, run.system_path), served, runner.containment(),
                         {f"{DOCS_DIR}/{name}": text for name, text in documents.items()},
                         workdir=runner.settings.workdir)
    status, reason = run_status(ran, calls, spending)
    return SystemOutcome(ran, status, reason, calls.refused, time.monotonic() - started)


def record_outcome(entry: SystemEntry, run: ExternalRun, runner: SandboxRunner, scorers: tuple[Scorer, ...],
                   folder: RunFolder, manifest: RunManifest, outcome: SystemOutcome) -> None:
    """The system's output as the run's repository, scored, and the run's summary.json and log.json."""
    repository = system_output(outcome.ran)
    folder.write_repository(repository)
    unit_report = hidden_unit_tests(runner, run.task, repository, run.progress) if run.measure_unit_tests else None
    if unit_report is not None:
        unit_report.write_json(folder.unit_report)
    scores = score_output(scorers, run.task, folder, runner, unit_report)
    unit = unit_report.summary() if unit_report is not None else None
    ran = outcome.ran
    record = {
        "task_id": run.task.id, "method": entry.name, "status": outcome.status, "reason": outcome.reason,
        "system": manifest.protocol, "stop": ran.stop, "exit_status": ran.exit_status,
        "output": ran.output[-OUTPUT_TAIL:], "not_collected": [list(pair) for pair in ran.skipped],
        "files": len(repository), "calls_refused": outcome.calls_refused,
        # No selection score: a system chooses its own output (the unit tests are reported, not selected by).
        "attempts": [{"attempt": 1, "score": None, "unit": unit}],
        "final": {"source": entry.name, "attempt": 1, "score": None},
        "unit_tests": unit,
        "attempt_settings": {**manifest.attempt_settings.model_dump(mode="json"), "selection": None},
        "settings": manifest.settings.model_dump(mode="json"), "duration_s": outcome.duration_s}
    write_run_log(folder, EXTERNAL_KIND, record, manifest=manifest, summary=json.dumps(record, indent=1) + "\n",
                  scores=scores)


def hidden_unit_tests(runner: SandboxRunner, task: Task, repository: Mapping[str, str],
                      progress: Callable[[str], None] | None) -> TestReport | None:
    """The hidden unit tests of the output (None without a scored suite or without files)."""
    if not task.has_scored_suite() or not repository:
        return None
    if progress:
        progress("running the hidden unit tests")
    return runner.evaluate(task, dict(repository), task.scored_suite)


def run_status(ran: SystemRun, calls: CallBudget, spending: Any) -> tuple[str, str | None]:
    """How the run ended, and why in one line when not cleanly (see the module docstring)."""
    if calls.refused:
        return "budget-limited", f"the bridge refused {calls.refused} call(s): {calls.max_calls} model calls answered"
    if spending is not None:
        try:
            spending.before_call()
        except BudgetExceededError as exc:
            return "budget-limited", f"the bridge refused calls: {first_line(exc)}"
    if ran.succeeded:
        return "finished", None
    said = failure_line(ran.output)
    how = f"exited with status {ran.exit_status}" if ran.stop == FINISHED else f"stopped: {ran.stop}"
    return "failed", f"the system {how}" + (f": {said[:200]}" if said else "")


def failure_line(output: str) -> str:
    """The line of a system's output that says why it failed: the adapter's own (``NAME adapter: ...``, as every
    bundled adapter says it), else the last line printed, without terminal colour codes. The adapter's line is
    not always last: a system's library may print after it (litellm's "Provider List" hint, flushed at exit)."""
    lines = [line for line in (TERMINAL_CODES.sub("", raw).strip() for raw in output.splitlines()) if line]
    return next((line for line in reversed(lines) if ADAPTER_SAYS.match(line)), lines[-1] if lines else "")


def check_system_method(name: str, system_path: Path | None) -> SystemEntry:
    """The entry of an external method, checked runnable (before an experiment writes anything)."""
    entry = describe_system(name)
    entry.check_runnable(system_path)
    return entry

