"""projectgen: requirement documents in, a tested Python repository out.

Public names are re-exported lazily so that `import projectgen` (and the CLI's
start-up) stays fast; heavy libraries load only when a name that needs them is used.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "ProjectGenError": "projectgen.errors",
    "Task": "projectgen.datasets.task",
    "TestSuite": "projectgen.datasets.task",
    "EnvSpec": "projectgen.datasets.task",
    "Documents": "projectgen.datasets.task",
    "load_task": "projectgen.datasets.loaders",
    "load_dataset": "projectgen.datasets.loaders",
    "example_tasks_dir": "projectgen.datasets.examples",
    "Repository": "projectgen.repository",
    "load_repository": "projectgen.repository",
    "write_repository": "projectgen.repository",
    "SandboxRunner": "projectgen.evaluation.runner",
    "RunnerSettings": "projectgen.evaluation.runner",
    "TestReport": "projectgen.evaluation.report",
    "TestResult": "projectgen.evaluation.report",
    "Outcome": "projectgen.evaluation.report",
    "pass_rate": "projectgen.evaluation.metrics",
    "loc_weighted_average": "projectgen.evaluation.metrics",
    "repository_stats": "projectgen.evaluation.metrics",
    "example_task_path": "projectgen.datasets.examples",
    "example_script_path": "projectgen.datasets.examples",
    # pipeline
    "Settings": "projectgen.config",
    "run_project": "projectgen.runs.pipeline",
    "arun_project": "projectgen.runs.pipeline",
    "RunOutcome": "projectgen.runs.pipeline",
    "RunSummary": "projectgen.runs.summary",
    "LiveCoderSummary": "projectgen.runs.summary",
    "build_project_graph": "projectgen.graphs",
    "architecture_stage": "projectgen.graphs",
    "skeleton_stage": "projectgen.graphs",
    "code_stage": "projectgen.graphs",
    "default_stages": "projectgen.graphs",
    "initial_state": "projectgen.graphs",
    "ProjectState": "projectgen.graphs",
    "RunContext": "projectgen.graphs",
    # agents
    "Agents": "projectgen.agents",
    "Architect": "projectgen.agents",
    "ArchitectureJudge": "projectgen.agents",
    "SkeletonWriter": "projectgen.agents",
    "SkeletonJudge": "projectgen.agents",
    "Coder": "projectgen.agents",
    "CodeJudge": "projectgen.agents",
    "ModelGateway": "projectgen.agents",
    "Verdict": "projectgen.agents",
    "CheckStatus": "projectgen.agents",
    "Prompt": "projectgen.prompts",
    "load_prompt": "projectgen.prompts",
    # models
    "make_chat_model": "projectgen.llm",
    "ModelRoles": "projectgen.llm",
    "ScriptedChatModel": "projectgen.llm",
    "load_script": "projectgen.llm",
    "call_model": "projectgen.llm",
    "acall_model": "projectgen.llm",
    "UsageRecorder": "projectgen.llm",
    "TokenBudget": "projectgen.llm",
    "ModelCallError": "projectgen.llm",
    "BudgetExceededError": "projectgen.llm",
    "FaultyChatModel": "projectgen.llm.faults",
    "FaultPlan": "projectgen.llm.faults",
    "inject_faults": "projectgen.llm.faults",
    "reference_script": "projectgen.llm.reference_replay",
    "Breakage": "projectgen.llm.reference_replay",
    # architecture tree
    "SSAT": "projectgen.ssat",
    "ModuleNode": "projectgen.ssat",
    "FileNode": "projectgen.ssat",
    "ClassNode": "projectgen.ssat",
    "FunctionNode": "projectgen.ssat",
    "Parameter": "projectgen.ssat",
    "GlobalCode": "projectgen.ssat",
    "Attribute": "projectgen.ssat",
    "SSATValidationError": "projectgen.ssat",
    "validate_ssat_json": "projectgen.ssat",
    "render_tree": "projectgen.ssat",
    "render_file": "projectgen.ssat",
    "render_stub": "projectgen.ssat",
    "diff_ssat": "projectgen.ssat",
    "ssat_from_repository": "projectgen.ssat",
    # parsing, memory, edits, dependencies
    "StructuredOutputError": "projectgen.llm.parsing",
    "extract_json": "projectgen.llm.parsing",
    "parse_model": "projectgen.llm.parsing",
    "StageMemory": "projectgen.memory",
    "MemoryEntry": "projectgen.memory",
    "apply_edits": "projectgen.repository.edits",
    "EditOutcome": "projectgen.repository.edits",
    "import_graph": "projectgen.repository.dependencies",
    "dependency_layers": "projectgen.repository.dependencies",
    "topological_order": "projectgen.repository.dependencies",
    # LiveCoder: attempts, knowledge, best repository, budgets
    "AttemptSettings": "projectgen.config",
    "run_livecoder": "projectgen.runs.livecoder",
    "arun_livecoder": "projectgen.runs.livecoder",
    "LiveCoderOutcome": "projectgen.runs.livecoder",
    "build_attempts_graph": "projectgen.graphs",
    "AttemptsContext": "projectgen.graphs",
    "KnowledgeStore": "projectgen.memory.knowledge_store",
    "KnowledgeExtractor": "projectgen.agents.knowledge",
    "BestRepositoryStore": "projectgen.memory.best_repo",
    "PriceTable": "projectgen.llm.pricing",
    "CostBudget": "projectgen.llm",
    "AllBudgets": "projectgen.llm",
    # inspection and experiments
    "read_trace": "projectgen.runs.trace",
    "load_run": "projectgen.inspection",
    "write_report": "projectgen.inspection",
    "run_experiment": "projectgen.experiments",
    "ExperimentSpec": "projectgen.experiments",
    "LocalExecutor": "projectgen.experiments",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    """Import the defining module on first use of a public name."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'projectgen' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
