"""SR-Eval's metrics for multi-turn code generation under stepwise requirement refinement.

SR-Eval (Zhan et al., 2025, arXiv:2509.18808) plays each task's turns in order and counts a
turn as correct when the code after that turn passes all of the turn's tests. It then
reports, per model, strategy and context setting:

- Acc(k): the share of correct turns k among the tasks that have a turn k (tasks have 2 to 5
  turns, so later turns are averaged over fewer tasks);
- Avg Acc: the unweighted mean of the per-turn accuracies Acc(1), ..., Acc(K);
- CR (completion rate): the share of tasks whose every turn is correct;
- ATC (average token cost): the mean, over tasks, of the input plus output tokens of all the
  task's turns.

These are pure functions of per-task outcomes: each task is the sequence of its turns'
verdicts (True = passed), in turn order. `strategy_deltas` gives each prompting strategy's
change against Full History, as SR-Eval's Tables 5 and 6 compare them.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

TurnVerdicts = Sequence[bool]
"""One task's turns, in order: True where the code after that turn passed all of the turn's tests."""


def accuracy_per_turn(tasks: Sequence[TurnVerdicts]) -> list[float]:
    """Acc(k) for k = 1 .. the most turns any task has: passed turns k / tasks that have a turn k."""
    most = max((len(turns) for turns in tasks), default=0)
    accuracies = []
    for k in range(most):
        having = [turns[k] for turns in tasks if len(turns) > k]
        accuracies.append(sum(1 for passed in having if passed) / len(having))
    return accuracies


def average_accuracy(per_turn: Sequence[float]) -> float:
    """Avg Acc: the unweighted mean of the per-turn accuracies (0 when there is none)."""
    return sum(per_turn) / len(per_turn) if per_turn else 0.0


def completion_rate(tasks: Sequence[TurnVerdicts]) -> float:
    """CR: the share of tasks whose every turn passed (0 when there is no task)."""
    if not tasks:
        return 0.0
    return sum(1 for turns in tasks if turns and all(turns)) / len(tasks)


def average_token_cost(tokens_per_task: Sequence[int | float]) -> float:
    """ATC: the mean over tasks of each task's input + output tokens over all its turns (0 without tasks)."""
    return sum(tokens_per_task) / len(tokens_per_task) if tokens_per_task else 0.0


class TurnMetrics(BaseModel):
    """SR-Eval's figures for one group of tasks (one model, strategy and context); fractions are 0..1."""

    tasks: int = Field(description="tasks counted")
    acc_per_turn: list[float] = Field(description="Acc(1), Acc(2), ...: each over the tasks that have that turn")
    tasks_per_turn: list[int] = Field(description="how many tasks have turn k (the denominator of Acc(k))")
    avg_acc: float
    completion_rate: float
    atc: float = Field(description="mean input + output tokens per task, over all its turns")


def turn_metrics(tasks: Sequence[TurnVerdicts], tokens_per_task: Sequence[int | float]) -> TurnMetrics:
    """Every SR-Eval figure of a group of tasks (`tokens_per_task` in the same order as `tasks`)."""
    if len(tasks) != len(tokens_per_task):
        raise ValueError(f"{len(tasks)} task(s) but {len(tokens_per_task)} token count(s)")
    per_turn = accuracy_per_turn(tasks)
    counts = [sum(1 for turns in tasks if len(turns) > k) for k in range(len(per_turn))]
    return TurnMetrics(tasks=len(tasks), acc_per_turn=per_turn, tasks_per_turn=counts,
                       avg_acc=average_accuracy(per_turn), completion_rate=completion_rate(tasks),
                       atc=average_token_cost(tokens_per_task))


def strategy_deltas(values: Mapping[str, float], baseline: str = "fh") -> dict[str, float]:
    """Each strategy's value minus the baseline strategy's (Full History by default), the baseline left out.

    `values` maps a strategy (``fh``, ``ce``, ``ci``) to one figure (Avg Acc, CR or ATC) of the same
    model and context; a missing baseline is an error.
    """
    if baseline not in values:
        raise KeyError(f"no {baseline!r} value to compare with (have: {', '.join(values) or 'none'})")
    base = values[baseline]
    return {strategy: value - base for strategy, value in values.items() if strategy != baseline}
