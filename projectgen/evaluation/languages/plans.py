"""How each language builds and runs an exercise's tests in the sandbox, and reads their outcomes.

A `LanguagePlan` turns a `LanguageRun` (the workspace, the exercise's folder in it, its test files,
the toolchain, where the report goes) into sandbox steps: an optional build step that ends the
session when it fails (C++, Java), then one test step that writes the tool's structured report to
`LanguageRun.report` (never trusted: `session` reads it back after the step ended). `results` parses
that report into per-test outcomes and the test files that did not build or load (with the
message). `enable_all_tests` turns on what the exercises switch off for learners, as Aider's
benchmark does: jest's `xtest`, JUnit's `@Disabled`, C++'s EXERCISM_RUN_ALL_TESTS (a CMake
definition), Rust's `#[ignore]` (`--include-ignored`).
"""
from __future__ import annotations

import posixpath
import re
import secrets
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol

from projectgen.evaluation.languages.dependencies import JEST_ENTRY
from projectgen.evaluation.languages.reports import (
    RUST_FILE_MARK,
    declares_tests,
    go_results,
    go_test_files,
    java_test_file,
    jest_results,
    junit_results,
    rust_results,
)
from projectgen.evaluation.languages.toolchains import CPP, GO, JAVA, JAVASCRIPT, RUST, Toolchain
from projectgen.evaluation.report import TestResult
from projectgen.evaluation.sandbox_session import Step

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
GO_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)
JVM_OPTIONS = ("-Xmx1g", "-Xss8m", "-XX:ReservedCodeCacheSize=128m", "-XX:CompressedClassSpaceSize=256m",
               "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")  # fits the sandbox's 8 GiB address space


@dataclass(frozen=True)
class LanguageRun:
    """One test run of one exercise: paths are the same on the host and in the sandbox."""

    workspace: Path
    project: str  # the exercise's folder, relative to the workspace ('' = the workspace itself)
    test_files: tuple[str, ...]  # relative to the workspace
    toolchain: Toolchain
    home: Path
    tmp: Path
    report: str
    timeout: float
    test_sources: dict[str, str] = field(default_factory=dict)  # test file -> its text (the task's copy)
    dependencies: Path | None = None  # prepared outside the sandbox, bound read-only
    canary: str = ""  # the must-fail test file added to this run (relative to the workspace), if any

    @property
    def project_dir(self) -> Path:
        return self.workspace / self.project if self.project else self.workspace

    @property
    def run_files(self) -> tuple[str, ...]:
        """The test files the tool runs: the suite's, then the canary."""
        return (*self.test_files, self.canary) if self.canary and self.canary not in self.test_files \
            else self.test_files

    def env(self, *, path: tuple[str, ...] = (), extra: dict[str, str] | None = None) -> dict[str, str]:
        """What every step sees: a private HOME and TMPDIR, a plain PATH (tool folders first)."""
        variables = {"PATH": ":".join([*path, SYSTEM_PATH]), "HOME": str(self.home), "TMPDIR": str(self.tmp),
                     "USER": "sandbox", "LOGNAME": "sandbox", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        variables.update(extra or {})
        return variables


@dataclass(frozen=True)
class Parsed:
    """What a report says: per-test outcomes, and the test files that did not build or load (why)."""

    tests: list[TestResult]
    broken: dict[str, str] = field(default_factory=dict)


class LanguagePlan(Protocol):
    language: str
    test_suffixes: tuple[str, ...]  # what a test file found in a suite's folder ends with

    def enable_all_tests(self, text: str) -> str: ...

    def canary(self, word: str, test_sources: dict[str, str], project: str) -> tuple[str, str] | None:
        """A test file that must fail, its tests named after `word` (its path in the workspace, its text;
        `project` is the folder the tests run in), or None where the language cannot add one cheaply."""
        ...

    def steps(self, ctx: LanguageRun) -> list[Step]: ...

    def results(self, ctx: LanguageRun, report: str) -> Parsed: ...


def shell_step(name: str, script: str, env: dict[str, str], timeout: float, *, build: bool = False) -> Step:
    """A step that is a /bin/sh script of ours (the commands it runs are the code under test's)."""
    return Step(name, ["/bin/sh", "-c", script], env, timeout, stop_on_failure=build)


def q(value: str | Path) -> str:
    return shlex.quote(str(value))


def _unchanged(text: str) -> str:
    return text


class GoPlan:
    """`go test -json` in the exercise's module, offline (no proxy, caches in the private HOME)."""

    language = GO
    test_suffixes = ("_test.go",)
    enable_all_tests = staticmethod(_unchanged)

    def canary(self, word: str, test_sources: dict[str, str], project: str) -> tuple[str, str] | None:
        found = next((m for text in test_sources.values() if (m := GO_PACKAGE.search(text))), None)
        if found is None:
            return None
        return (posixpath.join(project, f"z{word}_test.go"), f'package {found[1]}\n\nimport "testing"\n\n'
                f'func TestZ{word}(t *testing.T) {{\n\tt.Fatal("{word}")\n}}\n')

    def steps(self, ctx: LanguageRun) -> list[Step]:
        go = ctx.toolchain.tool("go")
        env = ctx.env(path=(str(Path(go).parent),), extra={
            "GOPATH": str(ctx.home / "go"), "GOCACHE": str(ctx.home / ".cache" / "go-build"),
            "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOSUMDB": "off", "GOTOOLCHAIN": "local",
            "GO111MODULE": "on", "CGO_ENABLED": "0", "GOTELEMETRY": "off",
            **({"GOMODCACHE": str(ctx.dependencies)} if ctx.dependencies else {})})
        script = f"cd {q(ctx.project_dir)} || exit 125\nexec {q(go)} test -json -count=1 . > {q(ctx.report)}"
        return [shell_step("tests", script, env, ctx.timeout)]

    def results(self, ctx: LanguageRun, report: str) -> Parsed:
        tests, build_failed = go_results(report, go_test_files(ctx.test_sources))
        return Parsed(tests, {rel: "the package did not build" for rel in ctx.test_files} if build_failed else {})


def rust_target(project: str, rel: str) -> str | None:
    """The `cargo test` option that runs a test file (`project` is the crate's folder): an integration target is
    `tests/<name>.rs` or `tests/<name>/main.rs`, a file elsewhere is in the library; another file below `tests/` (a
    helper module the targets declare, `tests/helpers/mod.rs`) is no target: it runs in the targets that use it."""
    inside = PurePosixPath(rel).relative_to(project) if project else PurePosixPath(rel)
    if inside.parts[0] != "tests":
        return "--lib"
    if len(inside.parts) == 2:
        return f"--test {q(inside.stem)}"
    if len(inside.parts) == 3 and inside.name == "main.rs":
        return f"--test {q(inside.parts[1])}"
    return None


class RustPlan:
    """`cargo test --offline -- --include-ignored` per test target, libtest's JSON events into the report
    (RUSTC_BOOTSTRAP lets stable libtest write JSON; CARGO_HOME is private)."""

    language = RUST
    test_suffixes = (".rs",)
    enable_all_tests = staticmethod(_unchanged)

    def canary(self, word: str, test_sources: dict[str, str], project: str) -> tuple[str, str] | None:
        """A test appended to one of the integration test files, chosen afresh (a file of its own, which uses
        nothing of the crate, let a forger that reports only the files using the crate leave it out); a file of
        its own where there is none."""
        test = f'#[test]\nfn z{word}() {{\n    panic!("{word}");\n}}\n'
        integration = [rel for rel in sorted(test_sources) if (rust_target(project, rel) or "").startswith("--test")]
        if not integration:
            return posixpath.join(project, f"tests/z{word}.rs"), test
        rel = secrets.choice(integration)
        return rel, f"{test_sources[rel].rstrip()}\n\n{test}"

    def steps(self, ctx: LanguageRun) -> list[Step]:
        cargo, rustc = ctx.toolchain.tool("cargo"), ctx.toolchain.tool("rustc")
        env = ctx.env(path=(str(Path(cargo).parent),), extra={
            "CARGO_HOME": str(ctx.home / ".cargo"), "RUSTC": rustc, "CARGO_NET_OFFLINE": "true",
            "RUSTC_BOOTSTRAP": "1", "CARGO_TERM_COLOR": "never", "CARGO_INCREMENTAL": "0"})
        lines = [f"cd {q(ctx.project_dir)} || exit 125", f": > {q(ctx.report)}", "status=0"]
        for rel in ctx.run_files:
            target = rust_target(ctx.project, rel)
            if target is None:
                continue
            mark = '{"type": "%s", "file": "%s"}' % (RUST_FILE_MARK, rel)
            lines += [f"printf '%s\\n' {q(mark)} >> {q(ctx.report)}",
                      f"{q(cargo)} test --offline --no-fail-fast {target} -- --include-ignored -Z unstable-options "
                      f"--format json >> {q(ctx.report)} || status=$?"]
        lines.append("exit $status")
        return [shell_step("tests", "\n".join(lines), env, ctx.timeout)]

    def results(self, ctx: LanguageRun, report: str) -> Parsed:
        """A test file that declares a test and reported none did not build; a helper module or an empty target
        (LiveRepoReflection lists both among a Rust exercise's tests) owes nothing."""
        by_file = rust_results(report)
        tests = [test for rel in ctx.run_files for test in by_file.get(rel, [])]
        broken = {rel: "the crate or its test target did not build" for rel in ctx.test_files
                  if not by_file.get(rel) and declares_tests(RUST, ctx.test_sources.get(rel))}
        return Parsed(tests, broken)


class CppPlan:
    """CMake and make with the exercise's own CMakeLists.txt and bundled Catch2 (warnings are errors there),
    all tests on (EXERCISM_RUN_ALL_TESTS); the test binary writes Catch2's JUnit report. The build target is
    the exercise's folder name, as its CMakeLists.txt names it."""

    language = CPP
    test_suffixes = (".cpp", ".cc", ".cxx")
    enable_all_tests = staticmethod(_unchanged)

    def canary(self, word: str, test_sources: dict[str, str], project: str) -> tuple[str, str] | None:
        """The first test file with a test case appended (the exercise's CMakeLists.txt names the files it
        builds, so a file of ours would not be), after any `#if` that holds its other tests back."""
        if not test_sources:
            return None
        rel, text = next(iter(test_sources.items()))
        return rel, f'{text.rstrip()}\n\nTEST_CASE("z{word}") {{\n    FAIL("{word}");\n}}\n'

    def _binary(self, ctx: LanguageRun) -> Path:
        return ctx.project_dir / "build" / ctx.project_dir.name

    def steps(self, ctx: LanguageRun) -> list[Step]:
        tools = ctx.toolchain.tools
        env = ctx.env(extra={"CXX": tools["g++"]})
        build = (f"cd {q(ctx.project_dir)} || exit 125\n"
                 f"{q(tools['cmake'])} -S . -B build -G 'Unix Makefiles' -DEXERCISM_RUN_ALL_TESTS=1 >/dev/null "
                 "|| exit $?\n"
                 f"exec {q(tools['make'])} -s -C build -j2 {q(ctx.project_dir.name)}")
        run = f"cd {q(ctx.project_dir)} || exit 125\nexec {q(self._binary(ctx))} -r junit -o {q(ctx.report)}"
        return [shell_step("build", build, env, ctx.timeout, build=True), shell_step("tests", run, env, ctx.timeout)]

    def results(self, ctx: LanguageRun, report: str) -> Parsed:
        first = ctx.test_files[0] if ctx.test_files else ""
        return Parsed(junit_results(report, lambda _classname, _name: first))


class JavaScriptPlan:
    """jest and what package.json asks for (prepared outside the sandbox: `dependencies.prepare_node_modules`,
    linked in as the project's node_modules) with `--json`, in band, `xtest` on."""

    language = JAVASCRIPT
    test_suffixes = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx")

    def canary(self, word: str, test_sources: dict[str, str], project: str) -> tuple[str, str] | None:
        return (posixpath.join(project, f"z{word}.spec.js"),
                f"test('{word}', () => {{\n  throw new Error('{word}');\n}});\n")

    def enable_all_tests(self, text: str) -> str:
        return re.sub(r"\bxtest\(", "test(", re.sub(r"\bxit\(", "it(", text))

    def steps(self, ctx: LanguageRun) -> list[Step]:
        assert ctx.dependencies is not None, "jest is prepared before the run"
        node = ctx.toolchain.tool("node")
        jest = ctx.dependencies / JEST_ENTRY
        config = ('{"cacheDirectory": %s, "watchman": false, "haste": {"enableSymlinks": false}}'
                  % _json_string(str(ctx.tmp / "jest-cache")))
        env = ctx.env(path=(str(Path(node).parent),), extra={"NODE_PATH": str(ctx.dependencies / "node_modules"),
                                                             "CI": "true", "NODE_OPTIONS": "--max-old-space-size=2048"})
        files = " ".join(q(ctx.workspace / rel) for rel in ctx.run_files)
        modules = ctx.dependencies / "node_modules"
        # babel resolves a config's presets beside the config, not through NODE_PATH: link them in
        script = (f"cd {q(ctx.project_dir)} || exit 125\n"
                  f"[ -e node_modules ] || ln -s {q(modules)} node_modules\n"
                  f"exec {q(node)} {q(jest)} --ci --runInBand --json --outputFile={q(ctx.report)} "
                  f"--rootDir={q(ctx.project_dir)} --config={q(config)} --runTestsByPath {files}")
        return [shell_step("tests", script, env, ctx.timeout)]

    def results(self, ctx: LanguageRun, report: str) -> Parsed:
        tests, broken = jest_results(report, str(ctx.workspace))
        return Parsed(tests, broken)


class JavaPlan:
    """javac, then the JUnit 5 console launcher (Debian's junit5) with AssertJ on the class path, its legacy
    XML report; Gradle is not used (its wrapper downloads)."""

    language = JAVA
    test_suffixes = (".java",)

    def canary(self, word: str, test_sources: dict[str, str], project: str) -> tuple[str, str] | None:
        return (posixpath.join(project, f"Z{word}Test.java"),
                f"public class Z{word}Test {{\n    @org.junit.jupiter.api.Test\n    void z{word}() {{\n"
                f"        org.junit.jupiter.api.Assertions.fail(\"{word}\");\n    }}\n}}\n")

    def enable_all_tests(self, text: str) -> str:
        return re.sub(r"^\s*@Disabled(\([^)]*\))?\s*$", "", text, flags=re.M)

    def _jars(self, ctx: LanguageRun) -> tuple[str, str]:
        tools = ctx.toolchain.tools
        console = next(path for name, path in tools.items() if name.startswith("junit-platform-console-standalone"))
        assertj = next(path for name, path in tools.items() if name.startswith("assertj-core"))
        return console, assertj

    def steps(self, ctx: LanguageRun) -> list[Step]:
        """Built as Gradle builds it: the code (every .java file but the tests) first, then the tests (the suite's
        files, the canary and what is under src/test) against its classes, so a test file may declare a class the
        code declares too (its own stand-in: LiveRepoReflection's tests do) and, first on the class path, wins."""
        tools = ctx.toolchain.tools
        console, assertj = self._jars(ctx)
        main, tests = ctx.tmp / "classes" / "main", ctx.tmp / "classes" / "test"
        env = ctx.env(path=(str(Path(tools["javac"]).parent),))
        jvm = " ".join(JVM_OPTIONS)
        javac = f"{q(tools['javac'])} {' '.join('-J' + o for o in JVM_OPTIONS)} -nowarn -encoding UTF-8"
        listed, code = ctx.tmp / "test-sources.txt", ctx.tmp / "sources.txt"
        project = q(ctx.project_dir)
        build = (f"cd {project} || exit 125\n"
                 f"printf '%s\\n' {' '.join(q(ctx.workspace / rel) for rel in ctx.run_files)} > {q(listed)}\n"
                 f"[ -d src/test ] && find {q(ctx.project_dir / 'src' / 'test')} -name '*.java' >> {q(listed)}\n"
                 f"sort -u -o {q(listed)} {q(listed)}\n"
                 f"find {project} -name '*.java' -not -path {q(str(ctx.project_dir / 'build') + '/*')} "
                 f"| grep -vxF -f {q(listed)} > {q(code)}\n"
                 f"mkdir -p {q(main)} {q(tests)} || exit 125\n"
                 f"if [ -s {q(code)} ]; then\n"
                 f"  {javac} -d {q(main)} -cp {q(console + ':' + assertj)} @{q(code)} || exit $?\n"
                 f"fi\n"
                 f"exec {javac} -d {q(tests)} -cp {q(f'{main}:{console}:{assertj}')} @{q(listed)}")
        reports = PurePosixPath(ctx.report).parent
        run = (f"cd {project} || exit 125\n"
               f"exec {q(tools['java'])} {jvm} -jar {q(console)} --disable-banner --details=tree "
               f"--disable-ansi-colors --class-path {q(f'{tests}:{main}:{assertj}')} --scan-class-path "
               f"--reports-dir {q(str(reports))}")
        return [shell_step("build", build, env, ctx.timeout, build=True), shell_step("tests", run, env, ctx.timeout)]

    def results(self, ctx: LanguageRun, report: str) -> Parsed:
        file_of = java_test_file(ctx.run_files)
        return Parsed([test for engine in report.split(NEXT_REPORT) for test in junit_results(engine.strip(), file_of)])


def _json_string(text: str) -> str:
    import json

    return json.dumps(text)


PLANS: dict[str, LanguagePlan] = {GO: GoPlan(), RUST: RustPlan(), CPP: CppPlan(), JAVASCRIPT: JavaScriptPlan(),
                                  JAVA: JavaPlan()}


NEXT_REPORT = "<!-- projectgen: next report -->"  # between two report files the report step prints


def report_names(language: str) -> tuple[str, ...]:
    """The report files' names, in a folder of the session's private temp folder that the test step makes
    under a random name: the first always written, the others when there is something to report (the JUnit
    launcher writes one fixed name per engine: Jupiter's, and Vintage's for JUnit 4 tests)."""
    return ("TEST-junit-jupiter.xml", "TEST-junit-vintage.xml") if language == JAVA else (f"report-{language}.out",)


def report_name(language: str) -> str:
    """The report file every run of `language` writes (`report_names`' first)."""
    return report_names(language)[0]
