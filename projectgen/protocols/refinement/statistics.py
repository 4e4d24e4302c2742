"""SR-Eval's Table 1 for a dataset of multi-turn tasks: per level and language the tasks, the repositories, the
questions (turns) per task, and the mean characters and lines of a question, of its reference code and of its
tests; then a Total row. Counted from the task folders; nothing runs.

What is counted (SR-Eval's data are not public, so its table cannot be recounted here, and its text does not
define every column; `MEASURES` says each choice and results carry it):

- a question is a turn's requirement text. SR-Eval's repository-level question also holds its code context,
  which it does not define closely enough to count, so a repository-level question here is the requirement alone
  and shorter than the paper's by construction;
- a turn's code is its answer (`MultiTurnTask.answer`: the target file after the turn, or with `function` that
  function), its tests the text of every file of the turn's test folder;
- the Total row sums tasks, repositories and questions, takes the overall minimum and maximum, and averages the
  lengths over every question of the dataset (the paper's Total averages follow from none of its rows:
  shared/paper_tables/README.md).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from projectgen.datasets.multiturn import LEVELS, MultiTurnTask

STATISTICS_FORMAT_VERSION = 1  # of `refine --stats --json`'s document
COLUMNS = ("tasks", "repos", "questions_min", "questions_max", "questions_avg", "questions_total", "char_question",
           "char_code", "char_test", "line_question", "line_code", "line_test")
"""Table 1's columns, named as in the published CSV (shared/paper_tables/sreval_table1_stats.csv)."""
MEASURES = {
    "repos": "distinct repositories the repository-level tasks are cut from (empty at function level)",
    "questions": "turns per task",
    "question": "a turn's requirement text (at repository level without the code context SR-Eval adds)",
    "code": "a turn's answer: the target file after it, or its one function with `function`",
    "test": "every file of the turn's test folder",
    "char": "characters, mean per question",
    "line": "lines (str.splitlines), mean per question",
}


@dataclass(frozen=True)
class TurnText:
    """One question's three texts."""

    question: str
    code: str
    test: str


@dataclass(frozen=True)
class StatisticsRow:
    """One row of Table 1: a (level, language) group, or the Total (level "Total", language "")."""

    level: str
    language: str
    tasks: int
    repos: int | None
    questions_min: int
    questions_max: int
    questions_avg: float
    questions_total: int
    char_question: float
    char_code: float
    char_test: float
    line_question: float
    line_code: float
    line_test: float

    def value(self, column: str) -> int | float | None:
        return getattr(self, column)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def turn_texts(task: MultiTurnTask) -> list[TurnText]:
    """Each turn's requirement, answer and tests, in turn order."""
    return [TurnText(question=turn.requirement, code=task.answer(turn.number), test=tests_text(task.root / turn.tests))
            for turn in task.turns]


def tests_text(folder: Path) -> str:
    """The text of every file below a turn's test folder, in path order (bytecode caches left out)."""
    files = sorted(path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts)
    return "".join(path.read_text(encoding="utf-8", errors="replace") for path in files)


def group_row(level: str, language: str, tasks: Sequence[MultiTurnTask], repos: int | None) -> StatisticsRow:
    """The row of a group of tasks: turn counts, and the mean lengths over all their questions."""
    counts = [len(task.turns) for task in tasks]
    texts = [text for task in tasks for text in turn_texts(task)]

    def mean_chars(part: str) -> float:
        return math.fsum(len(getattr(text, part)) for text in texts) / len(texts)

    def mean_lines(part: str) -> float:
        return math.fsum(len(getattr(text, part).splitlines()) for text in texts) / len(texts)

    return StatisticsRow(level=level, language=language, tasks=len(tasks), repos=repos, questions_min=min(counts),
                         questions_max=max(counts), questions_avg=sum(counts) / len(counts),
                         questions_total=sum(counts), char_question=mean_chars("question"),
                         char_code=mean_chars("code"), char_test=mean_chars("test"),
                         line_question=mean_lines("question"), line_code=mean_lines("code"),
                         line_test=mean_lines("test"))


def repositories(tasks: Sequence[MultiTurnTask]) -> int | None:
    """Distinct repositories of repository-level tasks; None when none is repository level."""
    roots = {str(task.repository_root.resolve()) for task in tasks
             if task.level == "repository" and task.repository_root is not None}
    return len(roots) if any(task.level == "repository" for task in tasks) else None


def statistics_rows(tasks: Sequence[MultiTurnTask]) -> list[StatisticsRow]:
    """A row per (level, language) present, function level first, then Total; [] for no task."""
    if not tasks:
        return []
    rows = []
    for level in LEVELS:
        for language in sorted({task.language for task in tasks if task.level == level}):
            group = [task for task in tasks if task.level == level and task.language == language]
            rows.append(group_row(level, language, group, repositories(group)))
    rows.append(group_row("Total", "", tasks, repositories(tasks)))
    return rows


def statistics_json(rows: Sequence[StatisticsRow], dataset: str) -> dict[str, object]:
    """`refine --stats --json`'s document: the rows and what each column counts."""
    return {"format_version": STATISTICS_FORMAT_VERSION, "dataset": dataset, "columns": list(COLUMNS),
            "measures": dict(MEASURES), "rows": [row.to_dict() for row in rows]}
