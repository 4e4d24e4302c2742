"""One virtual environment per distinct environment spec, cached on disk.

The key is a hash of the requirements and Python version. Builds run under a
file lock so parallel evaluations of tasks with the same spec build it once; a
`manifest.json` written last marks a finished build, so a build that was killed
half-way is detected and redone. Requirements are installed with uv when it is
available (the `uv` wheel ships its binary) and with pip otherwise. When the
whole requirements set does not install (an ancient pin, a wheel that does not
exist for this Python), each requirement is tried on its own and the ones that
failed are recorded, so the tests can still run and the report says what is
missing. A benchmark's listed environment (`EnvSpec.nearest_pins`: NL2Repo-Bench's start.md, written
for the task's image and its Python) gets, for each `==` pin that does not install here, the nearest version
that does, recorded as `relaxed`.

A pinned Python (`EnvSpec.python`) is looked for as `interpreters.find_python`
says, each candidate run to check it works and has that version; when none
does, the environment is built on the running interpreter, with one log line
saying so, and the manifest records both the version asked for and the one used.
A spec with an install step also gets pip, setuptools and wheel (`BUILD_TOOLS`),
which the runner's offline, per-workspace install needs.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from projectgen.config import cache_root
from projectgen.datasets.task import EnvSpec
from projectgen.errors import ProjectGenError
from projectgen.evaluation.interpreters import find_python, matches

BUILDER_VERSION = 3  # bump when a build change must invalidate cached environments

# Plugins that report, lint, reorder or parallelize: never loaded implicitly,
# because they change what runs or how it exits, not what the tests need.
# (pytest-rerunfailures is allowed: it only reruns tests marked `flaky`.)
NON_FIXTURE_PLUGINS = frozenset(
    {
        "pytest-cov", "pytest-json-report", "pytest-metadata", "pytest-mypy", "pytest-pycodestyle",
        "pytest-flake8", "pytest-xdist", "pytest-timeout", "pytest-randomly",
        "pytest-sugar", "pytest-watch", "pytest-html", "pytest-cache", "pytest-pylint", "pytest-isort",
        "pytest-black", "pytest-ruff", "pytest-socket", "pytest-forked", "pytest-repeat", "pytest-profiling",
    }
)

# What an install step (`EnvSpec.install`) runs with: pip, and the setuptools backend built without isolation.
BUILD_TOOLS = ("pip", "setuptools", "wheel")

LIST_PLUGINS = """
import json
from importlib.metadata import entry_points
eps = entry_points(group="pytest11")
out = [{"name": ep.name, "module": ep.value.split(":")[0], "dist": (ep.dist.name if ep.dist else "")} for ep in eps]
print(json.dumps(out))
"""


class EnvironmentBuildError(ProjectGenError):
    """The environment could not be created at all (no virtual environment, no pytest)."""


class Environment(BaseModel):
    """A built environment, as recorded in its manifest."""

    key: str
    path: Path
    python_version: str
    python_requested: str | None = None  # the spec's pin; differs from python_version after a fallback
    interpreter: str = ""  # the Python the venv was built on
    requirements: list[str]
    unsatisfied: list[str] = Field(default_factory=list)
    relaxed: dict[str, str] = Field(default_factory=dict, description="requirement as listed -> the pin installed "
                                    "instead, the nearest that installs on this Python (`EnvSpec.nearest_pins`)")
    plugins: list[dict[str, str]] = Field(default_factory=list)
    installer: str
    builder_version: int = BUILDER_VERSION

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def base_prefix(self) -> Path:
        """Prefix of the interpreter the venv points at (must stay visible in the sandbox)."""
        cfg = (self.path / "pyvenv.cfg").read_text(encoding="utf-8")
        match = re.search(r"^home\s*=\s*(.+)$", cfg, re.MULTILINE)
        home = Path(match.group(1).strip()) if match else Path(sys.base_prefix) / "bin"
        return home.resolve().parent

    def plugin_modules(self, wanted: tuple[str, ...] | None) -> list[str]:
        """Modules to load with `-p`: the spec's named plugins, or every fixture plugin installed."""
        if wanted is not None:
            names = set(wanted)
            return sorted({p["module"] for p in self.plugins if p["name"] in names or p["dist"] in names})
        return sorted(
            {p["module"] for p in self.plugins if _canonical(p["dist"]) not in NON_FIXTURE_PLUGINS and p["dist"]}
        )


_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9A-Za-z.!+_-]+)\s*(;.*)?$")  # an exact pin, no wildcard


def _last_line(log_file: Path) -> str:
    """The last line a failed build step printed (the reason, usually)."""
    try:
        lines = [line.strip() for line in log_file.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return "(no log)"
    said = [line for line in lines if line and not line.startswith("$ ")]
    return said[-1][:300] if said else "(no output)"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _mentions_pytest(requirements: tuple[str, ...]) -> bool:
    return any(re.match(r"^pytest\s*($|[<>=!~;\[])", r, re.IGNORECASE) for r in requirements)


def default_cache_dir() -> Path:
    """`envs/` of the cache root (`$PROJECTGEN_CACHE_DIR`, else the XDG cache folder)."""
    return cache_root() / "envs"


def find_uv() -> str | None:
    """The uv binary: on PATH, or the one the `uv` wheel installed beside our Python."""
    found = shutil.which("uv")
    if found:
        return found
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return str(beside)
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return None


class EnvironmentCache:
    """Creates or reuses the venv for an `EnvSpec`."""

    def __init__(
        self,
        root: Path | None = None,
        *,
        install_timeout: float = 1800.0,
        use_uv: bool = True,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.root = Path(root) if root else default_cache_dir()
        self.install_timeout = install_timeout
        self.uv = find_uv() if use_uv else None
        self.log = log or (lambda message: None)

    def path_for(self, spec: EnvSpec) -> Path:
        return self.root / spec.cache_key()

    def lookup(self, spec: EnvSpec) -> Environment | None:
        """The finished environment for this spec, or None."""
        manifest = self.path_for(spec) / "projectgen-env.json"
        if not manifest.exists():
            return None
        try:
            env = Environment.model_validate_json(manifest.read_text(encoding="utf-8"))
        except ValueError:
            return None
        if env.builder_version != BUILDER_VERSION or not env.python.exists():
            return None
        return env

    def ensure(self, spec: EnvSpec) -> Environment:
        """Return the cached environment, building it first if needed (one builder at a time)."""
        env = self.lookup(spec)
        if env:
            return env
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)
        with open(self.root / f"{spec.cache_key()}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            env = self.lookup(spec)  # another process may have built it while we waited
            if env:
                return env
            return self._build(spec)

    def _interpreter(self, spec: EnvSpec) -> str:
        """The Python to base the venv on: one that runs and has the spec's version, else ours (said once)."""
        current = "%d.%d.%d" % sys.version_info[:3]
        if not spec.python or matches(current, spec.python):
            return sys.executable
        search = find_python(spec.python, uv=self.uv)
        if search.found:
            return search.found.path
        self.log(f"Python {spec.python} not found ({search.explain()}); "
                 f"building the test environment on the running Python {current} ({sys.executable})")
        return sys.executable

    def _run(self, command: list[str], log_file: Path) -> bool:
        env = dict(os.environ, UV_PYTHON_DOWNLOADS="never", PIP_DISABLE_PIP_VERSION_CHECK="1")
        with open(log_file, "a", encoding="utf-8") as log:
            log.write("$ " + " ".join(command) + "\n")
            log.flush()
            try:
                done = subprocess.run(
                    command, stdout=log, stderr=subprocess.STDOUT, timeout=self.install_timeout, env=env
                )
            except subprocess.TimeoutExpired:
                log.write(f"timed out after {self.install_timeout}s\n")
                return False
        return done.returncode == 0

    def _install(self, python: Path, requirements: list[str], log_file: Path, constraints: Path | None) -> bool:
        if not requirements:
            return True
        bounds = ["--constraint", str(constraints)] if constraints else []
        if self.uv:
            # Bytecode now, once: the sandbox sees the environment read-only and could never cache it.
            command = [self.uv, "pip", "install", "--compile-bytecode", "--python", str(python)]
            return self._run([*command, *bounds, *requirements], log_file)
        return self._run([str(python), "-m", "pip", "install", "--quiet", *bounds, *requirements], log_file)

    def _nearest_pin(self, python: Path, requirement: str, log_file: Path, constraints: Path | None) -> str | None:
        """Install the version nearest to `requirement`'s `==` pin that installs here: of the versions with a wheel
        for this Python, the lowest above the pin, else the highest below it; else (a package with no wheel at
        all) the lowest above it built from source. uv re-resolves the package even when a requirement installed
        one by one already brought a version in; pip, without uv's lowest resolution, takes the newest above.
        Returns the pin installed, or None."""
        match = _PIN.match(requirement)
        assert match is not None  # only exact pins are relaxed
        name, version, marker = match.group(1), match.group(2), match.group(3) or ""
        above, below = f"{name}>{version}{marker}", f"{name}<{version}{marker}"
        lowest = ["--reinstall-package", name, "--resolution", "lowest-direct"] if self.uv else []
        fresh = ["--reinstall-package", name] if self.uv else []
        wheels = ["--only-binary", name]
        for arguments in ([*lowest, *wheels, above], [*fresh, *wheels, below], [*lowest, above]):
            if self._install(python, arguments, log_file, constraints):
                installed = self._installed_version(python, name)
                return f"{name}=={installed}" if installed else f"{name} (version unread)"
        return None

    def _installed_version(self, python: Path, name: str) -> str | None:
        """The version of distribution `name` in the environment of `python`, None when it cannot be read."""
        done = subprocess.run([str(python), "-c", f"from importlib.metadata import version; print(version({name!r}))"],
                              capture_output=True, text=True)
        return (done.stdout.strip() or None) if done.returncode == 0 else None

    def _build(self, spec: EnvSpec) -> Environment:
        path = self.path_for(spec)
        if path.exists():
            shutil.rmtree(path)  # an unfinished build: no manifest
        log_file = self.root / f"{spec.cache_key()}.build.log"
        log_file.write_text("", encoding="utf-8")
        interpreter = self._interpreter(spec)
        self.log(f"building test environment {path.name} ({len(spec.requirements)} requirements)")
        if self.uv:
            made = self._run([self.uv, "venv", "--quiet", "--python", interpreter, str(path)], log_file)
            installer = "uv"
        else:
            made = self._run([interpreter, "-m", "venv", str(path)], log_file)
            installer = "pip"
        if not made:
            raise EnvironmentBuildError(f"could not create a virtual environment with {interpreter}: "
                                        f"{_last_line(log_file)} (log: {log_file})")
        python = path / "bin" / "python"
        constraints = None
        if spec.constraints:
            constraints = path / "projectgen-constraints.txt"
            constraints.write_text("\n".join(spec.constraints) + "\n", encoding="utf-8")
        requirements = list(spec.requirements)
        if not _mentions_pytest(spec.requirements):
            requirements.append("pytest")
        if spec.install is not None:
            requirements += [tool for tool in BUILD_TOOLS if tool not in requirements]
        unsatisfied: list[str] = []
        if not self._install(python, requirements, log_file, constraints):
            self.log("the requirements do not install together; installing them one by one")
            unsatisfied = [r for r in requirements if not self._install(python, [r], log_file, constraints)]
        relaxed: dict[str, str] = {}
        if spec.nearest_pins:
            for requirement in [r for r in unsatisfied if _PIN.match(r)]:
                if instead := self._nearest_pin(python, requirement, log_file, constraints):
                    relaxed[requirement] = instead
                    unsatisfied.remove(requirement)
        if not self._run([str(python), "-c", "import pytest"], log_file):
            if not self._install(python, ["--upgrade", "pytest"], log_file, None):
                raise EnvironmentBuildError(f"pytest could not be installed (log: {log_file})")
            unsatisfied.append("(the task's pytest did not import: replaced by the newest pytest)")
        version = subprocess.run(
            [str(python), "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True, text=True,
        ).stdout.strip()
        listed = subprocess.run([str(python), "-c", LIST_PLUGINS], capture_output=True, text=True)
        plugins = json.loads(listed.stdout) if listed.returncode == 0 else []
        env = Environment(
            key=spec.cache_key(), path=path, python_version=version, python_requested=spec.python,
            interpreter=interpreter, requirements=list(spec.requirements), unsatisfied=unsatisfied,
            relaxed=relaxed, plugins=plugins, installer=installer,
        )
        (path / "projectgen-env.json").write_text(env.model_dump_json(indent=2), encoding="utf-8")
        return env

