"""Fakes and fixtures of data the agent tests share: a small architecture tree (`TREE`, `tree()`)
with its documents and stubs, a scripted or prompt-reading model, and a recording gateway."""
from __future__ import annotations

import asyncio
import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from projectgen.agents import ModelGateway
from projectgen.datasets.task import Documents
from projectgen.llm import ScriptedChatModel, UsageRecorder
from projectgen.ssat import SSAT, render_stub, validate_ssat_json


F = "```"

# --------------------------------------------------------------------------- fixtures and helpers

TREE: dict[str, Any] = {
    "project_name": "calc",
    "description": "A tiny calculator.",
    "modules": [{"path": "calc", "description": "The package."}],
    "files": [
        {"path": "calc/__init__.py"},
        {"path": "calc/errors.py", "description": "Errors.",
         "classes": [{"name": "CalcError", "bases": ["Exception"], "description": "Base error."}]},
        {"path": "calc/core.py", "description": "Core arithmetic.", "dependencies": ["calc/errors.py"],
         "imports": ["import math"],
         "classes": [{"name": "Calculator", "description": "Keeps a running total.",
                      "attributes": [{"name": "total", "type": "float", "description": "Current value."}],
                      "methods": [
                          {"name": "add", "description": "Add two numbers.", "returns": "float",
                           "parameters": [{"name": "self"}, {"name": "a", "type": "float"},
                                          {"name": "b", "type": "float", "default": "0.0"}]},
                          {"name": "reset", "description": "Set the total to zero.",
                           "parameters": [{"name": "self"}]}]}],
         "functions": [{"name": "evaluate", "description": "Evaluate an expression.", "returns": "float",
                        "parameters": [{"name": "expression", "type": "str"},
                                       {"name": "precision", "type": "int", "default": "2"},
                                       {"name": "strict", "type": "bool", "default": "False",
                                        "kind": "keyword_only"}]}]},
        {"path": "README.md", "description": "How to use it."},
    ],
}
DOCS = Documents(prd="PRD-MARKER: a calculator that adds numbers and evaluates expressions.",
                 uml_class="UML-CLASS-MARKER Calculator --> CalcError")


def tree() -> SSAT:
    return validate_ssat_json(TREE)


def stubs(ssat: SSAT) -> dict[str, str]:
    """A skeleton matching the tree exactly: the rendered stub of every .py file."""
    return {f.path: render_stub(f) for f in ssat.files() if f.path.endswith(".py")}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def scripted(*responses: dict[str, Any], **kwargs: Any) -> Any:
    return ScriptedChatModel.from_responses(list(responses), **kwargs)


class PromptModel(BaseChatModel):
    """Answers with `answer(prompt text)` (or a fixed text); remembers every prompt and its call metadata."""

    answer: Any = ""
    prompts: list[str] = Field(default_factory=list)
    call_metadata: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "prompt-reading-fake"

    def _generate(self, messages: list[Any], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        text = "\n".join(str(m.content) for m in messages)
        self.prompts.append(text)
        self.call_metadata.append(dict(getattr(run_manager, "metadata", None) or {}))
        reply = self.answer(text) if callable(self.answer) else self.answer
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


def gateway() -> ModelGateway:
    return ModelGateway(recorder=UsageRecorder(), retries=0)


def only_record(gw: ModelGateway) -> Any:
    assert gw.recorder is not None
    records = gw.recorder.records
    assert len(records) == 1, records
    return records[0]


VALID_REPLY = json.dumps(TREE)
STUB = 'def evaluate(expression: str, precision: int = 2, *, strict: bool = False) -> float:\n    """STUB-MARKER"""\n'


def review(**fields: Any) -> dict[str, Any]:
    """An architecture judge's reply: good scores, reasons and feedback, with `fields` changed."""
    base: dict[str, Any] = {"scores": {"requirement_coverage": 9, "document_consistency": 8,
                                       "interface_consistency": 9, "dependency_relations": 8},
                            "reasons": "REASONS", "feedback": "FEEDBACK"}
    base.update(fields)
    return base
