"""What a language's tests need besides its toolchain, prepared outside the sandbox and cached, so that
inside everything runs offline: jest and what a package.json asks for (from npm), the Go modules a go.mod requires, a crate's
dependencies, the Java packages a test or a solution imports. Like the Python environments (`evaluation/environments.py`), each is built once under
a lock, in a folder keyed by what it holds, and bound read-only into the sandbox. What cannot be had
is a `DependencyError` of one line, naming what and why.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from projectgen.errors import ProjectGenError
from projectgen.evaluation.languages.source_scan import scan
from projectgen.evaluation.languages.toolchains import Toolchain

JEST_VERSION = "29"
JEST_ENTRY = Path("node_modules", "jest", "bin", "jest.js")
INSTALL_TIMEOUT = 900.0
JAVA_IMPORT = re.compile(r"\bimport\s+(?:static\s+)?(?P<name>[A-Za-z_][\w.]*)(?:\s*\.\s*\*)?\s*;")
JAVA_PACKAGE = re.compile(r"\bpackage\s+(?P<name>[A-Za-z_][\w.]*)\s*;")
JAVA_PROVIDED = ("java.", "javax.", "jdk.", "com.sun.", "sun.", "org.w3c.", "org.xml.", "org.ietf.", "org.junit.",
                 "org.opentest4j.", "org.apiguardian.", "org.assertj.")
"""What the Java tests compile against: the JDK, the JUnit 5 console launcher's jar and AssertJ (`JAVA_JARS`)."""
GO_REQUIRE = re.compile(r"^\s*require\s+(?:\(\s*(?P<block>[^)]*)\)|(?P<one>\S+\s+\S+))", re.M)


class DependencyError(ProjectGenError):
    """A dependency the tests need cannot be prepared (offline, not found): one line says which."""


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run an installer; its last output line on failure ("" on success)."""
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False,
                              env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        return f"timed out after {INSTALL_TIMEOUT:g} s"
    except OSError as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {done.returncode}"


def prepare_jest(cache: Path, toolchain: Toolchain) -> Path:
    """A folder whose node_modules holds jest (npm, scripts off), made once per jest major version."""
    return _npm_folder(cache / f"jest-{JEST_VERSION}", toolchain, [f"jest@{JEST_VERSION}"],
                       "jest could not be installed from npm")


def _npm_folder(folder: Path, toolchain: Toolchain, packages: list[str], failed: str) -> Path:
    """`folder` with `packages` installed into its node_modules (npm, scripts off), once, under a lock: built
    aside and renamed into place, so a failed install leaves nothing half made. `failed` leads its error."""
    with _locked(folder):
        if (folder / JEST_ENTRY).is_file():
            return folder
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        failure = _run([toolchain.tool("npm"), "install", "--no-audit", "--no-fund", "--ignore-scripts",
                        "--loglevel=error", "--prefix", str(partial), *packages], partial)
        if failure or not (partial / JEST_ENTRY).is_file():
            shutil.rmtree(partial, ignore_errors=True)
            raise DependencyError(f"{failed}: {failure or 'jest.js missing'}")
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
    return folder


def node_packages(project_dir: Path) -> list[str]:
    """``name@range`` of what the project's package.json asks for (dependencies and devDependencies: an
    Exercism track's babel preset among them), jest always; [] when it asks for nothing but jest."""
    try:
        manifest = json.loads((project_dir / "package.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return []
    asked: dict[str, str] = {}
    for key in ("dependencies", "devDependencies"):
        block = manifest.get(key) if isinstance(manifest, dict) else None
        if isinstance(block, dict):
            asked.update({str(name): str(spec) for name, spec in block.items()})
    if set(asked) <= {"jest"}:
        return []
    asked.setdefault("jest", JEST_VERSION)
    return [f"{name}@{spec}" for name, spec in sorted(asked.items())]


def prepare_node_modules(cache: Path, toolchain: Toolchain, project_dir: Path) -> Path:
    """A folder whose node_modules holds what the project's package.json asks for (npm, scripts off), made
    once per distinct list; plain jest when it asks for nothing more."""
    packages = node_packages(project_dir)
    if not packages:
        return prepare_jest(cache, toolchain)
    folder = cache / f"node-{hashlib.sha256(json.dumps(packages).encode()).hexdigest()[:16]}"
    return _npm_folder(folder, toolchain, packages, "the packages package.json asks for could not be installed "
                       "from npm")


def go_requirements(go_mod: str) -> list[str]:
    """The modules a go.mod requires (`path version`)."""
    found = []
    for match in GO_REQUIRE.finditer(go_mod):
        lines = (match["block"] or match["one"] or "").splitlines()
        found += [" ".join(line.split("//")[0].split()[:2]) for line in lines if line.split("//")[0].strip()]
    return found


def prepare_go_modules(cache: Path, toolchain: Toolchain, module_dir: Path) -> Path | None:
    """The module cache holding what `module_dir`'s go.mod requires (None: it requires nothing), filled by
    `go mod download` through the Go proxy, keyed by the requirements."""
    go_mod = module_dir / "go.mod"
    required = go_requirements(go_mod.read_text(encoding="utf-8", errors="replace")) if go_mod.is_file() else []
    if not required:
        return None
    folder = cache / ("go-modules-" + hashlib.sha256("\n".join(sorted(required)).encode()).hexdigest()[:16])
    done = folder / ".complete"
    with _locked(folder):
        if done.is_file():
            return folder
        failure = _run([toolchain.tool("go"), "mod", "download"], module_dir,
                       {"GOMODCACHE": str(folder), "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"})
        if failure:
            raise DependencyError(f"Go module(s) {', '.join(required)} cannot be had (is the Go proxy reachable?): "
                                  f"{failure}")
        done.write_text("\n".join(required) + "\n", encoding="utf-8")
    return folder


def crate_dependencies(cargo_toml: str) -> list[str]:
    """The names in a Cargo.toml's [dependencies] and [dev-dependencies] tables."""
    import tomllib

    try:
        data = tomllib.loads(cargo_toml)
    except tomllib.TOMLDecodeError:
        return []
    return sorted({name for table in ("dependencies", "dev-dependencies") for name in (data.get(table) or {})})


def check_crates(crate_dir: Path) -> None:
    """Crates are not fetched here (crates.io is a registry this runner does not reach): a Cargo.toml that
    asks for any fails with one line naming them."""
    manifest = crate_dir / "Cargo.toml"
    wanted = crate_dependencies(manifest.read_text(encoding="utf-8", errors="replace")) if manifest.is_file() else []
    if wanted:
        raise DependencyError(f"crate(s) {', '.join(wanted)} cannot be had offline: the tests run without "
                              "crates.io, so only the standard library is available")


def java_missing_packages(sources: list[str]) -> list[str]:
    """The packages `sources` (Java files' texts) import that neither the JDK, JUnit 5, AssertJ nor the sources
    themselves provide (``org.mockito``), by their first two names, sorted."""
    masks = [scan(text, "java").mask for text in sources]
    own = {match["name"] + "." for mask in masks for match in JAVA_PACKAGE.finditer(mask)}
    missing = set()
    for mask in masks:
        for match in JAVA_IMPORT.finditer(mask):
            name = match["name"] + "."
            if not name.startswith(JAVA_PROVIDED) and not any(name.startswith(package) for package in own) \
                    and name.count(".") > 1:  # a class of the default package imports nothing from outside
                missing.add(".".join(name.split(".")[:2]))
    return sorted(missing)


def check_java_packages(project_dir: Path) -> None:
    """Maven Central is not reached: Java code importing a library beyond the JDK, JUnit 5 and AssertJ
    (Mockito, SLF4J) fails in one line naming it, before anything compiles."""
    sources = [path.read_text(encoding="utf-8", errors="replace") for path in sorted(project_dir.rglob("*.java"))
               if path.is_file()]
    missing = java_missing_packages(sources)
    if missing:
        raise DependencyError(f"Java package(s) {', '.join(missing)} cannot be had offline: the code compiles "
                              "against the JDK, JUnit 5 and AssertJ only (Maven Central is not reached)")
