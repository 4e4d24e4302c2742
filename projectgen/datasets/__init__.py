"""Task model and loaders for CodeProjectEval, DevBench and plain task folders, and Exercism-layout
exercises (LiveRepoReflection, Aider's polyglot benchmark: `exercism`)."""
