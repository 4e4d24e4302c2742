"""The chat model for an OpenAI-compatible server (llama.cpp, vLLM, Ollama, LM Studio): ChatOpenAI as
such servers read it.

LangChain's ChatOpenAI sends the output cap as ``max_completion_tokens``, the name OpenAI's own
API took in 2024. llama-cpp-python's server does not know it and drops it silently, so a reply
ran on to the end of the context window (DeepSeek's API and older servers read only the legacy
name too); every OpenAI-compatible server reads ``max_tokens``, which is what this class sends.
And ChatOpenAI asks a streamed reply for its token usage (``stream_options.include_usage``)
only from OpenAI's own endpoint: here it always asks (vLLM and Ollama then send it; a server that
does not, such as llama-cpp-python's, ignores the option, and the door records the call's tokens
as estimated).

Imported only by `projectgen.llm.factory` when it makes such a model (it loads langchain-openai).
"""
from __future__ import annotations

from typing import Any

from langchain_openai import ChatOpenAI


class OpenAICompatibleChat(ChatOpenAI):
    """ChatOpenAI that sends ``max_tokens`` (not ``max_completion_tokens``) and asks streams for usage."""

    stream_usage: bool | None = True

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload
