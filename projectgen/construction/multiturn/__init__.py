"""SR-Eval's multi-turn task construction (`projectgen construct multiturn`): seeds -> filters -> requirements
(Decomposer, Evaluator, Analyzer) -> Algorithm 1 per turn (Coder; correctness, distinctiveness, semantic
alignment) -> task folders `projectgen refine` reads.

Modules, one job each: seeds (the seed format), agents (each role's Protocol, default agent and answer model),
requirements (the decomposition loop and turn order), turns (Algorithm 1 and its ablations), output (the task
folder), pipeline (one seed in its run folder), batch (a seed set on the batch engine, the review list, results).
"""
