"""LiveRepoReflection's exercise construction: seed code in, new Exercism-layout exercises out (what `reflection`
reads), every step that runs code run in the sandbox.

    protocol.py         PROTOCOL: the parts below, as `projectgen.protocols.evaluate` runs them
    settings.py         ExerciseConstructionSettings: each role's models, the reference set, the draw, judge tries
    dataset.py          the seeds of a folder (`package.load_seeds`)
    agents.py           the solver's roles: designer, test writer, solution writer (typing.Protocols + defaults)
    seed_run.py         the solver: one seed designed, drafted, cross-executed, packaged and judged in its folder
    judges.py           the difficulty judges: reflection played through the registry (never imported)
    cross_execution.py  the check of every suite x solution pair: which pair is kept, what goes to a person
    decontamination.py  the check against near-duplicates: character 5-gram MinHash + LSH, exact Jaccard
    difficulty.py       the check of the judges' outcomes: too easy, timed out, kept
    selection.py        the across-seed decisions (difficulty, near-duplicates among new exercises, names)
    package.py          seeds in, exercises out: the seed folder and the Exercism layout
    batch.py            every seed on the batch engine, then the selection and the reports (the protocol's batch)
"""
