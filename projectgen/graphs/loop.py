"""The generate <-> judge loop shared by every stage."""
from __future__ import annotations

from collections.abc import Callable

from langgraph.graph import END

from projectgen.graphs.state import ProjectState, iteration_of, last_verdict


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
