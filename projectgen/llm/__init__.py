"""The one door to the LLM: model factory, offline scripted model, call accounting, retries, budgets.

One job per module:

- `roles`: the agent roles, the run-config metadata keys and `CallLabels` (who is asking)
- `factory`: `make_chat_model` from a spec string, `ModelRoles` (a model per role)
- `naming`: how records and reports name a model
- `door`: `call_model` / `acall_model`, the one path of every model call
- `retries`: which errors are transient and how long to wait
- `usage`: `CallRecord`, `UsageTotals`, `UsageRecorder`
- `call_cache`: `CallCache`, replies a resumed run replays
- `budgets`: `TokenBudget`, `CostBudget`, `AllBudgets`
- `errors`: `ModelCallError`, `BudgetExceededError`, `ScriptExhaustedError`
- `messages`: the text of chat messages and a token estimate
- `scripted`: the scripted replay model
- `pricing`, `parsing`, `faults`, `reference_replay`: prices, tolerant parsing of replies,
  fault injection and the reference replay; import those from their modules (`faults` and
  `reference_replay` build on other packages and are not imported here).

Importing this package does not import LangChain: `ScriptedChatModel` is built on first use.
"""
from __future__ import annotations

from typing import Any

from projectgen.llm.budgets import AllBudgets, Budget, CostBudget, TokenBudget
from projectgen.llm.call_cache import CallCache
from projectgen.llm.door import MAX_REPLY_CHARS, DoorSettings, acall_model, call_model
from projectgen.llm.errors import (
    MODEL_FAILURES,
    BudgetExceededError,
    ModelCallError,
    ScriptExhaustedError,
    model_failure_reason,
)
from projectgen.llm.factory import ModelRoles, check_base_url, known_providers, make_chat_model
from projectgen.llm.messages import estimate_tokens, input_text, message_text
from projectgen.llm.naming import describe_model, model_name
from projectgen.llm.retries import is_transient, status_code
from projectgen.llm.roles import (
    META_ATTEMPT,
    META_ITERATION,
    META_ROLE,
    META_STAGE,
    META_TARGET,
    ROLES,
    CallLabels,
)
from projectgen.llm.scripted import Script, ScriptEntry, load_script, scripted_chat_model_class
from projectgen.llm.usage import CallRecord, UsageRecorder, UsageTotals

__all__ = [
    "AllBudgets", "Budget", "BudgetExceededError", "CallCache", "CallLabels", "CallRecord", "CostBudget",
    "DoorSettings", "MAX_REPLY_CHARS", "META_ATTEMPT", "META_ITERATION", "META_ROLE", "META_STAGE", "META_TARGET",
    "MODEL_FAILURES", "ModelCallError", "ModelRoles", "ROLES", "Script", "ScriptEntry", "ScriptExhaustedError",
    "ScriptedChatModel", "TokenBudget", "UsageRecorder", "UsageTotals", "acall_model", "call_model",
    "check_base_url", "describe_model", "estimate_tokens", "input_text", "is_transient", "known_providers",
    "load_script", "make_chat_model", "message_text", "model_failure_reason", "model_name", "status_code",
]


def __getattr__(name: str) -> Any:
    """`ScriptedChatModel` is built on first use so that importing this package stays cheap."""
    if name == "ScriptedChatModel":
        return scripted_chat_model_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
