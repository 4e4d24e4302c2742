"""Every file and folder name of a run folder and of an experiment folder, named once, and where they are.

A run folder's names are joined only by its `Layout` values here, one per kind of folder (`RunLayout`,
`EvolveLayout`, `RefineLayout`, `AttemptLayout`, `BaseLayout`), whose attributes are the paths (no module
outside `runs/` joins them: `tests/test_run_folder_paths.py`); `projectgen.runs.folder.RunFolder` is a
`RunLayout` that can also be opened. The names of an experiment folder are used by the batch commands that
write one.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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


# ------------------------------------------------------------------ where the files are, per kind of folder
@dataclass(frozen=True)
class AttemptLayout:
    """attempts/N of a LiveCoder run: the attempt's repository and record."""

    root: Path

    @property
    def repository(self) -> Path:
        return self.root / REPOSITORY

    @property
    def record(self) -> Path:
        """attempt.json: the attempt's record."""
        return self.root / ATTEMPT_RECORD


@dataclass(frozen=True)
class BaseLayout:
    """An evolve run's copy of its base run (base/): the repository and the architecture tree it starts from."""

    root: Path

    @property
    def repository(self) -> Path:
        return self.root / REPOSITORY

    @property
    def ssat(self) -> Path:
        return self.root / SSAT


@dataclass(frozen=True)
class RunLayout:
    """Where every file of a run folder is: paths only, a value any reader can make. Opening the folder (the
    lock) is `RunFolder`'s, and run.json's status is `Lifecycle`'s; an evolve and a refine run add their own
    files (`EvolveLayout`, `RefineLayout`), an attempt's folder is an `AttemptLayout`."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    def __fspath__(self) -> str:
        return os.fspath(self.root)

    def __str__(self) -> str:
        return str(self.root)

    @property
    def manifest(self) -> Path:
        """run.json: what was run and how it ended."""
        return self.root / MANIFEST

    @property
    def summary(self) -> Path:
        return self.root / SUMMARY

    @property
    def run_log(self) -> Path:
        """log.json: how the run ended, in the one shape every protocol's run has (runs/run_log.py)."""
        return self.root / RUN_LOG

    @property
    def usage(self) -> Path:
        return self.root / USAGE

    @property
    def calls(self) -> Path:
        return self.root / CALLS

    @property
    def prompts(self) -> Path:
        return self.root / PROMPTS

    @property
    def events(self) -> Path:
        return self.root / EVENTS

    @property
    def checkpoints(self) -> Path:
        return self.root / CHECKPOINTS

    @property
    def thread(self) -> Path:
        return self.root / THREAD

    @property
    def state(self) -> Path:
        return self.root / STATE

    @property
    def ssat(self) -> Path:
        return self.root / SSAT

    @property
    def unit_report(self) -> Path:
        return self.root / UNIT_REPORT

    @property
    def repository(self) -> Path:
        return self.root / REPOSITORY

    @property
    def attempts(self) -> Path:
        return self.root / ATTEMPTS

    def attempt(self, number: int) -> AttemptLayout:
        """attempts/N: one attempt's repository and record."""
        return AttemptLayout(self.attempts / str(number))

    @property
    def knowledge(self) -> Path:
        return self.root / KNOWLEDGE

    @property
    def best(self) -> Path:
        return self.root / BEST

    @property
    def report_md(self) -> Path:
        return self.root / REPORT_MD

    @property
    def report_html(self) -> Path:
        return self.root / REPORT_HTML

    @property
    def review(self) -> Path:
        return self.root / REVIEW

    def is_run(self) -> bool:
        """Whether the folder holds a run (`trace` and `report` open it)."""
        return any((self.root / name).is_file() for name in RUN_MARKERS)

    def is_finished(self) -> bool:
        """summary.json is written last: its presence means the run is done."""
        return self.summary.is_file()

    def has_checkpoints(self, checkpoint_url: str | None) -> bool:
        """Whether the run's checkpoints exist: its SQLite file, or a PostgreSQL database run.json names."""
        return checkpoint_url is not None or self.checkpoints.is_file()


@dataclass(frozen=True)
class EvolveLayout(RunLayout):
    """An evolve run's folder: a run's files and the change's record, its task, its base and its check tests."""

    @property
    def evolve(self) -> Path:
        return self.root / EVOLVE

    @property
    def evolved_task(self) -> Path:
        return self.root / EVOLVED_TASK

    @property
    def base(self) -> BaseLayout:
        """The copy of the base run (its repository and tree)."""
        return BaseLayout(self.root / BASE)

    @property
    def check_report(self) -> Path:
        return self.root / CHECK_REPORT


@dataclass(frozen=True)
class RefineLayout(RunLayout):
    """A refine task run's folder: a run's files and its turns."""

    @property
    def turns(self) -> Path:
        """turns.json: the turn records."""
        return self.root / TURNS

    def turn_file(self, turn: int, target: str) -> Path:
        """turns/K/<target>: the file turn K produced."""
        return self.root / TURN_FILES / str(turn) / target
