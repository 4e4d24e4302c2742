"""Twin tests for Go, Rust, JavaScript, Java and C++: a copy of a real test with one expected literal of
its last assertion changed, so it must fail (what `evaluation/twins.py` does for Python with `ast`).

The assertion's expected side is found on the lexer's mask (`source_scan`): Rust's `assert_eq!` /
`assert!(a == b)`, jest's `expect(…).toBe/toEqual/toStrictEqual/toContain/toThrow(…)` (never after
`.not`), JUnit's `assertEquals` and AssertJ's `assertThat(…).isEqualTo/containsExactly/…(…)`,
Catch2's `REQUIRE/CHECK(a == b)`, and Go's `if a != b { t.Error… }`. Of two sides the one that is
pure data (literals, constructors, types: no call of the code under test) is the expected one; a
variable is followed to its `let` / `const` / `:=` / declaration in the test. Its last string or
number literal is changed as Python's twins are: letters put into a string, a number moved by
hundreds (never a boolean: wrong but honest code gives the other one half the time). A table-driven
Go test (`for _, tc := range cases { … }`, the cases in the test or in a package-level `var`) gets
twins each running one case of the table with that case's compared field changed, so a twin has
exactly one (failing) result.

Whether a twin really fails on the reference is measured by the runner and cached with the expected
tests, as for Python; planting one into a test file is `planting`.
"""
from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping

from projectgen.evaluation.languages.declared_tests import DeclaredTest, declared_tests
from projectgen.evaluation.languages.source_scan import Literal, Scanned, closing, scan, split_top
from projectgen.evaluation.languages.toolchains import CPP, GO, JAVA, JAVASCRIPT, RUST
from projectgen.evaluation.twins import LETTERS, Twin

# Booleans are never changed (as in Python's twins): wrong but honest code gives the other one half the time, and
# would then pass the twin and be marked tampered.
MUTABLE = frozenset({"string", "number"})
GO_CASES = 6  # twins of one table-driven Go test at most (each runs one case)
# words a pure expected value may call or name besides types and literals (constructors, conversions)
PURE_WORDS = frozenset({
    "vec", "from", "into", "to_string", "to_owned", "to_vec", "new", "of", "asList", "collect", "iter", "into_iter",
    "cloned", "copied", "from_iter", "as_str", "as_slice", "chars", "bytes", "map", "string", "vector", "pair",
    "tuple", "make_pair", "make_tuple", "std", "int", "long", "short", "unsigned", "signed", "char", "double",
    "float", "bool", "size_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t",
    "int64_t", "set", "unordered_map", "unordered_set", "list", "array", "optional", "nullopt", "nullptr", "null",
    "None", "nil", "undefined", "as", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f32", "f64", "str", "mut", "byte", "rune", "int8", "int16", "int32", "int64", "uint",
    "uint8", "uint16", "uint32", "uint64", "float32", "float64", "struct", "interface", "any", "true", "false",
    "_", "valueOf", "asList", "emptyList", "singletonList", "entry", "ofEntries", "copyOf", "unwrap", "unwrap_or",
    "sort", "sorted", "join", "split", "trim", "s", "sv", "Infinity", "NaN", "NEGATIVE_INFINITY",
})
GO_FAILS = re.compile(r"\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b")
JEST_MATCHERS = ("toBe", "toEqual", "toStrictEqual", "toContain", "toContainEqual", "toThrow", "toThrowError",
                 "toMatchObject", "toHaveLength", "toBeCloseTo")
ASSERTJ_MATCHERS = ("isEqualTo", "containsExactly", "containsExactlyInAnyOrder", "hasSize", "isEqualToIgnoringCase",
                    "containsOnly", "hasMessage", "isEqualByComparingTo", "hasValue", "contains")
CALL = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:!\s*)?(?=[(\[])")
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def derive_twins(language: str, module: str, text: str, passing: Callable[[str], bool],
                 package: Mapping[str, str] | None = None) -> list[Twin]:
    """A twin of each test of `module` (`text`, every test switched on) that `passing(name)` says the reference
    passes and whose last assertion has an expected literal; `package`: the other test files compiled with it
    (where a Go test's table may be)."""
    scanned = scan(text, language)
    twins = []
    for definition in declared_tests(scanned, language):
        if passing(definition.name):
            twins += [Twin(module=module, original=definition.name, source=source, last_statement=last)
                      for source, last in twin_sources(language, scanned, definition, package or {})]
    return twins


def twin_sources(language: str, scanned: Scanned, definition: DeclaredTest,
                 package: Mapping[str, str]) -> list[tuple[str, bool]]:
    """The definition's text (from its line's start, still named like the original) with its last assertion's
    expected literal changed, and whether that assertion ends the body; none when it has no such literal. A
    table-driven Go test gives one per case (`GO_CASES` at most)."""
    if language == GO:
        return _go_twins(scanned, definition, package)
    sites = list(_sites(language, scanned, definition))
    literal = _last_mutable(scanned, sites[-1][0]) if sites else None  # the last assertion only: the twin
    if literal is None:  # runs as far as the real test does
        return []
    changed = _changed(scanned, [(literal, _other_literal(scanned.text, literal))], definition.start, definition.end)
    if language == JAVA:  # JUnit reports a display name instead of the method's: the twin's must be its own
        changed = re.sub(r"^[ \t]*@DisplayName\(.*\)[ \t]*\n", "", changed, flags=re.M)
    return [(changed, _ends_body(scanned, sites[-1][1], definition))]


def _changed(scanned: Scanned, edits: list[tuple[Literal, str]], start: int, end: int) -> str:
    text = scanned.text
    out, at = [], start
    for literal, replacement in sorted(edits, key=lambda edit: edit[0].start):
        out += [text[at:literal.start], replacement]
        at = literal.end
    out.append(text[at:end])
    return "".join(out)


def _ends_body(scanned: Scanned, at: int, definition: DeclaredTest) -> bool:
    return not scanned.mask[at:definition.body_end].strip(" \t\n;)}")


# --------------------------------------------------------------------------- assertions and their expected side


def _sites(language: str, scanned: Scanned, definition: DeclaredTest) -> list[tuple[tuple[int, int], int]]:
    """(expected side's span, the assertion's end) of each assertion of the body, in source order."""
    mask, start, end = scanned.mask, definition.body_start, definition.body_end
    sites = []
    if language == RUST:
        for match in re.finditer(r"\bassert(_eq)?!\s*\(", mask[start:end]):
            paren = start + match.end() - 1
            close = closing(mask, paren)
            separator = "," if match.group(1) else "=="
            parts = split_top(mask, paren + 1, close, separator)
            if len(parts) >= 2 and (match.group(1) or len(parts) == 2):
                side = _expected_side(scanned, definition, parts[:2], prefer=1)
                sites.append((side, close))
    elif language == CPP:
        for match in re.finditer(r"\b(?:REQUIRE|CHECK)\s*\(", mask[start:end]):
            paren = start + match.end() - 1
            close = closing(mask, paren)
            parts = split_top(mask, paren + 1, close, "==")
            if len(parts) == 2:
                sites.append((_expected_side(scanned, definition, parts, prefer=1), close))
    elif language == JAVA:
        for match in re.finditer(r"\b(?:assertEquals|assertArrayEquals|assertIterableEquals)\s*\(", mask[start:end]):
            paren = start + match.end() - 1
            close = closing(mask, paren)
            parts = split_top(mask, paren + 1, close)
            if len(parts) >= 2:
                sites.append((_expected_side(scanned, definition, parts[:2], prefer=0), close))
        for match in re.finditer(r"\.(?:%s)\s*\(" % "|".join(ASSERTJ_MATCHERS), mask[start:end]):
            chain = mask[:start + match.start()]
            if chain.rfind("assertThat") < chain.rfind(";") or ".not" in chain[chain.rfind("assertThat"):]:
                continue
            sites.append(_call_arguments(scanned, definition, start + match.end() - 1))
    elif language == JAVASCRIPT:
        for match in re.finditer(r"\.(?:%s)\s*\(" % "|".join(JEST_MATCHERS), mask[start:end]):
            chain = mask[:start + match.start()]
            if ".not" in chain[chain.rfind("expect"):]:
                continue
            sites.append(_call_arguments(scanned, definition, start + match.end() - 1))
    sites.sort(key=lambda site: site[1])
    return [site for site in sites if site[0][0] < site[0][1]]


def _call_arguments(scanned: Scanned, definition: DeclaredTest, paren: int) -> tuple[tuple[int, int], int]:
    """A matcher's arguments as the expected side (a single variable followed to its value)."""
    close = closing(scanned.mask, paren)
    parts = split_top(scanned.mask, paren + 1, close)
    if len(parts) == 1:
        return _resolved(scanned, definition, parts[0]), close
    if not parts or not all(_pure(scanned, part) for part in parts):
        return (0, 0), close
    return (parts[0][0], parts[-1][1]), close


def _expected_side(scanned: Scanned, definition: DeclaredTest, parts: list[tuple[int, int]],
                   prefer: int) -> tuple[int, int]:
    """Of two compared sides, the pure one that holds a literal (`prefer` when both are); (0, 0) when none is."""
    sides = [_resolved(scanned, definition, part) for part in parts[:2]]
    pure = [side for side in sides if _pure(scanned, side) and _last_mutable(scanned, side) is not None]
    if not pure:
        return 0, 0
    return sides[prefer] if sides[prefer] in pure else pure[0]


def _resolved(scanned: Scanned, definition: DeclaredTest, side: tuple[int, int]) -> tuple[int, int]:
    """`side`, or when it is one variable (`&expected`, `expected`), the value it was last given in the test before;
    `side` itself when the variable is also used in between (``value`` put into the store, then compared with what
    comes back): changing its value changes the input too, so the copy would not be a wrong expectation."""
    name = scanned.mask[side[0]:side[1]].strip().lstrip("&*").strip()
    if not IDENTIFIER.fullmatch(name) or name in ("true", "false"):
        return side
    region = scanned.mask[definition.body_start:side[0]]
    found = None
    for match in re.finditer(r"(?<![\w$.])%s\s*(?::[^=;\n]+)?(?::=|=)(?!=)" % re.escape(name), region):
        found = match
    if found is None:
        return side
    begin = definition.body_start + found.end()
    end = _expression_end(scanned.mask, begin, definition.body_end)
    if re.search(r"(?<![\w$.])%s(?![\w$])" % re.escape(name), scanned.mask[end:side[0]]):
        return side
    return begin, end


def _expression_end(mask: str, start: int, limit: int) -> int:
    """Where the expression starting at `start` ends: a `;` or a line end outside brackets."""
    depth = 0
    for i in range(start, limit):
        c = mask[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and c == ";":
            return i
        elif depth == 0 and c == "\n" and mask[start:i].strip() and mask[start:i].rstrip()[-1] not in ",+-*/=|&.(":
            return i
    return limit


def _pure(scanned: Scanned, side: tuple[int, int]) -> bool:
    """Whether an expression is data only: literals, types and constructors, no call of the code under test or
    other variable."""
    mask = scanned.mask[side[0]:side[1]]
    if not mask.strip():
        return False
    for match in IDENTIFIER.finditer(mask):
        word = match.group()
        before, after = mask[:match.start()].rstrip(), mask[match.end():].lstrip()
        if word[0].isupper() or word in PURE_WORDS or before.endswith("::") or after.startswith("::"):
            continue
        if after.startswith(":") and before[-1:] in ("{", ","):  # a field's name in a struct or object literal
            continue
        if before.endswith(".") and word in PURE_WORDS:
            continue
        if re.fullmatch(r"\d\w*", word) or _inside_number(scanned, side[0] + match.start()):
            continue
        return False
    return True


def _inside_number(scanned: Scanned, at: int) -> bool:
    return any(literal.start <= at < literal.end for literal in scanned.literals if literal.kind == "number")


def _last_mutable(scanned: Scanned, side: tuple[int, int]) -> Literal | None:
    found = [literal for literal in scanned.literals_in(*side) if literal.kind in MUTABLE
             and _mutable_number(scanned.text, literal)]
    return found[-1] if found else None


def _mutable_number(text: str, literal: Literal) -> bool:
    return literal.kind != "number" or re.fullmatch(r"[\d_]+(?:\.[\d_]*)?(?:[eE][+-]?\d+)?[a-zA-Z]*",
                                                    text[literal.start:literal.end]) is not None


# --------------------------------------------------------------------------- new values


def _other_literal(text: str, literal: Literal) -> str:
    """A literal of the same kind that no honest answer equals: letters put into a string (at its start, clear
    of escapes), a number moved by 100 or more (`_other_integer`; its suffix kept)."""
    written = text[literal.start:literal.end]
    if literal.kind == "string":
        added = "".join(secrets.choice(LETTERS) for _ in range(2 + secrets.randbelow(3)))
        return text[literal.start:literal.inner] + added + text[literal.inner:literal.end]
    found = re.fullmatch(r"([\d_]+)(\.[\d_]*)?([eE][+-]?\d+)?([a-zA-Z]*)", written)
    assert found is not None
    digits, fraction, exponent, suffix = found.groups()
    step = secrets.randbelow(900) + 100
    if fraction is None and exponent is None and suffix.lower() not in ("f", "d", "f32", "f64"):
        return f"{_other_integer(int(digits.replace('_', '')))}{suffix}"
    value = float(written[:len(written) - len(suffix)].replace("_", "")) + step + 0.5
    return f"{value!r}{suffix}"


def _other_integer(value: int) -> int:
    """An integer 100 or more away from `value`, within a byte when `value` is (a `u8` field or argument would not
    compile with a larger one, and one twin that does not build fails every test of its file)."""
    if value <= 155:
        return value + 100 + secrets.randbelow(256 - value - 100)
    if value <= 255:
        return value - 100 - secrets.randbelow(value - 100 + 1)
    return value + 100 + secrets.randbelow(900)


# --------------------------------------------------------------------------- Go


def _go_twins(scanned: Scanned, definition: DeclaredTest, package: Mapping[str, str]) -> list[tuple[str, bool]]:
    """Go: a table-driven test (`for _, tc := range table`) whose body compares a field of `tc` (with `!=`,
    `==` or `reflect.DeepEqual`) gets one-case twins of the table, the field changed; another test the last
    `if a != b { t.Error… }` of its body with a literal side changed."""
    mask, text = scanned.mask, scanned.text
    body = mask[definition.body_start:definition.body_end]
    for ranged in re.finditer(r"for\s+(?:\w+\s*,\s*)?(\w+)\s*:=\s*range\s+\w+\s*\{", body):
        for field in _compared_fields(body, ranged.group(1)):
            made = _go_table_twins(scanned, definition, ranged.group(1), field, package)
            if made:
                return [(source, False) for source in made]
    sites = []
    for match in re.finditer(r"(?<![\w.])if\s", body):
        at = definition.body_start + match.end()
        brace = _if_block(mask, at, definition.body_end)
        if brace < 0:
            continue
        block_end = closing(mask, brace)
        if not GO_FAILS.search(mask[brace:block_end]):
            continue
        condition = split_top(mask, at, brace, ";")[-1:]
        for either in (split_top(mask, *condition[0], "||") if condition else []):
            for part in split_top(mask, *either, "&&"):
                sides = split_top(mask, *part, "!=")
                if len(sides) == 2:
                    sites.append((sides, block_end))
    if not sites:
        return []
    sides, block_end = sites[-1]
    side = _expected_side(scanned, definition, sides, prefer=1)
    literal = _last_mutable(scanned, side) if side != (0, 0) else None
    if literal is None:
        return []
    return [(_changed(scanned, [(literal, _other_literal(text, literal))], definition.start, definition.end),
             _ends_body(scanned, block_end + 1, definition))]


def _compared_fields(body: str, variable: str) -> list[str]:
    """The fields of `variable` the body compares, last compared first (error flags last: a case that expects
    an error usually does not compare the value)."""
    name = re.escape(variable)
    patterns = [rf"(?:!=|==)\s*{name}\.(\w+)\b(?!\s*[.(\[])", rf"(?<![\w.]){name}\.(\w+)\s*(?:!=|==)",
                rf"(?:!\s*[\w.]+|DeepEqual)\([^()]*?(?<![\w.]){name}\.(\w+)\b(?!\s*[.(\[])"]
    found = sorted((match.start(1), match.group(1)) for pattern in patterns for match in re.finditer(pattern, body))
    fields = list(dict.fromkeys(field for _, field in reversed(found)))
    return sorted(fields, key=lambda field: bool(re.search(r"(?i)err", field)))


def _if_block(mask: str, at: int, limit: int) -> int:
    """The `{` opening an `if`'s block: the first `{` outside brackets after the condition (Go wants a
    composite literal in a condition parenthesized)."""
    depth = 0
    for i in range(at, limit):
        c = mask[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "{" and depth == 0:
            return i
    return -1


def _go_table_twins(scanned: Scanned, definition: DeclaredTest, variable: str, field: str,
                    package: Mapping[str, str]) -> list[str]:
    """The test running one case of its table, the case's `field` changed, for a few of its cases: the table is
    redeclared at the body's start (a package-level one, shadowed) or cut down where it is declared (a local
    one)."""
    body = scanned.mask[definition.body_start:definition.body_end]
    ranged = re.search(r"for\s+(?:\w+\s*,\s*)?%s\s*:=\s*range\s+(\w+)\s*\{" % re.escape(variable), body)
    if not ranged:
        return []
    table = ranged.group(1)
    local = re.search(r"(?<![\w.])%s\s*(?::=|=)\s*" % re.escape(table), body[:ranged.start()])
    if local:
        found = _table(scanned, definition.body_start + local.end(), field, package)
        if found is None:
            return []
        list_open, list_close, cases, _type = found
        return [scanned.text[definition.start:list_open + 1] + "\n\t\t"
                + _changed(scanned, [edit], element[0], element[1]) + ",\n\t"
                + scanned.text[list_close:definition.end] for element, edit in cases]
    for source in [scanned.text, *package.values()]:  # a package-level table: in this file or another
        other = scan(source, GO)
        declared = re.search(r"^var\s+%s\s*=\s*" % re.escape(table), other.mask, re.M)
        if not declared:
            continue
        found = _table(other, declared.end(), field, package)
        if found is None:
            return []
        _open, _close, cases, type_span = found
        head = scanned.text[definition.start:definition.body_start]
        rest = scanned.text[definition.body_start:definition.end]
        kind = other.text[type_span[0]:type_span[1]]
        return [f"{head}\n\t{table} := {kind}{{\n\t\t{_changed(other, [edit], element[0], element[1])},\n\t}}{rest}"
                for element, edit in cases]
    return []


def _table(scanned: Scanned, at: int, field: str, package: Mapping[str, str]
           ) -> tuple[int, int, list[tuple[tuple[int, int], tuple[Literal, str]]], tuple[int, int]] | None:
    """The composite literal of a table at `at`: (its `{`, its `}`, up to GO_CASES of its cases with a pure
    literal in `field` (each case's span and the edit to it), the type's span); None when no case has one."""
    mask = scanned.mask
    type_start = at
    struct = re.match(r"\[\]\s*struct\s*\{", mask[at:])
    if struct:
        struct_open = at + struct.end() - 1
        type_end = closing(mask, struct_open) + 1
        fields = _struct_fields(mask[struct_open + 1:type_end - 1])
    else:
        named = re.match(r"\[\]\s*(\w+)\s*", mask[at:])
        if not named:
            return None
        type_end = at + len(named.group(0).rstrip())
        fields = _named_struct_fields(named.group(1), scanned, package)
    list_open = mask.find("{", type_end)
    if list_open < 0 or mask[type_end:list_open].strip():
        return None
    list_close = closing(mask, list_open)
    candidates = []
    for element in split_top(mask, list_open + 1, list_close):
        brace = mask.find("{", element[0], element[1])
        if brace < 0 or not re.fullmatch(r"(?:&?\w+(?:\.\w+)?)?", mask[element[0]:brace].strip()):
            continue
        value = _field_value(mask, (brace + 1, closing(mask, brace)), field, fields)
        if value is None or not _pure(scanned, value):
            continue
        literal = _last_mutable(scanned, value)
        if literal is not None:
            candidates.append((element, (literal, _other_literal(scanned.text, literal))))
    if not candidates:
        return None
    chosen = secrets.SystemRandom().sample(candidates, min(GO_CASES, len(candidates)))
    return list_open, list_close, sorted(chosen, key=lambda case: case[0][0]), (type_start, type_end)


def _field_value(mask: str, inner: tuple[int, int], field: str, fields: list[str]) -> tuple[int, int] | None:
    parts = split_top(mask, *inner)
    keyed = [re.match(r"(\w+)\s*:(?!=)\s*", mask[start:end]) for start, end in parts]
    if parts and all(keyed):
        for (start, end), key in zip(parts, keyed):
            if key is not None and key.group(1) == field:
                return start + key.end(), end
        return None
    if field in fields and len(parts) == len(fields):
        return parts[fields.index(field)]
    return None


def _struct_fields(body: str) -> list[str]:
    names = []
    for line in re.split(r"[\n;]", body):
        declared = re.match(r"\s*(\w+(?:\s*,\s*\w+)*)\s+\S", line)
        if declared:
            names += [name.strip() for name in declared.group(1).split(",")]
    return names


def _named_struct_fields(name: str, scanned: Scanned, package: Mapping[str, str]) -> list[str]:
    for mask in [scanned.mask, *(scan(text, GO).mask for text in package.values())]:
        declared = re.search(r"^type\s+%s\s+struct\s*\{" % re.escape(name), mask, re.M)
        if declared:
            return _struct_fields(mask[declared.end():closing(mask, declared.end() - 1)])
    return []


def suite_twins(language: str, sources: Mapping[str, str], passing: Callable[[str, str], bool],
                package: Mapping[str, str] | None = None) -> list[Twin]:
    """The twins of every test file of a suite (`sources`: file -> text as it runs); `passing(file, name)`: the
    reference passes that test; `package`: other files compiled with them (a Go test's table may be in one)."""
    twins = []
    for module, text in sources.items():
        others = {rel: other for rel, other in {**sources, **(package or {})}.items() if rel != module}
        twins += derive_twins(language, module, text, lambda name, module=module: passing(module, name), others)
    return twins
