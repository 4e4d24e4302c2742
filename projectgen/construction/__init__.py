"""What the construction protocols share, below them (`projectgen.protocols.exercise_construction`,
`projectgen.protocols.multiturn_construction`): running new tests on new code in the sandbox (`execution`) and the
files a model drafts (`drafts`); and check tests for a task that has none (`check_tests`, `projectgen construct
check-tests`: one task repaired, not a protocol over a dataset). Every step that runs code runs it in the sandbox
(`projectgen.evaluation`)."""
