"""projectgen: requirement documents in, a tested Python repository out.

The public API is the short list below (at most 40 names, `tests/test_public_api.py`), grouped as the
README's "Public API" table: compose a run (tasks, settings, models, agents, stages, graphs), run it
(the typed request, the run and experiment entry points, and `evaluate`, the one entry of every protocol),
evaluate (the sandbox and the papers' metrics) and inspect (run folders, traces, reports). Everything else is imported from its
package: ``from projectgen.graphs import build_attempts_graph``, ``from projectgen.llm.faults import
FaultPlan``, ``from projectgen.datasets import load_dataset``.

Names are re-exported lazily so that `import projectgen` (and the CLI's start-up) stays fast;
heavy libraries load only when a name that needs them is used.
"""
from __future__ import annotations

from projectgen.lazy import lazy_exports

__version__ = "0.1.0"

# group -> public name -> its module; the groups are the README's table
_GROUPS: dict[str, dict[str, str]] = {"compose": {
    "load_task": "projectgen.datasets.loaders",
    "example_task_path": "projectgen.datasets.examples",
    "example_script_path": "projectgen.datasets.examples",
    "Settings": "projectgen.config",
    "AttemptSettings": "projectgen.config",
    "make_chat_model": "projectgen.llm.factory",
    "ModelRoles": "projectgen.llm.factory",
    "ScriptedChatModel": "projectgen.llm.scripted",
    "reference_model": "projectgen.oracles.reference_replay",
    "Agents": "projectgen.agents",
    "Verdict": "projectgen.agents.base",
    "architecture_stage": "projectgen.graphs.architecture",
    "skeleton_stage": "projectgen.graphs.skeleton",
    "code_stage": "projectgen.graphs.code",
    "build_project_graph": "projectgen.graphs.project",
    "RunContext": "projectgen.graphs.context",
    "initial_state": "projectgen.graphs.state",
}, "run": {
    "RunRequest": "projectgen.runs.request",
    "run_project": "projectgen.runs.pipeline",
    "Run": "projectgen.runs.livecoder",
    "RunParts": "projectgen.runs.livecoder",
    "review_run": "projectgen.runs.review",
    "run_evolve": "projectgen.protocols.evolve.unit",
    "evaluate": "projectgen.protocols.evaluate",
    "ExperimentSpec": "projectgen.experiments.spec",
    "run_experiment": "projectgen.experiments.experiment",
    "run_reflect": "projectgen.protocols.reflection.batch",
    "RefinementSpec": "projectgen.protocols.refinement.batch",
    "run_refinement": "projectgen.protocols.refinement.batch",
}, "evaluate": {
    "SandboxRunner": "projectgen.evaluation.runner",
    "RunnerSettings": "projectgen.evaluation.runner",
    "score_report": "projectgen.evaluation.expectations",
    "sketch_bleu": "projectgen.evaluation.sketchbleu",
    "pass_at": "projectgen.protocols.reflection.metrics",
    "turn_metrics": "projectgen.protocols.refinement.metrics",
}, "inspect": {
    "load_run": "projectgen.inspection.loading",
    "read_trace": "projectgen.runs.trace",
    "write_report": "projectgen.inspection.report",
    "ProjectGenError": "projectgen.errors",
}}

_EXPORTS: dict[str, str] = {name: module for group in _GROUPS.values() for name, module in group.items()}

__all__ = sorted(_EXPORTS) + ["__version__"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
