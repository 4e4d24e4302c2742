"""A small lexer for the brace languages (Go, Rust, JavaScript, Java, C++): where the comments and the
string, character and number literals of a source text are, so that braces, parentheses and commas can
be matched and split on without a full parser.

`scan` returns a mask of the text (same length, same offsets: every comment and every literal's content
blanked) and the literals it found. Searching the mask with regular expressions finds code only;
`closing` and `split_top` match and split on it. Good enough for test files, which is all it reads: a
construct it cannot place (a JavaScript regular expression in an odd spot) at worst makes a twin that
does not build or does not fail, and the runner verifies every twin on the reference before using it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {value: key for key, value in OPENERS.items()}
NUMBER = re.compile(r"\d[\d_']*(?:\.(?![.a-zA-Z_])[\d_']*)?(?:[eE][+-]?\d+)?(?P<suffix>[a-zA-Z_][a-zA-Z0-9_]*)?")
RADIX = re.compile(r"0[xXbBoO][0-9a-fA-F_']+\w*")
WORD = re.compile(r"[^\W\d][\w$]*|\$[\w$]*")
REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}  # a `/` after these (or a keyword) starts a JS regular expression
REGEX_KEYWORDS = frozenset({"return", "typeof", "case", "do", "else", "in", "of", "void", "yield", "await"})


@dataclass(frozen=True)
class Literal:
    """A literal in the text: `kind` is "string", "char", "number" or "bool"; the content of a string is
    `text[inner:inner_end]` (after the opening quote, delimiter or prefix; before the closing one)."""

    kind: str
    start: int
    end: int
    inner: int = 0
    inner_end: int = 0


@dataclass(frozen=True)
class Scanned:
    text: str
    mask: str  # the text with comments and literal contents blanked (offsets kept)
    literals: tuple[Literal, ...]

    def literals_in(self, start: int, end: int) -> list[Literal]:
        return [literal for literal in self.literals if start <= literal.start and literal.end <= end]


def scan(text: str, language: str) -> Scanned:
    """Comments and literals of `text` in `language` ("go", "rust", "javascript", "java", "cpp")."""
    mask = list(text)
    literals: list[Literal] = []
    i, n = 0, len(text)
    last_code = ""  # the last non-blank code character or word before `i` (for JavaScript's `/`)

    def blank(start: int, end: int) -> None:
        for k in range(start, end):
            if mask[k] != "\n":
                mask[k] = " "

    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if two == "//":
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
            continue
        if two == "/*":
            end = _block_comment_end(text, i, nested=language == "rust")
            blank(i, end)
            i = end
            continue
        literal = _string_at(text, i, language, last_code)
        if literal is not None:
            blank(literal.inner, literal.inner_end)
            literals.append(literal)
            i = literal.end
            last_code = "x"
            continue
        if c.isdigit() and not _word_char(text, i - 1):
            if i == 0 or text[i - 1] != ".":  # not a tuple field (`pair.0`)
                found = RADIX.match(text, i) or NUMBER.match(text, i)
                if found:
                    kind = "number" if found.re is NUMBER else "radix"
                    if kind == "number":
                        literals.append(Literal("number", i, found.end()))
                    i = found.end()
                    last_code = "x"
                    continue
        if c.isalpha() or c in "_$":
            word = WORD.match(text, i)
            assert word is not None
            if word.group() in ("true", "false"):
                literals.append(Literal("bool", i, word.end()))
            last_code = word.group() if word.group() in REGEX_KEYWORDS else "x"
            i = word.end()
            continue
        if not c.isspace():
            last_code = c
        i += 1
    return Scanned(text, "".join(mask), tuple(literals))


def _word_char(text: str, at: int) -> bool:
    return at >= 0 and (text[at].isalnum() or text[at] in "_$")


def _block_comment_end(text: str, start: int, *, nested: bool) -> int:
    depth, i = 0, start
    while i < len(text):
        if text.startswith("/*", i):
            depth = depth + 1 if nested or depth == 0 else depth
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth <= 0:
                return i
        else:
            i += 1
    return len(text)


def _quoted(text: str, start: int, quote: str, *, escapes: bool = True, newline_ends: bool = False) -> int:
    """The index after the closing `quote` of a literal whose content starts at `start`."""
    i = start
    while i < len(text):
        c = text[i]
        if escapes and c == "\\":
            i += 2
            continue
        if c == quote:
            return i + 1
        if newline_ends and c == "\n":
            return i
        i += 1
    return len(text)


def _string_at(text: str, i: int, language: str, last_code: str) -> Literal | None:
    """The string or character literal starting at `i`, if one does."""
    c = text[i]
    if language == "rust":
        raw = re.compile(r"b?r(#*)\"").match(text, i)
        if raw and not _word_char(text, i - 1):
            closer = '"' + raw.group(1)
            end = text.find(closer, raw.end())
            end = len(text) if end < 0 else end
            return Literal("string", i, end + len(closer), raw.end(), end)
        if c == "b" and text[i + 1:i + 2] in ("\"", "'") and not _word_char(text, i - 1):
            literal = _string_at(text, i + 1, language, last_code)
            return None if literal is None else Literal(literal.kind, i, literal.end, literal.inner, literal.inner_end)
    if language == "cpp":
        raw = re.compile(r"(?:u8|u|U|L)?R\"([^()\\\s]{0,16})\(").match(text, i)
        if raw and not _word_char(text, i - 1):
            closer = ")" + raw.group(1) + '"'
            end = text.find(closer, raw.end())
            end = len(text) if end < 0 else end
            return Literal("string", i, end + len(closer), raw.end(), end)
    if language == "java" and text.startswith('"""', i):
        end = text.find('"""', i + 3)
        end = len(text) if end < 0 else end
        return Literal("string", i, end + 3, i + 3, end)
    if c == '"':
        end = _quoted(text, i + 1, '"')
        return Literal("string", i, end, i + 1, end - 1)
    if c == "`" and language in ("go", "javascript"):
        end = _quoted(text, i + 1, "`", escapes=language == "javascript")
        return Literal("string", i, end, i + 1, end - 1)
    if c == "'":
        if language == "javascript":
            end = _quoted(text, i + 1, "'", newline_ends=True)
            return Literal("string", i, end, i + 1, end - 1)
        char = re.compile(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[0-7]{1,3}|.)|[^'\\\n])'").match(text, i)
        if char:
            return Literal("char", i, char.end(), i + 1, char.end() - 1)
        return None  # a Rust lifetime or C++ digit separator
    if c == "/" and language == "javascript" and last_code in REGEX_BEFORE | REGEX_KEYWORDS \
            and text[i + 1:i + 2] not in ("/", "*"):
        return _regex_at(text, i)
    return None


def _regex_at(text: str, i: int) -> Literal | None:
    j, in_class = i + 1, False
    while j < len(text) and text[j] != "\n":
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            flags = re.compile(r"[a-z]*").match(text, j + 1)
            end = flags.end() if flags else j + 1
            return Literal("regex", i, end, i + 1, j)
        j += 1
    return None  # not a regular expression after all (a division at a line's end)


def closing(mask: str, at: int) -> int:
    """The index of the bracket closing the one at `at` in `mask` (len(mask) when it is never closed)."""
    stack = []
    for i in range(at, len(mask)):
        c = mask[i]
        if c in OPENERS:
            stack.append(OPENERS[c])
        elif c in CLOSERS:
            if not stack or stack[-1] != c:
                return len(mask)
            stack.pop()
            if not stack:
                return i
    return len(mask)


def split_top(mask: str, start: int, end: int, separator: str = ",") -> list[tuple[int, int]]:
    """(start, end) of each part of `mask[start:end]` split at `separator` outside brackets (parts stripped,
    empty parts dropped)."""
    parts, depth, begin = [], 0, start
    i = start
    while i < end:
        c = mask[i]
        if c in OPENERS:
            depth += 1
        elif c in CLOSERS:
            depth -= 1
        elif depth == 0 and mask.startswith(separator, i) and _lone(mask, i, separator):
            parts.append((begin, i))
            begin = i + len(separator)
            i += len(separator)
            continue
        i += 1
    parts.append((begin, end))
    return [stripped for part in parts if (stripped := _strip(mask, *part))[0] < stripped[1]]


def _lone(mask: str, i: int, separator: str) -> bool:
    """`==` that is not part of `===` or `!==`/`<==`-like operators."""
    if separator == ",":
        return True
    before = mask[i - 1] if i else ""
    after = mask[i + len(separator):i + len(separator) + 1]
    return before not in "=!<>" and after != "="


def _strip(mask: str, start: int, end: int) -> tuple[int, int]:
    while start < end and mask[start].isspace():
        start += 1
    while end > start and mask[end - 1].isspace():
        end -= 1
    return start, end


def enclosing_open(mask: str, at: int) -> int:
    """The index of the innermost `{` open at `at` (-1 at top level)."""
    stack: list[int] = []
    for i in range(at):
        c = mask[i]
        if c == "{":
            stack.append(i)
        elif c == "}" and stack:
            stack.pop()
    return stack[-1] if stack else -1
