"""Where each test of a Go, Rust, JavaScript (jest), Java (JUnit) or C++ (Catch2) test file is: its name,
its whole definition (attributes and annotations included) and its body, found on the lexer's mask
(`source_scan`), so braces in strings and comments do not count.

Only the plain forms are found (`func TestX(t *testing.T)`, `#[test] fn x()`, `test('…', …)` /
`it('…', …)`, `@Test void x()`, `TEST_CASE("…")`); a parameterized or generated test is left alone,
since a twin of it would have to fail for every parameter.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from projectgen.evaluation.languages.source_scan import Scanned, closing, enclosing_open
from projectgen.evaluation.languages.toolchains import CPP, GO, JAVA, JAVASCRIPT, RUST

GO_TEST = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)\s*\{", re.M)
RUST_FN = re.compile(r"^[ \t]*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)\s*\(\s*\)\s*(?:->\s*[^{;]+)?\{", re.M)
JAVA_METHOD = re.compile(r"^[ \t]*(?:(?:public|protected|private|static|final)\s+)*void\s+(\w+)\s*\(\s*\)\s*"
                         r"(?:throws\s+[\w.,\s]+)?\{", re.M)
JEST_TEST = re.compile(r"(?<![\w$.])(?:test|it)\s*\(\s*(?=['\"`])")
CATCH_TEST = re.compile(r"(?<![\w])TEST_CASE\s*\(\s*(?=\")")


@dataclass(frozen=True)
class DeclaredTest:
    """One test of a file: offsets into the file's text."""

    name: str
    start: int  # the start of its first line (attributes and annotations included)
    end: int  # after its last character (the closing brace, or jest's `)` and `;`)
    name_start: int  # the name in the text (a string's content for jest and Catch2)
    name_end: int
    body_start: int  # after the body's `{`
    body_end: int  # at the body's `}`
    scope: int  # the `{` of the block holding it (a class, `describe` or `mod`), -1 at the top level


def declared_tests(scanned: Scanned, language: str) -> list[DeclaredTest]:
    """Every plain test of the file, in source order."""
    finder = {GO: _go, RUST: _rust, JAVA: _java, JAVASCRIPT: _jest, CPP: _catch}.get(language)
    return [] if finder is None else finder(scanned)


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _definition(scanned: Scanned, name_start: int, name_end: int, start: int, brace: int,
                end_after: int | None = None) -> DeclaredTest | None:
    close = closing(scanned.mask, brace)
    if close >= len(scanned.mask):
        return None
    end = close + 1 if end_after is None else end_after
    return DeclaredTest(scanned.text[name_start:name_end], start, end, name_start, name_end, brace + 1, close,
                          enclosing_open(scanned.mask, start))


def _go(scanned: Scanned) -> list[DeclaredTest]:
    found = []
    for match in GO_TEST.finditer(scanned.mask):
        definition = _definition(scanned, match.start(1), match.end(1), match.start(), match.end() - 1)
        if definition is not None:
            found.append(definition)
    return found


def _attribute_start(text: str, line: int, prefix: str) -> tuple[int, list[str]]:
    """The start of the run of attribute/annotation lines (starting with `prefix`) just above `line`, and them."""
    start, lines = line, []
    while start > 0:
        previous = _line_start(text, start - 1)
        row = text[previous:start - 1].strip()
        if not row.startswith(prefix):
            break
        lines.append(row)
        start = previous
    return start, lines


def _rust(scanned: Scanned) -> list[DeclaredTest]:
    found = []
    for match in RUST_FN.finditer(scanned.mask):
        start, attributes = _attribute_start(scanned.mask, match.start(), "#[")
        if "#[test]" not in attributes:
            continue
        definition = _definition(scanned, match.start(1), match.end(1), start, match.end() - 1)
        if definition is not None:
            found.append(definition)
    return found


def _java(scanned: Scanned) -> list[DeclaredTest]:
    found = []
    for match in JAVA_METHOD.finditer(scanned.mask):
        start, annotations = _attribute_start(scanned.text, match.start(), "@")
        if not any(re.fullmatch(r"@(?:org\.junit\.jupiter\.api\.|org\.junit\.)?Test", a) for a in annotations):
            continue
        definition = _definition(scanned, match.start(1), match.end(1), start, match.end() - 1)
        if definition is not None:
            found.append(definition)
    return found


def _named_call(scanned: Scanned, pattern: re.Pattern[str], after_close: bool) -> list[DeclaredTest]:
    """`name("…", …)` tests: the string's content is the name; the body is the first `{` inside the call
    (jest's callback) or the block right after it (Catch2)."""
    found = []
    literals = {literal.start: literal for literal in scanned.literals if literal.kind == "string"}
    for match in pattern.finditer(scanned.mask):
        literal = literals.get(match.end())
        paren = scanned.mask.find("(", match.start())
        if literal is None or paren < 0:
            continue
        close = closing(scanned.mask, paren)
        if close >= len(scanned.mask):
            continue
        if after_close:
            brace = _next_code(scanned.mask, close + 1)
            if brace < 0 or scanned.mask[brace] != "{":
                continue
            end = None
        else:
            brace = scanned.mask.find("{", literal.end, close)
            if brace < 0:
                continue
            semicolon = _next_code(scanned.mask, close + 1)
            end = semicolon + 1 if semicolon >= 0 and scanned.mask[semicolon] == ";" else close + 1
        definition = _definition(scanned, literal.inner, literal.inner_end, _line_start(scanned.text, match.start()),
                                 brace, end)
        if definition is not None and (after_close or definition.body_end < close):
            found.append(definition)
    return found


def _next_code(mask: str, at: int) -> int:
    for i in range(at, len(mask)):
        if not mask[i].isspace():
            return i
    return -1


def _jest(scanned: Scanned) -> list[DeclaredTest]:
    return _named_call(scanned, JEST_TEST, after_close=False)


def _catch(scanned: Scanned) -> list[DeclaredTest]:
    return _named_call(scanned, CATCH_TEST, after_close=True)
