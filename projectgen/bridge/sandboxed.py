"""Running an external system in the sandbox with the model bridge as its only way out.

The sandbox (docs/sandbox.md) gives the system an empty network namespace: loopback only. The bridge's
unix socket sits alone in a folder that is bound read-only into the sandbox, and an in-sandbox forwarder
(`sandbox_files/bridge_forwarder.py`) listens on loopback and relays to it, so the system is configured
with a plain ``OPENAI_BASE_URL`` and reaches the bridge and nothing else. A second step, started once
every process of the system is gone, prints the workspace's text files (`sandbox_files/
collect_workspace.py`): the system's output repository, read back through a pipe and checked here.
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from projectgen.bridge.serving import ServedBridge
from projectgen.errors import ProjectGenError
from projectgen.evaluation.sandbox import NAMESPACES, Containment, Limits, RunCgroup, sandbox_file
from projectgen.evaluation.sandbox_session import FINISHED, SessionFolder, Step, run_session
from projectgen.repository import Repository, safe_relpath, write_repository

FORWARDER_PORT = 8765
"""The loopback port the forwarder listens on inside the sandbox (its network namespace is its own)."""
API_KEY = "projectgen-bridge"
"""The key a system is given: the bridge checks none (the socket is the credential); SDKs want one."""
MAX_FILE_BYTES = 1024**2
MAX_OUTPUT_BYTES = 32 * 1024**2


@dataclass(frozen=True)
class SystemCommand:
    """One run of an external system: its command line, its extra environment, its wall-time limit and
    the host folders it needs read-only (its interpreter, its environment)."""

    argv: tuple[str, ...]
    timeout: float
    env: Mapping[str, str] = field(default_factory=dict)
    binds: tuple[str, ...] = ()


@dataclass(frozen=True)
class SystemRun:
    """How a system's run ended and what it left: `repository` (its workspace's text files, the documents
    it was given included), `skipped` (files not collected, with why), and the end of its output."""

    stop: str
    exit_status: int | None
    output: str
    repository: Repository
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def succeeded(self) -> bool:
        return self.stop == FINISHED and self.exit_status == 0


def bridge_environment(extra: Mapping[str, str], home: Path) -> dict[str, str]:
    """The environment of the system's step: the forwarder's base URL under the names OpenAI-style
    clients read, a placeholder key, and nothing of the runner's own environment. Python's output is
    unbuffered, so the output holds what was printed in the order it was printed: only its end is kept,
    and a system whose stdout were flushed at exit would bury the adapter's last words (on stderr) under
    what its libraries printed long before."""
    url = f"http://127.0.0.1:{FORWARDER_PORT}/v1"
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(home), "TMPDIR": "/tmp", "PYTHONUNBUFFERED": "1",
            "OPENAI_BASE_URL": url, "OPENAI_API_BASE": url, "OPENAI_API_KEY": API_KEY, **extra}


def run_system(command: SystemCommand, served: ServedBridge, containment: Containment, documents: Mapping[str, str],
               *, workdir: Path | None = None, limits: Limits | None = None) -> SystemRun:
    """Run `command` in a sandbox whose workspace holds `documents`, reaching only `served`'s socket.

    Refuses to run without namespaces: outside them the system would reach the network and the host
    (`--isolation none`), and its calls could go around the bridge."""
    if containment.isolation != NAMESPACES:
        raise ProjectGenError("an external system runs only in the namespace sandbox: without it, it could reach "
                              "the network and every file around the bridge")
    if served.socket is None or served.socket_folder is None:
        raise ProjectGenError("an external system needs the bridge served on a unix socket")
    limits = limits or Limits()
    folder = SessionFolder.create(workdir, "system")
    try:
        python = os.path.realpath(sys.executable)
        forwarder = [python, "-I", "-S", str(sandbox_file("bridge_forwarder.py")),
                     str(served.socket), str(FORWARDER_PORT), "--", *command.argv]
        collector = [python, "-I", "-S", str(sandbox_file("collect_workspace.py")), str(MAX_FILE_BYTES),
                     str(MAX_OUTPUT_BYTES)]
        steps = [Step("system", forwarder, bridge_environment(command.env, folder.home), command.timeout),
                 Step("collect", collector, bridge_environment({}, folder.home), 60.0,
                      output_keep=MAX_OUTPUT_BYTES + MAX_FILE_BYTES)]
        binds = (sys.base_prefix, str(Path(python).parent), str(served.socket_folder), *command.binds)
        cgroup = RunCgroup.create(limits) if containment.cgroups else None
        try:
            session = run_session(containment, folder, binds, limits, steps, cgroup,
                                  prepare=lambda: write_repository(documents, folder.workspace))
        finally:
            if cgroup:
                cgroup.remove()
    finally:
        folder.remove()
    if session.setup_error:
        raise ProjectGenError(f"the sandbox for the external system could not be set up: {session.setup_error}")
    ran, collected = session.steps
    repository, skipped = read_collected(collected.output.text() if collected.stop == FINISHED else "")
    return SystemRun(ran.stop, ran.exit_status, ran.output.text(), repository, skipped)


def read_collected(printed: str) -> tuple[Repository, tuple[tuple[str, str], ...]]:
    """The files the collect step printed, each path checked (`safe_relpath`); a path that is unsafe or not
    text is skipped with why. Nothing printed, or not the collector's JSON: no files, and it says so."""
    lines = printed.strip().splitlines()
    try:
        data = json.loads(lines[-1]) if lines else None
        files, skipped = data["files"], data["skipped"]
        if not isinstance(files, dict) or not isinstance(skipped, list):
            raise TypeError
    except (json.JSONDecodeError, KeyError, TypeError):
        return {}, (("*", "the workspace could not be collected"),)
    repository: Repository = {}
    notes = [(str(entry[0]), str(entry[1])) for entry in skipped if isinstance(entry, list) and len(entry) == 2]
    for path, text in files.items():
        try:
            path.encode("utf-8")
            if not isinstance(text, str):
                raise ProjectGenError("not text")
            repository[safe_relpath(path)] = text
        except (UnicodeEncodeError, ProjectGenError) as exc:
            notes.append((path.encode("utf-8", "replace").decode(), f"not collected: {exc}"))
    return repository, tuple(notes)
