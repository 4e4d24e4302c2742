"""Which languages this machine can test, probed (never assumed), and how to install what is missing.

A `Toolchain` names the programs (and Java's jars) a language's tests need, by absolute path, and
the folders the sandbox must bind read-only for them (rustup's toolchain lives under /root, which
the sandbox's root does not hold; a JDK or Go outside /usr the same). Probing runs the tools only
to ask where they live (`go env GOROOT`, `rustc --print sysroot`): a few milliseconds each.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

PYTHON, GO, RUST, CPP, JAVASCRIPT, JAVA = "python", "go", "rust", "cpp", "javascript", "java"
LANGUAGES = (PYTHON, GO, RUST, CPP, JAVASCRIPT, JAVA)
SYSTEM_ROOTS = ("/usr", "/bin", "/lib", "/lib64", "/sbin")  # in every sandbox already
JAVA_JARS = {"junit-platform-console-standalone": "junit5", "assertj-core": "libassertj-core-java"}
JAR_FOLDERS = ("/usr/share/java",)
INSTALL = {
    GO: "apt-get install golang-go",
    RUST: "a Rust toolchain with cargo (rustup: https://rustup.rs, or apt-get install cargo)",
    CPP: "apt-get install cmake make g++",
    JAVASCRIPT: "apt-get install nodejs npm (jest itself is fetched from npm and cached)",
    JAVA: "apt-get install default-jdk-headless junit5 libassertj-core-java",
}
DISPLAY = {PYTHON: "Python", GO: "Go", RUST: "Rust", CPP: "C++", JAVASCRIPT: "JavaScript", JAVA: "Java"}


@dataclass(frozen=True)
class Toolchain:
    """One language's tools as found here: `tools` by name (absolute paths), what is `missing`, what
    to bind into the sandbox, and how to install the rest."""

    language: str
    tools: dict[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    binds: tuple[str, ...] = ()
    version: str = ""

    @property
    def ready(self) -> bool:
        return not self.missing

    @property
    def install_hint(self) -> str:
        return INSTALL.get(self.language, "")

    def not_ready_reason(self) -> str:
        """One line: what is missing and what to install."""
        return (f"the {DISPLAY.get(self.language, self.language)} toolchain is missing "
                f"({', '.join(self.missing)}): install {self.install_hint}")

    def tool(self, name: str) -> str:
        return self.tools[name]


def probe_toolchain(language: str) -> Toolchain:
    """The toolchain of `language` as this machine has it."""
    probes = {PYTHON: _python, GO: _go, RUST: _rust, CPP: _cpp, JAVASCRIPT: _javascript, JAVA: _java}
    if language not in probes:
        return Toolchain(language, missing=(f"no test runner for {language!r}",))
    return probes[language]()


def _found(language: str, names: dict[str, str | None], binds: tuple[str, ...] = (), version: str = "") -> Toolchain:
    tools = {name: path for name, path in names.items() if path}
    missing = tuple(name for name, path in names.items() if not path)
    outside = tuple(dict.fromkeys(path for path in binds if path and not path.startswith(SYSTEM_ROOTS)))
    return Toolchain(language, tools, missing, outside, version)


def _which(name: str, *extra_folders: Path) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in extra_folders:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _ask(argv: list[str]) -> str:
    """A tool's one-line answer ("" when it cannot say)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""


def _python() -> Toolchain:
    return Toolchain(PYTHON)


def _go() -> Toolchain:
    go = _which("go")
    root = _ask([go, "env", "GOROOT"]) if go else ""
    go = str(Path(root) / "bin" / "go") if root else go
    return _found(GO, {"go": go}, (root,), _ask([go, "version"]) if go else "")


def _rust() -> Toolchain:
    """cargo and rustc of the default toolchain, by their real paths in its sysroot (rustup's proxies in
    ~/.cargo/bin need rustup's own folders at run time)."""
    cargo_bin = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo") / "bin"
    rustc = _which("rustc", cargo_bin)
    sysroot = _ask([rustc, "--print", "sysroot"]) if rustc else ""
    names: dict[str, str | None] = {"rustc": None, "cargo": None}
    if sysroot:
        for name in names:
            path = Path(sysroot) / "bin" / name
            names[name] = str(path) if path.is_file() else None
    return _found(RUST, names, (sysroot,), _ask([names["rustc"], "--version"]) if names["rustc"] else "")


def _cpp() -> Toolchain:
    return _found(CPP, {"cmake": _which("cmake"), "make": _which("make"), "g++": _which("g++")},
                  version=_ask(["g++", "--version"]) if shutil.which("g++") else "")


def _javascript() -> Toolchain:
    node = _which("node")
    return _found(JAVASCRIPT, {"node": node, "npm": _which("npm")}, version=_ask([node, "--version"]) if node else "")


def _java() -> Toolchain:
    javac, java = _which("javac"), _which("java")
    names: dict[str, str | None] = {"javac": javac, "java": java}
    for jar, package in JAVA_JARS.items():
        names[f"{jar}.jar ({package})"] = next((str(Path(folder) / f"{jar}.jar") for folder in JAR_FOLDERS
                                                if (Path(folder) / f"{jar}.jar").is_file()), None)
    home = str(Path(os.path.realpath(javac)).parents[1]) if javac else ""
    return _found(JAVA, names, (home,), _ask([javac, "-version"]) if javac else "")
