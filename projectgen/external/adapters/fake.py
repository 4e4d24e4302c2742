"""The fake external system: a stand-in for MetaGPT and the others, standard library only.

Run as every adapter is (docs/external-systems.md, "The adapter contract")::

    <env python> fake.py --docs DOCS --out OUT

It reads the contract's variables and the documents in DOCS with the shared `contract` module (as the real
systems' adapters do: a run of the fake shows that module importable in the sandbox), makes two calls to the
bridge with `urllib` (a plan, then the repository as whole-file blocks: a path line, then a fenced block),
writes each file under OUT (`copy_into`: a name it refuses exits 1) and exits 0; a bad contract exits 2,
and a call the bridge refuses (a spent budget) ends it with exit status 3 after what it wrote so far.

For the tests only, environment variables set through a systems file's ``[fake.env]``:
``FAKE_SYSTEM_PROBES`` (comma-separated ``HOST:PORT`` to open a TCP connection to, and ``dns:NAME`` to look
up; what happened written to OUT/network.json), ``FAKE_SYSTEM_PAUSE_S`` (seconds to wait after the first
call: a run to kill in the middle) and ``FAKE_SYSTEM_KILLED_AFTER_PLAN`` (``1``: it SIGKILLs itself after
the first call, a run killed in the middle without waiting).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence

from contract import Settings, copy_into, documents_text, read_documents, read_settings, run_adapter

FENCE = re.compile(r"^(`{3,})[^`]*$")


def ask(settings: Settings, prompt: str, documents: str) -> str:
    """One chat-completions call through the bridge; raises `urllib.error.HTTPError` on a refusal."""
    body: dict[str, object] = {"model": settings.model, "messages": [{"role": "system", "content": documents},
                                                                     {"role": "user", "content": prompt}]}
    if settings.temperature is not None:  # None for a replay, which samples nothing
        body["temperature"] = settings.temperature
    request = urllib.request.Request(settings.base_url + "/chat/completions", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json",
                                                             "Authorization": f"Bearer {settings.api_key}"})
    with urllib.request.urlopen(request, timeout=600) as reply:
        return json.load(reply)["choices"][0]["message"]["content"] or ""


def whole_files(reply: str) -> dict[str, str]:
    """Path -> text of each whole-file block: a line naming the path, then a fenced block."""
    files: dict[str, str] = {}
    lines = reply.splitlines(keepends=True)
    index = 0
    while index + 1 < len(lines):
        path, opening = lines[index].strip(), FENCE.match(lines[index + 1].rstrip("\n"))
        if not path or opening is None or path.startswith("`"):
            index += 1
            continue
        fence, body, index = opening.group(1), [], index + 2
        while index < len(lines) and lines[index].rstrip("\n") != fence:
            body.append(lines[index])
            index += 1
        files[path] = "".join(body)
        index += 1
    return files


def probe(target: str) -> str:
    """Try to reach `target` (``HOST:PORT`` or ``dns:NAME``): what happened, in words."""
    try:
        if target.startswith("dns:"):
            return "reached: " + socket.gethostbyname(target[4:])
        host, port = target.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=3):
            return "reached"
    except OSError as exc:
        return f"blocked: {type(exc).__name__}: {exc}"


def run(args: argparse.Namespace) -> int:
    settings = read_settings(os.environ)
    documents = documents_text(read_documents(args.docs))
    args.out.mkdir(parents=True, exist_ok=True)
    probes = [target for target in os.environ.get("FAKE_SYSTEM_PROBES", "").split(",") if target]
    if probes:
        copy_into(args.out, "network.json", json.dumps({target: probe(target) for target in probes}).encode())
    try:
        ask(settings, "Plan the repository for these documents.", documents)
        time.sleep(float(os.environ.get("FAKE_SYSTEM_PAUSE_S") or 0))
        if os.environ.get("FAKE_SYSTEM_KILLED_AFTER_PLAN") == "1":
            os.kill(os.getpid(), signal.SIGKILL)
        files = whole_files(ask(settings, "Write the repository for these documents.", documents))
    except urllib.error.HTTPError as exc:
        print(f"model call refused ({exc.code}): {exc.read().decode(errors='replace')}", flush=True)
        return 3
    for path, text in files.items():
        print(f"wrote {copy_into(args.out, path, text.encode('utf-8'))}", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_adapter("fake", "the fake external system", argv, run)


if __name__ == "__main__":
    sys.exit(main())
