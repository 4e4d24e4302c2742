"""Per-stage revision memory, as in ProjectGen (Zhao et al., 2025).

Each stage (architecture, skeleton, code) remembers its revisions: what the judge said
and what the generator changed in answer. Before the next revision the generator gets a
few entries back (`gamma`, 2 by default in the paper), chosen by BM25 over the judge's
feedback and the diff, so a long history does not flood the prompt while the revisions
that dealt with the same problem are still seen. Judges use no memory. With distilled
memory (the paper's) an entry also holds a short summary of feedback and diff, written by
one model call per revision (`projectgen.agents.summarizer`): BM25 then ranks the summaries,
and the prompt shows them in place of the raw texts.

`StageMemory` is an immutable-style Pydantic model (``add`` returns a new memory), so it
can sit in LangGraph state, be checkpointed and be resumed in another process.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

StageName = Literal["architecture", "skeleton", "code"]

# Words that appear in almost every feedback text or diff and so only add noise to BM25.
STOPWORDS = frozenset(
    """
    a an and are as at be been but by can could did do does for from had has have if in
    into is it its may might must no not of on or should so such than that the their them
    then there these they this those to was were will with would you your we our i me my
    self cls none true false def return pass
    """.split()
)

# Smallest idf a word gets, so that a shared word never scores 0 or less (see _bm25_scores).
_IDF_FLOOR = 0.01

_WORD = re.compile(r"[A-Za-z0-9_]+")
# Boundaries inside an identifier: lower->Upper ("getValue"), ACRONYMWord ("HTTPServer"),
# letter<->digit ("utf8").
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens for BM25; identifiers also yield their parts.

    ``parse_config`` gives ``parse_config, parse, config`` and ``HTTPServer`` gives
    ``httpserver, http, server``: the whole identifier rewards an exact match, the parts
    let feedback written in prose ("the config parser") still find the revision.
    Stopwords and one-character tokens are dropped.
    """
    tokens: list[str] = []
    for word in _WORD.findall(text):
        parts = [p.lower() for chunk in word.split("_") for p in _CAMEL.findall(chunk)]
        whole = word.strip("_").lower()
        candidates = [whole] if parts == [whole] else [whole, *parts]
        tokens.extend(t for t in candidates if len(t) > 1 and t not in STOPWORDS)
    return tokens


class MemoryEntry(BaseModel):
    """One revision of a stage: the judge's feedback and the change made in answer.

    `diff` is whatever the caller found most telling: a DeepDiff summary for the SSAT and
    skeleton stages, a unified diff for code. `passed_before`/`passed_after` are the
    code judge's test pass counts around a code revision, so revisions that made things worse
    can be left out of the prompt.
    """

    model_config = ConfigDict(frozen=True)

    stage: StageName
    iteration: int = Field(ge=1, description="1-based revision number within the stage")
    target: str | None = Field(default=None, description="file path (code stage) or None")
    feedback: str = ""
    diff: str = ""
    passed_before: int | None = Field(default=None, ge=0)
    passed_after: int | None = Field(default=None, ge=0)
    summary: str = Field(default="", description="the distilled summary of feedback and diff (empty: raw memory)")

    @property
    def is_regression(self) -> bool:
        """True when the revision lowered the test pass count."""
        if self.passed_before is None or self.passed_after is None:
            return False
        return self.passed_after < self.passed_before

    def search_text(self) -> str:
        """The text BM25 indexes: the summary of a distilled entry, else feedback and diff."""
        return self.summary or f"{self.feedback}\n{self.diff}"


class StageMemory(BaseModel):
    """The ordered revisions of one stage; immutable style, so graph state stays clean."""

    model_config = ConfigDict(frozen=True)

    entries: list[MemoryEntry] = Field(default_factory=list)

    def add(self, entry: MemoryEntry) -> StageMemory:
        """A new memory with `entry` appended; this one is left unchanged."""
        return StageMemory(entries=[*self.entries, entry])

    @property
    def last_iteration(self) -> int:
        """Highest iteration number recorded (0 when empty)."""
        return max((e.iteration for e in self.entries), default=0)

    def retrieve(
        self,
        query: str,
        gamma: int = 2,
        *,
        target: str | None = None,
        exclude_regressions: bool = False,
    ) -> list[MemoryEntry]:
        """Up to `gamma` entries most relevant to `query`, in chronological order.

        Candidates are filtered first (by `target` when given, and without regressions
        when asked), then ranked by BM25 with ties going to the more recent entry. With
        `gamma` or fewer candidates all are returned: ranking cannot change the answer.
        """
        candidates = [
            e
            for e in self.entries
            if (target is None or e.target == target)
            and not (exclude_regressions and e.is_regression)
        ]
        if gamma <= 0:
            return []
        if len(candidates) <= gamma:
            return candidates
        scores = _bm25_scores([tokenize(e.search_text()) for e in candidates], tokenize(query))
        ranked = sorted(range(len(candidates)), key=lambda i: (scores[i], i), reverse=True)
        return [candidates[i] for i in sorted(ranked[:gamma])]

    def recall(
        self,
        query: str,
        gamma: int = 2,
        *,
        target: str | None = None,
        exclude_regressions: bool = False,
        tests: str = "check tests",
    ) -> str:
        """`retrieve` then `render`: the memory section of a generator prompt (`tests`: see `render`)."""
        picked = self.retrieve(
            query, gamma, target=target, exclude_regressions=exclude_regressions
        )
        return render(picked, self.last_iteration, tests=tests)


def _bm25_scores(corpus: list[list[str]], query: list[str]) -> list[float]:
    """BM25Okapi scores, made safe for the tiny corpora a stage memory holds.

    rank_bm25 divides by zero when every document is empty, and on a handful of
    documents idf is 0 or negative (two documents, a word in one: log(1.5/1.5) = 0; its
    floor, epsilon x average idf, is itself negative when most words are shared), which
    would rank a document sharing a word with the query no higher, or even *below*, one
    sharing none. So idf is floored at a small positive value: sharing a word always
    counts. When no document shares a word every score is 0 and the caller's recency
    tie-break decides.
    """
    if not query or not any(corpus):
        return [0.0] * len(corpus)
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi(corpus)
    bm25.idf = {word: max(idf, _IDF_FLOOR) for word, idf in bm25.idf.items()}
    return [float(s) for s in bm25.get_scores(query)]


def _describe_gap(first: int, last: int, *, later: bool = False) -> str:
    """Marker for iterations first..last that the prompt does not show."""
    if first == last:
        return f"[iteration {first}: not retrieved]"
    when = "later" if later else "earlier"
    return f"[... {last - first + 1} {when} revisions not shown (iterations {first}-{last}) ...]"


def _describe_entry(entry: MemoryEntry, max_diff_lines: int | None, tests: str) -> str:
    """One retrieved revision as prompt text."""
    head = f"### Iteration {entry.iteration}"
    if entry.target:
        head += f" ({entry.target})"
    if entry.passed_before is not None and entry.passed_after is not None:
        head += f" - {tests} passed: {entry.passed_before} -> {entry.passed_after}"
        if entry.is_regression:
            head += " (REGRESSION)"
    if entry.summary:
        return f"{head}\nSummary of the revision:\n{entry.summary.strip()}"
    diff = entry.diff.strip("\n")
    if max_diff_lines is not None:
        lines = diff.splitlines()
        if len(lines) > max_diff_lines:
            cut = len(lines) - max_diff_lines
            diff = "\n".join([*lines[:max_diff_lines], f"[... {cut} more diff lines ...]"])
    feedback = entry.feedback.strip() or "(none)"
    return f"{head}\nJudge feedback:\n{feedback}\nChange made:\n{diff or '(no change recorded)'}"


def render(
    entries: Sequence[MemoryEntry], total: int, *, max_diff_lines: int | None = None, tests: str = "check tests"
) -> str:
    """Prompt text for retrieved entries, with explicit markers where revisions are skipped.

    `total` is the number of revisions the stage has made so far (iterations 1..total).
    Iterations without a shown entry become markers such as
    ``[... 3 earlier revisions not shown (iterations 1-3) ...]`` or
    ``[iteration 4: not retrieved]``, so the model knows the chronology has gaps.
    Several entries of one iteration (different targets) are shown together. `tests` names the tests
    whose pass counts a code revision shows (`prompts.suite_words`: "check tests", or "tests" where the
    feedback suite is the unit tests). Returns "" when there is no history at all.
    """
    ordered = sorted(entries, key=lambda e: e.iteration)  # stable: keeps same-iteration order
    total = max([total, *(e.iteration for e in ordered)])
    if total <= 0:
        return ""
    shown = {e.iteration for e in ordered}
    header = (
        f"Memory of earlier revisions ({len(shown)} of {total} shown, oldest first; "
        "skipped revisions are marked):"
    )
    parts = [header]
    expected = 1
    for entry in ordered:
        if entry.iteration > expected:
            parts.append(_describe_gap(expected, entry.iteration - 1))
        parts.append(_describe_entry(entry, max_diff_lines, tests))
        expected = entry.iteration + 1
    if expected <= total:
        parts.append(_describe_gap(expected, total, later=bool(ordered)))
    return "\n\n".join(parts)
