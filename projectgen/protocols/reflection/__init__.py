"""LiveRepoReflection: write an exercise's solution files, then repair them from the test errors.

    protocol.py  PROTOCOL: the parts below, as `projectgen.protocols.evaluate` runs them
    settings.py  ReflectionSettings (edit formats, tries) and one unit's share (ReflectionUnitSettings)
    dataset.py   the exercises of a folder (`projectgen.datasets.exercism`, shared with construction)
    coder.py     the one agent: writes, then repairs, in an edit format
    graph.py     the solver: write -> test -> repair ... as a LangGraph graph
    unit.py      one exercise x model x format in its resumable folder, through the driver
    batch.py     every exercise x model x format on the batch engine (the protocol's own batch)
    metrics.py   Pass@k, Fix Weight, Well Format: pure functions over the units' outcomes
    results.py   the figures per (model, edit format) and the results page
"""
