"""One seed's construction as a LangGraph graph, checkpointed in its run folder, so a person can stop it and
decide (`projectgen review OUT/runs/SEED`) and it goes on from there in any process:

    START -> filter -> instruction -> requirements -> turn -> turn ... -> END
                                         |   ^  (over the cap)   | (REQUIREMENT_REFINE, over the cap)
                                         v   |                    v
                                         review  <-------------  review -> check_edit (a person's edit)
                                         -> analyze (approved)    -> turn (approved, or rejected: one more draft)

(node "instruction" converts a repository-level seed's signature and docstring into the requirement the
Decomposer starts from; at function level it passes the seed's requirement.md on)

Node "review" calls ``interrupt(request)`` (`projectgen.protocols.multiturn_construction.review` says what it asks and
what the answers mean); the graph stops, its checkpointer keeping every step before, and goes on when invoked
with ``Command(resume=DECISION)``. LangGraph re-runs the interrupted node from its start: it only reads the
state before calling interrupt(), so nothing before the pause runs again and no model call is made twice. An
answer that is not a usable decision is asked again (interrupt() in a loop), so the seed stays paused.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from projectgen.agents.base import ModelGateway
from projectgen.graphs.review import ask_person
from projectgen.protocols.multiturn_construction.agents import ConstructionAgents, TurnDraft, turn_test_file
from projectgen.protocols.multiturn_construction.filters import filter_seed
from projectgen.protocols.multiturn_construction.requirements import (Record, generate_requirements, order_requirements,
                                                                      usable_decomposition)
from projectgen.protocols.multiturn_construction.review import (REQUIREMENTS_STAGE, edited_requirements, edited_turn,
                                                                parse_construction_decision, requirements_request,
                                                                turn_request)
from projectgen.protocols.multiturn_construction.seeds import TaskSeed
from projectgen.protocols.multiturn_construction.turns import CHECKED, TurnRecord, build_turn, check_draft

if TYPE_CHECKING:
    from projectgen.protocols.multiturn_construction.settings import ConstructionSettings
    from projectgen.evaluation import SandboxRunner

HUMAN_FEEDBACK = "A person reviewed your last draft and asks: "  # how a rejection's feedback reaches the agent


class SeedState(TypedDict, total=False):
    """What the checkpoint keeps of a seed's construction (plain JSON)."""

    filtered: str  # why a seed filter dropped the seed ("" when kept)
    filter_verdicts: list[dict[str, Any]]  # every seed filter's verdict (the seed_filter events' fields)
    instruction: str  # repository level: the signature and docstring as an instruction, the Decomposer's start
    decompositions: list[dict[str, Any]]  # every Decomposer draft with the Evaluator's scores and decision
    decomposition_cap: int  # the settings' cap, raised by a person's rejection
    requirement_feedback: str  # for the Decomposer's next draft
    requirements: list[str]  # the turns' requirements, in turn order
    order: list[int]  # the Analyzer's order of the Decomposer's requirements
    turns: list[dict[str, Any]]  # the turns kept (`TurnRecord`s)
    drafts: list[dict[str, Any]]  # the current turn's Coder drafts
    turn_cap: int  # the settings' cap, raised by a person's rejection
    feedback: str  # for the current turn's next draft
    last: dict[str, str] | None  # the current turn's last draft (code, tests)
    pending: dict[str, Any] | None  # the request a person is asked (the interrupt's value)
    reviews: list[dict[str, Any]]  # every decision a person made


@dataclass
class SeedContext:
    """What a seed's nodes work with besides the state (not checkpointed)."""

    seed: TaskSeed
    agents: ConstructionAgents
    gateway: ModelGateway
    runner: SandboxRunner
    settings: ConstructionSettings
    record: Record  # writes one trace event


# --------------------------------------------------------------------------- the nodes


async def filter_node(state: SeedState, runtime: Runtime[SeedContext]) -> dict[str, Any]:
    """Node "filter": SR-Eval's seed filters (`filters.filter_seed`); their verdicts (the contamination probes'
    per model) are kept for the task's construction.json as well as written as events."""
    ctx = runtime.context
    verdicts: list[dict[str, Any]] = []

    def record(event: str, **fields: Any) -> None:
        ctx.record(event, **fields)
        if event == "seed_filter":
            verdicts.append(fields)

    filtered = await filter_seed(ctx.seed, ctx.agents, ctx.gateway, ctx.runner, ctx.settings, record)
    return {"filtered": filtered, "filter_verdicts": verdicts}


async def instruction_node(state: SeedState, runtime: Runtime[SeedContext]) -> dict[str, Any]:
    """Node "instruction": SR-Eval converts a repository-level seed's signature and docstring into a
    natural-language instruction, the complete requirement its Decomposer starts from; a function-level seed (and
    any seed with the setting off) keeps requirement.md."""
    ctx = runtime.context
    if ctx.seed.level != "repository" or not ctx.settings.docstring_instructions:
        return {"instruction": ""}
    instruction = await ctx.agents.instruction.convert(ctx.gateway, ctx.seed)
    ctx.record("instruction", seed=ctx.seed.id, instruction=instruction)
    return {"instruction": instruction}


def working_seed(seed: TaskSeed, state: SeedState) -> TaskSeed:
    """The seed as the requirement agents see it: its requirement the converted instruction, when there is one."""
    instruction = state.get("instruction")
    return seed.model_copy(update={"requirement": instruction}) if instruction else seed


async def requirements_node(state: SeedState, runtime: Runtime[SeedContext]) -> dict[str, Any]:
    """Node "requirements": Decomposer <-> Evaluator, then the Analyzer; over the cap, a request for a person."""
    ctx = runtime.context
    seed = working_seed(ctx.seed, state)
    outcome = await generate_requirements(seed, ctx.agents, ctx.gateway, ctx.record,
                                          cap=state.get("decomposition_cap") or ctx.settings.decomposition_cap,
                                          iterations=state.get("decompositions") or [],
                                          feedback=state.get("requirement_feedback", ""))
    if outcome.review:
        return {"decompositions": outcome.iterations,
                "pending": requirements_request(seed, outcome.iterations, outcome.review)}
    return {"decompositions": outcome.iterations, **_turns_from(outcome.requirements, outcome.order)}


async def analyze_node(state: SeedState, runtime: Runtime[SeedContext]) -> dict[str, Any]:
    """Node "analyze": the Analyzer orders the decomposition a person approved."""
    ctx = runtime.context
    decompositions = [dict(step) for step in state.get("decompositions") or []]
    requirements = usable_decomposition(decompositions[-1]) or []
    order, ordered = await order_requirements(working_seed(ctx.seed, state), ctx.agents, ctx.gateway, ctx.record,
                                              requirements, decompositions[-1])
    return {"decompositions": decompositions, **_turns_from(ordered, order)}


def _turns_from(requirements: list[str], order: list[int]) -> dict[str, Any]:
    """The state that starts Algorithm 1 over `requirements`."""
    return {"requirements": requirements, "order": order, "turns": [], "drafts": [], "feedback": "", "last": None,
            "turn_cap": 0, "pending": None}


async def turn_node(state: SeedState, runtime: Runtime[SeedContext]) -> dict[str, Any]:
    """Node "turn": Algorithm 1 on the next turn (`turns.build_turn`); a turn for a person becomes a request."""
    ctx = runtime.context
    turns, requirements = state.get("turns") or [], state["requirements"]
    turn = len(turns) + 1
    progress = await build_turn(ctx.seed, requirements, turn, turns[-1]["code"] if turns else "", ctx.agents,
                                ctx.gateway, ctx.runner, ctx.record, ablation=ctx.settings.ablation,
                                cap=state.get("turn_cap") or ctx.settings.turn_cap,
                                drafts=state.get("drafts") or [], feedback=state.get("feedback", ""))
    if progress.kept is not None:
        return _kept(turns, progress.kept)
    last = {"code": progress.last.code, "tests": progress.last.tests} if progress.last is not None else None
    return {"drafts": progress.drafts, "feedback": progress.feedback, "last": last,
            "pending": turn_request(ctx.seed, requirements, turn, progress.drafts, last, progress.review or "")}


def _kept(turns: list[dict[str, Any]], kept: TurnRecord) -> dict[str, Any]:
    return {"turns": [*turns, asdict(kept)], "drafts": [], "feedback": "", "last": None, "turn_cap": 0,
            "pending": None}


async def review_node(state: SeedState, runtime: Runtime[SeedContext]) -> dict[str, Any]:
    """Node "review": pause for a person's decision on the request, then apply it (the route goes on)."""
    ctx = runtime.context
    request = dict(state["pending"] or {})
    decision = ask_person(request, parse_construction_decision)
    stage, turn = request["stage"], request.get("turn")
    record = {"stage": stage, "turn": turn, "iteration": request.get("iteration"), "action": decision.action,
              "feedback": decision.feedback, "edited": sorted(decision.files or {})}
    ctx.record("human_review", seed=ctx.seed.id, **record)
    update: dict[str, Any] = {"reviews": [*(state.get("reviews") or []), record], "pending": None}
    if stage == REQUIREMENTS_STAGE:
        if decision.action == "reject":
            update.update(requirement_feedback=HUMAN_FEEDBACK + decision.feedback,
                          decomposition_cap=_one_more(state.get("decomposition_cap"), ctx.settings.decomposition_cap,
                                                      len(state.get("decompositions") or [])))
        elif decision.action == "edit":
            update.update(_turns_from(edited_requirements(decision.files or {}), []))
        return update
    if decision.action == "reject":
        update.update(feedback=HUMAN_FEEDBACK + decision.feedback,
                      turn_cap=_one_more(state.get("turn_cap"), ctx.settings.turn_cap, len(state.get("drafts") or [])))
    elif decision.action == "edit":
        requirement, code, tests = edited_turn(request, decision.files or {})
        requirements = list(state["requirements"])
        requirements[turn - 1] = requirement
        update.update(requirements=requirements, last={"code": code, "tests": tests})
    else:
        update.update(_kept(state.get("turns") or [], _turn_record(ctx.seed, state, turn, state["requirements"],
                                                                   state.get("drafts") or [])))
    return update


def _one_more(raised: int | None, cap: int, drafts: int) -> int:
    """The cap after a rejection: one more draft than made so far, the settings' cap at least."""
    return max(raised or cap, drafts + 1)


def _turn_record(seed: TaskSeed, state: SeedState, turn: int, requirements: list[str],
                 drafts: list[dict[str, Any]]) -> TurnRecord:
    last = state.get("last") or {}
    return TurnRecord(turn=turn, requirement=requirements[turn - 1], code=last.get("code", ""),
                      tests=last.get("tests", ""), test_file=turn_test_file(seed, turn), drafts=drafts)


async def check_edit_node(state: SeedState, runtime: Runtime[SeedContext]) -> dict[str, Any]:
    """Node "check_edit": a person's version of a turn through stages 1 and 2 in the sandbox: kept when it passes
    (the person stands in for stage 3), else the person is asked again with the reason."""
    ctx = runtime.context
    turns, requirements, drafts = state.get("turns") or [], state["requirements"], list(state.get("drafts") or [])
    turn = len(turns) + 1
    last = state.get("last") or {}
    step: dict[str, Any] = {"iteration": len(drafts) + 1, "by": "person"}
    decision, feedback = check_draft(ctx.seed, turn, turns[-1]["code"] if turns else "",
                                     TurnDraft(code=last.get("code", ""), tests=last.get("tests", "")), ctx.runner,
                                     ctx.settings.ablation, step)
    step["decision"] = "kept" if decision == CHECKED else decision
    drafts.append(step)
    ctx.record("turn_draft", seed=ctx.seed.id, turn=turn, **step)
    if decision == CHECKED:
        return _kept(turns, _turn_record(ctx.seed, state, turn, requirements, drafts))
    return {"drafts": drafts, "pending": turn_request(ctx.seed, requirements, turn, drafts, last,
                                                      f"turn {turn}: your edit did not pass: {feedback}",
                                                      error=f"the edited turn did not pass: {feedback}")}


# --------------------------------------------------------------------------- the routes


def after_filter(state: SeedState) -> str:
    return END if state.get("filtered") else "instruction"


def after_requirements(state: SeedState) -> str:
    return "review" if state.get("pending") else "turn"


def after_turn(state: SeedState) -> str:
    """A request pending: to the person; else the next turn, or the end after the last."""
    if state.get("pending"):
        return "review"
    return "turn" if len(state.get("turns") or []) < len(state.get("requirements") or []) else END


def after_review(state: SeedState) -> str:
    """Where a decision leads: an approved decomposition to the Analyzer, an edited turn to its check, a
    rejection back to its agent, anything else on (the next turn, or the end)."""
    last = (state.get("reviews") or [{}])[-1]
    if last.get("stage") == REQUIREMENTS_STAGE:
        return {"approve": "analyze", "edit": "turn", "reject": "requirements"}[last["action"]]
    if last.get("action") == "edit":
        return "check_edit"
    return after_turn(state)


def build_seed_graph() -> Any:
    """The compiled graph of one seed's construction (no checkpointer: the driver gives it the run folder's)."""
    graph = StateGraph(SeedState, context_schema=SeedContext)
    graph.add_node("filter", filter_node)
    graph.add_node("instruction", instruction_node)
    graph.add_node("requirements", requirements_node)
    graph.add_node("analyze", analyze_node)
    graph.add_node("turn", turn_node)
    graph.add_node("review", review_node)
    graph.add_node("check_edit", check_edit_node)
    graph.add_edge(START, "filter")
    graph.add_conditional_edges("filter", after_filter, ["instruction", END])
    graph.add_edge("instruction", "requirements")
    graph.add_conditional_edges("requirements", after_requirements, ["review", "turn"])
    graph.add_edge("analyze", "turn")
    graph.add_conditional_edges("turn", after_turn, ["review", "turn", END])
    graph.add_conditional_edges("review", after_review, ["analyze", "turn", "requirements", "check_edit", END])
    graph.add_conditional_edges("check_edit", after_turn, ["review", "turn", END])
    return graph.compile(name="construct-multiturn-seed")
