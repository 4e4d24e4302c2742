"""Decontamination: drop candidates that are near-duplicates of a reference set (a benchmark's exercises).

LiveRepoReflection's rule: character 5-gram MinHash signatures in an LSH index at Jaccard 0.8. Here the
LSH index (datasketch's `MinHashLSH`, 128 permutations) only proposes candidates; each proposal is verified
by the exact Jaccard similarity of the two 5-gram sets, and a candidate is dropped when that is above the
threshold. So an LSH false positive never drops a task, and the report says the exact figure. Texts are
compared lower-cased with runs of white space made one space.

datasketch (and its numpy/scipy) is the ``construct`` extra, imported when an index is built.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from projectgen.errors import ProjectGenError

NGRAM = 5
THRESHOLD = 0.8
PERMUTATIONS = 128
_SPACE = re.compile(r"\s+")


def shingles(text: str, n: int = NGRAM) -> set[str]:
    """The character n-grams of a text, normalised (lower case, white space collapsed)."""
    clean = _SPACE.sub(" ", text.lower()).strip()
    if len(clean) <= n:
        return {clean} if clean else set()
    return {clean[i:i + n] for i in range(len(clean) - n + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    """|a & b| / |a | b| (0.0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


@dataclass(frozen=True)
class Match:
    """A candidate found to be a near-duplicate of a reference text."""

    candidate: str
    reference: str
    jaccard: float

    def to_dict(self) -> dict[str, object]:
        return {"candidate": self.candidate, "reference": self.reference, "jaccard": round(self.jaccard, 4),
                "why": f"character {NGRAM}-gram Jaccard {self.jaccard:.3f} > {THRESHOLD} with {self.reference}"}


class ReferenceIndex:
    """The reference set's MinHash signatures in an LSH index, and their 5-gram sets for the exact check."""

    def __init__(self, references: Mapping[str, str], threshold: float = THRESHOLD) -> None:
        self.threshold = threshold
        self._shingles: dict[str, set[str]] = {}
        lsh_class, _ = _datasketch()
        self._lsh = lsh_class(threshold=threshold, num_perm=PERMUTATIONS)
        for name, text in references.items():
            self.add(name, text)

    def add(self, name: str, text: str) -> None:
        """One more reference (the exercises kept so far, when new exercises are checked against each other)."""
        grams = shingles(text)
        self._shingles[name] = grams
        self._lsh.insert(name, _signature(grams))

    def __len__(self) -> int:
        return len(self._shingles)

    def match(self, name: str, text: str) -> Match | None:
        """The closest reference above the threshold by exact Jaccard, among those the LSH proposes."""
        grams = shingles(text)
        best: Match | None = None
        for reference in sorted(self._lsh.query(_signature(grams))):
            score = jaccard(grams, self._shingles[reference])
            if score > self.threshold and (best is None or score > best.jaccard):
                best = Match(name, reference, score)
        return best


def decontaminate(candidates: Mapping[str, str], references: Mapping[str, str],
                  threshold: float = THRESHOLD) -> tuple[list[str], list[Match]]:
    """The candidates kept (in order) and the matches that removed the others."""
    index = ReferenceIndex(references, threshold)
    kept, removed = [], []
    for name, text in candidates.items():
        found = index.match(name, text)
        if found is None:
            kept.append(name)
        else:
            removed.append(found)
    return kept, removed


def _signature(grams: set[str]) -> Any:
    _, minhash_class = _datasketch()
    signature = minhash_class(num_perm=PERMUTATIONS, seed=1)
    for gram in sorted(grams):
        signature.update(gram.encode("utf-8"))
    return signature


def _datasketch() -> tuple[Any, Any]:
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        raise ProjectGenError("decontamination needs datasketch: pip install 'projectgen[construct]'") from None
    return MinHashLSH, MinHash
