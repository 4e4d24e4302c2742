"""Edit formats: parsing whole files and SEARCH/REPLACE blocks, applying them, writing replies."""
from __future__ import annotations

import pytest

from projectgen.repository.edits import (
    EditOutcome,
    FileEdit,
    SearchReplaceBlock,
    apply_edits,
    make_search_replace_reply,
    make_whole_file_reply,
    parse_search_replace,
    parse_whole_files,
)

F = "```"


def sr(path: str, search: str, replace: str, fence_info: str = "python") -> str:
    return f"{path}\n{F}{fence_info}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n{F}\n"


# --------------------------------------------------------------------------- whole files: parsing


def test_whole_files_path_on_the_line_before_the_fence():
    reply = f"Here is the fix.\n\npkg/x.py\n{F}python\nx = 1\n{F}\n\n**pkg/y.py**\n{F}\ny = 2\n{F}\n"
    assert parse_whole_files(reply) == [
        FileEdit(path="pkg/x.py", content="x = 1\n"),
        FileEdit(path="pkg/y.py", content="y = 2\n"),
    ]


@pytest.mark.parametrize(
    "block",
    [
        f"{F}python path=pkg/x.py\nx = 1\n{F}",
        f'{F}python file="pkg/x.py"\nx = 1\n{F}',
        f"{F}pkg/x.py\nx = 1\n{F}",
        f"{F}python\n# path: pkg/x.py\nx = 1\n{F}",
        f"{F}python\n# File: pkg/x.py\nx = 1\n{F}",
        f"### File: `pkg/x.py`\n{F}python\nx = 1\n{F}",
    ],
)
def test_whole_files_path_forms(block):
    assert parse_whole_files(f"Updated:\n{block}\n") == [FileEdit(path="pkg/x.py", content="x = 1\n")]


def test_whole_files_ignores_blocks_without_a_path_and_prose_lines():
    reply = f"Run this:\n{F}bash\npytest -q\n{F}\nDone.\n{F}\nprint('x')\n{F}\n"
    assert parse_whole_files(reply) == []


def test_whole_files_longer_fence_keeps_inner_fences():
    content = f"# Title\n\n{F}python\nprint(1)\n{F}\n"
    reply = f"README.md\n````markdown\n{content}````\n"
    assert parse_whole_files(reply) == [FileEdit(path="README.md", content=content)]


def test_whole_files_unclosed_block_is_a_failure_not_a_write():
    out = apply_edits({"a.py": "old\n"}, f"a.py\n{F}python\nnew\n", "whole")
    assert out.repo == {"a.py": "old\n"}
    assert not out.well_formed
    assert "not closed" in out.failed[0].reason


def test_whole_files_reply_in_the_wrong_format_is_reported():
    out = apply_edits({"a.py": "x = 1\n"}, sr("a.py", "x = 1\n", "x = 2\n"), "whole")
    assert out.repo == {"a.py": "x = 1\n"}
    assert "SEARCH/REPLACE markers" in out.failed[0].reason


# --------------------------------------------------------------------------- whole files: applying


def test_apply_whole_files_updates_and_creates_without_touching_the_input():
    repo = {"a.py": "a = 1\n", "b.py": "b = 1\n"}
    out = apply_edits(repo, f"a.py\n{F}python\na = 2\n{F}\nnew/c.py\n{F}python\nc = 3\n{F}\n", "whole")
    assert out.repo == {"a.py": "a = 2\n", "b.py": "b = 1\n", "new/c.py": "c = 3\n"}
    assert repo == {"a.py": "a = 1\n", "b.py": "b = 1\n"}
    assert out.well_formed and out.changed_paths == ["a.py", "new/c.py"]


@pytest.mark.parametrize("path", ["/etc/passwd.py", "../outside.py", "pkg/../../x.py", "C:/x.py"])
def test_unsafe_paths_are_failed_edits_never_written(path):
    out = apply_edits({"a.py": ""}, f"{path}\n{F}python\nboom\n{F}\n", "whole")
    assert out.repo == {"a.py": ""}
    assert not out.well_formed
    assert "outside the repository" in out.failed[0].reason


def test_paths_are_normalized():
    out = apply_edits({"pkg/a.py": "x\n"}, f"./pkg//a.py\n{F}\ny\n{F}\n", "whole")
    assert out.repo == {"pkg/a.py": "y\n"} and out.applied[0].path == "pkg/a.py"


def test_allowed_paths_limit_what_may_be_written():
    repo = {"a.py": "a\n", "b.py": "b\n"}
    reply = f"a.py\n{F}\nA\n{F}\nb.py\n{F}\nB\n{F}\n"
    out = apply_edits(repo, reply, "whole", allowed_paths={"a.py"})
    assert out.repo == {"a.py": "A\n", "b.py": "b\n"}
    assert [f.path for f in out.failed] == ["b.py"]
    assert "not one of the files you may edit (a.py)" in out.failed[0].reason
    assert not out.well_formed


def test_no_edits_at_all_is_not_well_formed():
    out = apply_edits({"a.py": "a\n"}, "I could not find the bug, sorry.", "whole")
    assert out.repo == {"a.py": "a\n"} and not out.well_formed
    assert out.applied == [] and out.failed == []
    assert "no edits" in out.feedback()


def test_unknown_format_is_a_programming_error():
    with pytest.raises(ValueError):
        apply_edits({}, "", "diff")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- SEARCH/REPLACE: parsing


def test_parse_search_replace_several_blocks_and_files():
    reply = (
        "I'll fix both.\n\npkg/a.py\n" + F + "python\n"
        "<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\ny = 1\n=======\n>>>>>>> REPLACE\n" + F + "\n\n"
        "pkg/b.py\n" + F + "python\n<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n" + F + "\n"
    )
    assert parse_search_replace(reply) == [
        SearchReplaceBlock(path="pkg/a.py", search="x = 1\n", replace="x = 2\n"),
        SearchReplaceBlock(path="pkg/a.py", search="y = 1\n", replace=""),
        SearchReplaceBlock(path="pkg/b.py", search="", replace="new\n"),
    ]


def test_parse_search_replace_path_inside_the_fence_or_in_its_info():
    inside = f"{F}python\npkg/a.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n{F}\n"
    info = f"{F}python path=pkg/a.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n{F}\n"
    expected = [SearchReplaceBlock(path="pkg/a.py", search="a\n", replace="b\n")]
    assert parse_search_replace(inside) == expected
    assert parse_search_replace(info) == expected


def test_fences_inside_blocks_are_content():
    block = sr("README.md", f"{F}python\nold()\n{F}\n", f"{F}python\nnew()\n{F}\n", fence_info="")
    [parsed] = parse_search_replace(block)
    assert parsed.search == f"{F}python\nold()\n{F}\n"


def test_block_without_a_path_fails_with_a_hint():
    out = apply_edits({"a.py": "a\n"}, "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "search_replace")
    assert out.repo == {"a.py": "a\n"}
    assert "no file path" in out.failed[0].reason


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("a.py\n<<<<<<< SEARCH\na\n=======\nb\n", "not closed"),
        ("a.py\n<<<<<<< SEARCH\na\nb\n>>>>>>> REPLACE\n", "no ======="),
        ("a.py\n<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\na\n=======\nc\n>>>>>>> REPLACE\n", "no >>>>>>> REPLACE"),
    ],
)
def test_broken_blocks_are_reported(reply, reason):
    out = apply_edits({"a.py": "a\n"}, reply, "search_replace")
    assert not out.well_formed
    assert any(reason in f.reason for f in out.failed)


# --------------------------------------------------------------------------- SEARCH/REPLACE: applying


def test_apply_exact_match():
    repo = {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n"}
    out = apply_edits(repo, sr("a.py", "def g():\n    return 2\n", "def g():\n    return 3\n"), "search_replace")
    assert out.well_formed
    assert out.repo["a.py"] == "def f():\n    return 1\n\n\ndef g():\n    return 3\n"
    assert repo["a.py"].endswith("return 2\n")


def test_blocks_apply_in_order_on_the_updated_file():
    reply = sr("a.py", "a = 1\n", "a = 2\n") + sr("a.py", "a = 2\n", "a = 3\n")
    assert apply_edits({"a.py": "a = 1\n"}, reply, "search_replace").repo == {"a.py": "a = 3\n"}


def test_empty_search_creates_a_new_file_or_fills_an_empty_one():
    out = apply_edits({"empty.py": ""}, sr("new/b.py", "", "b = 1\n") + sr("empty.py", "", "e = 1\n"), "search_replace")
    assert out.well_formed
    assert out.repo == {"empty.py": "e = 1\n", "new/b.py": "b = 1\n"}


def test_empty_search_on_a_file_with_content_fails():
    out = apply_edits({"a.py": "a = 1\n"}, sr("a.py", "", "b = 1\n"), "search_replace")
    assert out.repo == {"a.py": "a = 1\n"}
    assert "already has content" in out.failed[0].reason


def test_unknown_file_fails():
    out = apply_edits({"a.py": "a\n"}, sr("b.py", "a\n", "b\n"), "search_replace")
    assert "unknown file b.py" in out.failed[0].reason


def test_search_not_found_gives_the_closest_lines():
    repo = {"a.py": "import os\n\n\ndef load(path):\n    with open(path) as fh:\n        return fh.read()\n"}
    reply = sr("a.py", "def load(path):\n    with open(path, 'r') as fh:\n", "def load(path):\n    pass\n")
    out = apply_edits(repo, reply, "search_replace")
    assert out.repo == repo and not out.well_formed
    reason = out.failed[0].reason
    assert "not found in a.py" in reason
    assert "lines 4-5" in reason and "    with open(path) as fh:" in reason
    assert "a.py: SEARCH text not found" in out.feedback()


def test_search_found_in_another_file_says_so():
    out = apply_edits({"a.py": "x = 1\n", "b.py": "y = 2\n"}, sr("a.py", "y = 2\n", "y = 3\n"), "search_replace")
    assert "It does match b.py" in out.failed[0].reason


def test_ambiguous_search_fails_with_line_numbers():
    repo = {"a.py": "def f():\n    pass\n\n\ndef g():\n    pass\n"}
    out = apply_edits(repo, sr("a.py", "    pass\n", "    return 1\n"), "search_replace")
    assert out.repo == repo
    assert "matches 2 places" in out.failed[0].reason and "lines 2, 6" in out.failed[0].reason


def test_whitespace_tolerant_match_ignores_trailing_whitespace():
    repo = {"a.py": "x = 1   \ny = 2\n"}
    out = apply_edits(repo, sr("a.py", "x = 1\ny = 2\n", "x = 10\ny = 2\n"), "search_replace")
    assert out.well_formed and out.repo["a.py"] == "x = 10\ny = 2\n"


def test_whitespace_tolerant_match_reindents_when_search_lost_indentation():
    repo = {"a.py": "class A:\n    def f(self):\n        return 1\n"}
    reply = sr("a.py", "def f(self):\n    return 1\n", "def f(self):\n    x = 2\n    return x\n")
    out = apply_edits(repo, reply, "search_replace")
    assert out.well_formed
    assert out.repo["a.py"] == "class A:\n    def f(self):\n        x = 2\n        return x\n"


def test_whitespace_tolerant_match_dedents_when_search_has_extra_indentation():
    repo = {"a.py": "def f():\n    return 1\n"}
    reply = sr("a.py", "    def f():\n        return 1\n", "    def f():\n        return 2\n")
    assert apply_edits(repo, reply, "search_replace").repo["a.py"] == "def f():\n    return 2\n"


def test_non_uniform_indentation_difference_does_not_match():
    repo = {"a.py": "def f():\n    return 1\n"}
    out = apply_edits(repo, sr("a.py", "  def f():\n        return 1\n", "x\n"), "search_replace")
    assert not out.well_formed and "not found" in out.failed[0].reason


def test_exact_match_wins_over_tolerant_ones():
    repo = {"a.py": "x = 1\nif y:\n    x = 1\n"}
    out = apply_edits(repo, sr("a.py", "x = 1\n", "x = 2\n"), "search_replace")
    assert out.repo["a.py"] == "x = 2\nif y:\n    x = 1\n"


def test_ambiguous_tolerant_match_fails():
    repo = {"a.py": "if a:\n    x = 1\nif b:\n    x = 1\n"}
    out = apply_edits(repo, sr("a.py", "  x = 1\n", "  x = 2\n"), "search_replace")
    assert "matches 2 places" in out.failed[0].reason


def test_partial_success_applies_the_good_edits():
    repo = {"a.py": "a = 1\n", "b.py": "b = 1\n"}
    reply = sr("a.py", "a = 1\n", "a = 2\n") + sr("b.py", "nope\n", "b = 2\n")
    out = apply_edits(repo, reply, "search_replace")
    assert out.repo == {"a.py": "a = 2\n", "b.py": "b = 1\n"}
    assert len(out.applied) == 1 and len(out.failed) == 1 and not out.well_formed


def test_crlf_files_keep_their_line_endings():
    repo = {"a.py": "a = 1\r\nb = 2\r\n"}
    out = apply_edits(repo, sr("a.py", "a = 1\n", "a = 3\nc = 4\n"), "search_replace")
    assert out.repo["a.py"] == "a = 3\r\nc = 4\r\nb = 2\r\n"


def test_file_without_final_newline_keeps_it_that_way():
    out = apply_edits({"a.py": "a = 1\nb = 2"}, sr("a.py", "b = 2\n", "b = 3\n"), "search_replace")
    assert out.repo["a.py"] == "a = 1\nb = 3"


def test_outcome_serializes_and_round_trips():
    out = apply_edits({"a.py": "a\n"}, sr("a.py", "a\n", "b\n") + sr("z.py", "q\n", "r\n"), "search_replace")
    again = EditOutcome.model_validate_json(out.model_dump_json())
    assert again == out and isinstance(again.applied[0], SearchReplaceBlock)


# --------------------------------------------------------------------------- writing replies

OLD = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "import os\n\n\n"
        "def first():\n    pass\n\n\n"
        "def second():\n    pass\n\n\n"
        "def third():\n    pass\n"
    ),
    "pkg/util.py": "A = 1\nB = 2\nC = 3\nD = 4\nE = 5\n",
    "Makefile": "test:\n\tpytest\n",
    "README.md": "# Title\n\n```python\nprint(1)\n```\n",
}


def _with(**changes: str) -> dict[str, str]:
    return {**OLD, **{k.replace("__", "/").replace("_DOT_", "."): v for k, v in changes.items()}}


ROUND_TRIP_CASES = {
    "first line": {"pkg/util.py": "A = 100\nB = 2\nC = 3\nD = 4\nE = 5\n"},
    "last line": {"pkg/util.py": "A = 1\nB = 2\nC = 3\nD = 4\nE = 500\n"},
    "first and last": {"pkg/util.py": "Z = 0\nB = 2\nC = 3\nD = 4\nE = 5\nF = 6\n"},
    "repeated pass lines need context": {
        "pkg/core.py": OLD["pkg/core.py"].replace("def second():\n    pass", "def second():\n    return 2")
    },
    "all repeated lines": {
        "pkg/core.py": OLD["pkg/core.py"].replace("    pass", "    return None")
    },
    "insertion only": {"pkg/util.py": "A = 1\nB = 2\nBB = 22\nC = 3\nD = 4\nE = 5\n"},
    "deletion only": {"pkg/util.py": "A = 1\nC = 3\nD = 4\nE = 5\n"},
    "file emptied": {"pkg/util.py": ""},
    "new file": {"pkg/new.py": "def new():\n    return 1\n"},
    "new empty file": {"pkg/empty.py": ""},
    "fill empty file": {"pkg/__init__.py": "from pkg.core import first\n"},
    "extensionless file": {"Makefile": "test:\n\tpytest -q\n"},
    "markdown fences in content": {"README.md": "# Title\n\n```python\nprint(2)\n```\n"},
    "several files": {
        "pkg/util.py": "A = 1\nB = 2\nC = 33\nD = 4\nE = 5\n",
        "pkg/core.py": "import sys\n" + OLD["pkg/core.py"][len("import os\n"):],
    },
    "no change": {},
}


@pytest.mark.parametrize("name", sorted(ROUND_TRIP_CASES))
def test_search_replace_reply_round_trips(name):
    new = {**OLD, **ROUND_TRIP_CASES[name]}
    reply = make_search_replace_reply(OLD, new)
    out = apply_edits(OLD, reply, "search_replace")
    assert out.repo == new
    assert out.well_formed == bool(ROUND_TRIP_CASES[name])


def test_search_replace_reply_is_small_and_unique():
    new = {**OLD, **ROUND_TRIP_CASES["repeated pass lines need context"]}
    reply = make_search_replace_reply(OLD, new)
    [block] = parse_search_replace(reply)
    # One context line either side: enough to make "    pass" unique.
    assert block.search == "def second():\n    pass\n\n"
    assert block.replace == "def second():\n    return 2\n\n"
    assert "third" not in reply and "first" not in reply


def test_search_replace_reply_round_trips_without_context():
    new = {**OLD, **ROUND_TRIP_CASES["all repeated lines"]}
    assert apply_edits(OLD, make_search_replace_reply(OLD, new, context=0), "search_replace").repo == new


def test_search_replace_reply_cannot_delete_files():
    new = dict(OLD)
    del new["pkg/util.py"]
    with pytest.raises(ValueError, match="cannot delete"):
        make_search_replace_reply(OLD, new)


def test_search_replace_reply_refuses_changes_it_cannot_express():
    with pytest.raises(ValueError, match="cannot express"):
        make_search_replace_reply({"a.py": "a\nb"}, {"a.py": "a\nb\n"})


def test_whole_file_reply_round_trips():
    new = {**OLD, "pkg/util.py": "A = 9\n", "pkg/new.py": "x = 1\n"}
    paths = ["pkg/util.py", "pkg/new.py", "README.md", "Makefile", "pkg/__init__.py"]
    reply = make_whole_file_reply(paths, new)
    out = apply_edits(OLD, reply, "whole")
    assert out.well_formed and out.repo == new
    assert [e.path for e in out.applied] == paths


def test_whole_file_reply_rejects_unknown_paths():
    with pytest.raises(ValueError):
        make_whole_file_reply(["missing.py"], OLD)


def test_home_folder_paths_are_refused() -> None:
    from projectgen.errors import ProjectGenError
    from projectgen.repository import safe_relpath

    for path in ("~/.ssh/authorized_keys", "~root/x.py", "~"):
        with pytest.raises(ProjectGenError, match="must not start with '~'"):
            safe_relpath(path)
    assert safe_relpath("pkg/~backup.py") == "pkg/~backup.py"  # only a leading ~ names a home folder


def test_a_home_folder_edit_is_refused_and_named_not_ignored() -> None:
    outcome = apply_edits({"pkg/a.py": "x = 1\n"}, "~/.ssh/authorized_keys.py\n```python\nx = 2\n```\n", "whole",
                          allowed_paths=["pkg/a.py"])
    assert not outcome.applied and outcome.failed[0].path == "~/.ssh/authorized_keys.py"
    assert "outside the repository" in outcome.feedback()


# --------------------------------------------------------------------------- LiveRepoReflection's patch format


def ou(path: str, original: str, updated: str) -> str:
    """A block in the paper's Figure 4 markers."""
    return f"{path}\n{F}python\n<<<<<<< ORIGINAL\n{original}=======\n{updated}>>>>>>> UPDATED\n{F}\n"


def test_original_updated_blocks_parse_and_apply_like_search_replace():
    repo = {"pkg/a.py": "def f():\n    return 1\n"}
    out = apply_edits(repo, ou("pkg/a.py", "    return 1\n", "    return 2\n"), "search_replace")
    assert out.exact and out.repo["pkg/a.py"] == "def f():\n    return 2\n"
    [block] = parse_search_replace(ou("pkg/a.py", "x\n", "y\n"))
    assert (block.path, block.search, block.replace) == ("pkg/a.py", "x\n", "y\n")


def test_an_exact_match_is_exact_and_a_reindented_one_is_well_formed_but_not_exact():
    repo = {"a.py": "class A:\n    def f(self):\n        return 1\n"}
    exact = apply_edits(repo, ou("a.py", "        return 1\n", "        return 2\n"), "search_replace")
    assert exact.well_formed and exact.exact and exact.reindented == []
    lenient = apply_edits(repo, ou("a.py", "def f(self):\n    return 1\n", "def f(self):\n    return 2\n"),
                          "search_replace")
    assert lenient.repo == exact.repo  # the same change, found only with whitespace tolerance
    assert lenient.well_formed and not lenient.exact
    assert [b.path for b in lenient.reindented] == ["a.py"]
    trailing = apply_edits({"a.py": "x = 1   \n"}, ou("a.py", "x = 1\n", "x = 2\n"), "search_replace")
    assert trailing.well_formed and not trailing.exact  # trailing whitespace ignored: not exact either


def test_a_failed_block_is_neither_well_formed_nor_exact_and_whole_files_are_exact():
    out = apply_edits({"a.py": "a\n"}, ou("a.py", "nope\n", "b\n"), "search_replace")
    assert not out.well_formed and not out.exact
    whole = apply_edits({}, make_whole_file_reply(["a.py"], {"a.py": "a\n"}), "whole")
    assert whole.exact


def test_a_reply_in_original_updated_markers_round_trips():
    new = {**OLD, **ROUND_TRIP_CASES["repeated pass lines need context"]}
    reply = make_search_replace_reply(OLD, new, markers="original_updated")
    assert "<<<<<<< ORIGINAL" in reply and ">>>>>>> UPDATED" in reply and "SEARCH" not in reply
    out = apply_edits(OLD, reply, "search_replace")
    assert out.repo == new and out.exact
