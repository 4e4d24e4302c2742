"""Replay scripts that answer every pipeline call from a task's reference code.

Used to test the real graph end to end without a model, and to write the demo's script:
the architect answers with the SSAT derived from the reference, the skeleton agent with
that tree's stubs, the coder with the reference files, the judges accept, and the baselines'
"direct" role with the whole reference as whole-file blocks. Optionally one function is
broken in the first code version (and the first direct reply), so the code-judge loop (or a
self-reflection round) must repair it.

The result is a `Script` for `ScriptedChatModel`; its label says it replays reference
code, so no report can mistake it for a model's work. `reference_model(task)` is the
oracle behind ``--model reference``: every agent answered from the reference, the knowledge
agent and an external system's calls through the model bridge included, labelled "reference replay (oracle,
not a model)" everywhere. It checks that
the harness gives a perfect generator full marks on a dataset (as SWE-bench validates its
gold patches). `exercise_reference_model(exercise)` is the same oracle for LiveRepoReflection's
protocol (``projectgen reflect --model reference``): try 1 is answered with the exercise's
``.meta`` example solution, in either edit format.
"""
from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from projectgen.config import EditFormat
from projectgen.datasets.exercism import Exercise
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.llm.naming import REFERENCE_LABEL
from projectgen.llm.roles import (
    DIRECT_ROLE, EXTERNAL_ROLE, KNOWLEDGE_ROLE, MEMORY_ROLE, NOTES_STAGE, REFLECTION_ROLE,
)
from projectgen.llm.scripted import Script, load_script, scripted_chat_model_class
from projectgen.repository.edits import fenced_python, fenced_text, make_search_replace_reply, make_whole_file_reply
from projectgen.repository.syntax import function_node, parse_python
from projectgen.ssat import SSAT, FileNode, render_stub, ssat_from_repository


@dataclass(frozen=True)
class Breakage:
    """Break `function` (a top-level function or ``Class.method``) in `path` in the first code version."""

    path: str
    function: str
    body: str = "raise NotImplementedError"


def break_function(code: str, breakage: Breakage) -> str:
    """`code` with the function's body (after its docstring) replaced by `breakage.body`."""
    try:
        node = function_node(parse_python(code), breakage.function)
    except ValueError as exc:
        raise ProjectGenError(str(exc)) from None
    lines = code.splitlines(keepends=True)
    body = node.body
    first = body[1] if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(
        getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str) else body[0]
    indent = " " * first.col_offset
    start, end = first.lineno - 1, node.end_lineno
    return "".join(lines[:start]) + f"{indent}{breakage.body}\n" + "".join(lines[end:])


def reference_python_files(task: Task) -> dict[str, str]:
    return {p: text for p, text in task.reference_repository().items() if p.endswith(".py")}


def reference_text_files(task: Task) -> dict[str, str]:
    """Every reference file a model can write: the .py sources and the text files they read (data, config,
    templates, markers such as py.typed); binary files (a pickle) are left out, no reply can hold them."""
    files = {}
    for rel, path in task.reference_files().items():
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        if "\0" not in text:
            files[rel] = text
    return files


def data_file_node(path: str, text: str) -> FileNode:
    """A tree entry for a file that is not Python: named, with what it holds, so the code stage writes it
    (an empty one, a marker such as py.typed, without a description: the code stage leaves it empty)."""
    if not text:
        return FileNode(path=path)
    lines = text.count("\n") + (1 if not text.endswith("\n") else 0)
    return FileNode(path=path, description=f"data file of the project ({lines} line(s), {len(text)} characters), "
                                           "written as the reference has it")


def reference_ssat(task: Task, files: Mapping[str, str] | None = None) -> SSAT:
    """The tree derived from the reference: its Python files' code items, and every other text file named."""
    files = files or reference_python_files(task)
    ssat = ssat_from_repository(files, task.id,
                                description=f"Architecture of {task.id}, derived from its reference code.")
    data = [data_file_node(path, text) for path, text in sorted(files.items()) if not path.endswith(".py")]
    if not data:
        return ssat
    return SSAT(project_name=ssat.project_name, description=ssat.description, modules=ssat.modules,
                files=(*ssat.file_nodes, *data))


def oracle_reply_cap(task: Task, cap: int) -> int:
    """The reply cap a reference replay of `task` runs with: `cap`, raised to fit its longest reply (zxcvbn's
    tree is 818k characters). The cap guards against a runaway model; the oracle's replies are known and finite,
    and cutting one would score the harness, not the reference."""
    longest = max(len(entry.text) for entry in reference_script(task).responses)
    return max(cap, longest + longest // 10)


def reference_knowledge(task: Task) -> dict[str, Any]:
    """The knowledge agent's answer in a reference replay: a success entry naming the reference files."""
    return {"success": {"task_summary": f"{task.id} (reference replay)",
                        "repository_signals": [f"the reference layout: {', '.join(sorted(task.reference)[:12])}"],
                        "functional_signals": ["the reference implementation passes the check tests"],
                        "carry_over": ["keep the reference implementation"]},
            "failure": {"observed_failures": [], "repository_failures": [], "carry_over_constraints": []}}


def reference_model(task: Task) -> Any:
    """The oracle behind ``--model reference``: a `ScriptedChatModel` answering every agent of every
    method (the knowledge agent included) from `task`'s reference code, labelled `REFERENCE_LABEL`."""
    script = reference_script(task, label=REFERENCE_LABEL)
    return scripted_chat_model_class().from_responses(script.model_dump(mode="json", exclude_none=True),
                                                      label=REFERENCE_LABEL)


def reference_script(task: Task, *, breakage: Breakage | None = None, edit_format: EditFormat = "whole",
                     label: str | None = None) -> Script:
    """A script answering every call of every method on `task` from its reference code: ProjectGen's
    agents, the direct and self-reflection baselines, and LiveCoder's knowledge agent (without it a
    scripted LiveCoder run would die at its second attempt)."""
    files = reference_text_files(task)
    if not any(path.endswith(".py") for path in files):
        raise ProjectGenError(f"task {task.id} has no reference Python files")
    ssat = reference_ssat(task, files)
    responses: list[dict[str, Any]] = [
        {"role": "architect", "content": ssat.model_dump(mode="json", by_alias=True, exclude_defaults=True)},
        {"role": "architecture_judge", "content": {
            "scores": {"requirement_coverage": 9, "document_consistency": 9, "interface_consistency": 9,
                       "dependency_relations": 9},
            "justifications": {criterion: "replayed reference architecture" for criterion in (
                "requirement_coverage", "document_consistency", "interface_consistency", "dependency_relations")},
            "overall": 9, "reasons": "replayed reference architecture", "feedback": ""}},
        # both judge forms read this reply: `score` the exact review's, `scores` and `overall` the paper's JudgeS
        {"role": "skeleton_judge", "content": {"score": 9, "scores": {"directory_structure": 9,
                                                                      "interface_matching": 9},
                                               "overall": 9, "feedback": "", "files": {}}},
        {"role": "code_judge", "content": {"summary": "", "files": []}},
        {"role": MEMORY_ROLE, "content": "replayed reference revision: the judge's feedback was applied as given"},
        {"role": DIRECT_ROLE, "stage": NOTES_STAGE,  # Self-Reflection's verbal reflection, when carried
         "content": "replayed reference reflection: the failing tests name the function to implement as the "
                    "documents describe"},
    ]
    for node in ssat.files():
        stub = render_stub(node)
        if stub:
            responses.append({"role": "skeleton", "target": node.path, "content": fenced_python(stub)})
    for path, code in sorted((path, code) for path, code in files.items() if code or path.endswith(".py")):
        responses.append({"role": "coder", "target": path,
                          "content": fenced_python(code) if path.endswith(".py") else fenced_text(code)})
    responses.append({"role": DIRECT_ROLE, "content": make_whole_file_reply(sorted(files), files)})
    # An external system's every call (`projectgen.external`): the whole reference, as the baselines get it.
    responses.append({"role": EXTERNAL_ROLE, "content": make_whole_file_reply(sorted(files), files)})
    responses.append({"role": KNOWLEDGE_ROLE, "content": reference_knowledge(task)})
    if breakage is not None:
        if breakage.path not in files:
            raise ProjectGenError(f"{breakage.path} is not a reference file of {task.id}")
        broken = break_function(files[breakage.path], breakage)
        for entry in responses:
            if entry["role"] == "coder" and entry["target"] == breakage.path:
                entry["iteration"] = 1
                entry["content"] = fenced_python(broken)
        repair = (make_whole_file_reply([breakage.path], files) if edit_format == "whole"
                  else make_search_replace_reply({breakage.path: broken}, {breakage.path: files[breakage.path]}))
        responses.append({"role": "coder", "target": breakage.path, "iteration": 2, "content": repair})
        # The baselines: the first direct reply has the break, a self-reflection round rewrites the file.
        responses.append({"role": DIRECT_ROLE, "iteration": 1,
                          "content": make_whole_file_reply(sorted(files), {**files, breakage.path: broken})})
        responses.append({"role": DIRECT_ROLE, "iteration": 2,
                          "content": make_whole_file_reply([breakage.path], files)})
        responses.append({"role": "code_judge", "iteration": 1, "content": {
            "summary": f"{breakage.function} is not implemented",
            "files": [{"path": breakage.path, "suggestion": f"implement {breakage.function} as the documents "
                                                             f"describe"}]}})
    return load_script({"label": label or f"reference replay of {task.id} (not a model)", "responses": responses})


def _ending_like(text: str, stub: str | None) -> str:
    """`text` ending in a newline unless the stub it replaces does not (a patch cannot change only that)."""
    if stub is not None and stub and not stub.endswith("\n"):
        return text.rstrip("\n")
    return text if not text or text.endswith("\n") else text + "\n"


def exercise_reference_script(exercise: Exercise, *, label: str | None = None) -> Script:
    """Replies answering every try of LiveRepoReflection's protocol on `exercise` with its example solution:
    whole files (stage ``reflection_whole``) and ORIGINAL/UPDATED blocks from the stubs (``reflection_patch``)."""
    reference = exercise.reference()
    if not reference:
        raise ProjectGenError(f"exercise {exercise.id} has no example solution in .meta/ to replay")
    stubs = {path: text for path, text in exercise.stubs().items() if path in reference}
    target = {path: _ending_like(text, stubs.get(path)) for path, text in reference.items()}
    try:
        patch = make_search_replace_reply(stubs, target, markers="original_updated")
    except ValueError as exc:
        raise ProjectGenError(f"exercise {exercise.id}: its example solution cannot be written as patch blocks "
                              f"({exc})") from None
    replies = {"whole": make_whole_file_reply(sorted(target), target), "patch": patch}
    responses = [{"role": REFLECTION_ROLE, "stage": f"reflection_{fmt}", "target": exercise.id, "content": text}
                 for fmt, text in replies.items()]
    return load_script({"label": label or f"reference replay of {exercise.id} (not a model)",
                        "responses": responses})


def exercise_reference_model(exercise: Exercise) -> Any:
    """The oracle behind ``projectgen reflect --model reference``: a `ScriptedChatModel` answering the
    protocol on `exercise` from its ``.meta`` example solution, labelled `REFERENCE_LABEL`."""
    script = exercise_reference_script(exercise, label=REFERENCE_LABEL)
    return scripted_chat_model_class().from_responses(script.model_dump(mode="json", exclude_none=True),
                                                      label=REFERENCE_LABEL)
