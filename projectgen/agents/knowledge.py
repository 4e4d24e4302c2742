"""LiveCoder's knowledge agent: turns one attempt (repository observation + test feedback) into
success and failure knowledge entries, and renders retrieved entries as guidance for later attempts.

One model call per attempt. The reply is read tolerantly (fences, prose, the entries as a list,
a single bare entry, strings where lists belong); what the model cannot be trusted with is set
here: `attempt` and `score` come from the arguments, a success entry is kept only when something
passed (score > 0) and a failure entry only when something failed (score < 1). A reply that
cannot be read gives a minimal failure entry built from the feedback (and the observation's
deterministic problems) with ``source="fallback"``, never an exception. Errors of the model call
itself (`ModelCallError`, budget exceeded) propagate, as for every agent.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from projectgen.agents.base import ModelGateway
from projectgen.agents.observations import (
    ExecutionFeedback,
    RepositoryObservation,
    clip,
    fit_lines,
)
from projectgen.errors import ProjectGenError, first_line
from projectgen.llm.parsing import StructuredOutputError, find_json
from projectgen.memory.knowledge_entries import (
    ExtractedKnowledge,
    FailureKnowledge,
    SuccessKnowledge,
)
from projectgen.prompts import Prompt, load_prompt

MAX_ITEMS = 12
ITEM_CHARS = 400
SUMMARY_CHARS = 300
FALLBACK_FAILURES = 20

_SUCCESS_FIELDS = ("repository_signals", "functional_signals", "carry_over")
_FAILURE_FIELDS = ("observed_failures", "repository_failures", "carry_over_constraints")


@dataclass
class KnowledgeExtractor:
    """Extracts `ExtractedKnowledge` from one attempt (role "knowledge")."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("knowledge"))
    role: str = "knowledge"
    prd_chars: int = 8000
    observation_chars: int = 8000
    feedback_chars: int = 5000

    async def extract(self, gateway: ModelGateway, *, task_summary_source: str, attempt: int, score: float,
                      observation: RepositoryObservation | str, feedback: ExecutionFeedback | str
                      ) -> ExtractedKnowledge:
        """The knowledge of attempt `attempt` (>= 1) whose score (pass rate, 0..1) is `score`.

        `task_summary_source` is the requirement document (PRD); it goes to the model and, when
        the model gives no task summary, its first line becomes one.
        """
        if attempt < 1:
            raise ProjectGenError(f"attempt must be 1 or more, not {attempt}")
        score = clamp_score(score)
        observation_text = observation.text(self.observation_chars) if isinstance(
            observation, RepositoryObservation) else clip(str(observation), self.observation_chars)
        feedback_text = feedback.text(self.feedback_chars) if isinstance(
            feedback, ExecutionFeedback) else clip(str(feedback), self.feedback_chars)
        messages = self.prompt.messages(
            prd=clip(task_summary_source.strip(), self.prd_chars) or "(no requirements given)",
            attempt=attempt, score=f"{score:.2f}", observation=observation_text or "(nothing observed)",
            feedback=feedback_text or "(no feedback)")
        reply = await gateway.ask(self.model, messages, role=self.role, stage="knowledge", iteration=attempt)
        default_summary = summary_of(task_summary_source)
        try:
            return knowledge_from_reply(reply, attempt=attempt, score=score, default_summary=default_summary)
        except StructuredOutputError as exc:
            return fallback_knowledge(attempt=attempt, score=score, feedback=feedback, observation=observation,
                                      task_summary=default_summary, note=first_line(exc))


def clamp_score(score: float) -> float:
    """A score in [0, 1] (NaN and unreadable values count as 0)."""
    try:
        value = float(score)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(value) else min(1.0, max(0.0, value))


def summary_of(prd: str) -> str:
    """A one-line task summary from a requirement document: its first line of prose (or title)."""
    title = ""
    for raw in prd.splitlines():
        line = raw.strip().lstrip("#").replace("**", "").strip().strip("*_").strip()
        if not line or set(line) <= set("-=*_|:` "):
            continue
        if raw.lstrip().startswith("#") or len(line) < 25:
            title = title or line
            continue
        return clip(line, SUMMARY_CHARS)
    return clip(title, SUMMARY_CHARS)


# --------------------------------------------------------------------------- reading the reply

def _items(value: Any) -> list[str]:
    """A list of one-line strings from whatever the model put in a list field."""
    if value is None:
        return []
    if isinstance(value, str):
        raw: Iterable[Any] = [line.strip().lstrip("-*•").strip() for line in value.splitlines()] \
            if "\n" in value else [value]
    elif isinstance(value, Mapping):
        raw = [f"{k}: {v}" for k, v in value.items()]
    elif isinstance(value, (list, tuple)):
        raw = value
    else:
        raw = [value]
    out: list[str] = []
    for item in raw:
        if isinstance(item, Mapping):
            text = "; ".join(f"{k}: {v}" for k, v in item.items() if v not in (None, "", [], {}))
        elif isinstance(item, (list, tuple)):
            text = " ".join(str(x) for x in item)
        elif item is None:
            continue
        else:
            text = str(item)
        text = " ".join(text.split())
        if text and text not in out:
            out.append(clip(text, ITEM_CHARS))
    return out[:MAX_ITEMS]


def _entries(value: Any) -> tuple[Any, Any, str, bool]:
    """(success part, failure part, top-level summary, recognised) from the reply's JSON value."""
    if isinstance(value, list):
        success = failure = None
        for item in value:
            if isinstance(item, Mapping):
                kind = str(item.get("kind", "")).lower()
                if kind == "success" or (not kind and any(k in item for k in _SUCCESS_FIELDS)):
                    success = success or item
                elif kind == "failure" or (not kind and any(k in item for k in _FAILURE_FIELDS)):
                    failure = failure or item
        return success, failure, "", success is not None or failure is not None
    if not isinstance(value, Mapping):
        return None, None, "", False
    summary = value.get("task_summary") if isinstance(value.get("task_summary"), str) else ""
    success_key = next((k for k in value if isinstance(k, str) and k.lower().startswith("success")), None)
    failure_key = next((k for k in value if isinstance(k, str) and k.lower().startswith("fail")), None)
    if success_key or failure_key:
        return (_merged(value.get(success_key)) if success_key else None,
                _merged(value.get(failure_key)) if failure_key else None, summary, True)
    kind = str(value.get("kind", "")).lower()
    if kind == "success" or any(k in value for k in _SUCCESS_FIELDS):
        return value, None, summary, True
    if kind == "failure" or any(k in value for k in _FAILURE_FIELDS):
        return None, value, summary, True
    return None, None, summary, False


def _merged(part: Any) -> Any:
    """A list of entries of one kind (some models write several) as one entry."""
    if not isinstance(part, list) or not all(isinstance(p, Mapping) for p in part) or not part:
        return part
    merged: dict[str, Any] = {}
    for entry in part:
        for key, item in entry.items():
            if key == "task_summary":
                merged.setdefault(key, item)
            else:
                merged.setdefault(key, []).extend(item if isinstance(item, list) else [item])
    return merged


def _part_summary(part: Mapping[str, Any], default: str) -> str:
    text = part.get("task_summary")
    return clip(" ".join(text.split()), SUMMARY_CHARS) if isinstance(text, str) and text.strip() else default


def knowledge_from_reply(reply: str, *, attempt: int, score: float, default_summary: str = "") -> ExtractedKnowledge:
    """Read the model's reply; raises `StructuredOutputError` when it holds no usable entry structure.

    `attempt` and `score` are set from the arguments; success is dropped at score 0, failure at
    score 1; an entry with no items is dropped.
    """
    value = find_json(reply).value
    success_part, failure_part, summary, recognised = _entries(value)
    if not recognised:
        raise StructuredOutputError("the reply has no 'success' or 'failure' entry", kind="schema")
    parts = [p for p in (success_part, failure_part) if p is not None]
    if parts and not any(isinstance(p, Mapping) for p in parts):
        raise StructuredOutputError("the 'success' and 'failure' entries must be JSON objects", kind="schema")
    summary = clip(" ".join(summary.split()), SUMMARY_CHARS) if summary.strip() else default_summary
    score = clamp_score(score)
    success = failure = None
    if isinstance(success_part, Mapping) and score > 0:
        fields = {name: _items(success_part.get(name)) for name in _SUCCESS_FIELDS}
        if any(fields.values()):
            success = SuccessKnowledge(attempt=attempt, score=score,
                                       task_summary=_part_summary(success_part, summary), **fields)
    if isinstance(failure_part, Mapping) and score < 1:
        fields = {name: _items(failure_part.get(name)) for name in _FAILURE_FIELDS}
        if any(fields.values()):
            failure = FailureKnowledge(attempt=attempt, score=score,
                                       task_summary=_part_summary(failure_part, summary), **fields)
    return ExtractedKnowledge(success=success, failure=failure)


def fallback_knowledge(*, attempt: int, score: float, feedback: ExecutionFeedback | str,
                       observation: RepositoryObservation | str | None = None, task_summary: str = "",
                       note: str = "") -> ExtractedKnowledge:
    """Knowledge without the model: a failure entry from the test feedback (failing tests, collection
    errors, harness error) and the observation's certain problems; no success entry. Empty at score 1."""
    score = clamp_score(score)
    result = ExtractedKnowledge(source="fallback", note=note)
    if score >= 1:
        return result
    observed: list[str] = []
    if isinstance(feedback, ExecutionFeedback):
        if not feedback.ran:
            observed.append(f"suite {feedback.suite}: no tests were run")
        else:
            observed.append(f"suite {feedback.suite}: {feedback.passed} of {feedback.total} tests passed")
        if feedback.error:
            observed.append(f"the test harness failed: {clip(feedback.error, ITEM_CHARS)}")
        if feedback.timed_out:
            observed.append("the test run timed out")
        problems = [*feedback.collection_errors, *feedback.failing]
        observed += [clip(p.line(), ITEM_CHARS) for p in problems[:FALLBACK_FAILURES]]
        if len(problems) > FALLBACK_FAILURES:
            observed.append(f"... and {len(problems) - FALLBACK_FAILURES} more failing tests")
    else:
        lines = [line.strip() for line in str(feedback).splitlines() if line.strip()]
        observed += [clip(line, ITEM_CHARS) for line in lines[:FALLBACK_FAILURES]]
    repository: list[str] = []
    constraints: list[str] = []
    if isinstance(observation, RepositoryObservation):
        for path in observation.unparsable:
            reason = observation.syntax_errors.get(path, "")
            repository.append(f"{path} does not parse" + (f" ({reason})" if reason else ""))
            constraints.append(f"{path} must be valid Python")
        for cycle in observation.cycles:
            repository.append(f"import cycle: {' <-> '.join(cycle)}")
            constraints.append(f"avoid the import cycle between {', '.join(cycle)}")
        if observation.placeholders:
            shown = ", ".join(observation.placeholders[:8])
            more = f" and {len(observation.placeholders) - 8} more" if len(observation.placeholders) > 8 else ""
            repository.append(f"functions with placeholder bodies (pass / ... / NotImplementedError): {shown}{more}")
            constraints.append("implement the functions left as placeholders unless they are meant to do nothing")
    if not observed:
        observed.append(f"the attempt scored {score:.2f}")
    failure = FailureKnowledge(attempt=attempt, score=score, task_summary=task_summary,
                               observed_failures=observed[:FALLBACK_FAILURES + 4],
                               repository_failures=repository[:MAX_ITEMS],
                               carry_over_constraints=constraints[:MAX_ITEMS])
    return result.model_copy(update={"failure": failure})


# --------------------------------------------------------------------------- guidance for generators

def _entry_text(entry: Any) -> str:
    if isinstance(entry, str):
        return entry.strip()
    text = getattr(entry, "text", None)
    return (text() if callable(text) else str(entry)).strip()


def render_guidance(success: Sequence[Any], failure: Sequence[Any], *, limit: int | None = None) -> str:
    """The guidance for generators in later attempts: positive guidance from success entries, then
    negative guidance (constraints) from failure entries; "" when both are empty.

    The text is the body of the generators' "Lessons from earlier attempts" section
    (`projectgen.agents.base.guidance_section` adds that heading), so it has only ``##`` subsections.
    Entries are `SuccessKnowledge` / `FailureKnowledge` (or their texts, e.g. documents retrieved
    from the knowledge store). With `limit`, the text stays within `limit` characters, whole entries
    first (the entries are expected best first).
    """
    positive = [t for t in map(_entry_text, success) if t]
    negative = [t for t in map(_entry_text, failure) if t]
    blocks: list[tuple[str, list[str]]] = []
    if positive:
        blocks.append(("## Keep doing (validated by passing tests in earlier attempts)", positive))
    if negative:
        blocks.append(("## Avoid (failures of earlier attempts; treat these as constraints)", negative))
    if limit is None:
        return "\n\n".join(f"{title}\n" + "\n\n".join(items) for title, items in blocks)
    out = ""
    for index, (title, items) in enumerate(blocks):
        separator = "\n\n" if out else ""
        remaining = limit - len(out)
        share = remaining // (len(blocks) - index)
        spaced = [item if i == 0 else "\n" + item for i, item in enumerate(items)]  # a blank line between
        body = fit_lines(spaced, share - len(separator) - len(title) - 1, "entries")
        block = f"{separator}{title}\n{body}"
        if body and len(block) <= remaining:
            out += block
    return out


__all__ = ["KnowledgeExtractor", "clamp_score", "fallback_knowledge", "knowledge_from_reply", "render_guidance",
           "summary_of"]
