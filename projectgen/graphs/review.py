"""A person's review of a stage's output: the graph pauses (LangGraph's `interrupt()`), a person decides.

A stage built with ``review=True`` (`architecture_stage`, `skeleton_stage`; the CLI's ``run --review
architecture,skeleton``) ends in node "review_<stage>" instead of ending when its output is settled:
its judge accepted it, its iteration cap was reached with a usable output, or it has no judge. The node
calls ``interrupt(request)``; the graph stops there, its checkpointer keeping every step before, and
goes on when invoked again with ``Command(resume=DECISION)``, in this process or another:

    {"action": "approve"}                                the stage ends with its output
    {"action": "edit", "tree": {...}}                    architecture: the whole tree, as the architect writes it
    {"action": "edit", "files": {"pkg/a.py": "..."}}     skeleton: the files to replace (others stay)
    {"action": "reject", "feedback": "what to change"}   back to the generator

An edit is checked like generated output: a tree by `validate_ssat_json`, skeleton files must be the
tree's Python files and compile. A rejection is a verdict of judge "human" (`HUMAN_JUDGE`) that the
generator reads like a judge's feedback, and it counts as an iteration: the generator revises (past the
stage's cap too: a person asked for it), the judge reviews the revision, and the review comes again.

An answer that is not a usable decision does not end the run: the node asks again with the error in
the request (LangGraph's pattern for checking human input: interrupt() in a loop), so the run stays
paused. The request (`review_request`) is plain JSON, shown as it is by LangGraph Studio.

Nothing before the interrupt runs again: on resume LangGraph re-runs the interrupted node from its
start (and the nodes of outer graphs that invoked it, which read their inner graph's checkpoint), and
this node only reads the state before calling interrupt().
"""
from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any, Literal

from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from projectgen.agents.base import Verdict
from projectgen.errors import ProjectGenError, one_line
from projectgen.graphs.context import RunContext
from projectgen.graphs.state import ProjectState, iteration_of, last_verdict, reviews_of, ssat_data
from projectgen.llm.roles import HUMAN_JUDGE
from projectgen.repository.syntax import syntax_error
from projectgen.ssat import SSAT, diff_ssat, render_diff, validate_ssat_json

REVIEW_STAGES: tuple[str, ...] = ("architecture", "skeleton")
REQUEST_KIND = "projectgen-review"  # marks an interrupt value as a review request
DIFF_LINES = 200


class ReviewError(ProjectGenError):
    """A review decision that cannot be used (one line for the CLI; asked again inside a graph)."""


class ReviewDecision(BaseModel):
    """What a person decided about a stage's output: approve, edit (with the new output) or reject (with
    feedback for the generator). `feedback` on an approval or an edit is kept as a note."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Literal["approve", "edit", "reject"]
    feedback: str = ""
    tree: dict[str, Any] | None = None
    files: dict[str, str] | None = None

    @model_validator(mode="after")
    def _fits_its_action(self) -> ReviewDecision:
        if self.action == "reject" and not self.feedback.strip():
            raise ValueError("a rejection needs feedback: say what the generator should change")
        if self.action == "edit" and (self.tree is None) == (self.files is None):
            raise ValueError("an edit gives either the tree (architecture) or the files (skeleton)")
        if self.action != "edit" and (self.tree is not None or self.files is not None):
            raise ValueError(f"only an edit gives a tree or files, not {self.action!r}")
        return self


def review_stage_name(stage: str) -> str:
    """The node that reviews `stage`."""
    return f"review_{stage}"


def check_review_stages(stages: Any) -> tuple[str, ...]:
    """`stages` (names, or "a,b") as a tuple of reviewable stage names; an unknown one is a user mistake."""
    names = tuple(s.strip() for s in (stages.split(",") if isinstance(stages, str) else stages or ()) if s.strip())
    unknown = [s for s in names if s not in REVIEW_STAGES]
    if unknown:
        raise ProjectGenError(f"cannot review {', '.join(map(repr, unknown))}: the stages that can be reviewed are "
                              f"{', '.join(REVIEW_STAGES)}")
    return tuple(dict.fromkeys(names))


# --------------------------------------------------------------------------- the request


def review_request(state: ProjectState, stage: str) -> dict[str, Any]:
    """What the person is shown (the interrupt's value, JSON): the stage and iteration, the judge's last
    verdict, the tree (and for the skeleton stage its files), and the diff from the previous iteration."""
    verdict = last_verdict(state, stage)
    request: dict[str, Any] = {
        "kind": REQUEST_KIND, "stage": stage, "iteration": iteration_of(state, stage),
        "judge": ({"judge": verdict.judge, "score": verdict.score, "accepted": verdict.accepted,
                   "feedback": verdict.feedback} if verdict is not None else None),
        "tree": state.get("ssat"), "actions": ["approve", "edit", "reject"],
    }
    previous = (state.get("previous") or {}).get(stage)
    if stage == "skeleton":
        files = dict(state.get("skeleton") or {})
        request["skeleton"] = files
        request["diff"] = skeleton_diff(previous, files) if previous is not None else ""
    else:
        request["diff"] = tree_diff(previous, state.get("ssat")) if previous and state.get("ssat") else ""
    return request


def tree_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The change between two trees, one item per line (`projectgen.ssat.render_diff`)."""
    return render_diff(diff_ssat(SSAT.model_validate(old), SSAT.model_validate(new)), max_lines=DIFF_LINES)


def skeleton_diff(old: Mapping[str, str], new: Mapping[str, str]) -> str:
    """Unified diffs of the skeleton files that changed ("no changes" when none did)."""
    parts = ["".join(difflib.unified_diff(old.get(path, "").splitlines(True), new.get(path, "").splitlines(True),
                                          f"a/{path}", f"b/{path}"))
             for path in sorted(set(old) | set(new)) if old.get(path) != new.get(path)]
    return "".join(parts) or "no changes"


# --------------------------------------------------------------------------- the decision


def parse_decision(answer: Any, request: Mapping[str, Any]) -> ReviewDecision:
    """`answer` (a `ReviewDecision`, its JSON, or "approve") as a decision that fits `request`: an edited
    tree validated like a generated one (and stored in its normal form), edited skeleton files that are
    the tree's Python files and compile. Raises `ReviewError` (one line) otherwise."""
    answer = as_decision(answer)
    stage = request.get("stage")
    if answer.action != "edit":
        return answer
    if stage == "architecture":
        if answer.tree is None:
            raise ReviewError("an architecture review takes an edited tree (\"tree\"), not files")
        try:
            tree = validate_ssat_json(answer.tree)
        except ProjectGenError as exc:
            raise ReviewError(f"the edited tree is not valid: {one_line(exc)}") from None
        return answer.model_copy(update={"tree": ssat_data(tree)})
    if answer.files is None:
        raise ReviewError("a skeleton review takes edited files (\"files\": path -> text), not a tree")
    return answer.model_copy(update={"files": checked_skeleton_files(answer.files, request.get("tree"))})


def as_decision(answer: Any) -> ReviewDecision:
    """`answer` (a `ReviewDecision`, its JSON, or "approve") as a `ReviewDecision`, not yet checked against what
    it decides about; `ReviewError` (one line) when it is none."""
    if answer == "approve":
        answer = {"action": "approve"}
    if isinstance(answer, ReviewDecision):
        return answer
    if not isinstance(answer, Mapping):
        raise ReviewError(f"a review decision is {{\"action\": \"approve\" | \"edit\" | \"reject\", ...}}, "
                          f"not {type(answer).__name__}")
    try:
        return ReviewDecision.model_validate(dict(answer))
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        raise ReviewError(f"not a review decision: {where + ': ' if where else ''}"
                          f"{error['msg'].removeprefix('Value error, ')}") from None


def checked_skeleton_files(files: Mapping[str, str], tree: Mapping[str, Any] | None) -> dict[str, str]:
    """Edited skeleton files, if each is a Python file of the tree and compiles; `ReviewError` otherwise."""
    if not files:
        raise ReviewError("the edit names no skeleton file; give path -> text of the files to replace")
    known = {f.path for f in SSAT.model_validate(tree).files() if f.path.endswith(".py")} if tree else set()
    for path, text in sorted(files.items()):
        if not isinstance(text, str):
            raise ReviewError(f"{path}: a skeleton file's text must be a string")
        if path not in known:
            raise ReviewError(f"{path} is not a Python file of the tree (its files: {', '.join(sorted(known))})")
        error = syntax_error(path, text)
        if error is not None:
            raise ReviewError(f"{path} is not valid Python: {error.splitlines()[0]}")
    return dict(files)


def decision_update(state: ProjectState, stage: str, decision: ReviewDecision) -> dict[str, Any]:
    """The state update a decision makes: its review record, the edited output, or the rejection verdict."""
    iteration = iteration_of(state, stage)
    record: dict[str, Any] = {"id": f"{stage}:{iteration}", "stage": stage, "iteration": iteration,
                              "action": decision.action, "feedback": decision.feedback}
    update: dict[str, Any] = {}
    if decision.action == "edit" and decision.tree is not None:
        update["ssat"] = decision.tree
        record["edited"] = ["(tree)"]
    elif decision.action == "edit" and decision.files is not None:
        update["skeleton"] = dict(decision.files)
        record["edited"] = sorted(decision.files)
    elif decision.action == "reject":
        verdict = Verdict(judge=HUMAN_JUDGE, stage=stage, iteration=iteration, score=0, accepted=False,
                          feedback=decision.feedback)
        update["verdicts"] = [{"id": f"{stage}:{iteration}:review", **verdict.model_dump(mode="json")}]
    update["reviews"] = [record]
    return update


# --------------------------------------------------------------------------- the node and its route


async def review_stage(state: ProjectState, runtime: Runtime[RunContext], *, stage: str) -> dict[str, Any]:
    """Node "review_<stage>": pause for a person's decision on the stage's output, then apply it."""
    request = review_request(state, stage)
    decision = ask_person(request, parse_decision)
    runtime.context.say(f"{stage} {request['iteration']}: review: {decision.action}"
                        + (f" ({decision.feedback})" if decision.feedback else ""))
    return decision_update(state, stage, decision)


def ask_person(request: dict[str, Any], parse: Callable[[Any, Mapping[str, Any]], ReviewDecision]
               ) -> ReviewDecision:
    """`interrupt(request)` until the answer is a decision `parse` accepts: an unusable one is asked again with
    the reason in the request's ``error`` (the graph stays paused). Call it from a node before anything that
    must not run twice: on resume LangGraph re-runs the node from its start."""
    answer = interrupt(request)
    while True:
        try:
            return parse(answer, request)
        except ReviewError as exc:
            answer = interrupt({**request, "error": one_line(exc)})


def after_review(stage: str, generator: str) -> Callable[[ProjectState], str]:
    """Route after a review: back to `generator` when the person rejected this iteration, else the stage ends."""

    def route(state: ProjectState) -> str:
        records = reviews_of(state, stage)
        last = records[-1] if records else None
        rejected = last is not None and last["action"] == "reject" and last["iteration"] == iteration_of(state, stage)
        return generator if rejected else END

    route.__name__ = f"after_{stage}_review"
    return route

