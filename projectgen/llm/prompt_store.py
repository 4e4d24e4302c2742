"""The exact prompts a run's models were asked, each distinct one stored once.

`usage.jsonl` says who asked what it cost; this says what was asked. The door
(`projectgen.llm.door`) puts every call's message list here before the call is made, and its
`CallRecord.prompt_id` names the entry, so a researcher can read any call's prompt back
(`projectgen trace DIR --call N`).

The store is one JSONL file (``prompts.jsonl`` in a run folder), content-addressed: a line is
``{"id": ID, "messages": [{"role": "system", "content": "..."}, ...]}`` where ID is `prompt_id`,
a hash of the messages, so a prompt asked again (a retried call, a replayed one, an identical
request in a later attempt) adds nothing. Lines are appended whole under a lock and fsynced
(`projectgen.durable_files.append_line`); a resumed run reads the ids already there first, so it
neither repeats nor loses an entry, and a line torn by a kill is cut off before the next append
(its call had not been recorded yet, so the prompt is written again when the call is made again).
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

Messages = list[dict[str, Any]]


def prompt_messages(messages: Any) -> Messages:
    """The chat messages a model receives for `messages` (whatever form LangChain accepts: message
    objects, ``(role, text)`` pairs, dicts, a string or a prompt value), as ``{"role", "content"}``
    dicts; roles are LangChain's message types (``system``, ``human``, ``ai``, ``tool``)."""
    if hasattr(messages, "to_messages"):
        messages = messages.to_messages()
    if isinstance(messages, str):
        return [{"role": "human", "content": messages}]
    from langchain_core.messages import convert_to_messages

    out: Messages = []
    for message in convert_to_messages(list(messages)):
        entry: dict[str, Any] = {"role": message.type, "content": message.content}
        if getattr(message, "name", None):
            entry["name"] = message.name
        out.append(entry)
    return out


def prompt_id(messages: Messages) -> str:
    """The store's key of a prompt: a hash of its messages (`prompt_messages`), roles included."""
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


class PromptStore:
    """A run's ``prompts.jsonl``: `put` a call's messages, `get` them back by id; thread-safe."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._ids: set[str] | None = None  # read from the file on first use

    def put(self, messages: Messages, key: str | None = None) -> str:
        """Store `messages` unless already there; their id (`key`, when the caller computed it)."""
        key = key or prompt_id(messages)
        with self._lock:
            ids = self._known()
            if key not in ids:
                from projectgen.durable_files import append_line

                line = json.dumps({"id": key, "messages": messages}, ensure_ascii=False, default=str)
                append_line(self.path, line, fsync=True)
                ids.add(key)
        return key

    def get(self, key: str) -> Messages | None:
        """The messages stored under `key`, or None."""
        return read_prompts(self.path, {key}).get(key)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._known()

    def __len__(self) -> int:
        with self._lock:
            return len(self._known())

    def _known(self) -> set[str]:
        if self._ids is None:
            self._ids = set(_entries(self.path))
        return self._ids


def read_prompts(path: Path | str, keys: Iterable[str] | None = None) -> dict[str, Messages]:
    """id -> messages of a prompt store file (only `keys` when given; lines that do not parse, such as
    one torn by a kill, are skipped; no file, no prompts)."""
    wanted = set(keys) if keys is not None else None
    return {key: messages for key, messages in _entries(Path(path)).items() if wanted is None or key in wanted}


def _entries(path: Path) -> dict[str, Messages]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return {}
    entries: dict[str, Messages] = {}
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, Mapping) and isinstance(entry.get("id"), str) and isinstance(entry.get("messages"), list):
            entries.setdefault(entry["id"], entry["messages"])
    return entries
