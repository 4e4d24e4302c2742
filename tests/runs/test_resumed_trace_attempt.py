"""A resumed trace labels the writes LangGraph replays with the attempt they ran in.

A kill can land after a node finished (its writes saved as pending) but before the step's checkpoint was
committed. LangGraph's state snapshot folds those pending writes in, so a node that moves the attempt on
("learn" returns attempt + 1) made the resumed trace label the replay of its own update with the next
attempt: a second "learn" event under the wrong attempt (seen once in the slow kill-and-resume test).
Here the pending writes come from a sibling that fails in the same step, which leaves them exactly as a
kill does.
"""
from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from projectgen.runs.driver import Drive, drive
from projectgen.runs.lifecycle import Lifecycle
from projectgen.runs.manifest import RunManifest
from projectgen.runs.trace import TraceWriter, read_trace


class State(TypedDict, total=False):
    attempt: int
    done: Annotated[list[str], operator.add]


def _graph(crash_once: Path) -> Any:
    def plan_attempt(state: State) -> dict[str, Any]:
        return {"attempt": state.get("attempt") or 1}

    def learn(state: State) -> dict[str, Any]:
        return {"attempt": state["attempt"] + 1, "done": [f"learn {state['attempt']}"]}

    def sibling(state: State) -> dict[str, Any]:
        if not crash_once.exists():
            crash_once.touch()
            raise RuntimeError("killed")  # learn, in the same step, has finished: its writes stay pending
        return {}

    graph = StateGraph(State)
    graph.add_node("plan_attempt", plan_attempt)
    graph.add_node("learn", learn)
    graph.add_node("sibling", sibling)
    graph.add_edge(START, "plan_attempt")
    graph.add_edge("plan_attempt", "learn")
    graph.add_edge("plan_attempt", "sibling")
    graph.add_edge("learn", END)
    graph.add_edge("sibling", END)
    return graph.compile()


def _drive(graph: Any, out: Path, *, resume: bool) -> dict[str, Any]:
    lifecycle = Lifecycle(out / "run.json", RunManifest(task_path="t", task_id="t", run_id="run-1"))
    how = Drive(start={"attempt": 1}, context=None, resume=resume, attempt_key="attempt")
    return asyncio.run(drive(graph, how, lifecycle, TraceWriter(out / "events.jsonl"), out / "checkpoints.sqlite")
                       ).state


def test_a_replayed_node_is_traced_once_under_the_attempt_it_ran_in(tmp_path: Path) -> None:
    graph = _graph(tmp_path / "crashed")
    with pytest.raises(RuntimeError, match="killed"):
        _drive(graph, tmp_path, resume=False)
    state = _drive(graph, tmp_path, resume=True)

    assert state["done"] == ["learn 1"] and state["attempt"] == 2
    learned = [(e["node"], e["attempt"]) for e in read_trace(tmp_path / "events.jsonl")
               if e["event"] == "node" and e["node"] == "learn"]
    assert learned == [("learn", 1)]
