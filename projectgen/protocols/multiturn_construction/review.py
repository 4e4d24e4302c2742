"""What a person is asked about a seed of `construct multiturn`, and how their answer is checked.

A seed pauses for a person (LangGraph's `interrupt()`, `projectgen.protocols.multiturn_construction.graph`) when its
requirements are not retained within the decomposition cap (stage ``requirements``), or when a turn's Evaluator
answers REQUIREMENT_REFINE or no draft of the turn is kept within the turn cap (stage ``turn``). The request is
plain JSON, written to the seed's run folder as review.json (`projectgen.runs.pending_review`) and shown by
`projectgen review OUT/runs/SEED`. The decisions are `run --review`'s (`projectgen.graphs.review.ReviewDecision`):

- approve: keep what is there: the last decomposition (the Analyzer then orders it), or the turn's last draft;
  offered only when that draft is usable (it parsed, and a turn's passed stages 1 and 2);
- edit: the files to replace, named as the task folder will hold them: ``turns/K/requirement.md`` for every turn
  (stage ``requirements``: the whole list, in turn order), or any of the turn's ``turns/K/requirement.md``,
  ``turns/K/reference.py`` and ``turns/K/tests/<test file>`` (stage ``turn``: the others stay as drafted; the
  result must pass stages 1 and 2 in the sandbox, else the person is asked again, with why);
- reject: the feedback goes to the Decomposer or the Coder for one more draft (past the cap: a person asked).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from projectgen.datasets.multiturn import REFERENCE_FILE, REQUIREMENT_FILE, TESTS_DIR, TURNS_DIR
from projectgen.graphs.review import ReviewDecision, ReviewError, as_decision
from projectgen.protocols.multiturn_construction.agents import turn_test_file
from projectgen.protocols.multiturn_construction.requirements import MAX_EVOLVING, MIN_EVOLVING, usable_decomposition
from projectgen.protocols.multiturn_construction.seeds import TaskSeed
from projectgen.protocols.multiturn_construction.turns import FAILED_CHECKS
from projectgen.repository.syntax import syntax_error

REQUEST_KIND = "projectgen-construction-review"  # marks a construction's review request
REQUIREMENTS_STAGE = "requirements"
TURN_STAGE = "turn"
ACTIONS = ("approve", "edit", "reject")
_REQUIREMENT_PATH = re.compile(rf"{TURNS_DIR}/(\d+)/{re.escape(REQUIREMENT_FILE)}")


def is_construction_request(request: Mapping[str, Any]) -> bool:
    return request.get("kind") == REQUEST_KIND


def requirement_path(turn: int) -> str:
    return f"{TURNS_DIR}/{turn}/{REQUIREMENT_FILE}"


def turn_paths(seed: TaskSeed, turn: int) -> tuple[str, str, str]:
    """(requirement, reference, tests) of turn `turn` as the task folder holds them."""
    base = f"{TURNS_DIR}/{turn}"
    return requirement_path(turn), f"{base}/{REFERENCE_FILE}", f"{base}/{TESTS_DIR}/{turn_test_file(seed, turn)}"


# --------------------------------------------------------------------------- the requests


def requirements_request(seed: TaskSeed, decompositions: Sequence[dict[str, Any]], reason: str,
                         error: str = "") -> dict[str, Any]:
    """The decomposition a person is asked about: the last draft's requirements and the feedback it got."""
    last = decompositions[-1] if decompositions else {}
    usable = usable_decomposition(last)
    shown = list(last.get("requirements") or []) or [seed.requirement]
    request: dict[str, Any] = {
        "kind": REQUEST_KIND, "stage": REQUIREMENTS_STAGE, "seed": seed.id, "iteration": len(decompositions),
        "what": f"the requirements of seed {seed.id} (after {len(decompositions)} decomposition draft(s))",
        "reason": reason, "requirement": seed.requirement, "requirements": shown,
        "feedback": last.get("feedback", ""),
        "actions": [action for action in ACTIONS if action != "approve" or usable is not None],
        "editable": {requirement_path(index): text for index, text in enumerate(shown, start=1)},
    }
    if usable is None:
        request["approve_refused"] = ("the last draft is not a core requirement with 1-4 evolving ones; edit the "
                                      "requirements or reject with feedback")
    return _with_error(request, error)


def turn_request(seed: TaskSeed, requirements: Sequence[str], turn: int, drafts: Sequence[dict[str, Any]],
                 last: Mapping[str, str] | None, reason: str, error: str = "") -> dict[str, Any]:
    """A turn a person is asked about: its requirement, the last draft's code and tests, the Evaluator's reason."""
    last = last or {"code": "", "tests": ""}
    decision = drafts[-1].get("decision", "") if drafts else ""
    usable = bool(last.get("code")) and decision not in FAILED_CHECKS
    requirement_file, reference_file, tests_file = turn_paths(seed, turn)
    request: dict[str, Any] = {
        "kind": REQUEST_KIND, "stage": TURN_STAGE, "seed": seed.id, "turn": turn, "turns": len(requirements),
        "iteration": len(drafts), "what": f"turn {turn} of {len(requirements)} of seed {seed.id} "
                                          f"(after {len(drafts)} Coder draft(s), the last {decision or 'none'})",
        "reason": reason, "requirement": requirements[turn - 1], "target": seed.target,
        "test_file": turn_test_file(seed, turn), "code": last.get("code", ""), "tests": last.get("tests", ""),
        "actions": [action for action in ACTIONS if action != "approve" or usable],
        "editable": {requirement_file: requirements[turn - 1], reference_file: last.get("code", ""),
                     tests_file: last.get("tests", "")},
    }
    if not usable:
        request["approve_refused"] = (f"the last draft did not pass stages 1 and 2 ({decision or 'no draft'}); "
                                      "edit it or reject with feedback")
    return _with_error(request, error)


def _with_error(request: dict[str, Any], error: str) -> dict[str, Any]:
    return {**request, "error": error} if error else request


# --------------------------------------------------------------------------- the decision


def parse_construction_decision(answer: Any, request: Mapping[str, Any]) -> ReviewDecision:
    """`answer` as a decision that fits `request` (see the module docstring); `ReviewError` (one line) otherwise.
    An edit's files are checked here (names, non-empty requirements, Python that compiles); whether the tests
    pass on the code is the sandbox's to say, after the seed goes on."""
    decision = as_decision(answer)
    if decision.action not in request.get("actions", ACTIONS):
        raise ReviewError(f"cannot approve: {request.get('approve_refused', 'nothing usable to approve')}")
    if decision.action != "edit":
        return decision
    if decision.files is None:
        raise ReviewError("a construction edit gives files (path -> text, as `projectgen review DIR --json` prints "
                          "them), not a tree")
    if request.get("stage") == REQUIREMENTS_STAGE:
        return decision.model_copy(update={"files": checked_requirements(decision.files)})
    return decision.model_copy(update={"files": checked_turn_files(decision.files, request)})


def checked_requirements(files: Mapping[str, str]) -> dict[str, str]:
    """An edited decomposition: ``turns/K/requirement.md`` for K = 1..N (2 to 5 turns), none empty."""
    turns = {}
    for path, text in files.items():
        match = _REQUIREMENT_PATH.fullmatch(path)
        if match is None:
            raise ReviewError(f"{path}: a requirements edit names turns/K/requirement.md files only")
        if not text.strip():
            raise ReviewError(f"{path}: empty; give the requirement of turn {match.group(1)}")
        turns[int(match.group(1))] = text
    if sorted(turns) != list(range(1, len(turns) + 1)) or not MIN_EVOLVING + 1 <= len(turns) <= MAX_EVOLVING + 1:
        raise ReviewError(f"a requirements edit gives turns 1 to N, N from {MIN_EVOLVING + 1} to {MAX_EVOLVING + 1} "
                          f"(got turns {', '.join(map(str, sorted(turns))) or 'none'})")
    return {requirement_path(turn): turns[turn] for turn in sorted(turns)}


def checked_turn_files(files: Mapping[str, str], request: Mapping[str, Any]) -> dict[str, str]:
    """An edited turn: some of the turn's three files, the requirement not empty, the code and tests compiling."""
    known = list(request.get("editable") or {})
    if not files:
        raise ReviewError(f"the edit names no file; give path -> text of any of {', '.join(known)}")
    for path, text in sorted(files.items()):
        if path not in known:
            raise ReviewError(f"{path} is not a file of turn {request.get('turn')} (its files: {', '.join(known)})")
        if path.endswith(REQUIREMENT_FILE) and not text.strip():
            raise ReviewError(f"{path}: empty; give the turn's requirement")
        error = syntax_error(path, text)
        if error is not None:
            raise ReviewError(f"{path} is not valid Python: {error.splitlines()[0]}")
    return dict(files)


def edited_turn(request: Mapping[str, Any], files: Mapping[str, str]) -> tuple[str, str, str]:
    """(requirement, code, tests) of a turn after a person's edit: the files given, the others as drafted."""
    requirement_file, reference_file, tests_file = list(request["editable"])
    merged = {**request["editable"], **files}
    return merged[requirement_file], merged[reference_file], merged[tests_file]


def edited_requirements(files: Mapping[str, str]) -> list[str]:
    """The turns' requirements of an edited decomposition, in turn order."""
    return [files[requirement_path(turn)] for turn in range(1, len(files) + 1)]
