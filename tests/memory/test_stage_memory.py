"""Stage memory: tokenizer, immutable adds, BM25 retrieval (incl. tiny corpora), rendering."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from projectgen.memory import MemoryEntry, StageMemory, render, tokenize


def entry(iteration: int, feedback: str = "", diff: str = "", **kw) -> MemoryEntry:
    return MemoryEntry(stage=kw.pop("stage", "code"), iteration=iteration, feedback=feedback, diff=diff, **kw)


def memory(*entries: MemoryEntry) -> StageMemory:
    mem = StageMemory()
    for e in entries:
        mem = mem.add(e)
    return mem


# --------------------------------------------------------------------------- tokenizer


def test_tokenize_splits_identifiers_and_keeps_the_whole_one():
    assert tokenize("parse_config") == ["parse_config", "parse", "config"]
    assert tokenize("getValue") == ["getvalue", "get", "value"]
    assert tokenize("HTTPServer") == ["httpserver", "http", "server"]
    assert tokenize("JSONDecodeError") == ["jsondecodeerror", "json", "decode", "error"]


def test_tokenize_lowercases_and_drops_stopwords_and_single_characters():
    assert tokenize("The Parser is broken, and x = self.y") == ["parser", "broken"]
    assert tokenize("__init__") == ["init"]
    assert tokenize("") == []


def test_tokenize_digits_split_from_letters():
    assert tokenize("utf8 version2 404") == ["utf8", "utf", "version2", "version", "404"]


# --------------------------------------------------------------------------- model


def test_add_returns_a_new_memory_and_leaves_the_old_one_alone():
    empty = StageMemory()
    one = empty.add(entry(1, "a"))
    two = one.add(entry(2, "b"))
    assert empty.entries == []
    assert [e.iteration for e in one.entries] == [1]
    assert [e.iteration for e in two.entries] == [1, 2]


def test_memory_round_trips_through_json():
    mem = memory(entry(1, "fb", "diff", target="a.py", passed_before=1, passed_after=3), entry(2, stage="code"))
    assert StageMemory.model_validate_json(mem.model_dump_json()) == mem


def test_entry_validation():
    with pytest.raises(ValidationError):
        MemoryEntry(stage="testing", iteration=1)
    with pytest.raises(ValidationError):
        MemoryEntry(stage="code", iteration=0)


def test_regression_flag():
    assert entry(1, passed_before=3, passed_after=2).is_regression
    assert not entry(1, passed_before=3, passed_after=3).is_regression
    assert not entry(1, passed_before=3).is_regression
    assert not entry(1).is_regression


# --------------------------------------------------------------------------- retrieval


def test_retrieve_returns_everything_when_there_are_at_most_gamma_entries():
    mem = memory(entry(1, "alpha"), entry(2, "beta"))
    assert [e.iteration for e in mem.retrieve("nothing in common", gamma=2)] == [1, 2]
    assert [e.iteration for e in mem.retrieve("beta", gamma=5)] == [1, 2]
    assert StageMemory().retrieve("anything") == []
    assert mem.retrieve("alpha", gamma=0) == []


def test_retrieve_ranks_by_bm25_and_returns_chronological_order():
    mem = memory(
        entry(1, "KeyError in load_config when the file is missing", "- open(path)"),
        entry(2, "docstring of Store.get is missing", "+ '''Return value'''"),
        entry(3, "naming: rename variable tmp", "- tmp = 1"),
        entry(4, "load_config still raises KeyError for empty config", "+ if not data: return {}"),
        entry(5, "formatting of the CLI help text", "+ help='...'"),
    )
    picked = mem.retrieve("KeyError raised by load_config", gamma=2)
    assert [e.iteration for e in picked] == [1, 4]


def test_retrieve_breaks_ties_by_recency():
    mem = memory(*(entry(i, "same words here", "same diff") for i in range(1, 6)))
    assert [e.iteration for e in mem.retrieve("same words", gamma=2)] == [4, 5]


def test_retrieve_without_shared_words_falls_back_to_the_most_recent():
    mem = memory(entry(1, "alpha"), entry(2, "beta"), entry(3, "gamma"), entry(4, "delta"))
    assert [e.iteration for e in mem.retrieve("unrelated query", gamma=2)] == [3, 4]
    assert [e.iteration for e in mem.retrieve("", gamma=3)] == [2, 3, 4]


def test_tiny_corpus_zero_idf_still_prefers_the_matching_entry():
    # Two documents, the word in one: plain BM25Okapi gives idf log(1.5/1.5) = 0, which
    # would make recency pick entry 2; the floor keeps the match.
    mem = memory(entry(1, "the tokenizer drops unicode"), entry(2, "rename a helper"))
    assert [e.iteration for e in mem.retrieve("unicode tokenizer", gamma=1)] == [1]


def test_tiny_corpus_negative_idf_does_not_rank_a_match_below_a_non_match():
    # Three documents sharing most words: every idf, and so rank_bm25's floor
    # (epsilon x average idf), is negative; raw scores put the non-matching entry first.
    from rank_bm25 import BM25Okapi

    shared = "common words shared everywhere"
    texts = [f"{shared} parser", f"{shared} parser", shared]
    raw = BM25Okapi([tokenize(t) for t in texts]).get_scores(["parser"])
    assert raw[2] > raw[0]  # the failure mode being guarded against
    mem = memory(*(entry(i, t) for i, t in enumerate(texts, 1)))
    assert [e.iteration for e in mem.retrieve("parser", gamma=1)] == [2]


def test_tiny_corpus_of_empty_texts_does_not_crash():
    mem = memory(entry(1), entry(2), entry(3))
    assert [e.iteration for e in mem.retrieve("anything", gamma=2)] == [2, 3]


def test_retrieve_filters_by_target():
    mem = memory(
        entry(1, "bug in parser", target="pkg/a.py"),
        entry(1, "bug in parser", target="pkg/b.py"),
        entry(2, "another parser bug", target="pkg/a.py"),
    )
    picked = mem.retrieve("parser", gamma=2, target="pkg/a.py")
    assert [(e.iteration, e.target) for e in picked] == [(1, "pkg/a.py"), (2, "pkg/a.py")]


def test_retrieve_can_exclude_regressions():
    mem = memory(
        entry(1, "fix the parser", passed_before=2, passed_after=4),
        entry(2, "fix the parser again", passed_before=4, passed_after=1),
        entry(3, "parser edge case", passed_before=1, passed_after=5),
        entry(4, "unrelated cleanup", passed_before=5, passed_after=5),
    )
    assert 2 in [e.iteration for e in mem.retrieve("parser", gamma=3)]
    assert [e.iteration for e in mem.retrieve("parser", gamma=2, exclude_regressions=True)] == [1, 3]
    kept = mem.retrieve("parser", gamma=3, exclude_regressions=True)
    assert [e.iteration for e in kept] == [1, 3, 4]


# --------------------------------------------------------------------------- rendering


def test_render_marks_gaps_between_and_after_entries():
    text = render([entry(2, "fb two", "diff two"), entry(6, "fb six", "diff six")], total=8)
    assert "[iteration 1: not retrieved]" in text
    assert "[... 3 earlier revisions not shown (iterations 3-5) ...]" in text
    assert "[... 2 later revisions not shown (iterations 7-8) ...]" in text
    order = [text.index(s) for s in ("iteration 1:", "Iteration 2", "iterations 3-5", "Iteration 6", "iterations 7-8")]
    assert order == sorted(order)
    assert "fb two" in text and "diff six" in text and "2 of 8 shown" in text


def test_render_without_gaps_has_no_markers():
    text = render([entry(1, "a"), entry(2, "b")], total=2)
    assert "not shown" not in text and "not retrieved" not in text


def test_render_shows_targets_pass_counts_and_regressions():
    text = render([entry(1, "fb", "d", target="pkg/x.py", passed_before=3, passed_after=1)], total=1)
    assert "pkg/x.py" in text and "3 -> 1" in text and "REGRESSION" in text


def test_render_sorts_entries_and_handles_empty_history():
    text = render([entry(3, "third"), entry(1, "first")], total=3)
    assert text.index("first") < text.index("[iteration 2: not retrieved]") < text.index("third")
    assert render([], total=0) == ""
    assert "[... 3 earlier revisions not shown (iterations 1-3) ...]" in render([], total=3)


def test_render_truncates_long_diffs_when_asked():
    diff = "\n".join(f"line {i}" for i in range(50))
    text = render([entry(1, "fb", diff)], total=1, max_diff_lines=5)
    assert "line 4" in text and "line 5" not in text and "45 more diff lines" in text


def test_recall_combines_retrieve_and_render():
    mem = memory(entry(1, "parser crash"), entry(2, "style nit"), entry(3, "docs typo"))
    text = mem.recall("parser", gamma=1)
    assert "parser crash" in text and "[... 2 later revisions not shown (iterations 2-3) ...]" in text
