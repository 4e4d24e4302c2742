"""Every file and folder name of a run folder and of an experiment folder, named once.

A run folder's names are read only by `projectgen.runs.folder.RunFolder`, whose attributes are
the paths (no module outside `runs/` joins them: `tests/test_run_folder_paths.py`); the names of
an experiment folder are used by the batch commands that write one.
"""
from __future__ import annotations

# ------------------------------------------------------------------ a run folder
MANIFEST = "run.json"  # what was run (task, models, settings) and how it ended; --resume reads it
SUMMARY = "summary.json"  # the run's figures: per attempt (LiveCoder) or per stage (single pass)
RUN_LOG = "log.json"  # the run log: how any run ended, in one versioned shape (runs/run_log.py)
USAGE = "usage.jsonl"  # one line per model call
CALLS = "calls.jsonl"  # replies of completed model calls, replayed by a resumed node
PROMPTS = "prompts.jsonl"  # the exact prompt of every call, each distinct one once (keyed by prompt_id)
EVENTS = "events.jsonl"  # the trace: one event per graph node
CHECKPOINTS = "checkpoints.sqlite"  # LangGraph's SQLite checkpoints (and its -wal/-shm files)
THREAD = "thread.json"  # a reflect unit's checkpoint thread in a shared (PostgreSQL) database
STATE = "state.json"  # the single pass's final graph state
SSAT = "ssat.json"  # the architecture tree of the output (single pass, LiveCoder, evolve)
UNIT_REPORT = "unit_report.json"  # the hidden unit tests of the final repository
REPOSITORY = "repository"  # the final output
ATTEMPTS = "attempts"  # attempts/N/: each attempt's repository and record
ATTEMPT_RECORD = "attempt.json"  # attempts/N/attempt.json: the attempt's record
KNOWLEDGE = "knowledge"  # the embedded Chroma knowledge store
BEST = "best"  # the historical-best repository store
EVOLVE = "evolve.json"  # an evolve run: its base run, the change, the tree diff, what was redone and kept
EVOLVED_TASK = "task"  # an evolve run's task: the base task's documents and tests plus the change's
BASE = "base"  # an evolve run's copy of its base run's repository and tree (resume needs nothing else)
CHECK_REPORT = "check_report.json"  # an evolve run's check tests (the earlier ones and the change's)
TURNS = "turns.json"  # a refine task run's turn records
TURN_FILES = "turns"  # turns/K/<target>: the file each turn of a refine task run produced
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
REVIEW = "review.json"  # the review a paused run waits for (`projectgen review DIR`); the checkpoint holds it too
LOCK = ".projectgen.lock"  # held by the one process working in a run or experiment folder
# Folders of generated files (named by a model) and copies of them: nothing of ours is looked for in them.
GENERATED = (REPOSITORY, BASE, EVOLVED_TASK, TURN_FILES, "snapshots")

# Files that mark a folder as a run (for `trace` and `report`).
RUN_MARKERS: tuple[str, ...] = (MANIFEST, EVENTS, SUMMARY, RUN_LOG, USAGE)

# Everything a run may write: what `--force` clears from an existing output folder.
RUN_OUTPUTS: tuple[str, ...] = (
    REPOSITORY, SSAT, STATE, USAGE, UNIT_REPORT, SUMMARY, RUN_LOG, MANIFEST, EVENTS, CALLS, PROMPTS,
    CHECKPOINTS, f"{CHECKPOINTS}-wal", f"{CHECKPOINTS}-shm", KNOWLEDGE, BEST, ATTEMPTS,
    REPORT_MD, REPORT_HTML, EVOLVE, EVOLVED_TASK, BASE, CHECK_REPORT, REVIEW, THREAD, TURNS, TURN_FILES,
)

# ------------------------------------------------------------------ an experiment folder
LEDGER = "ledger.jsonl"  # one line per finished unit: what resume skips
EXPERIMENT_CONFIG = "experiment.json"  # what the experiment was started with; a resume must match it
RESULTS_JSON = "results.json"
RESULTS_MD = "results.md"
RESULTS_HTML = "results.html"
TEST_REPORTS = "reports"  # bench-reference: reports/TASK.SUITE.json, one per task
BATCH_KIND = "batch-kind.txt"  # the command whose folder it is (experiment, reflect, refine, bench-reference)
