"""SketchBLEU's repository structure match: depth-3 subtrees of one tree over the whole repository.

CodeS (`repo_syntax_match`) builds a tree whose root holds the repository's directories
and Python files, each file holding its module's top-level statements as tree-sitter
nodes. Every node is written as an s-expression cut at depth 3 (node type and field
names; leaf tokens dropped except identifiers, string parts and blocks), expressions
without a nested child are dropped, and the score is the share of the reference's
expressions found in the candidate's.

Fixed here (CodeS's tree adds each file once per enclosing directory level, leaves its
directory nodes empty, drops every module's first statement, and strips comments with
C rules, which cuts Python lines at ``//``):
- each directory holds its files and sub-directories in path order, each file all of its
  top-level statements, comments and docstrings removed with Python's rules;
- ``structure_counting="clipped"``: a reference expression counts as matched at most as
  many times as the candidate has it (CodeBLEU's Count_clip), where CodeS counts it when
  the candidate has it at all (``"membership"``).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Literal

StructureCounting = Literal["clipped", "membership"]

# Leaf node types that stay in an expression, as in CodeS's `FileOrNode.to_str`.
KEPT_LEAVES = frozenset({"identifier", "string_content", "string_end", "string_start", "block"})


def join_form(label: str, parts: list[str]) -> str:
    return f"({label} {' '.join(parts)})" if parts else f"({label})"


def subtree_forms(statements: list[Any]) -> tuple[Counter[str], dict[int, str]]:
    """The depth-3 expressions of every node under the given statements (themselves included), and
    each node's depth-2 form by node id.

    Computed bottom-up in one pass (each node's depth-1, 2 and 3 forms from its children's),
    so a large file costs one walk instead of one walk per node. A node's form names its type,
    then its kept children (those with children of their own, or in KEPT_LEAVES), each prefixed
    by its field name; a node without kept children has no nested form and no expression.
    """
    counts: Counter[str] = Counter()
    depth2: dict[int, str] = {}
    stack: list[tuple[Any, bool]] = [(node, False) for node in statements if node.child_count]
    while stack:
        node, children_done = stack.pop()
        if not children_done:
            stack.append((node, True))
            stack.extend((child, False) for child in node.children if child.child_count)
            continue
        parts1: list[str] = []
        parts2: list[str] = []
        for index, child in enumerate(node.children):
            if not child.child_count and child.type not in KEPT_LEAVES:
                continue
            field = node.field_name_for_child(index)
            prefix = f"{field}: " if field else ""
            parts1.append(f"{prefix}({child.type})")
            parts2.append(prefix + depth2.get(child.id, f"({child.type})"))
        depth2[node.id] = join_form(node.type, parts1)
        if parts2:
            counts[join_form(node.type, parts2)] += 1
    return counts, depth2


def file_expressions(text: str, parser: Any) -> tuple[Counter[str], list[tuple[str, str]]]:
    """The depth-3 expressions of one file's nodes, and its statements' depth-1 and 2 forms."""
    from codebleu.parser import remove_comments_and_docstrings

    try:
        text = remove_comments_and_docstrings(text, "python")
    except Exception:  # noqa: BLE001 - CodeBLEU keeps the text as it is when tokenize fails
        pass
    root = parser.parse(text.encode("utf-8")).root_node
    counts, depth2 = subtree_forms(root.children)
    statements = [(f"({child.type})", depth2.get(child.id, f"({child.type})")) for child in root.children
                  if child.child_count or child.type in KEPT_LEAVES]
    return counts, statements


def repository_expressions(files: Mapping[str, str], parser: Any,
                           cache: dict[str, tuple[Counter[str], list[tuple[str, str]]]]) -> Counter[str]:
    """The multiset of depth-3 expressions of a repository tree (root, directories, files, code).

    ``cache`` maps a file's text to its expressions, so a file both repositories share is parsed once.
    """
    counts: Counter[str] = Counter()
    # A directory's entries in path order: a file's (depth-1, depth-2) forms, or a sub-directory's path.
    entries: dict[str, list[tuple[str, str] | str]] = {"": []}
    for path in sorted(files):
        text = files[path]
        if text not in cache:
            cache[text] = file_expressions(text, parser)
        file_counts, statements = cache[text]
        counts.update(file_counts)
        if statements:
            counts[join_form("File", [form2 for _, form2 in statements])] += 1
        parts = path.split("/")
        for depth in range(1, len(parts)):
            directory = "/".join(parts[:depth])
            if directory not in entries:
                entries[directory] = []
                entries["/".join(parts[:depth - 1])].append(directory)
        entries["/".join(parts[:-1])].append(("(File)", join_form("File", [form1 for form1, _ in statements])))
    _directory_forms("", entries, counts)
    return counts


def _directory_forms(directory: str, entries: dict[str, list[tuple[str, str] | str]],
                     counts: Counter[str]) -> tuple[str, str]:
    """Depth-1 and depth-2 forms of a directory (the root when ``directory`` is ""), counting its depth 3."""
    label = "Root" if directory == "" else "Directory"
    forms = [_directory_forms(entry, entries, counts) if isinstance(entry, str) else entry
             for entry in entries[directory]]
    if forms:
        counts[join_form(label, [form2 for _, form2 in forms])] += 1
    return f"({label})", join_form(label, [form1 for form1, _ in forms])


def structure_match(reference: Counter[str], candidate: Counter[str],
                    counting: StructureCounting = "clipped") -> float:
    """Share of the reference's expressions found in the candidate, in [0, 1]."""
    total = sum(reference.values())
    if total == 0:
        return 1.0 if not candidate else 0.0
    if counting == "membership":
        matched = sum(count for expression, count in reference.items() if expression in candidate)
    else:
        matched = sum(min(count, candidate[expression]) for expression, count in reference.items())
    return matched / total
