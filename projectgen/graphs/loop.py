"""What every graph builder shares: binding a node's fixed arguments, the generate <-> judge loop."""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from langgraph.graph import END

from projectgen.agents.base import Verdict
from projectgen.config import Settings
from projectgen.graphs.state import ProjectState, iteration_of, last_verdict

Result = TypeVar("Result")


def bind(node: Callable[..., Result], **fixed: Any) -> Callable[..., Result]:
    """`node` with keyword arguments fixed by its builder (the stage's agents, settings), so nodes
    stay module-level functions. It keeps the node's name, which LangGraph gives a routing
    function's branch and the traced run. Don't fix `config`, `runtime`, `store`, `writer`,
    `previous` or `error`: LangGraph passes those itself."""
    bound = partial(node, **fixed)
    bound.__name__ = node.__name__  # type: ignore[attr-defined]  # partial objects take attributes
    return bound


def after_judge(stage: str, cap: int, generator: str) -> Callable[[ProjectState], str]:
    """Route after a judge: back to `generator` until accepted, told to stop, or at the cap."""

    def route(state: ProjectState) -> str:
        verdict = last_verdict(state, stage)
        if state.get("stopped") or verdict is None or verdict.accepted or verdict.stop:
            return END
        return END if iteration_of(state, stage) >= cap else generator

    route.__name__ = f"after_{stage}_judge"
    return route


def describe(verdict_score: float, accepted: bool, cap_reached: bool) -> str:
    """A few words for progress lines."""
    if accepted:
        return f"score {verdict_score:g}, accepted"
    return f"score {verdict_score:g}, " + ("cap reached, moving on" if cap_reached else "revising")


def with_threshold_rule(verdict: Verdict, settings: Settings) -> Verdict:
    """A scoring judge's verdict under the settings' threshold rule: the judge's own acceptance (it
    compares with ``>=`` and may reject for other reasons) and, with the paper's rule "exceeds", a score
    above the threshold. Applied by the stage, so a user's judge needs no knowledge of the rule."""
    accepted = verdict.accepted and settings.accepts(verdict.score)
    return verdict if accepted == verdict.accepted else verdict.model_copy(update={"accepted": accepted})
