"""The model bridge: an OpenAI-compatible endpoint for external systems, every call through the model door.

One job per module:

- `wire`: the chat-completions wire format (a request read strictly, a reply and its stream written)
- `server`: `ModelBridge`, the aiohttp handlers that call the experiment's model through the door
- `serving`: `serve_bridge`, the bridge on a unix socket and/or loopback TCP from a thread of its own
- `sandboxed`: `run_system`, an external system in the sandbox with the bridge as its only way out

Needs aiohttp (the ``bridge`` extra): every module here but `wire` imports it, and only external systems' runs
import this package.
"""
from __future__ import annotations

from projectgen.bridge.sandboxed import SystemCommand, SystemRun, run_system
from projectgen.bridge.server import BRIDGE_ROLE, BridgeSettings, ModelBridge
from projectgen.bridge.serving import ServedBridge, serve_bridge
from projectgen.bridge.wire import BridgeRequestError, ChatRequest, parse_chat_request

__all__ = [
    "BRIDGE_ROLE", "BridgeRequestError", "BridgeSettings", "ChatRequest", "ModelBridge", "ServedBridge",
    "SystemCommand", "SystemRun", "parse_chat_request", "run_system", "serve_bridge",
]
