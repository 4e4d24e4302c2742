"""Tolerant parsing of model replies: JSON (fenced, wrapped in prose, cut off) and code blocks.

Models rarely answer with clean JSON: they wrap it in ```json fences, talk before
and after it, leave trailing commas, write Python's True/None, put raw newlines
inside strings, or stop mid-object at the token limit. The agents must turn all
of that into either a value or a short message that can be sent back to the
model as feedback, never into a crash. So:

- `find_json` / `extract_json` locate the JSON value in a reply and parse it with
  a lenient parser that repairs truncation (closes strings, arrays and objects;
  drops a dangling key, half a literal or a trailing comma) and says what it did.
- `parse_model` validates it against a Pydantic model and raises
  `StructuredOutputError` whose message is the feedback (no JSON / invalid JSON
  at a position / schema errors with field locations).
- `extract_code_blocks` returns fenced code blocks, tolerating a missing closing
  fence at the end of a cut-off reply; `code_blocks` also says whether each was closed.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeVar

from projectgen.errors import ProjectGenError

T = TypeVar("T")

_MAX_SCHEMA_ERRORS = 8
_JSON_FENCE_LANGS = ("json", "json5", "jsonc", "javascript", "js")


class StructuredOutputError(ProjectGenError, ValueError):
    """A reply could not be turned into the expected structure; `str(err)` is feedback for the model.

    `kind` is "no_json", "invalid_json" or "schema"; `truncated` says the reply looked cut off.
    """

    def __init__(self, message: str, *, kind: Literal["no_json", "invalid_json", "schema"],
                 truncated: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.truncated = truncated


@dataclass(frozen=True)
class FoundJSON:
    """A JSON value found in a reply, where it was, and the repairs needed to read it."""

    value: Any
    start: int
    end: int
    repairs: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        """True when the value ran to the end of the text unfinished (the reply was probably cut off)."""
        return any(note.startswith("truncated") for note in self.repairs)


# --------------------------------------------------------------------------- code blocks

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


class CodeBlock(NamedTuple):
    """One fenced block of a reply: its info string (or None), its code, and whether its fence was closed."""

    info: str | None
    code: str
    closed: bool


def extract_code_blocks(text: str) -> list[tuple[str | None, str]]:
    """Fenced code blocks as (info string or None, code), in order.

    A longer fence can enclose shorter ones (````markdown around ```python); a
    block whose closing fence is missing runs to the end of the text, because
    that is what a reply cut off at the token limit looks like.
    """
    return [(block.info, block.code) for block in code_blocks(text)]


def code_blocks(text: str) -> list[CodeBlock]:
    """`extract_code_blocks` with each block's `closed`: False for one that runs to the end of the text."""
    lines = text.splitlines()
    blocks: list[CodeBlock] = []
    i = 0
    while i < len(lines):
        opening = _FENCE_OPEN.match(lines[i])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"].expandtabs(4))
        info = opening["info"].strip() or None
        closing = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not closing.match(lines[i]):
            body.append(_strip_indent(lines[i], indent))
            i += 1
        blocks.append(CodeBlock(info, "\n".join(body), i < len(lines)))
        i += 1  # past the closing fence (or the end)
    return blocks


def _strip_indent(line: str, indent: int) -> str:
    """Remove up to `indent` leading spaces, as Markdown does inside an indented fence."""
    if indent == 0:
        return line
    expanded = line.expandtabs(4)
    stripped = expanded.lstrip(" ")
    return expanded[min(indent, len(expanded) - len(stripped)):]


# --------------------------------------------------------------------------- JSON

def extract_json(text: str) -> Any:
    """The JSON value in a model reply (see `find_json`); raises `StructuredOutputError`."""
    return find_json(text).value


def find_json(text: str) -> FoundJSON:
    """Locate and leniently parse the JSON value in `text`.

    Looks first inside ```json (or unlabelled) fences, then in the whole text; in
    each place the longest value that parses wins, so a stray "[1]" in the prose
    does not hide the real answer. Raises `StructuredOutputError` ("no_json" or
    "invalid_json", with line and column) when nothing parses.
    """
    stripped = text.strip()
    try:
        value = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        pass
    else:
        start = text.find(stripped[:1]) if stripped else 0
        return FoundJSON(value, start, start + len(stripped))

    best_failure: _Failure | None = None
    for offset, region in _regions(text):
        found, failure = _scan(region, offset)
        if failure is not None and (best_failure is None or failure.span > best_failure.span):
            best_failure = failure  # reported only when no region yields a value
        if found is not None and (failure is None or not failure.significant
                                  or found.end - found.start >= failure.span):
            return found
    if best_failure is None:
        raise StructuredOutputError(
            "No JSON found in your reply. Answer with a single JSON object, optionally inside a ```json fence.",
            kind="no_json",
        )
    line, column = _line_column(text, best_failure.position)
    near = text[best_failure.position:best_failure.position + 30]
    raise StructuredOutputError(
        f"Invalid JSON at line {line} column {column}: {best_failure.message} (near {near!r}). "
        "Answer with a single valid JSON object.",
        kind="invalid_json",
    )


def parse_model(text: str, model: type[T]) -> T:
    """Parse a reply into `model` (a Pydantic model class, or any type pydantic's TypeAdapter accepts).

    Raises `StructuredOutputError` whose message says what to fix: no JSON,
    invalid JSON at a position, or up to 8 schema errors with field locations.
    """
    from pydantic import BaseModel, TypeAdapter, ValidationError

    found = find_json(text)
    try:
        is_model = isinstance(model, type) and issubclass(model, BaseModel)
    except TypeError:  # generic aliases such as list[Foo]
        is_model = False
    try:
        if is_model:
            return model.model_validate(found.value)  # type: ignore[return-value]
        return TypeAdapter(model).validate_python(found.value)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        lines = [f"- {_format_loc(err['loc'])}: {err['msg']}" for err in errors[:_MAX_SCHEMA_ERRORS]]
        if len(errors) > _MAX_SCHEMA_ERRORS:
            lines.append(f"- ... and {len(errors) - _MAX_SCHEMA_ERRORS} more")
        name = getattr(model, "__name__", str(model))
        message = f"Your JSON does not match the {name} schema ({len(errors)} error(s)):\n" + "\n".join(lines)
        if found.truncated:
            message += "\nYour reply looks cut off before the JSON was complete; send a shorter, complete reply."
        raise StructuredOutputError(message, kind="schema", truncated=found.truncated) from None


def _format_loc(loc: tuple[Any, ...]) -> str:
    """('modules', 0, 'name') -> 'modules[0].name'; the empty location is the whole value."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _line_column(text: str, position: int) -> tuple[int, int]:
    line = text.count("\n", 0, position) + 1
    return line, position - (text.rfind("\n", 0, position) + 1) + 1


def _regions(text: str) -> list[tuple[int, str]]:
    """(offset, text) places to look: JSON-ish fenced blocks first, then the whole text."""
    regions: list[tuple[int, str]] = []
    for info, code in extract_code_blocks(text):
        language = (info or "").split()[0].lower() if info else ""
        if language in ("", *_JSON_FENCE_LANGS) and code.strip():
            offset = text.find(code) if code else -1
            regions.append((max(offset, 0), code))
    regions.append((0, text))
    return regions


@dataclass(frozen=True)
class _Failure:
    message: str
    start: int
    position: int
    significant: bool  # it parsed at least one member before failing: a broken answer, not prose

    @property
    def span(self) -> int:
        return self.position - self.start


def _scan(region: str, offset: int) -> tuple[FoundJSON | None, _Failure | None]:
    """Try a parse at each '{' or '[' not inside an earlier attempt (at most `_MAX_STARTS`).

    Returns the longest success and the failure that got furthest; starts inside
    an earlier attempt are skipped, so the inner object of a broken outer one is
    not mistaken for the answer.
    """
    best: FoundJSON | None = None
    worst: _Failure | None = None
    i = 0
    # The next "{" and "[" at or after i, each searched again only once i has passed it: searching
    # both from every start made a long reply with only one kind of bracket quadratic.
    next_open = {"{": region.find("{"), "[": region.find("[")}
    for _ in range(_MAX_STARTS):
        for char, found_at in next_open.items():
            if 0 <= found_at < i:
                next_open[char] = region.find(char, i)
        starts = [p for p in next_open.values() if p >= 0]
        if not starts:
            break
        start = min(starts)
        parser = _LenientParser(region, start)
        try:
            try:
                value = parser.parse_value()
            except RecursionError:  # a caller deep in its own stack: too deep for us, whatever _MAX_DEPTH says
                raise _Invalid("nesting too deep", parser.i) from None
        except _Invalid as exc:
            failure = _Failure(exc.message, start + offset, exc.position + offset, parser.completed > 0)
            if worst is None or (failure.significant, failure.span) > (worst.significant, worst.span):
                worst = failure
            i = max(exc.position, start + 1)
            continue
        except _Incomplete:  # e.g. "[tru" at the very end: nothing usable
            i = start + 1
            continue
        found = FoundJSON(value, start + offset, parser.i + offset, tuple(parser.repairs))
        if best is None or found.end - found.start > best.end - best.start:
            best = found
        i = parser.i
    return best, worst


class _Invalid(Exception):
    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.position = position


class _Incomplete(Exception):
    """The text ended before a scalar value was complete; the enclosing container drops it."""


_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_NUMBER_TAIL = re.compile(r"[0-9.eE+-]*")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
_LITERALS: dict[str, Any] = {
    "true": True, "false": False, "null": None, "True": True, "False": False, "None": None,
    "NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf"),
}
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_MAX_DEPTH = 100  # far beyond any answer's nesting, and well inside Python's recursion limit
_MAX_STARTS = 10_000  # parse attempts per region: a reply with more brackets than that is not an answer


class _LenientParser:
    """Recursive-descent JSON reader that accepts what models actually write.

    Beyond JSON: trailing commas, // and /* */ comments, Python True/False/None,
    single-quoted strings, bare identifier keys, raw newlines and unknown escapes
    inside strings (kept literally), and an early end of text (repaired).
    """

    def __init__(self, text: str, start: int) -> None:
        self.s = text
        self.i = start
        self.n = len(text)
        self.depth = 0
        self.repairs: list[str] = []
        self.string_closed = True
        self.completed = 0  # values finished inside containers: evidence that this really is JSON

    def note(self, repair: str) -> None:
        if repair not in self.repairs:
            self.repairs.append(repair)

    def skip(self) -> None:
        """Skip whitespace and comments."""
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in " \t\r\n\ufeff":
                self.i += 1
            elif s.startswith("//", self.i):
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            elif s.startswith("/*", self.i):
                end = s.find("*/", self.i + 2)
                self.i = n if end < 0 else end + 2
            else:
                break

    def parse_value(self) -> Any:
        self.skip()
        if self.i >= self.n:
            raise _Incomplete
        c = self.s[self.i]
        if c in "{[":
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise _Invalid("nesting too deep", self.i)
            try:
                return self.parse_object() if c == "{" else self.parse_array()
            finally:
                self.depth -= 1
        if c in "\"'":
            return self.parse_string()
        return self.parse_scalar()

    def parse_object(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        self.i += 1
        while True:
            self.skip()
            if self.i >= self.n:
                self.note("truncated: closed an unclosed object")
                return result
            if self.s[self.i] == "}":
                self.i += 1
                return result
            key_start = self.i
            if self.s[self.i] in "\"'":
                key = self.parse_string()
                if not self.string_closed:
                    self.note("truncated: dropped a dangling key")
                    return result
            else:
                match = _IDENTIFIER.match(self.s, self.i)
                if match is None:
                    raise _Invalid("expected a property name in double quotes", self.i)
                key = match.group()
                self.i = match.end()
            self.skip()
            if self.i >= self.n:
                self.note("truncated: dropped a dangling key")
                return result
            if self.s[self.i] != ":":
                raise _Invalid(f"expected ':' after the property name {key!r}", self.i if self.i > key_start else key_start)
            self.i += 1
            try:
                result[key] = self.parse_value()
            except _Incomplete:
                self.i = self.n
                self.note("truncated: dropped a dangling key")
                return result
            self.completed += 1
            self.skip()
            if self.i >= self.n:
                self.note("truncated: closed an unclosed object")
                return result
            c = self.s[self.i]
            if c == "}":
                self.i += 1
                return result
            if c != ",":
                raise _Invalid("expected ',' or '}' after an object member", self.i)
            self.i += 1
            self.skip()
            if self.i < self.n and self.s[self.i] == "}":
                self.note("removed a trailing comma")
            elif self.i >= self.n:
                self.note("truncated: dropped a trailing comma")

    def parse_array(self) -> list[Any]:
        result: list[Any] = []
        self.i += 1
        while True:
            self.skip()
            if self.i >= self.n:
                self.note("truncated: closed an unclosed array")
                return result
            if self.s[self.i] == "]":
                self.i += 1
                return result
            try:
                result.append(self.parse_value())
            except _Incomplete:
                self.i = self.n
                self.note("truncated: dropped an incomplete value")
                return result
            self.completed += 1
            self.skip()
            if self.i >= self.n:
                self.note("truncated: closed an unclosed array")
                return result
            c = self.s[self.i]
            if c == "]":
                self.i += 1
                return result
            if c != ",":
                raise _Invalid("expected ',' or ']' after an array element", self.i)
            self.i += 1
            self.skip()
            if self.i < self.n and self.s[self.i] == "]":
                self.note("removed a trailing comma")
            elif self.i >= self.n:
                self.note("truncated: dropped a trailing comma")

    def parse_string(self) -> str:
        s, n = self.s, self.n
        quote = s[self.i]
        if quote == "'":
            self.note("read a single-quoted string")
        special = re.compile(r"[\\" + quote + "]")
        self.i += 1
        self.string_closed = False
        parts: list[str] = []
        while True:
            match = special.search(s, self.i)
            if match is None:
                parts.append(s[self.i:])
                self.i = n
                self.note("truncated: closed an unterminated string")
                return "".join(parts)
            parts.append(s[self.i:match.start()])
            self.i = match.start()
            if s[self.i] == quote:
                self.i += 1
                self.string_closed = True
                return "".join(parts)
            # a backslash escape
            if self.i + 1 >= n:
                self.i = n
                self.note("truncated: closed an unterminated string")
                return "".join(parts)
            esc = s[self.i + 1]
            if esc == "u":
                char, self.i = self._unicode_escape(self.i)
                if char is None:
                    self.note("truncated: closed an unterminated string")
                    return "".join(parts)
                parts.append(char)
                continue
            parts.append(_ESCAPES.get(esc, "\\" + esc))  # an unknown escape such as \d stays as written
            self.i += 2

    def _unicode_escape(self, at: int) -> tuple[str | None, int]:
        """Decode \\uXXXX (and a following low surrogate); None when the text ends inside it."""
        s = self.s
        digits = s[at + 2:at + 6]
        if len(digits) < 4 and at + 2 + len(digits) >= self.n:
            return None, self.n
        try:
            code = int(digits, 16)
        except ValueError:
            raise _Invalid("invalid \\u escape", at) from None
        end = at + 6
        if 0xD800 <= code < 0xDC00 and s.startswith("\\u", end):
            try:
                low = int(s[end + 2:end + 6], 16)
            except ValueError:
                low = 0
            if 0xDC00 <= low < 0xE000:
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), end + 6
        return chr(code), end

    def parse_scalar(self) -> Any:
        s, start = self.s, self.i
        for word, value in _LITERALS.items():
            if s.startswith(word, start) and not _continues_word(s, start + len(word)):
                self.i = start + len(word)
                if word in ("True", "False", "None"):
                    self.note("read a Python literal")
                return value
        tail = _NUMBER_TAIL.match(s, start + (s[start] == "-"))
        if tail is not None and start + (s[start] == "-") + len(tail.group()) >= self.n:
            raise _Incomplete  # a number cut off at the end cannot be trusted ("12" of "1234")
        number = _NUMBER.match(s, start)
        if number is not None and not _continues_word(s, number.end()):
            text = number.group()
            self.i = number.end()
            if re.fullmatch(r"-?\d+", text):
                return int(text)
            return float(text)
        rest = s[start:start + 12]
        if any(word.startswith(rest) for word in _LITERALS) and start + len(rest) >= self.n:
            raise _Incomplete
        raise _Invalid("expected a value (string, number, object, array, true, false or null)", start)


def _continues_word(s: str, at: int) -> bool:
    return at < len(s) and (s[at].isalnum() or s[at] in "_.")
