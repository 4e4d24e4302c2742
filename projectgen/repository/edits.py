"""Apply a model's repair reply to a repository, in the two edit formats of the papers.

LiveRepoReflection (after aider) asks models for either *whole files* or *SEARCH/REPLACE
blocks*, and reports whether the reply was "well formed": it parsed into at least one
edit and every edit applied. Failures come back with reasons written for the model
(closest matching lines, ambiguous matches, unknown or forbidden files), so they can be
sent back as feedback instead of crashing the run.

Whole files: a code block per file, its path named by (in this order of precedence) the
fence info string (```` ```python path=pkg/x.py ````, or a path-looking word in it), a
``# path: pkg/x.py`` / ``# File: pkg/x.py`` first line (removed from the content), or the
last non-blank line before the fence (``pkg/x.py``, ``**pkg/x.py**``, ``File: pkg/x.py``).
Blocks without a path (shell snippets, examples) are ignored. Content always ends with a
newline.

SEARCH/REPLACE: ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` blocks (5-9 marker
characters, as aider accepts), or the same blocks with LiveRepoReflection's markers
``<<<<<<< ORIGINAL`` / ``=======`` / ``>>>>>>> UPDATED`` (its Figure 4 "patch" format), for the
file named by the last path line (or fence info, or ``# path:`` line) before them; several
blocks per file apply in order. Matching is by whole lines:

1. exact: the SEARCH lines equal consecutive lines of the file;
2. whitespace-tolerant, only when there is no exact match: trailing whitespace is
   ignored and a *uniform* indentation difference is allowed (every non-blank SEARCH line
   differs from the file by the same leading-whitespace prefix, added or removed); the
   REPLACE lines are then re-indented by the same prefix.

A match must be unique at the stage that finds it; two or more is "ambiguous". An empty
SEARCH creates a file that does not exist or fills one that is empty; on a file with
content it is an error (quote the lines to replace instead). Edits are applied one by
one, so a failed edit does not stop the others; the input repository is never modified.

Exactness. `EditOutcome.well_formed` says every edit applied, the whitespace-tolerant
stage included (what ProjectGen's code loop needs: the file changed as meant);
`EditOutcome.reindented` lists the blocks that needed it, and `EditOutcome.exact` is
LiveRepoReflection's Well Format: well formed with no tolerant match.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from projectgen.config import EditFormat
from projectgen.errors import ProjectGenError
from projectgen.repository import safe_relpath


class FileEdit(BaseModel):
    """A whole file's new content."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["whole"] = "whole"
    path: str
    content: str


class SearchReplaceBlock(BaseModel):
    """Replace the lines `search` with `replace` in `path` ("" when the reply named no file)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["search_replace"] = "search_replace"
    path: str
    search: str
    replace: str


Edit = Annotated[Union[FileEdit, SearchReplaceBlock], Field(discriminator="kind")]


class FailedEdit(BaseModel):
    """An edit that was not applied, with a reason worded for the model."""

    model_config = ConfigDict(frozen=True)

    edit: Edit | None = Field(default=None, description="None: part of the reply did not parse")
    reason: str

    @property
    def path(self) -> str:
        """The file the edit was meant for ("" when unknown)."""
        return self.edit.path if self.edit is not None else ""


class EditOutcome(BaseModel):
    """Result of applying a reply: the new repository and what did and did not apply."""

    format: EditFormat
    repo: dict[str, str]
    applied: list[Edit] = Field(default_factory=list)
    failed: list[FailedEdit] = Field(default_factory=list)
    well_formed: bool = Field(description=">=1 edit, and every edit applied (whitespace-tolerant matches included)")
    reindented: list[SearchReplaceBlock] = Field(
        default_factory=list, description="applied blocks whose SEARCH text matched only with whitespace tolerance")

    @property
    def exact(self) -> bool:
        """LiveRepoReflection's Well Format: well formed, and every block matched its file exactly."""
        return self.well_formed and not self.reindented

    @property
    def changed_paths(self) -> list[str]:
        """Paths touched by applied edits, in order, without repeats."""
        return list(dict.fromkeys(e.path for e in self.applied))

    def feedback(self) -> str:
        """Text telling the model what went wrong ("" when the reply was well formed)."""
        if self.well_formed:
            return ""
        if not self.applied and not self.failed:
            return "Your reply contained no edits in the expected format. " + _FORMAT_HINT[self.format]
        lines = [f"{len(self.failed)} of {len(self.failed) + len(self.applied)} edits could not be applied:"]
        for failure in self.failed:
            lines.append(f"- {failure.path or '(no file)'}: {failure.reason}")
        return "\n".join(lines)


_FORMAT_HINT: dict[str, str] = {
    "whole": "Give each changed file as its path on one line followed by a fenced code block "
    "holding the complete new file.",
    "search_replace": "Give the file path on one line, then a fenced block with "
    "<<<<<<< SEARCH, the exact current lines, =======, the new lines, >>>>>>> REPLACE.",
}

MARKERS: dict[str, tuple[str, str]] = {
    "search_replace": ("SEARCH", "REPLACE"),  # aider's words
    "original_updated": ("ORIGINAL", "UPDATED"),  # LiveRepoReflection's Figure 4
}
"""Marker words of a block's first and last line, by style; the parser accepts both."""

# --------------------------------------------------------------------------- reply scanning

_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*?)\s*$")
_SEARCH = re.compile(r"^<{5,9} ?(?:SEARCH|ORIGINAL)\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} ?(?:REPLACE|UPDATED)\s*$")
_MARKER_LINE = re.compile(r"^\s*(?:#|//)\s*(?:path|file|filename)\s*:\s*(?P<path>\S+)\s*$", re.I)
_INFO_KEY = re.compile(r"""^(?:path|file|filename|title)=["']?(?P<path>[^"']+)["']?$""", re.I)
_LABEL = re.compile(r"^(?:#+\s*|[-*]\s+)?(?:(?:file(?:name)?|path)\s*:\s*)?", re.I)
# Absolute, drive, home ("~/", "~user/") and ".." forms are accepted here on purpose: they must
# reach safe_relpath and fail as edits, not be silently ignored.
_PATH = re.compile(
    r"^(?:[A-Za-z]:|~[\w.\-]*)?[/\\]?(?:[\w.\-]+[/\\]+)*[\w.\-]*\w\.[A-Za-z0-9]+$"  # has an extension
    r"|^(?:[A-Za-z]:|~[\w.\-]*)?[/\\]?(?:[\w.\-]+[/\\]+)+[\w.\-]+$"  # or a folder part
)
_DECORATION = " \t*`'\":"


def _text_lines(text: str) -> list[str]:
    """Lines split on "\\n" only (form feeds stay inside lines), without "\\r", no final ""."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _join(lines: list[str]) -> str:
    """Lines back to text, newline-terminated ("" for no lines)."""
    return "".join(line + "\n" for line in lines)


def _as_path(line: str) -> str | None:
    """The path a prose line names (``pkg/x.py``, ``**File: pkg/x.py**``), else None."""
    text = line.strip().strip(_DECORATION)
    text = _LABEL.sub("", text, count=1).strip(_DECORATION)
    return text if text and _PATH.match(text) else None


def _path_from_info(info: str) -> str | None:
    """A path given in a fence info string: ``python path=pkg/x.py`` or ``pkg/x.py``."""
    for word in info.split():
        m = _INFO_KEY.match(word)
        if m:
            return m["path"]
        if _PATH.match(word):
            return word
    return None


def _closes(line: str, fence: str) -> bool:
    """Whether `line` closes a block opened by `fence` (same character, at least as long)."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]} and len(line) - len(line.lstrip()) <= 3


def _scan_whole_files(text: str) -> tuple[list[FileEdit], list[FailedEdit]]:
    """Whole-file edits in `text`, and the blocks that were recognisably broken."""
    lines = _text_lines(text)
    edits: list[FileEdit] = []
    problems: list[FailedEdit] = []
    named: str | None = None  # path on the last non-blank line outside a code block
    i = 0
    while i < len(lines):
        opened = _FENCE_OPEN.match(lines[i])
        if not opened:
            if lines[i].strip():
                named = _as_path(lines[i])
            i += 1
            continue
        fence = opened["fence"]
        end = i + 1
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        body = lines[i + 1 : end]
        path = _path_from_info(opened["info"])
        marker = _MARKER_LINE.match(body[0]) if body else None
        if marker:
            body = body[1:]
            path = path or marker["path"]
        path = path or named
        named = None
        if path is not None:
            edit = FileEdit(path=path, content=_join(body))
            if end >= len(lines):
                reason = "the code block is not closed (reply cut off?); file not written"
                problems.append(FailedEdit(edit=edit, reason=reason))
            elif any(_SEARCH.match(line) or _REPLACE.match(line) for line in body):
                reason = "the block holds SEARCH/REPLACE markers, but complete files were expected"
                problems.append(FailedEdit(edit=edit, reason=reason))
            else:
                edits.append(edit)
        i = end + 1
    return edits, problems


def _scan_search_replace(text: str) -> tuple[list[SearchReplaceBlock], list[FailedEdit]]:
    """SEARCH/REPLACE blocks in `text`, and the blocks that were recognisably broken."""
    lines = _text_lines(text)
    blocks: list[SearchReplaceBlock] = []
    problems: list[FailedEdit] = []
    path: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if _SEARCH.match(line):
            i = _read_block(lines, i, path or "", blocks, problems)
            continue
        opened = _FENCE_OPEN.match(line)
        if opened:
            path = _path_from_info(opened["info"]) or path
        elif line.strip():
            marker = _MARKER_LINE.match(line)
            path = (marker["path"] if marker else _as_path(line)) or path
        i += 1
    return blocks, problems


def _read_block(
    lines: list[str], start: int, path: str, blocks: list[SearchReplaceBlock], problems: list[FailedEdit]
) -> int:
    """Read the block whose SEARCH marker is at `start`; return the index to resume at."""
    body: list[str] = []
    where = f"block at reply line {start + 1}"
    i = start + 1
    while i < len(lines) and not _REPLACE.match(lines[i]):
        if _SEARCH.match(lines[i]):
            problems.append(_broken(path, f"{where} has no >>>>>>> REPLACE (or UPDATED) line before the next block"))
            return i
        body.append(lines[i])
        i += 1
    if i >= len(lines):
        problems.append(_broken(path, f"{where} is not closed with >>>>>>> REPLACE (or UPDATED; reply cut off?)"))
        return i
    dividers = [k for k, line in enumerate(body) if _DIVIDER.match(line)]
    exact = [k for k in dividers if body[k].rstrip() == "======="]
    if not dividers:
        problems.append(_broken(path, f"{where} has no ======= line between its two halves"))
        return i + 1
    split = exact[0] if len(exact) == 1 else dividers[0]
    search, replace = _join(body[:split]), _join(body[split + 1 :])
    blocks.append(SearchReplaceBlock(path=path, search=search, replace=replace))
    return i + 1


def _broken(path: str, reason: str) -> FailedEdit:
    """A parse problem, attached to a placeholder edit when the file is known."""
    edit = SearchReplaceBlock(path=path, search="", replace="") if path else None
    return FailedEdit(edit=edit, reason=reason)


def parse_whole_files(text: str) -> list[FileEdit]:
    """The complete files a reply gives (blocks without a path, or broken ones, are left out)."""
    return _scan_whole_files(text)[0]


def parse_search_replace(text: str) -> list[SearchReplaceBlock]:
    """The SEARCH/REPLACE blocks of a reply, in order (path "" when no file was named)."""
    return _scan_search_replace(text)[0]


# --------------------------------------------------------------------------- matching


def _find_exact(keys: list[str], search: list[str]) -> list[int]:
    """Start indexes where `search` equals consecutive lines of `keys`."""
    n = len(search)
    return [i for i in range(len(keys) - n + 1) if keys[i : i + n] == search]


def _indent_delta(file_lines: list[str], search_lines: list[str]) -> tuple[str, str] | None:
    """("+", P) if the file has P more indentation than SEARCH, ("-", P) if less, else None.

    Lines are compared without trailing whitespace; blank lines must face blank lines;
    every non-blank line must show the same difference.
    """
    delta: tuple[str, str] | None = None
    for have, want in zip(file_lines, search_lines):
        have, want = have.rstrip(), want.rstrip()
        if not have or not want:
            if have or want:
                return None
            continue
        if have.endswith(want) and not have[: len(have) - len(want)].strip():
            this = ("+", have[: len(have) - len(want)])
        elif want.endswith(have) and not want[: len(want) - len(have)].strip():
            this = ("-", want[: len(want) - len(have)])
        else:
            return None
        if delta is not None and this != delta:
            return None
        delta = this
    return delta or ("+", "")


def _find_tolerant(keys: list[str], search: list[str]) -> list[tuple[int, tuple[str, str]]]:
    """Start indexes (with the indentation difference) of whitespace-tolerant matches."""
    n = len(search)
    hits = []
    for i in range(len(keys) - n + 1):
        delta = _indent_delta(keys[i : i + n], search)
        if delta is not None:
            hits.append((i, delta))
    return hits


def _reindent(lines: list[str], delta: tuple[str, str]) -> list[str]:
    """Shift REPLACE lines by the indentation difference found while matching."""
    sign, prefix = delta
    if not prefix:
        return lines
    if sign == "+":
        return [prefix + line if line.strip() else line for line in lines]
    return [line[len(prefix) :] if line.startswith(prefix) else line.lstrip(" \t") for line in lines]


def _closest_hint(keys: list[str], search: list[str]) -> str:
    """The file lines most like SEARCH (difflib ratio), as a hint for the model."""
    n = max(1, len(search))
    wanted = "\n".join(search)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(wanted)
    best_ratio, best_at = 0.0, -1
    for i in range(max(1, len(keys) - n + 1)):
        matcher.set_seq1("\n".join(keys[i : i + n]))
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best_at = ratio, i
    if best_at < 0 or best_ratio < 0.5:
        return ""
    shown = keys[best_at : best_at + n]
    return (
        f" The most similar lines in the file (lines {best_at + 1}-{best_at + len(shown)}) are:\n"
        "```\n" + "\n".join(shown) + "\n```\nCopy SEARCH lines exactly from the current file."
    )


def _splice(content: str, start: int, count: int, new_lines: list[str]) -> str:
    """Replace `count` lines from `start` with `new_lines`, keeping the file's line endings."""
    old = content.split("\n")  # last item is "" when the file ends with a newline
    newline = "\r\n" if "\r\n" in content else "\n"
    kept_end = "\r" if newline == "\r\n" else ""
    replaced = [line + kept_end for line in new_lines]
    at_eof_without_newline = start + count == len(old) and old[-1] != ""
    if at_eof_without_newline and not replaced and start > 0:
        # Deleting the unterminated last line: the line before becomes the last one.
        return "\n".join(old[:start]).removesuffix(kept_end)
    merged = old[:start] + replaced + old[start + count :]
    if at_eof_without_newline and replaced:
        merged[start + len(replaced) - 1] = merged[start + len(replaced) - 1].removesuffix(kept_end)
    return "\n".join(merged)


def _replace_in(
    content: str, block: SearchReplaceBlock, repo: Mapping[str, str], path: str
) -> tuple[str | None, str, bool]:
    """Apply one block to `content`: (new content, "", whether it needed whitespace tolerance) or
    (None, reason, False)."""
    keys = _text_lines(content)
    search, replace = _text_lines(block.search), _text_lines(block.replace)
    exact = _find_exact(keys, search)
    if len(exact) == 1:
        return _splice(content, exact[0], len(search), replace), "", False
    if not exact:
        tolerant = _find_tolerant(keys, search)
        if len(tolerant) == 1:
            start, delta = tolerant[0]
            return _splice(content, start, len(search), _reindent(replace, delta)), "", True
        if not tolerant:
            elsewhere = sorted(
                p for p, text in repo.items() if p != path and _find_exact(_text_lines(text), search)
            )
            also = f" It does match {', '.join(elsewhere[:3])}: wrong file?" if elsewhere else ""
            return None, f"SEARCH text not found in {path}.{also}{_closest_hint(keys, search)}", False
        exact = [start for start, _ in tolerant]
    places = ", ".join(str(i + 1) for i in exact[:10])
    return None, (
        f"SEARCH text is ambiguous: it matches {len(exact)} places in {path} (starting at lines "
        f"{places}); include more surrounding lines so that it matches exactly one place."
    ), False


# --------------------------------------------------------------------------- applying


def _check_path(path: str, allowed: set[str] | None) -> tuple[str, str]:
    """(normalized path, "") or ("", reason the edit may not touch this path)."""
    if not path.strip():
        return "", "no file path given; put the file's path on its own line before the code block"
    try:
        rel = safe_relpath(path)
    except ProjectGenError:
        return "", f"path {path!r} is outside the repository; use a relative path inside it"
    if allowed is not None and rel not in allowed:
        listed = ", ".join(sorted(allowed)[:10]) + (", ..." if len(allowed) > 10 else "")
        return "", f"{rel} is not one of the files you may edit ({listed or 'none'})"
    return rel, ""


def _apply_block(repo: dict[str, str], block: SearchReplaceBlock, rel: str) -> tuple[str, bool]:
    """Apply a SEARCH/REPLACE block in place; return ("" or the reason it failed, whether the match
    needed whitespace tolerance)."""
    current = repo.get(rel)
    if not block.search.strip():
        if current is None or not current.strip():
            repo[rel] = block.replace
            return "", False
        return f"the SEARCH section is empty but {rel} already has content; quote the lines to replace", False
    if current is None:
        return f"unknown file {rel}: it does not exist (to create it, use an empty SEARCH section)", False
    updated, reason, tolerant = _replace_in(current, block, repo, rel)
    if updated is None:
        return reason, False
    repo[rel] = updated
    return "", tolerant


def apply_edits(
    repo: Mapping[str, str],
    reply: str,
    fmt: EditFormat,
    allowed_paths: Iterable[str] | None = None,
) -> EditOutcome:
    """Parse `reply` in format `fmt` and apply its edits to a copy of `repo`.

    Every edit is tried; unsafe paths, files outside `allowed_paths` and unmatched or
    ambiguous SEARCH text become `failed` entries, never writes.
    """
    new_repo = dict(repo)
    allowed = None if allowed_paths is None else {safe_relpath(p) for p in allowed_paths}
    edits: list[FileEdit] | list[SearchReplaceBlock]
    if fmt == "whole":
        edits, failed = _scan_whole_files(reply)
    elif fmt == "search_replace":
        edits, failed = _scan_search_replace(reply)
    else:
        raise ValueError(f"unknown edit format {fmt!r}; expected 'whole' or 'search_replace'")
    applied: list[FileEdit | SearchReplaceBlock] = []
    reindented: list[SearchReplaceBlock] = []
    for edit in edits:
        rel, reason = _check_path(edit.path, allowed)
        tolerant = False
        if not reason:
            if isinstance(edit, FileEdit):
                new_repo[rel] = edit.content
            else:
                reason, tolerant = _apply_block(new_repo, edit, rel)
        if reason:
            failed.append(FailedEdit(edit=edit, reason=reason))
        else:
            applied.append(edit.model_copy(update={"path": rel}))
            if tolerant:
                reindented.append(applied[-1])  # type: ignore[arg-type]  # only blocks match tolerantly
    return EditOutcome(
        format=fmt,
        repo=new_repo,
        applied=applied,
        failed=failed,
        well_formed=bool(edits) and not failed,
        reindented=reindented,
    )


# --------------------------------------------------------------------------- writing replies


def _named_fence(path: str, fence: str, lang: str) -> str:
    """Path line and opening fence; names the path in the info string too when it is
    not one the path-line heuristic recognises (``Makefile``)."""
    info = lang if _as_path(path) == path else f"{lang} path={path}".strip()
    return f"{path}\n{fence}{info}\n"


def _language(path: str) -> str:
    """Fence language tag for a path."""
    return "python" if path.endswith(".py") else ""


def make_whole_file_reply(paths: Iterable[str], repo: Mapping[str, str]) -> str:
    """A whole-file reply giving `paths` with their content in `repo`.

    The fence is made longer than any backtick run starting a line of the file, so files
    holding Markdown fences survive the round trip.
    """
    parts = []
    for path in paths:
        if path not in repo:
            raise ValueError(f"{path} is not in the repository")
        fence, body = fenced_body(repo[path])
        parts.append(f"{_named_fence(path, fence, _language(path))}{body}{fence}\n")
    return "\n".join(parts)


def fenced_python(code: str) -> str:
    """A file as a model answers it and is shown it: one python block that the reply parser reads back
    whole (a file without a final newline, or holding Markdown fences, keeps its own text)."""
    return fenced_code(code, "python")


def fenced_code(code: str, language: str) -> str:
    """`fenced_python` in any language: one block tagged with the language (``java``), read back whole."""
    fence, body = fenced_body(code)
    return f"{fence}{language}\n{body}{fence}\n"


def fenced_text(content: str) -> str:
    """A file that is not Python as a model answers it: one untagged block the reply parser reads back whole."""
    fence, body = fenced_body(content)
    return f"{fence}\n{body}{fence}\n"


def fenced_body(content: str) -> tuple[str, str]:
    """The fence and body that put `content` in a fenced block read back whole: the fence longer
    than any backtick run starting a line of the file (files holding Markdown fences survive the
    round trip), the body ending with a newline so the closing fence stands on its own line."""
    longest = max((len(m.group(1)) for m in re.finditer(r"(?m)^ {0,3}(`{3,})", content)), default=0)
    body = content if not content or content.endswith("\n") else content + "\n"
    return "`" * max(3, longest + 1), body


def _hunk_blocks(before: str, after: str, context: int) -> list[tuple[list[str], list[str]]]:
    """(SEARCH lines, REPLACE lines) per changed hunk, each SEARCH unique when applied in order."""
    cur, target = _text_lines(before), _text_lines(after)
    opcodes = difflib.SequenceMatcher(None, cur, target, autojunk=False).get_opcodes()
    blocks = []
    offset = 0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        start, end = i1 + offset, i2 + offset
        grow = context
        while True:
            lo, hi = max(0, start - grow), min(len(cur), end + grow)
            search = cur[lo:hi]
            if (lo == 0 and hi == len(cur)) or (
                any(line.strip() for line in search) and len(_find_exact(cur, search)) == 1
            ):
                break
            grow += 1
        replace = cur[lo:start] + target[j1:j2] + cur[end:hi]
        blocks.append((search, replace))
        cur = cur[:lo] + replace + cur[hi:]
        offset += (j2 - j1) - (i2 - i1)
    return blocks


def make_search_replace_reply(
    old_repo: Mapping[str, str], new_repo: Mapping[str, str], *, context: int = 1, markers: str = "search_replace"
) -> str:
    """A minimal SEARCH/REPLACE reply turning `old_repo` into `new_repo`.

    One block per changed hunk with `context` lines either side, grown until the SEARCH
    text is unique in the file at the moment it applies; new files get an empty SEARCH.
    `markers` picks the block words (`MARKERS`: SEARCH/REPLACE, or ORIGINAL/UPDATED).
    The result is checked by applying it: changes the format cannot express (deleting a
    file, adding or removing only a final newline, lines that look like block markers)
    raise ValueError.
    """
    sections = []
    for path in sorted(set(old_repo) | set(new_repo)):
        if path not in new_repo:
            raise ValueError(f"{path}: a SEARCH/REPLACE reply cannot delete a file")
        before, after = old_repo.get(path), new_repo[path]
        if before == after:
            continue
        if before is None or not before.strip():
            blocks = [([], _text_lines(after))]
        else:
            blocks = _hunk_blocks(before, after, context)
        first, last = MARKERS[markers]
        text = "".join(
            f"<<<<<<< {first}\n{_join(search)}=======\n{_join(replace)}>>>>>>> {last}\n"
            for search, replace in blocks
        )
        sections.append(f"{_named_fence(path, '```', _language(path))}{text}```\n")
    reply = "\n".join(sections)
    outcome = apply_edits(old_repo, reply, "search_replace")
    if outcome.repo != dict(new_repo) or outcome.reindented:
        wrong = sorted(p for p in new_repo if outcome.repo.get(p) != new_repo[p])
        raise ValueError(f"cannot express the change to {', '.join(wrong)} as SEARCH/REPLACE blocks")
    return reply
