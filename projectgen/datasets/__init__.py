"""Task model and loaders for CodeProjectEval, DevBench and plain task folders."""
