"""SR-Eval's stepwise refinement: a multi-turn task played turn by turn under a strategy and a context.

    protocol.py  PROTOCOL: the parts below, as `projectgen.protocols.evaluate` runs them
    settings.py  RefinementSettings (strategies, contexts, token budget) and one run's share (RefinementUnitSettings)
    dataset.py   the multi-turn tasks of a folder (`projectgen.datasets.multiturn`, shared with construction)
    refiner.py   the one agent: each turn's code under a strategy (Full History, Code Edit, Cumulative Instruction)
    graph.py     the solver: turn 1 .. N, each tested against what its reference passes
    unit.py      one task x model x strategy x context in its resumable folder, through the driver
    batch.py     validation of the tasks, then every run on the batch engine (the protocol's own batch)
    metrics.py   Acc(k), Avg Acc, CR, ATC: pure functions over the turns
    results.py   the figures per (model, strategy, context) and the results page
"""
