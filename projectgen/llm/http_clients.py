"""An HTTP client for OpenAI-family chat models whose connections belong to the event loop using them.

LangChain's ChatOpenAI shares one cached ``httpx.AsyncClient`` per base URL across the process,
and a pooled connection is bound to the event loop that opened it. projectgen runs each batch
unit (and each `run_project` call from Python) in an event loop of its own, so against a real
server, which keeps connections alive, the second unit in a process reused the first loop's
connection and failed with ``RuntimeError: Event loop is closed`` (found by `make
smoke-local-model`: the second `refine` task run became an error row); two worker threads'
loops would share connections the same way. Scripted and replayed models make no HTTP call, so
no other test saw it.

`LoopLocalAsyncClient` is what projectgen hands ChatOpenAI as its ``http_async_client``: each
running event loop gets a client of its own, made with the same options, forgotten with its loop.

Imported only by `projectgen.llm.factory` when it makes an OpenAI-family model (it loads openai).
"""
from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

import httpx
import openai


class LoopLocalAsyncClient(openai.DefaultAsyncHttpxClient):
    """openai's default async client (its timeout, limits and redirects), one per running event loop.

    Requests are built on this client (openai builds them with ``build_request``) and sent by the
    running loop's own client, so no connection crosses loops or outlives its loop's use.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._options = options
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()  # loops of several worker threads ask at once

    def for_running_loop(self) -> httpx.AsyncClient:
        """The client of the running event loop, made on its first request."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._clients.get(loop)
            if client is None:
                client = self._clients[loop] = openai.DefaultAsyncHttpxClient(**self._options)
            return client

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        return await self.for_running_loop().send(request, **kwargs)

    async def aclose(self) -> None:
        """Close the running loop's client (the others belong to loops this one cannot await on)."""
        with self._lock:
            client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
        await super().aclose()


def openai_async_client(params: dict[str, Any]) -> None:
    """Give ChatOpenAI's keyword arguments `params` a `LoopLocalAsyncClient`, unless the caller gave a client
    (or a proxy, which ChatOpenAI builds its own clients for)."""
    if params.get("http_async_client") is None and not params.get("openai_proxy"):
        params["http_async_client"] = LoopLocalAsyncClient()
