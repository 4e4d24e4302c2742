"""What every graph builder shares: binding a node's fixed arguments, the generate <-> judge loop."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from langgraph.graph import END

from projectgen.agents.base import ModelGateway, Verdict
from projectgen.agents.protocols import RevisionSummarizer
from projectgen.config import DISTILLED_STAGES, Settings
from projectgen.errors import ProjectGenError
from projectgen.graphs.state import ProjectState, iteration_of, last_verdict, memory_record
from projectgen.memory import MemoryEntry

Result = TypeVar("Result")
Judge = TypeVar("Judge")


def bind(node: Callable[..., Result], **fixed: Any) -> Callable[..., Result]:
    """`node` with keyword arguments fixed by its builder (the stage's agents, settings), so nodes
    stay module-level functions. It keeps the node's name, which LangGraph gives a routing
    function's branch and the traced run. Don't fix `config`, `runtime`, `store`, `writer`,
    `previous` or `error`: LangGraph passes those itself."""
    bound = partial(node, **fixed)
    bound.__name__ = node.__name__  # type: ignore[attr-defined]  # partial objects take attributes
    return bound


def judge_list(judges: Sequence[Judge] | None, stage: str) -> tuple[Judge, ...]:
    """A stage's judges as a tuple: None or [] means no judge. A single judge is refused with a clear
    message (every stage builder takes a list, so there is one way to give one judge or several)."""
    if judges is None:
        return ()
    if not isinstance(judges, (list, tuple)):
        raise TypeError(f"{stage}_stage takes a list of judges (e.g. [judge]), not {type(judges).__name__}")
    return tuple(judges)


def stage_summarizer(summarizer: RevisionSummarizer | None, settings: Settings, judged: bool,
                     stage: str) -> RevisionSummarizer | None:
    """The summariser a stage's revisions go through: none where its memory stays raw (`DISTILLED_STAGES`: under
    the paper's "distilled" only the architecture stage distils) or without a judge (no revision); distilled
    memory without one is refused, so a stage never keeps raw entries where summaries were asked."""
    if stage not in DISTILLED_STAGES[settings.stage_memory] or not judged:
        return None
    if summarizer is None:
        raise ProjectGenError(f"{stage}_stage: distilled stage memory (stage_memory='distilled', the paper profile) "
                              "needs a summarizer (summarizer=MemorySummarizer(model)); or use stage_memory='raw'")
    return summarizer


async def memory_records(entries: Sequence[MemoryEntry], summarizer: RevisionSummarizer | None,
                         gateway: ModelGateway) -> list[dict[str, Any]]:
    """The state records of a stage's new memory entries, each distilled first by one summarising call
    when the stage has a summariser."""
    if summarizer is not None:
        entries = [await summarizer.summarize(gateway, entry) for entry in entries]
    return [memory_record(entry) for entry in entries]


def after_judge(stage: str, cap: int, generator: str, review: str | None = None) -> Callable[[ProjectState], str]:
    """Route after a judge: back to `generator` until accepted, told to stop, or at the cap; then to the
    `review` node when the stage is reviewed (`projectgen.graphs.review`), unless the run stopped."""

    def route(state: ProjectState) -> str:
        if state.get("stopped"):
            return END
        done = review or END
        verdict = last_verdict(state, stage)
        if verdict is None or verdict.accepted or verdict.stop:
            return done
        return done if iteration_of(state, stage) >= cap else generator

    route.__name__ = f"after_{stage}_judge"
    return route


def describe(verdict_score: float, accepted: bool, cap_reached: bool) -> str:
    """A few words for progress lines."""
    if accepted:
        return f"score {verdict_score:g}, accepted"
    return f"score {verdict_score:g}, " + ("cap reached, moving on" if cap_reached else "revising")


def with_threshold_rule(verdict: Verdict, settings: Settings) -> Verdict:
    """A scoring judge's verdict under the settings' threshold rule: the judge's own acceptance (it
    compares with ``>=`` and may reject for other reasons) and, under the stage's rule "exceeds", a score
    above the threshold. Applied by the stage, so a user's judge needs no knowledge of the rule."""
    accepted = verdict.accepted and settings.accepts(verdict.score, verdict.stage)
    return verdict if accepted == verdict.accepted else verdict.model_copy(update={"accepted": accepted})


def with_rejections(verdict: Verdict, rejected: Mapping[str, str]) -> Verdict:
    """A judge's verdict on an iteration in which generated files were refused because they do not parse
    (`rejected`: path -> error): not accepted, so the generator gets them back (within the stage's cap),
    with those files among the ones to revise and its feedback saying which. Unchanged when nothing was
    refused; the generator's next request carries each file's own error (the stage adds it)."""
    if not rejected:
        return verdict
    note = ("Not accepted: these generated files were not written (not valid Python, or cut off at the output "
            "limit):\n") + "\n".join(
        f"- {path}, {error.splitlines()[0]}" for path, error in sorted(rejected.items()))
    files = dict(verdict.files)
    if files or verdict.accepted:  # the judge named files, or none at all: revise those and the refused ones
        files.update({path: files.get(path, "") for path in rejected})
    feedback = f"{verdict.feedback}\n\n{note}" if verdict.feedback else note
    return verdict.model_copy(update={"accepted": False, "feedback": feedback, "files": files})
