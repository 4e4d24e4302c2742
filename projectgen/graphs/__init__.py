"""LangGraph graphs: typed state, one subgraph per stage, and the project graph that chains them.

Compose your own pipeline from the stage builders::

    stages = [("architecture", architecture_stage(agents.architect, agents.architecture_judge, settings)),
              ("code", code_stage(agents.coder, [agents.code_judge, LintJudge()], settings))]
    graph = build_project_graph(stages=stages)
"""
from __future__ import annotations

from projectgen.graphs.architecture import architecture_stage
from projectgen.graphs.code import code_stage
from projectgen.graphs.project import build_project_graph, default_stages
from projectgen.graphs.skeleton import skeleton_stage
from projectgen.graphs.state import ProjectState, RunContext, append_unique, initial_state, merge_dict

__all__ = [
    "ProjectState", "RunContext", "append_unique", "architecture_stage", "build_project_graph", "code_stage",
    "default_stages", "initial_state", "merge_dict", "skeleton_stage",
]
