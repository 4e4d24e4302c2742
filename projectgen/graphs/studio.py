"""Graph factories for `langgraph dev` / LangGraph Studio (see langgraph.json).

Models come from the environment (``PROJECTGEN_MODEL``, per role ``PROJECTGEN_MODEL_CODER``
etc., ``PROJECTGEN_BASE_URL``), because Studio loads graphs without arguments. Run a graph
from Studio with the context ``{"task": "kvstore"}`` (a bundled example name or a task
folder) and the input ``{"task_id": "kvstore", "documents": ...}`` — or, simpler, use
`projectgen run`, which builds the same graph.
"""
from __future__ import annotations

import os
from typing import Any

from projectgen.errors import ProjectGenError
from projectgen.llm import ROLES, ModelRoles


def models_from_env() -> ModelRoles:
    """`ModelRoles` from PROJECTGEN_MODEL (+ PROJECTGEN_MODEL_<ROLE>, PROJECTGEN_BASE_URL)."""
    default = os.environ.get("PROJECTGEN_MODEL")
    if not default:
        raise ProjectGenError("set PROJECTGEN_MODEL (e.g. openai:gpt-4o-mini or scripted:PATH) for langgraph dev")
    roles = {role: os.environ[f"PROJECTGEN_MODEL_{role.upper()}"] for role in ROLES
             if os.environ.get(f"PROJECTGEN_MODEL_{role.upper()}")}
    return ModelRoles.from_specs(default, base_url=os.environ.get("PROJECTGEN_BASE_URL"), **roles)


def project_graph(config: Any = None):
    """The ProjectGen graph (architecture -> skeleton -> code) with models from the environment."""
    from projectgen.graphs.project import build_project_graph

    return build_project_graph(models_from_env())
