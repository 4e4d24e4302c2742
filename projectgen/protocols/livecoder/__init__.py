"""ProjectGen inside LiveCoder's attempts (and the other methods of `projectgen.runs.METHODS`), as a protocol.

For now an adapter: its batch is the experiment's (`projectgen.experiments.experiment.run_experiment`: each
task x method x model one LiveCoder run through `projectgen.runs.livecoder`); `projectgen experiment` is its preset
(every option a setting here or a batch option); its figures are the experiment's, scored where each run ends
(`projectgen.runs.output_scorers`).

    protocol.py  PROTOCOL: the settings, the task loader and the batch below
    settings.py  LiveCoderSettings: the methods, the pipeline's and the attempts' settings, budgets, denominator,
                 the user's scorers, external systems' checkouts, prices and the share of the plan
    batch.py     the Evaluation as an ExperimentSpec, run on the experiment's batch
"""
