"""The model bridge: an OpenAI-compatible endpoint for external systems, every call through the model door.

One job per module:

- `wire`: the chat-completions wire format (a request read strictly, a reply and its stream written)
- `server`: `ModelBridge`, the aiohttp handlers that call the experiment's model through the door
- `serving`: `serve_bridge`, the bridge on a unix socket and/or loopback TCP from a thread of its own
- `sandboxed`: `run_system`, an external system in the sandbox with the bridge as its only way out

Needs aiohttp (the ``bridge`` extra). Names are re-exported lazily: importing this package imports nothing.
"""
from __future__ import annotations

from projectgen.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "BRIDGE_ROLE": "projectgen.bridge.server",
    "BridgeSettings": "projectgen.bridge.server",
    "ModelBridge": "projectgen.bridge.server",
    "ServedBridge": "projectgen.bridge.serving",
    "serve_bridge": "projectgen.bridge.serving",
    "SystemCommand": "projectgen.bridge.sandboxed",
    "SystemRun": "projectgen.bridge.sandboxed",
    "run_system": "projectgen.bridge.sandboxed",
    "BridgeRequestError": "projectgen.bridge.wire",
    "ChatRequest": "projectgen.bridge.wire",
    "parse_chat_request": "projectgen.bridge.wire",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
