"""The text of chat-model inputs and replies, and a deterministic token estimate for it.

Messages arrive in every shape LangChain accepts (message objects, (role, text) pairs,
dicts, strings, prompt values); the door, the call cache and the offline models all
need their plain text.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def estimate_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: ``len(text) // 4 + 1`` (about 4 characters a token)."""
    return len(text) // 4 + 1


def message_text(message: Any) -> str:
    """The text of a message, a (role, text) pair, a dict or a plain string."""
    if isinstance(message, str):
        return message
    if isinstance(message, tuple) and len(message) == 2:
        return str(message[1])
    content = message.get("content", "") if isinstance(message, Mapping) else getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) if isinstance(b, Mapping) else ""
                       for b in content)
    return str(content)


def input_text(messages: Any) -> str:
    """All the text of a chat-model input (a string, a prompt value or a list of messages)."""
    if isinstance(messages, str):
        return messages
    if hasattr(messages, "to_messages"):
        messages = messages.to_messages()
    if isinstance(messages, Iterable):
        return "\n".join(message_text(m) for m in messages)
    return str(messages)
