"""projectgen: requirement documents in, a tested Python repository out.

What users call is re-exported here (tasks, settings, graph and stage builders, agents and
the Protocols a stage expects of them, prompts, models, the runner, run and experiment entry
points, trace and report); helpers stay in their sub-packages (`projectgen.ssat.render_stub`,
`projectgen.llm.parsing.extract_json`, `projectgen.repository.dependencies.topological_order`).
Names are re-exported lazily so that `import projectgen` (and the CLI's start-up) stays fast;
heavy libraries load only when a name that needs them is used.
"""
from __future__ import annotations

from projectgen.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "ProjectGenError": "projectgen.errors",
    # tasks
    "Task": "projectgen.datasets.task",
    "TestSuite": "projectgen.datasets.task",
    "EnvSpec": "projectgen.datasets.task",
    "Documents": "projectgen.datasets.task",
    "load_task": "projectgen.datasets.loaders",
    "load_dataset": "projectgen.datasets.loaders",
    "example_tasks_dir": "projectgen.datasets.examples",
    "example_task_path": "projectgen.datasets.examples",
    "example_script_path": "projectgen.datasets.examples",
    # settings
    "Settings": "projectgen.config",
    "AttemptSettings": "projectgen.config",
    # graphs and stages
    "build_project_graph": "projectgen.graphs",
    "architecture_stage": "projectgen.graphs",
    "skeleton_stage": "projectgen.graphs",
    "code_stage": "projectgen.graphs",
    "default_stages": "projectgen.graphs",
    "initial_state": "projectgen.graphs",
    "ProjectState": "projectgen.graphs",
    "RunContext": "projectgen.graphs",
    "build_attempts_graph": "projectgen.graphs",
    "AttemptsContext": "projectgen.graphs",
    # agents and what a stage expects of them
    "Agents": "projectgen.agents",
    "Architect": "projectgen.agents",
    "ArchitectureJudge": "projectgen.agents",
    "SkeletonWriter": "projectgen.agents",
    "SkeletonJudge": "projectgen.agents",
    "Coder": "projectgen.agents",
    "CodeJudge": "projectgen.agents",
    "KnowledgeExtractor": "projectgen.agents",
    "ModelGateway": "projectgen.agents",
    "Verdict": "projectgen.agents",
    "CheckStatus": "projectgen.agents",
    "ArchitectureGenerator": "projectgen.agents",
    "ArchitectureReviewer": "projectgen.agents",
    "SkeletonGenerator": "projectgen.agents",
    "SkeletonReviewer": "projectgen.agents",
    "CodeGenerator": "projectgen.agents",
    "CodeReviewer": "projectgen.agents",
    "LessonExtractor": "projectgen.agents",
    "Prompt": "projectgen.prompts",
    "load_prompt": "projectgen.prompts",
    # models: real, replayed, faulty
    "make_chat_model": "projectgen.llm",
    "ModelRoles": "projectgen.llm",
    "ScriptedChatModel": "projectgen.llm",
    "load_script": "projectgen.llm",
    "ModelCallError": "projectgen.llm",
    "BudgetExceededError": "projectgen.llm",
    "PriceTable": "projectgen.llm.pricing",
    "FaultyChatModel": "projectgen.llm.faults",
    "FaultPlan": "projectgen.llm.faults",
    "inject_faults": "projectgen.llm.faults",
    "reference_script": "projectgen.llm.reference_replay",
    "reference_model": "projectgen.llm.reference_replay",
    "Breakage": "projectgen.llm.reference_replay",
    # what flows between stages, and the memories
    "SSAT": "projectgen.ssat",
    "SSATValidationError": "projectgen.ssat",
    "validate_ssat_json": "projectgen.ssat",
    "Repository": "projectgen.repository",
    "load_repository": "projectgen.repository",
    "write_repository": "projectgen.repository",
    "StageMemory": "projectgen.memory",
    "KnowledgeStore": "projectgen.memory.knowledge_store",
    "BestRepositoryStore": "projectgen.memory.best_repo",
    # the sandboxed runner and metrics
    "SandboxRunner": "projectgen.evaluation.runner",
    "RunnerSettings": "projectgen.evaluation.runner",
    "TestReport": "projectgen.evaluation.report",
    "TestResult": "projectgen.evaluation.report",
    "Outcome": "projectgen.evaluation.report",
    "ExpectedTests": "projectgen.evaluation.expectations",
    "TestScore": "projectgen.evaluation.expectations",
    "ScoredRun": "projectgen.evaluation.expectations",
    "score_report": "projectgen.evaluation.expectations",
    "pass_rate": "projectgen.evaluation.metrics",
    "loc_weighted_average": "projectgen.evaluation.metrics",
    "repository_stats": "projectgen.evaluation.metrics",
    "sketch_bleu": "projectgen.evaluation.sketchbleu",
    "average_sketchbleu": "projectgen.evaluation.sketchbleu",
    "SketchBLEUScore": "projectgen.evaluation.sketchbleu",
    "SketchBLEUSettings": "projectgen.evaluation.sketchbleu",
    # runs and experiments
    "run_project": "projectgen.runs",
    "arun_project": "projectgen.runs",
    "RunOutcome": "projectgen.runs",
    "RunSummary": "projectgen.runs",
    "run_livecoder": "projectgen.runs",
    "METHODS": "projectgen.runs",
    "arun_livecoder": "projectgen.runs",
    "LiveCoderOutcome": "projectgen.runs",
    "LiveCoderSummary": "projectgen.runs",
    "run_experiment": "projectgen.experiments",
    "ExperimentSpec": "projectgen.experiments",
    "LocalExecutor": "projectgen.experiments",
    "RayExecutor": "projectgen.experiments",
    "merge_experiments": "projectgen.experiments",
    "bench_reference": "projectgen.experiments",
    # trace and report
    "read_trace": "projectgen.runs",
    "load_run": "projectgen.inspection",
    "write_report": "projectgen.inspection",
}

__all__ = sorted(_EXPORTS) + ["__version__"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
