"""The model bridge's cost: an external system's calls through the bridge against the same calls made directly.

A fake OpenAI-compatible endpoint answers every chat completion after an injected latency (--latency-s), from a
process of its own, as a real endpoint is: in the bridge's process, its threads would take the interpreter's lock
from the bridge, a cost no real endpoint puts on it (it made the bridged side 3 points slower here).
A "system" (this script's --load mode: the `openai` client, --in-flight threads, --calls calls, each a
different prompt) calls it twice per round:

- direct: its base URL is the endpoint;
- bridged: it runs as the child of the in-sandbox forwarder (`sandbox_files/bridge_forwarder.py`, here on
  the host: the sandbox adds nothing on this path), whose loopback port relays to the bridge's unix socket;
  the bridge calls the endpoint through the model door (`make_chat_model` + `acall_model`) with a run
  folder's recorder, prompt store and call cache (every reply fsynced), as an experiment's bridge does.

Each side's wall time is measured by the system itself, around its calls (not its start-up). Rounds
alternate the sides; the ratio is the median of bridged/direct over rounds run back to back.

    python benchmarks/bridge_overhead.py [--calls 128] [--in-flight 16] [--latency-s 0.5] [--repeats 3]

Target: bridged / direct <= 1.05x.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TARGET = 1.05
REPLY = "def add(a, b):\n    return a + b\n"


def main() -> int:
    from _fixtures import add_tiny_option

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=128)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--latency-s", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--load", action="store_true", help=argparse.SUPPRESS)  # the system's side
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the endpoint's side
    add_tiny_option(parser)
    args = parser.parse_args()
    if args.load:
        return load(args.calls, args.in_flight)
    if args.serve:
        return serve(args.latency_s)
    if args.tiny:
        args.calls, args.latency_s, args.repeats = 16, 0.05, 1
    return compare(args.calls, args.in_flight, args.latency_s, args.repeats, args.tiny)


def load(calls: int, in_flight: int) -> int:
    """The system: `calls` chat completions, `in_flight` at a time, base URL from the environment; prints
    its wall time as JSON."""
    import openai

    client = openai.OpenAI(max_retries=0)

    def ask(index: int) -> str:
        reply = client.chat.completions.create(model="gpt-4o", messages=[
            {"role": "user", "content": f"Write file number {index}"}])
        return reply.choices[0].message.content or ""

    client.models.list()  # a connection made before the clock starts, on both sides
    began = time.perf_counter()
    with ThreadPoolExecutor(in_flight) as pool:
        replies = list(pool.map(ask, range(calls)))
    wall = time.perf_counter() - began
    print(json.dumps({"wall_s": wall, "right": sum(reply == REPLY for reply in replies)}))
    return 0


@contextmanager
def slow_endpoint(latency_s: float) -> Iterator[str]:
    """The endpoint (`serve`) in a process of its own until the block ends; its base URL."""
    server = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", "--latency-s", str(latency_s)],
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip() if server.stdout else ""
        if not url.startswith("http://"):
            raise SystemExit(f"the endpoint did not start (exit {server.poll()})")
        yield url
    finally:
        server.kill()
        server.wait()


def serve(latency_s: float) -> int:
    """An OpenAI-compatible endpoint answering every completion with `REPLY` after `latency_s`: prints its base URL,
    then serves until killed."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            self.send_json({"object": "list", "data": [{"id": "gpt-4o", "object": "model", "created": 0,
                                                        "owned_by": "bench"}]})

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            time.sleep(latency_s)
            self.send_json({"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "gpt-4o",
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                                         "finish_reason": "stop", "logprobs": None}],
                            "usage": {"prompt_tokens": 12, "completion_tokens": 12, "total_tokens": 24}})

        def send_json(self, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128  # 16 connections opened at once must not overflow the default backlog of 5

    server = Server(("127.0.0.1", 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()
    return 0


def run_load(prefix: list[str], base_url: str, calls: int, in_flight: int) -> float:
    """Run the system (behind `prefix`, the forwarder, or directly) and return its wall time."""
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "bench"}
    command = [*prefix, sys.executable, str(Path(__file__).resolve()), "--load", "--calls", str(calls),
               "--in-flight", str(in_flight)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"the system failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["right"] != calls:
        raise SystemExit(f"the system got {result['right']} right replies of {calls}")
    return float(result["wall_s"])


def compare(calls: int, in_flight: int, latency_s: float, repeats: int, tiny: bool) -> int:
    from _fixtures import paired_ratio, ratio_line, table, verdict

    from projectgen.bridge.server import BridgeSettings, ModelBridge
    from projectgen.bridge.serving import serve_bridge
    from projectgen.evaluation.sandbox import sandbox_file
    from projectgen.llm import CallCache, DoorSettings, PromptStore, UsageRecorder, make_chat_model

    direct: list[float] = []
    bridged: list[float] = []
    with tempfile.TemporaryDirectory(prefix="projectgen-bridge-bench-") as scratch, slow_endpoint(latency_s) as url:
        for round_ in range(repeats):
            run = Path(scratch) / f"run-{round_}"
            run.mkdir()
            door = DoorSettings(recorder=UsageRecorder(run / "usage.jsonl"), prompts=PromptStore(run / "prompts.jsonl"),
                                cache=CallCache(run / "call_cache.jsonl"), retries=0)
            model = make_chat_model("openai:gpt-4o", base_url=url, api_key="bench")
            bridge = ModelBridge(model, BridgeSettings(system="bench", door=door))
            direct.append(run_load([], url, calls, in_flight))
            with serve_bridge(bridge) as served:
                port = free_port()
                forwarder = [sys.executable, "-I", "-S", str(sandbox_file("bridge_forwarder.py")), str(served.socket),
                             str(port), "--"]
                bridged.append(run_load(forwarder, f"http://127.0.0.1:{port}/v1", calls, in_flight))
            recorded = len(UsageRecorder.load(run / "usage.jsonl").records)
            if recorded != calls:
                raise SystemExit(f"the bridge recorded {recorded} calls of {calls}")
            print(f"round {round_ + 1}/{repeats}: direct {direct[-1]:.3f} s, bridged {bridged[-1]:.3f} s", flush=True)
    ratio = paired_ratio(bridged, direct)
    print()
    print(table(["side", "runs s", "ideal s"],
                [["direct", ", ".join(f"{w:.3f}" for w in direct), f"{latency_s * -(-calls // in_flight):.3f}"],
                 ["bridged", ", ".join(f"{w:.3f}" for w in bridged), ""]]))
    print(f"{calls} calls, {in_flight} in flight, {latency_s} s latency injected; every bridged call recorded")
    print("through the bridge (forwarder, unix socket, model door with usage, prompts and call cache) / direct:")
    print(ratio_line(ratio, f"<= {TARGET}"))
    return verdict(ratio <= TARGET, tiny)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


if __name__ == "__main__":
    sys.exit(main())
