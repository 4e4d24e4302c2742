"""Replay oracles: models that answer from a task's known answer instead of a provider.

`--model reference` (and the bundled replay scripts) need the task, its reference and the architecture
tree to write their replies, so they sit above `llm`, `ssat` and `datasets`, not inside `llm`:

- `reference_replay`: the replay script written from a task's reference; `reference_model`, the oracle
  behind ``--model reference``; `exercise_reference_model`, the same for `reflect` (an exercise's
  .meta example); `Breakage` and `break_function`, to make a replay fail on purpose
- `refinement_replay`: multi-turn replays (`refine`): the per-turn reference oracle, per-strategy entries
- `role_specs`: the models a run's spec mapping (run.json's ``models``) describes, ``reference`` included:
  what a resume rebuilds

Import from the modules: they build on other packages, so nothing is imported here.
"""
