"""The one door to the LLM: model factory, offline scripted model, call accounting, retries, budgets.

One job per module:

- `roles`: the agent roles, the run-config metadata keys and `CallLabels` (who is asking)
- `factory`: `make_chat_model` from a spec string, `ModelRoles` (a model per role)
- `naming`: how records and reports name a model
- `door`: `call_model` / `acall_model`, the one path of every model call
- `retries`: which errors are transient and how long to wait
- `usage`: `CallRecord`, `UsageTotals`, `UsageRecorder`
- `call_cache`: `CallCache`, replies a resumed run replays
- `prompt_store`: `PromptStore`, the exact prompts of a run's calls, each distinct one once
- `budgets`: `TokenBudget`, `CostBudget`, `AllBudgets`
- `errors`: `ModelCallError`, `BudgetExceededError`, `ScriptExhaustedError`
- `messages`: the text of chat messages and a token estimate
- `scripted`: the scripted replay model
- `pricing`, `parsing`, `faults`, `call_slots`: prices, tolerant parsing of replies, fault injection and
  the cap on calls in flight per model; import those from their modules (`faults` is not imported here).

The replay oracles (a task's reference replayed as a model) are `projectgen.oracles`: they read tasks and
the architecture tree, which build on this package.

Names are re-exported lazily: the CLI's parser imports `roles`, `specs`, `sampling`, `naming` and `call_slots`,
and an eager import here would load pydantic into `projectgen --help`; `ScriptedChatModel` subclasses
LangChain's chat model and is built on first use.
"""
from __future__ import annotations

from projectgen.lazy import lazy_exports

# public name -> its module in this package
_EXPORTS: dict[str, str] = {
    "AllBudgets": "projectgen.llm.budgets",
    "Budget": "projectgen.llm.budgets",
    "CostBudget": "projectgen.llm.budgets",
    "TokenBudget": "projectgen.llm.budgets",
    "CallCache": "projectgen.llm.call_cache",
    "DoorSettings": "projectgen.llm.door",
    "MAX_REPLY_CHARS": "projectgen.llm.door",
    "acall_model": "projectgen.llm.door",
    "call_model": "projectgen.llm.door",
    "BudgetExceededError": "projectgen.llm.errors",
    "MODEL_FAILURES": "projectgen.llm.errors",
    "ModelCallError": "projectgen.llm.errors",
    "ScriptExhaustedError": "projectgen.llm.errors",
    "model_failure_reason": "projectgen.llm.errors",
    "ModelRoles": "projectgen.llm.factory",
    "check_base_url": "projectgen.llm.factory",
    "known_providers": "projectgen.llm.factory",
    "make_chat_model": "projectgen.llm.factory",
    "PromptStore": "projectgen.llm.prompt_store",
    "prompt_id": "projectgen.llm.prompt_store",
    "prompt_messages": "projectgen.llm.prompt_store",
    "read_prompts": "projectgen.llm.prompt_store",
    "estimate_tokens": "projectgen.llm.messages",
    "input_text": "projectgen.llm.messages",
    "message_text": "projectgen.llm.messages",
    "describe_model": "projectgen.llm.naming",
    "model_name": "projectgen.llm.naming",
    "is_transient": "projectgen.llm.retries",
    "status_code": "projectgen.llm.retries",
    "CallLabels": "projectgen.llm.roles",
    "META_ATTEMPT": "projectgen.llm.roles",
    "META_ITERATION": "projectgen.llm.roles",
    "META_ROLE": "projectgen.llm.roles",
    "META_STAGE": "projectgen.llm.roles",
    "META_TARGET": "projectgen.llm.roles",
    "ROLES": "projectgen.llm.roles",
    "STAGE_ROLES": "projectgen.llm.roles",
    "KNOWLEDGE_ROLE": "projectgen.llm.roles",
    "MEMORY_ROLE": "projectgen.llm.roles",
    "NOTES_STAGE": "projectgen.llm.roles",
    "DIRECT_ROLE": "projectgen.llm.roles",
    "REFLECTION_ROLE": "projectgen.llm.roles",
    "Script": "projectgen.llm.scripted",
    "ScriptEntry": "projectgen.llm.scripted",
    "ScriptedChatModel": "projectgen.llm.scripted",
    "load_script": "projectgen.llm.scripted",
    "scripted_chat_model_class": "projectgen.llm.scripted",
    "CallRecord": "projectgen.llm.usage",
    "UsageRecorder": "projectgen.llm.usage",
    "UsageTotals": "projectgen.llm.usage",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
