"""Building benchmarks, not only running them: SR-Eval's multi-turn task construction (decomposition
agents, discriminative test generation), LiveRepoReflection's exercise construction (cross-execution,
selection, MinHash decontamination) and check tests for tasks that have none. Every step that runs code
runs it in the sandbox (`projectgen.evaluation`)."""
