"""Serving a `ModelBridge` from a thread of its own, on a unix socket (for a sandbox) and/or loopback TCP.

projectgen's commands are synchronous; the bridge is an asyncio server. `serve_bridge` runs it on an event
loop in a daemon thread for the length of a ``with`` block, so a caller can start an external system,
wait for it and read the run folder afterwards. The socket is what a sandbox gets (`projectgen.bridge.
sandboxed`): a sandbox has no network, and a path in a folder bound into it is the one way out.
"""
from __future__ import annotations

import asyncio
import os
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from projectgen.bridge.server import ModelBridge
from projectgen.errors import ProjectGenError

SOCKET_NAME = "model.sock"
START_TIMEOUT = 30.0


@dataclass(frozen=True)
class ServedBridge:
    """Where a served bridge answers: `socket` (a unix socket, in a folder of its own) and/or `url`
    (``http://127.0.0.1:PORT/v1``)."""

    socket: Path | None
    url: str | None

    @property
    def socket_folder(self) -> Path | None:
        """The folder to bind into a sandbox (it holds only the socket)."""
        return self.socket.parent if self.socket else None


@contextmanager
def serve_bridge(bridge: ModelBridge, *, unix_socket: bool = True, tcp: bool = False) -> Iterator[ServedBridge]:
    """Serve `bridge` until the block ends: on a new unix socket (mode 0666 in a folder of mode 0755 under the
    system's temporary folder, short enough for AF_UNIX) and/or on a free loopback port."""
    if not (unix_socket or tcp):
        raise ProjectGenError("serve_bridge: serve on a unix socket, on TCP, or both")
    folder = Path(tempfile.mkdtemp(prefix="pg-bridge-")) if unix_socket else None
    started = threading.Event()
    stopping: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []  # the loop and what ends it
    where: list[ServedBridge] = []
    failures: list[BaseException] = []

    async def run() -> None:
        # The door does each call's file bookkeeping (fsynced appends) in the loop's default executor: with
        # cores + 4 threads, 16 calls at once queue behind each other's fsyncs (benchmarks/bridge_overhead.py).
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(
            max_workers=2 * bridge.settings.max_in_flight, thread_name_prefix="projectgen-bridge-files"))
        runner = web.AppRunner(bridge.application(), access_log=None, handle_signals=False)
        await runner.setup()
        try:
            path = None
            if folder is not None:
                path = folder / SOCKET_NAME
                await web.UnixSite(runner, str(path)).start()
                os.chmod(folder, 0o755)  # the sandbox's uid is no account of ours: it must reach the socket
                os.chmod(path, 0o666)
            url = None
            if tcp:
                site = web.TCPSite(runner, "127.0.0.1", 0)
                await site.start()
                port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
                url = f"http://127.0.0.1:{port}/v1"
            where.append(ServedBridge(path, url))
            stop = asyncio.Event()
            stopping.append((asyncio.get_running_loop(), stop))
            started.set()
            await stop.wait()
        finally:
            await runner.cleanup()

    def thread_main() -> None:
        try:
            asyncio.run(run())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            failures.append(exc)
        finally:
            started.set()

    thread = threading.Thread(target=thread_main, name="projectgen-model-bridge", daemon=True)
    thread.start()
    started.wait(START_TIMEOUT)
    try:
        if failures or not where:
            raise ProjectGenError(f"the model bridge did not start: {failures[0] if failures else 'timed out'}")
        yield where[0]
    finally:
        if stopping:
            loop, stop = stopping[0]
            loop.call_soon_threadsafe(stop.set)
        thread.join(START_TIMEOUT)
        if folder is not None:
            for leftover in folder.iterdir():
                leftover.unlink(missing_ok=True)
            folder.rmdir()
