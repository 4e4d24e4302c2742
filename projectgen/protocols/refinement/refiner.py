"""The refiner: writes one file turn by turn as requirements arrive (SR-Eval's multi-turn protocol).

What the model is shown at turn k depends on the prompting strategy (SR-Eval, Section 4):

- Full History (``fh``): the whole conversation: every earlier requirement with the answer given
  to it, then the new requirement.
- Code Edit (``ce``): the code after turn k-1 and the new requirement only.
- Cumulative Instruction (``ci``): every requirement so far, no earlier code.

The context setting decides whose code is carried forward: ``basic`` carries the model's own
answers (errors accumulate), ``golden`` the previous turns' references (each turn starts from a
correct state). Cumulative Instruction carries no code, so it has only the basic setting, as in
SR-Eval's Tables 5 and 6. At repository level every prompt adds the localized context: the
target's place in the repository and the signatures of the files around it; a task with a target
function (SR-Eval's repository level, after DevEval) asks for that one function, with the code above
it in the turn's file as local context (prompt ``refine_function``).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from projectgen.agents.base import ModelGateway
from projectgen.agents.coder import interface_of
from projectgen.agents.skeleton import code_from_reply
from projectgen.datasets.exercism import LANGUAGES
from projectgen.datasets.multiturn import MultiTurnTask
from projectgen.errors import ProjectGenError
from projectgen.llm.messages import estimate_tokens, input_text, message_text
from projectgen.llm.roles import REFINEMENT_STAGE, REFINER_ROLE
from projectgen.prompts import Prompt, load_prompt
from projectgen.repository.edits import fenced_code, fenced_python

STRATEGIES: tuple[str, ...] = ("fh", "ce", "ci")
STRATEGY_NAMES: dict[str, str] = {"fh": "Full History", "ce": "Code Edit", "ci": "Cumulative Instruction"}
CONTEXTS: tuple[str, ...] = ("basic", "golden")
CARRIES_CODE: frozenset[str] = frozenset({"fh", "ce"})  # the strategies a golden context applies to


def check_setting(strategy: str, context: str) -> None:
    """Refuse an unknown strategy or context, and golden context with Cumulative Instruction (no code carried)."""
    if strategy not in STRATEGIES:
        raise ProjectGenError(f"unknown strategy {strategy!r} (strategies: {', '.join(STRATEGIES)})")
    if context not in CONTEXTS:
        raise ProjectGenError(f"unknown context {context!r} (contexts: {', '.join(CONTEXTS)})")
    if context == "golden" and strategy not in CARRIES_CODE:
        raise ProjectGenError("Cumulative Instruction (ci) carries no earlier code, so the golden context does not "
                              "apply to it (SR-Eval runs the golden context with fh and ce only)")


def localized_context(task: MultiTurnTask) -> str:
    """The repository-level prompt section: where the target lives and the signatures around it ("" at
    function level)."""
    if task.level != "repository":
        return ""
    snapshot = task.snapshot()
    parts = [f"# Repository context\n`{task.target}` belongs to a repository; the tests import it from there. "
             "The files around it (their signatures):\n"]
    for path in task.context:
        parts.append(f"{path}\n{fenced_python(interface_of(path, snapshot[path]))}")
    return "\n".join(parts) + "\n"


def local_context_section(task: MultiTurnTask, number: int) -> str:
    """With a target function: the code above it in turn `number`'s file, the local context SR-Eval's repository
    level gives (after DevEval); "" for a whole-file task."""
    if task.function is None:
        return ""
    above = task.local_context(number)
    return (f"# The code above `{task.function}` in `{task.target}`\nYour answer replaces `{task.function}` "
            f"there; write only that function.\n{fenced_python(above)}\n")


def start_section(task: MultiTurnTask) -> str:
    """The target (file or function) before turn 1, when it exists then ("" otherwise)."""
    start = task.answer(0)
    return f"# `{task.answer_name}` as it is now\n{fenced_code(start, task.language)}\n" if start.strip() else ""


def turn_messages(prompt: Prompt, *, target: str, strategy: str, requirements: Sequence[str],
                  earlier_answers: Sequence[str] = (), previous_code: str = "", context: str = "",
                  start: str = "", language: str = "python") -> list[tuple[str, str]]:
    """The chat messages of turn k = len(requirements), for a file in `language` (its code block's tag).

    `earlier_answers`: the assistant messages of turns 1..k-1 (Full History); `previous_code`: the
    code after turn k-1 (Code Edit; at turn 1 the start); `context`: the localized context;
    `start`: the section showing the file before turn 1 (Full History and Cumulative Instruction).
    """
    if not requirements:
        raise ValueError("a turn needs its requirement")
    named = {"language": LANGUAGES.get(language, language), "fence": language}
    if strategy == "fh":
        if len(earlier_answers) != len(requirements) - 1:
            raise ValueError(f"turn {len(requirements)} needs {len(requirements) - 1} earlier answer(s), "
                             f"got {len(earlier_answers)}")
        messages = prompt.messages(target=target, context=context + start, request=requirements[0], **named)
        for answer, requirement in zip(earlier_answers, requirements[1:]):
            messages += [("ai", answer), ("human", requirement)]
        return messages
    if strategy == "ce":
        request = requirements[-1]
        if previous_code.strip():
            request = (f"The current `{target}`:\n{fenced_code(previous_code, language)}\nChange it as follows:\n"
                       f"{requirements[-1]}")
        return prompt.messages(target=target, context=context, request=request, **named)
    if strategy == "ci":
        listed = "\n\n".join(f"{number}. {text}" for number, text in enumerate(requirements, start=1))
        request = ("The requirements so far, in the order they were given (later ones refine earlier ones):\n\n"
                   f"{listed}\n\nWrite `{target}` so that it meets all of them.")
        return prompt.messages(target=target, context=context + start, request=request, **named)
    raise ProjectGenError(f"unknown strategy {strategy!r} (strategies: {', '.join(STRATEGIES)})")


@dataclass(frozen=True)
class RefinerReply:
    """One turn's answer: the reply text, the file taken from it, and the call's tokens."""

    text: str
    code: str
    input_tokens: int
    output_tokens: int


@dataclass
class Refiner:
    """Answers one turn of a multi-turn task (role ``refiner``, target the task id, iteration the turn)."""

    model: Any
    prompt: Prompt = field(default_factory=lambda: load_prompt("refine"))
    function_prompt: Prompt = field(default_factory=lambda: load_prompt("refine_function"))  # a target function's
    role: str = REFINER_ROLE

    async def answer(self, gateway: ModelGateway, messages: Sequence[Any], *, task_id: str,
                     turn: int, language: str = "python") -> RefinerReply:
        """The model's answer to `messages` and the file in it (its first block in `language`, else the whole
        text)."""
        reply = await gateway.reply(self.model, messages, role=self.role, stage=REFINEMENT_STAGE, target=task_id,
                                    iteration=turn)
        text = message_text(reply)
        usage: Mapping[str, Any] = getattr(reply, "usage_metadata", None) or {}
        if usage:
            tokens_in, tokens_out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        else:  # the door's own estimate when a model reports no usage
            tokens_in, tokens_out = estimate_tokens(input_text(messages)), estimate_tokens(text)
        return RefinerReply(text=text, code=code_from_reply(text, language=language), input_tokens=tokens_in,
                            output_tokens=tokens_out)
