"""An external system's own environment: a venv of its Python and pins, built once into the environment cache.

Why not projectgen's venv: the systems pin what projectgen also uses (openai, httpx, langchain) at other
versions, and a system's code must not be importable by, or able to change, the harness. Each environment
is keyed by what it is made of (the Python asked for, the requirement lines, a checkout's requirements
file, the prepare steps, `BUILDER_VERSION`), built under a file lock so concurrent pairs build it once,
and marked finished by its manifest (`projectgen-system.json`), written last: a build killed half-way is
redone. The install and the `prepare` steps have the network; a run never does (the sandbox has none),
so whatever a system fetches at run time must be fetched by `prepare` into the environment's folder.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from projectgen.errors import ProjectGenError
from projectgen.evaluation.environments import find_uv
from projectgen.evaluation.interpreters import find_python, matches
from projectgen.external.systems import SystemEntry

BUILDER_VERSION = 1  # bump when a build change must invalidate the systems' cached environments
MANIFEST = "projectgen-system.json"
VERSION_OF = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"
PYTHON_VERSION = "import sys; print('%d.%d.%d' % sys.version_info[:3])"


class SystemEnvironmentError(ProjectGenError):
    """A system's environment could not be built (its log names the step)."""


class SystemEnvironment(BaseModel):
    """A built environment, as its manifest records it (run.json copies the versions)."""

    system: str
    key: str
    path: Path
    python_version: str
    requirements: list[str]
    requirements_file: str | None = Field(default=None, description="the checkout's requirements file installed")
    distribution: str = ""
    version: str | None = Field(default=None, description="the installed version of `distribution`")
    packages: list[str] = Field(default_factory=list, description="every installed distribution==version")
    prepared: list[list[str]] = Field(default_factory=list)
    builder_version: int = BUILDER_VERSION

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def base_prefix(self) -> Path:
        """The prefix of the interpreter the venv points at: bound into the sandbox with the venv."""
        config = (self.path / "pyvenv.cfg").read_text(encoding="utf-8")
        home = re.search(r"^home\s*=\s*(.+)$", config, re.MULTILINE)
        return (Path(home.group(1).strip()) if home else Path(sys.base_prefix) / "bin").resolve().parent


def environment_key(entry: SystemEntry, system_path: Path | None) -> str:
    """What the environment is made of, hashed: a changed pin, requirements file or step builds anew."""
    requirements_file = ""
    if entry.requirements_file and system_path is not None:
        requirements_file = (system_path / entry.requirements_file).read_text(encoding="utf-8", errors="replace")
    made_of = json.dumps({"python": entry.python, "requirements": entry.requirements, "file": requirements_file,
                          "prepare": entry.prepare, "builder": BUILDER_VERSION}, sort_keys=True)
    return f"{entry.name}-{hashlib.sha256(made_of.encode()).hexdigest()[:16]}"


class SystemEnvironments:
    """The systems' environments under `root` (the environment cache's ``systems/`` folder)."""

    def __init__(self, root: Path, *, install_timeout: float = 3600.0,
                 log: Callable[[str], None] | None = None) -> None:
        self.root = Path(root)
        self.install_timeout = install_timeout
        self.log = log or (lambda message: None)

    def lookup(self, entry: SystemEntry, system_path: Path | None = None) -> SystemEnvironment | None:
        """The finished environment of `entry`, or None."""
        manifest = self.root / environment_key(entry, system_path) / MANIFEST
        try:
            env = SystemEnvironment.model_validate_json(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return env if env.builder_version == BUILDER_VERSION and env.python.exists() else None

    def ensure(self, entry: SystemEntry, system_path: Path | None = None) -> SystemEnvironment:
        """The environment of `entry`, built first when there is none (one builder at a time)."""
        found = self.lookup(entry, system_path)
        if found is not None:
            return found
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)  # the sandbox's uid reads the environments
        key = environment_key(entry, system_path)
        with open(self.root / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return self.lookup(entry, system_path) or self._build(entry, system_path, key)

    def _build(self, entry: SystemEntry, system_path: Path | None, key: str) -> SystemEnvironment:
        path, log_file = self.root / key, self.root / f"{key}.build.log"
        if path.exists():
            shutil.rmtree(path)  # an unfinished build: no manifest
        log_file.write_text("", encoding="utf-8")
        uv = find_uv()
        if uv is None:
            raise SystemEnvironmentError("building an external system's environment needs uv (projectgen's own "
                                         "dependency): reinstall projectgen")
        self.log(f"building the environment of {entry.name} ({len(entry.requirements)} requirements)")
        self._run([uv, "venv", "--quiet", "--python", self._interpreter(entry, uv), str(path)], log_file, "venv")
        python = path / "bin" / "python"
        requirements = list(entry.requirements)
        installed_file = None
        if entry.requirements_file and system_path is not None:
            installed_file = str(system_path / entry.requirements_file)
            requirements += ["-r", installed_file]
        if requirements:
            self._run([uv, "pip", "install", "--compile-bytecode", "--python", str(python), *requirements],
                      log_file, "install")
        variables = {"PROJECTGEN_ENV": str(path)}
        for step in entry.prepare:
            argv = [str(python), *(arg.replace("{env}", str(path)) for arg in step)]
            self._run(argv, log_file, "prepare", cwd=path, env=variables)
        version = None
        if entry.distribution:
            version = self._output([str(python), "-c", VERSION_OF, entry.distribution], log_file, "version")
        frozen = self._output([uv, "pip", "freeze", "--python", str(python)], log_file, "freeze")
        for folder, _, files in os.walk(path):  # readable by the sandbox's uid, which is none of ours
            os.chmod(folder, os.stat(folder).st_mode | 0o555)
            for name in files:
                file = Path(folder, name)
                if not file.is_symlink():
                    os.chmod(file, os.stat(file).st_mode | 0o444)
        env = SystemEnvironment(
            system=entry.name, key=key, path=path,
            python_version=self._output([str(python), "-c", PYTHON_VERSION], log_file, "python"),
            requirements=list(entry.requirements), requirements_file=installed_file, distribution=entry.distribution,
            version=version, packages=[line for line in frozen.splitlines() if line.strip()],
            prepared=[list(step) for step in entry.prepare])
        (path / MANIFEST).write_text(env.model_dump_json(indent=1), encoding="utf-8")
        return env

    def _interpreter(self, entry: SystemEntry, uv: str) -> str:
        """The Python the system asks for; its absence is an error (a system on another Python is another run)."""
        current = "%d.%d.%d" % sys.version_info[:3]
        if not entry.python or matches(current, entry.python):
            return sys.executable
        search = find_python(entry.python, uv=uv)
        if search.found is None:
            raise SystemEnvironmentError(f"{entry.name} needs Python {entry.python}, which is not installed here "
                                         f"({search.explain()})")
        return search.found.path

    def _run(self, argv: list[str], log_file: Path, step: str, *, cwd: Path | None = None,
             env: dict[str, str] | None = None) -> None:
        self._output(argv, log_file, step, cwd=cwd, env=env)

    def _output(self, argv: list[str], log_file: Path, step: str, *, cwd: Path | None = None,
                env: dict[str, str] | None = None) -> str:
        """What `argv` printed; a failure is one line naming the step and the log."""
        variables = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "PIP_DISABLE_PIP_VERSION_CHECK": "1", **(env or {})}
        with open(log_file, "a", encoding="utf-8") as log:
            log.write("$ " + " ".join(argv) + "\n")
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=self.install_timeout, cwd=cwd,
                                      env=variables, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                log.write(f"timed out after {self.install_timeout:g}s\n")
                raise SystemEnvironmentError(f"{step} step timed out (log: {log_file})") from None
            log.write(done.stdout + done.stderr)
        if done.returncode != 0:
            said = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or ["(no output)"])[-1]
            raise SystemEnvironmentError(f"the {step} step of the environment failed: {said[:300]} (log: {log_file})")
        return done.stdout.strip()
