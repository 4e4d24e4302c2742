"""LangGraph graphs: typed state (`state`), runtime contexts (`context`), one subgraph per stage,
the project graph that chains them, LiveCoder's attempts graph around it, the baselines
(`baselines`: Direct and Self-Reflection) that it can wrap instead; `review` pauses a stage for a
person's decision on its output (LangGraph's interrupt()).

Every node is a module-level function (``projectgen.graphs.code.fill_file``, ...) that reads
the state and the runtime context; a builder binds the stage's agents and settings to its
nodes and wires them.

Compose your own pipeline from the stage builders::

    stages = [("architecture", architecture_stage(agents.architect, [agents.architecture_judge], settings)),
              ("code", code_stage(agents.coder, [agents.code_judge, LintJudge()], settings))]
    graph = build_project_graph(stages=stages)
"""
from __future__ import annotations

from projectgen.graphs.architecture import architecture_stage
from projectgen.graphs.attempts import build_attempts_graph
from projectgen.graphs.baselines import build_direct_graph, build_self_reflection_graph
from projectgen.graphs.code import code_stage
from projectgen.graphs.context import AttemptsContext, ReflectionContext, RunContext
from projectgen.graphs.project import build_project_graph, default_stages
from projectgen.graphs.review import ReviewDecision
from projectgen.graphs.skeleton import skeleton_stage
from projectgen.graphs.state import (AttemptsState, ProjectState, RefinementState, ReflectionState, append_unique,
                                     initial_state, merge_dict)

__all__ = [
    "AttemptsContext", "AttemptsState", "ProjectState", "RefinementState",
    "ReflectionContext", "ReflectionState", "RunContext", "append_unique", "architecture_stage", "build_attempts_graph",
    "build_direct_graph", "build_project_graph", "build_self_reflection_graph", "code_stage",
    "default_stages", "initial_state", "merge_dict",
    "ReviewDecision", "skeleton_stage",
]
