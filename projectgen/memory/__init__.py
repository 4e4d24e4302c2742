"""What the agents remember between revisions and attempts.

Stage memory (this package's `stage_memory`) is ProjectGen's per-stage revision history,
retrieved by BM25 over judge feedback and diffs for the stage's generator; judges use
none. Nothing here is global: a memory is a value that lives in graph state.
"""
from __future__ import annotations

from projectgen.memory.stage_memory import STOPWORDS, MemoryEntry, Stage, StageMemory, render, tokenize

__all__ = ["STOPWORDS", "MemoryEntry", "Stage", "StageMemory", "render", "tokenize"]
