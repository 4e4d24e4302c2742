"""An in-process OpenAI-compatible chat server that answers as llama-cpp-python's server does.

The tests of the real-server path (`make smoke-local-model` runs the real one) need what such
a server does differently from OpenAI's API, without compiling llama.cpp:

- it reads ``max_tokens`` only (``max_completion_tokens``, the name LangChain's ChatOpenAI sends,
  is ignored, so the reply runs to the context window) and stops a reply there with
  ``finish_reason: "length"``;
- a non-streamed reply carries ``usage`` (prompt, completion and total tokens); a streamed one
  carries none unless ``stream_usage=True`` (vLLM's and Ollama's behaviour) and the request asks
  for it with ``stream_options.include_usage``;
- a prompt longer than the context window is a 400 with ``code: "context_length_exceeded"``;
- it keeps connections alive (HTTP/1.1, as uvicorn does), so a client's pooled connection is reused.

A "token" here is a whitespace-separated word. Every request body is kept in ``requests``.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__test__ = False


@dataclass
class FakeLlamaServer:
    """What the server answers (`reply`, its context window `n_ctx`) and what it was asked (`requests`)."""

    reply: str = "hello from the server"
    n_ctx: int = 2048
    stream_usage: bool = False
    model: str = "smollm2"
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        return sum(len(str(m.get("content") or "").split()) + 4 for m in body.get("messages", []))

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, JSON body) of a non-streamed call, or of a refused one."""
        prompt = self.prompt_tokens(body)
        cap = body.get("max_tokens")  # llama.cpp's request model has no max_completion_tokens
        if prompt >= self.n_ctx:
            return 400, {"error": {
                "message": f"This model's maximum context length is {self.n_ctx} tokens. However, you requested "
                           f"{prompt} tokens ({prompt} in the messages, 0 in the completion). Please reduce the "
                           "length of the messages or completion.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
        room = self.n_ctx - prompt
        limit = min(cap, room) if cap else room
        words = self.reply.split(" ")
        finish = "length" if len(words) > limit else "stop"
        words = words[:limit]
        return 200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": " ".join(words)},
                         "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": len(words),
                      "total_tokens": prompt + len(words)},
        }

    def chunks(self, body: dict[str, Any], done: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The streamed form of `done`: a role chunk, one chunk per word, the finish chunk, maybe usage."""
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": self.model}
        choice = done["choices"][0]
        yield {**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}
        for number, word in enumerate(choice["message"]["content"].split(" ")):
            text = word if number == 0 else " " + word
            yield {**base, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}
        wanted = (body.get("stream_options") or {}).get("include_usage")
        if self.stream_usage and wanted:
            yield {**base, "choices": [], "usage": done["usage"]}


def _handler(server: FakeLlamaServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn answers: clients pool the connection

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            server.requests.append(body)
            status, answer = server.answer(body)
            if status != 200 or not body.get("stream"):
                self.send_json(status, answer)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")  # no length known: the end of the stream ends the body
            self.end_headers()
            for chunk in server.chunks(body, answer):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

        def send_json(self, status: int, answer: dict[str, Any]) -> None:
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def fake_llama_server(**options: Any) -> Iterator[FakeLlamaServer]:
    """A `FakeLlamaServer` listening on 127.0.0.1 (a free port) for the block; its ``url`` ends in /v1."""
    server = FakeLlamaServer(**options)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
