"""Incremental development: a finished run's repository changed for a new requirement, redoing only what the change needs.

The graph starts from the base run's architecture tree and repository (in the runtime context,
`EvolveContext`), then:

    start_from_base -> architecture (the `TreeReviser` <-> the architecture judge, as usual)
      -> plan_changes (the tree diff; the files to redo) -> skeleton -> code -> END

`plan_evolution` compares the base tree with the revised one file by file: a file whose node was
added, removed or changed is touched; the files that import a touched file (in the base
repository's import graph, or by the revised tree's dependencies) are redone too. The skeleton
and code stages then write only those files (the state's `scope`): every other file keeps its
code byte for byte and costs no model call, while the judges review the stage as a whole and the
code judge runs every check test (the earlier requirements' and the change's).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from projectgen.agents import Agents
from projectgen.config import Settings
from projectgen.graphs.context import RunContext
from projectgen.graphs.project import default_stages
from projectgen.graphs.skeleton import python_files
from projectgen.graphs.state import ProjectState, ssat_data, ssat_of
from projectgen.repository.dependencies import import_graph
from projectgen.repository.edits import make_whole_file_reply
from projectgen.ssat import SSAT, diff_ssat, render_diff, render_stub, ssat_from_repository


class EvolveState(ProjectState, total=False):
    """An evolve run: the project state, starting from a finished run's tree and repository, plus the tree it
    started from and the plan of what to redo (`plan_evolution`)."""

    base_ssat: dict[str, Any]
    evolution: dict[str, Any]


class EvolutionPlan(BaseModel):
    """What a change request does to a repository, read from the tree diff."""

    added: list[str] = Field(default_factory=list, description="tree files the revision adds")
    removed: list[str] = Field(default_factory=list, description="tree files the revision drops (deleted)")
    changed: list[str] = Field(default_factory=list, description="tree files whose node changed")
    importers: list[str] = Field(default_factory=list, description="files that import a touched file")
    redo: list[str] = Field(default_factory=list, description="the files the skeleton and code stages write")
    kept: list[str] = Field(default_factory=list, description="every other repository file, kept byte for byte")
    diff: dict[str, Any] = Field(default_factory=dict, description="the tree diff (DeepDiff, as JSON)")
    diff_text: str = Field(default="", description="the tree diff as short lines")

    @property
    def touched(self) -> list[str]:
        return sorted({*self.added, *self.removed, *self.changed})


def plan_evolution(base: SSAT, revised: SSAT, repository: Mapping[str, str]) -> EvolutionPlan:
    """The plan of an evolve run: touched tree files, their importers, what is redone and what is kept."""
    old = {f.path: f.model_dump(mode="json") for f in base.files()}
    new = {f.path: f.model_dump(mode="json") for f in revised.files()}
    added = sorted(new.keys() - old.keys())
    removed = sorted(old.keys() - new.keys())
    changed = sorted(path for path in old.keys() & new.keys() if old[path] != new[path])
    touched = {*added, *removed, *changed}
    importers = {path for path, imported in import_graph(repository).items() if imported & touched}
    importers |= {f.path for f in revised.files() if set(f.dependencies) & touched}
    importers = (importers - touched) & new.keys()  # only files of the tree can be written again
    redo = sorted(({*added, *changed} | importers) & new.keys())
    kept = sorted(path for path in repository if path not in redo and path not in removed)
    diff = diff_ssat(base, revised)
    return EvolutionPlan(added=added, removed=removed, changed=changed, importers=sorted(importers), redo=redo,
                         kept=kept, diff=diff, diff_text=render_diff(diff, max_lines=200))


@dataclass
class EvolveContext(RunContext):
    """The run context of an evolve run: the base run's tree (as JSON) and repository besides the usual."""

    base_tree: dict[str, Any] = field(default_factory=dict)
    base_repository: dict[str, str] = field(default_factory=dict)


async def start_from_base(state: EvolveState, runtime: Runtime[EvolveContext]) -> dict[str, Any]:
    """Node "start_from_base": the base run's tree and repository become the state (and the trace's baseline)."""
    ctx = runtime.context
    ctx.say(f"evolve: starting from the base run's tree ({len(ctx.base_tree.get('files') or [])} files) and "
            f"repository ({len(ctx.base_repository)} files)")
    return {"ssat": dict(ctx.base_tree), "base_ssat": dict(ctx.base_tree), "repository": dict(ctx.base_repository)}


async def plan_changes(state: EvolveState, runtime: Runtime[EvolveContext]) -> dict[str, Any]:
    """Node "plan_changes": the tree diff and the files to redo; removed files go, the others keep their code."""
    revised = ssat_of(state)
    assert revised is not None  # the architecture stage stops the run without a tree
    repository = state.get("repository") or {}
    plan = plan_evolution(SSAT.model_validate(state["base_ssat"]), revised, repository)
    runtime.context.say(f"evolve: the tree diff touches {len(plan.touched)} file(s) ({', '.join(plan.touched) or 'none'})"
                        f"; redoing {len(plan.redo)} (importers: {', '.join(plan.importers) or 'none'}), keeping "
                        f"{len(plan.kept)} byte for byte")
    # The skeleton judge reviews the whole tree: the kept files show as their stubs (their code stays as it is).
    stubs = {path: render_stub(revised.file(path)) for path in python_files(revised) if path not in plan.redo}
    return {"evolution": plan.model_dump(mode="json"), "scope": list(plan.redo), "skeleton": stubs,
            "repository": {path: None for path in plan.removed if path in repository}}


def stop_or(next_node: str):
    def route(state: EvolveState) -> str:
        return END if state.get("stopped") else next_node

    route.__name__ = f"to_{next_node}"
    return route


def build_evolve_graph(agents: Agents, settings: Settings | None = None, *, checkpointer: Any = None,
                       name: str = "evolve"):
    """The compiled evolve graph. `agents.architect` revises the base tree (a `TreeReviser`); run it with
    ``context=EvolveContext(task=<the evolved task>, base_tree=..., base_repository=...)``."""
    settings = settings or Settings()
    stages = dict(default_stages(agents, settings))
    graph = StateGraph(EvolveState, context_schema=EvolveContext)
    graph.add_node("start_from_base", start_from_base)
    graph.add_node("architecture", stages["architecture"])
    graph.add_node("plan_changes", plan_changes)
    graph.add_node("skeleton", stages["skeleton"])
    graph.add_node("code", stages["code"])
    graph.add_edge(START, "start_from_base")
    graph.add_edge("start_from_base", "architecture")
    graph.add_conditional_edges("architecture", stop_or("plan_changes"), ["plan_changes", END])
    graph.add_edge("plan_changes", "skeleton")
    graph.add_conditional_edges("skeleton", stop_or("code"), ["code", END])
    graph.add_edge("code", END)
    return graph.compile(checkpointer=checkpointer, name=name)


# --------------------------------------------------------------------------- replays of evolve runs

ACCEPT_ARCHITECTURE = {"scores": {"requirement_coverage": 9, "document_consistency": 9, "interface_consistency": 9,
                                  "dependency_relations": 9},
                       "overall": 9, "reasons": "the revision covers the change and keeps the rest", "feedback": ""}


def revised_tree(base: SSAT, after: Mapping[str, str], changed: Sequence[str] = ()) -> SSAT:
    """`base` revised to describe `after`: files gone from `after` dropped, new files and the `changed` ones
    described from their code (`ssat_from_repository`), every other node kept exactly."""
    python = {path: text for path, text in after.items() if path.endswith(".py")}
    derived = {f.path: f for f in ssat_from_repository(python, base.project_name, base.description).files()}
    nodes = {f.path: f for f in base.files() if f.path in after}
    for path, node in derived.items():
        if path not in nodes or path in changed:
            nodes[path] = node
    return SSAT.model_validate({"project_name": base.project_name, "description": base.description,
                                "modules": [m.model_dump(mode="json") for m in base.modules],
                                "files": [nodes[p].model_dump(mode="json", by_alias=True) for p in sorted(nodes)]})


def evolve_replay(base: SSAT, before: Mapping[str, str], after: Mapping[str, str], *, label: str,
                  changed: Sequence[str] = (), first_versions: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A replay script (`projectgen.llm.scripted` format) of an evolve run from (`base`, `before`) whose output
    is `after`: the architect answers with `revised_tree`, the judges accept, and the skeleton writer and the
    coder answer for the files the plan redoes. `first_versions[path]` is a file's first code version (say,
    one that breaks an earlier requirement's test): the code judge then names the file and the coder's
    repair (iteration 2) is `after`'s code."""
    revised = revised_tree(base, after, changed)
    plan = plan_evolution(base, revised, before)
    responses: list[dict[str, Any]] = [
        {"role": "architect", "content": ssat_data(revised)},
        {"role": "architecture_judge", "content": ACCEPT_ARCHITECTURE},
        {"role": "skeleton_judge", "content": {"score": 9, "feedback": "", "files": {}}},
        {"role": "code_judge", "content": {"summary": "", "files": []}},
    ]
    for path in plan.redo:
        if not path.endswith(".py"):
            continue
        responses.append({"role": "skeleton", "target": path,
                          "content": f"```python\n{render_stub(revised.file(path))}```\n"})
        first = (first_versions or {}).get(path)
        responses.append({"role": "coder", "target": path, "content": f"```python\n{first or after[path]}```\n"})
        if first is not None:
            responses.append({"role": "coder", "target": path, "iteration": 2,
                              "content": make_whole_file_reply([path], after)})
    broken = sorted((first_versions or {}).keys() & set(plan.redo))
    if broken:
        responses.append({"role": "code_judge", "iteration": 1, "content": {
            "summary": "check tests fail", "files": [{"path": p, "suggestion": "keep what the earlier requirements "
                                                      "ask while adding the change"} for p in broken]}})
    return {"label": label, "responses": responses}
