"""Replies of a run's completed model calls, kept on disk so a resumed run replays them."""
from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from projectgen.durable_files import append_line
from projectgen.llm.messages import input_text
from projectgen.llm.roles import CallLabels
from projectgen.llm.usage import CallRecord

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage


class CallCache:
    """Replies of a run's completed model calls, on disk, so that a resumed run replays them.

    A durable run is checkpointed per graph node, so a node killed after one of its model calls
    had completed (the code judge after its call, the learning step between the knowledge call
    and the stores) runs again on resume. The door (`projectgen.llm.door`) therefore
    looks each call up here first: a call with the same key (scope, i.e. the run's thread,
    role, stage, target, iteration, attempt, model and a hash of the prompt) is answered with
    the recorded reply instead of calling the model. A reply is appended (one JSON line,
    fsynced) as its call completes and before its usage record, so a kill between the two is
    repaired on replay by recording the call's usage then (`UsageRecorder.has`). Failed calls
    are not kept: they are tried again. Another prompt (say the run's code changed) is another
    key, so it is never answered from an old reply.

    `after_put()`, when given, is called once each reply is on disk, before the call returns to its
    agent: an executor that copies the run folder to another machine sends the line there, so the
    copy holds every completed call.
    """

    def __init__(self, path: Path | str, scope: str = "", after_put: Callable[[], None] | None = None) -> None:
        self.path = Path(path)
        self.scope = scope
        self.after_put = after_put
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] | None = None

    def key(self, labels: CallLabels, model: str, messages: Any) -> str:
        """The key of a call: this cache's scope, the call's labels, the model and a hash of the prompt."""
        import hashlib

        prompt = hashlib.sha256(input_text(messages).encode("utf-8", "replace")).hexdigest()
        key = json.dumps([self.scope, labels.role, labels.stage, labels.target, labels.iteration, labels.attempt,
                          model, prompt])
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]

    def get(self, key: str) -> dict[str, Any] | None:
        """The recorded completion of call `key` (``content``, ``usage``, ``response_metadata``,
        ``record``), or None."""
        with self._lock:
            return self._load().get(key)

    def put(self, key: str, reply: Any, record: CallRecord) -> None:
        entry = {"key": key, "content": reply.content, "usage": getattr(reply, "usage_metadata", None),
                 "response_metadata": getattr(reply, "response_metadata", None) or {},
                 "record": record.model_dump(mode="json")}
        line = json.dumps(entry, default=str)
        with self._lock:
            append_line(self.path, line, fsync=True)
            self._load()[key] = json.loads(line)
        if self.after_put is not None:
            self.after_put()

    def __len__(self) -> int:
        with self._lock:
            return len(self._load())

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = {}
            try:
                lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
            except FileNotFoundError:
                lines = []
            for line in lines:
                try:
                    entry = json.loads(line)
                    self._entries[str(entry["key"])] = entry
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line torn by a kill: that call is made again
        return self._entries

    @staticmethod
    def reply(entry: Mapping[str, Any]) -> AIMessage:
        from langchain_core.messages import AIMessage

        return AIMessage(content=entry["content"], usage_metadata=entry.get("usage") or None,
                         response_metadata={**(entry.get("response_metadata") or {}), "replayed": True})

