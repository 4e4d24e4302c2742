"""Per-test outcomes from each tool's own structured report: `go test -json`, libtest's JSON lines,
jest's `--json` file, and JUnit XML (the JUnit console launcher's and Catch2's).

Every parser takes the report's text (capped, read after the test step ended: see `session`) and
returns `TestResult`s with node ids ``<test file>::<test name>``, so the expected-tests
machinery (`expectations`) groups and covers them by file as it does pytest's. A report the code
under test mangled parses to fewer tests or none; it never raises.
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator, Sequence
from pathlib import PurePosixPath

from projectgen.evaluation.languages.toolchains import GO, JAVA, RUST
from projectgen.evaluation.report import Outcome, TestResult

MESSAGE_CHARS = 2000
RUST_FILE_MARK = "projectgen-file"  # the marker line the Rust test script writes before each target's events


def node_id(test_file: str, name: str) -> str:
    return f"{test_file}::{name}"


def _json_lines(text: str) -> Iterator[dict]:
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event


def _message(text: str) -> str:
    return text[-MESSAGE_CHARS:].strip()


# --------------------------------------------------------------------------- Go


def go_results(text: str, file_of: Callable[[str], str]) -> tuple[list[TestResult], bool]:
    """`go test -json`'s events: one result per leaf test (a test with subtests counts through them),
    a test that started and never ended is an error; and whether the package failed to build. A parent that
    failed (or never ended) while every one of its subtests passed failed outside them (an assertion after
    its `t.Run`s): its subtests take its outcome, or `go test` would fail where every count says pass."""
    outcomes: dict[str, Outcome] = {}
    output: dict[str, list[str]] = {}
    elapsed: dict[str, float] = {}
    started: list[str] = []
    package_output: list[str] = []
    for event in _json_lines(text):
        name, action = event.get("Test"), event.get("Action")
        if not isinstance(name, str) or not name:
            if action == "output":
                package_output.append(str(event.get("Output", "")))
            continue
        if action == "run":
            started.append(name)
        elif action == "output":
            output.setdefault(name, []).append(str(event.get("Output", "")))
        elif action in ("pass", "fail", "skip"):
            outcomes[name] = {"pass": Outcome.PASSED, "fail": Outcome.FAILED, "skip": Outcome.SKIPPED}[action]
            elapsed[name] = float(event.get("Elapsed") or 0.0)
    names = list(dict.fromkeys([*started, *outcomes]))
    leaves = [name for name in names if not any(other.startswith(name + "/") for other in names)]
    outcome = {name: outcomes.get(name, Outcome.ERROR) for name in names}
    message = {name: _message("".join(output.get(name, []))) for name in names}
    for parent in names:
        below = [leaf for leaf in leaves if leaf.startswith(parent + "/")]
        if below and outcome[parent] in (Outcome.FAILED, Outcome.ERROR) \
                and all(outcome[leaf] is Outcome.PASSED for leaf in below):
            for leaf in below:
                outcome[leaf] = outcome[parent]
                message[leaf] = f"{parent} failed outside its subtests: {message[parent]}".strip()
    results = [TestResult(nodeid=node_id(file_of(name), name), outcome=outcome[name],
                          duration=elapsed.get(name, 0.0),
                          message=message[name] if outcome[name] is not Outcome.PASSED else "")
               for name in leaves]
    build_failed = not names and any("[build failed]" in line or "[setup failed]" in line
                                     for line in package_output)
    return results, build_failed


GO_TEST_FUNC = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)


def go_test_files(sources: dict[str, str]) -> Callable[[str], str]:
    """Which test file holds a (sub)test, from the `func TestX(t *testing.T)` lines of each file."""
    owner = {name: rel for rel, text in sources.items() for name in GO_TEST_FUNC.findall(text)}
    first = next(iter(sources), "")
    return lambda name: owner.get(name.split("/", 1)[0], first)


# --------------------------------------------------------------------------- Rust

RUST_TEST = re.compile(r"#\[\s*(?:[\w:]+::)?test\b")  # #[test], #[tokio::test]; not #[cfg(test)]


def rust_results(text: str) -> dict[str, list[TestResult]]:
    """libtest's JSON events, by the test file whose target they came from (the marker lines the test
    script writes); a test that started and did not end is an error. A "timeout" event is libtest's notice that
    a test has run for over 60 seconds, not an outcome: the test's own "ok" or "failed" follows (`cargo test`
    passes a test that sleeps 65 s)."""
    by_file: dict[str, list[TestResult]] = {}
    current = ""
    started: dict[str, list[str]] = {}
    for event in _json_lines(text):
        if event.get("type") == RUST_FILE_MARK:
            current = str(event.get("file", ""))
            by_file.setdefault(current, [])
            continue
        if event.get("type") != "test" or not isinstance(event.get("name"), str):
            continue
        name, what = event["name"], event.get("event")
        if what == "started":
            started.setdefault(current, []).append(name)
            continue
        outcome = {"ok": Outcome.PASSED, "failed": Outcome.FAILED, "ignored": Outcome.SKIPPED}.get(str(what))
        if outcome is not None:
            by_file.setdefault(current, []).append(TestResult(
                nodeid=node_id(current, name), outcome=outcome, duration=float(event.get("exec_time") or 0.0),
                message=_message(str(event.get("stdout") or event.get("message") or ""))))
    for rel, names in started.items():
        ended = {result.nodeid for result in by_file.get(rel, [])}
        by_file.setdefault(rel, []).extend(
            TestResult(nodeid=node_id(rel, name), outcome=Outcome.ERROR, message="the test did not finish")
            for name in names if node_id(rel, name) not in ended)
    return by_file


# --------------------------------------------------------------------------- JavaScript (jest)


def jest_results(text: str, workspace: str) -> tuple[list[TestResult], dict[str, str]]:
    """jest's `--json` report: one result per assertion, and per test file that did not run (a syntax
    error, a failed require) its message."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return [], {}
    results, broken = [], {}
    statuses = {"passed": Outcome.PASSED, "failed": Outcome.FAILED, "pending": Outcome.SKIPPED,
                "skipped": Outcome.SKIPPED, "todo": Outcome.SKIPPED, "disabled": Outcome.SKIPPED}
    for suite in data.get("testResults") or [] if isinstance(data, dict) else []:
        if not isinstance(suite, dict):
            continue
        rel = _relative(str(suite.get("name", "")), workspace)
        assertions = [a for a in suite.get("assertionResults") or [] if isinstance(a, dict)]
        if not assertions and suite.get("status") == "failed":
            broken[rel] = _message(str(suite.get("message", "")))
        for assertion in assertions:
            name = str(assertion.get("fullName") or " ".join([*assertion.get("ancestorTitles", []),
                                                              str(assertion.get("title", ""))]))
            failures = assertion.get("failureMessages") or []
            results.append(TestResult(nodeid=node_id(rel, name),
                                      outcome=statuses.get(str(assertion.get("status")), Outcome.ERROR),
                                      duration=float(assertion.get("duration") or 0.0) / 1000,
                                      message=_message("\n".join(str(f) for f in failures))))
    return results, broken


def _relative(path: str, workspace: str) -> str:
    prefix = workspace.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


# --------------------------------------------------------------------------- JUnit XML (Java, C++)


def junit_results(text: str, file_of: Callable[[str, str], str]) -> list[TestResult]:
    """<testcase> elements of a JUnit XML report; `file_of(classname, name)` says which test file each is in.
    An unparseable report yields nothing."""
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return []
    results = []
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        name = re.sub(r"\(\)$", "", name)
        failure = next((child for child in case if child.tag in ("failure", "error")), None)
        skipped = next((child for child in case if child.tag == "skipped"), None)
        if failure is not None:
            outcome = Outcome.FAILED if failure.tag == "failure" else Outcome.ERROR
            message = " ".join(filter(None, [failure.get("message", ""), failure.text or ""]))[:MESSAGE_CHARS].strip()
        elif skipped is not None:
            outcome, message = Outcome.SKIPPED, skipped.get("message", "")
        else:
            outcome, message = Outcome.PASSED, ""
        try:
            duration = float(case.get("time") or 0.0)
        except ValueError:
            duration = 0.0
        results.append(TestResult(nodeid=node_id(file_of(classname, name), name), outcome=outcome,
                                  duration=duration, message=message))
    return results


JUNIT_TEST = re.compile(r"@(?:[\w.]+\.)?(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b"
                        r"|\bextends\s+(?:junit\.framework\.)?TestCase\b")
"""What declares a JUnit test (5's annotations, 4's `@Test`, 3's `TestCase`): a file under `src/test/java` without
one is a helper of the tests (LiveRepoReflection lists an enum its tests use among them) and reports nothing."""


def java_test_file(test_files: Sequence[str]) -> Callable[[str, str], str]:
    """The test file of a JUnit class name: the file named like its outermost class."""
    by_stem = {PurePosixPath(rel).stem: rel for rel in test_files}
    first = test_files[0] if test_files else ""
    return lambda classname, _name: by_stem.get(classname.rsplit(".", 1)[-1].split("$", 1)[0], first)


# --------------------------------------------------------------------------- which test files owe an outcome


TEST_DECLARATIONS = {GO: GO_TEST_FUNC, JAVA: JUNIT_TEST, RUST: RUST_TEST}
"""What declares a test in a test file, where a test file may declare none: a Go exercise's ``cases_test.go``
holds only the cases its ``*_test.go`` runs, a Java exercise's ``src/test/java`` may hold a class its tests use, a
Rust exercise's ``tests/`` a helper module or an empty target. Such a file owes no outcome. Go's is the pattern
that attributes each reported test to its file (`go_test_files`); a JUnit test counts under the file of its
outermost class (`java_test_file`) and a libtest one under its target's file, which declare it. So a file owes an
outcome exactly when one can reach it."""


def declares_tests(language: str, source: str | None) -> bool:
    """Whether a test file declares a test (always, where the language has no pattern or the text is unknown)."""
    pattern = TEST_DECLARATIONS.get(language)
    return pattern is None or source is None or pattern.search(source) is not None
