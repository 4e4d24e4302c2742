"""SR-Eval's multi-turn task construction (`projectgen evaluate multiturn_construction`, `projectgen construct
multiturn`): seeds -> filters -> requirements (Decomposer, Evaluator, Analyzer) -> Algorithm 1 per turn (Coder;
correctness, distinctiveness, semantic alignment) -> task folders `refinement` reads.

    protocol.py      PROTOCOL: the parts below, as `projectgen.protocols.evaluate` runs them
    settings.py      MultiturnConstructionSettings (the protocol's) and ConstructionSettings (what a seed's run records)
    dataset.py       the seeds of a folder (`seeds`: the seed format)
    agents.py        each role's typing.Protocol, default agent and answer model
    graph.py         the solver: one seed's LangGraph graph (filters, requirements, turns, the person's reviews)
    filters.py       the seed filters (length, dependencies, contamination probes)
    dependencies.py  DevEval's dependency kinds of a seed's target function (intra-file, cross-file, none)
    requirements.py  the decomposition loop and the turn order
    turns.py         Algorithm 1 per turn and its ablations: the checks each turn's tests must pass
    review.py        what a person is asked and what their decision may change
    output.py        the task folder
    pipeline.py      one seed in its resumable run folder, through the driver
    batch.py         every seed on the batch engine, the review list and the results (the protocol's batch)
"""
