"""langgraph.json points at graph factories that load and run (models from the environment)."""
from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path

import pytest

from projectgen.datasets.examples import example_script_path
from projectgen.errors import ProjectGenError
from projectgen.graphs import RunContext, initial_state

ROOT = Path(__file__).resolve().parents[2]


def test_langgraph_json_names_loadable_factories(monkeypatch) -> None:
    monkeypatch.setenv("PROJECTGEN_MODEL", f"scripted:{example_script_path('kvstore.demo')}")
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    for name, target in config["graphs"].items():
        path, _, attribute = target.partition(":")
        module = importlib.import_module(path.removeprefix("./").removesuffix(".py").replace("/", "."))
        graph = getattr(module, attribute)()
        assert graph.get_graph().nodes, name


def test_the_studio_graph_runs_with_a_json_context(monkeypatch) -> None:
    from projectgen.graphs.studio import project_graph

    monkeypatch.setenv("PROJECTGEN_MODEL", f"scripted:{example_script_path('kvstore.demo')}")
    context = RunContext(task="kvstore")  # what Studio sends: {"task": "kvstore"}
    state = asyncio.run(project_graph().ainvoke(initial_state(context.task), context=context))
    assert state["verdicts"][-1]["stage"] == "code" and state["verdicts"][-1]["accepted"]


def test_a_missing_model_is_a_clear_error(monkeypatch) -> None:
    from projectgen.graphs.studio import project_graph

    monkeypatch.delenv("PROJECTGEN_MODEL", raising=False)
    with pytest.raises(ProjectGenError, match="PROJECTGEN_MODEL"):
        project_graph()
