"""Evolve: a finished run's repository changed for a new requirement, redoing only what the change needs.

    protocol.py  PROTOCOL: the parts below, as `projectgen.protocols.evaluate` runs them
    settings.py  EvolveSettings (the requirement, its tests, the roles' models, the pipeline's settings)
    dataset.py   the base: a finished run folder (its task, repository and architecture tree)
    task.py      the evolved task: the base task with the change request and the change's check tests
    reviser.py   the architect of an evolve run: revises the base's tree for the change (TreeReviser)
    graph.py     the solver's graph: revise the tree -> plan what to redo -> skeleton -> code (only the plan's files)
    scorers.py   the change's and the earlier check tests, the kept files' bytes, the generator calls per file
    unit.py      one evolve run in its own durable folder, through the driver (run_evolve; resume)
    batch.py     the protocol's own batch: that one run, in the output folder (`projectgen evolve` is its preset)
"""
