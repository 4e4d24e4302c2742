"""A model behind an OpenAI-compatible server, as llama-cpp-python's serves one (`make smoke-local-model`
runs the real server; these tests answer from tests/openai_server.py, in process)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from openai_server import fake_llama_server

from projectgen.agents.base import ModelGateway
from projectgen.llm import CallLabels, DoorSettings, ModelCallError, UsageRecorder, call_model, make_chat_model

WORDS = " ".join(f"w{i}" for i in range(60))


def test_the_output_cap_reaches_the_server_as_max_tokens_and_a_cut_reply_is_recorded_as_such() -> None:
    """LangChain's ChatOpenAI sends the cap as max_completion_tokens, which llama.cpp's server drops: the
    reply ran to the end of the context window. The name every compatible server reads is max_tokens."""
    with fake_llama_server(reply=WORDS) as server:
        model = make_chat_model("smollm2", base_url=server.url, max_tokens=10)
        recorder = UsageRecorder()
        reply = call_model(model, [("user", "count")], CallLabels("coder", "code"), DoorSettings(recorder=recorder))
    (body,) = server.requests
    assert body["max_tokens"] == 10 and "max_completion_tokens" not in body
    assert reply.content == " ".join(WORDS.split()[:10])
    (record,) = recorder.records
    assert (record.output_tokens, record.finish_reason, record.tokens_estimated) == (10, "length", False)


def test_a_call_through_the_gateway_records_the_servers_own_usage(tmp_path: Path) -> None:
    usage = tmp_path / "usage.jsonl"
    with fake_llama_server(reply="def add(a, b):\n    return a + b") as server:
        model = make_chat_model("openai:smollm2", base_url=server.url)
        gateway = ModelGateway(recorder=UsageRecorder(usage), retries=0)
        text = asyncio.run(gateway.ask(model, [("system", "be brief"), ("user", "add two numbers")],
                                       role="coder", stage="code", target="calc.py", iteration=1))
        expected_in = server.prompt_tokens(server.requests[0])
    assert text.startswith("def add")
    (line,) = [json.loads(row) for row in usage.read_text().splitlines()]
    assert line["model"] == "smollm2" and line["tokens_estimated"] is False
    assert (line["input_tokens"], line["output_tokens"]) == (expected_in, len(text.split(" ")))
    assert line["finish_reason"] == "stop" and line["error"] is None


@pytest.mark.parametrize("server_sends_usage", [True, False])
def test_a_streamed_call_asks_for_usage_and_says_when_the_server_sent_none(server_sends_usage: bool) -> None:
    """A streamed reply (LangGraph Studio's message stream) carries usage only when asked: vLLM and
    Ollama then send it; llama-cpp-python's server never does, and the record says its tokens are estimated."""
    with fake_llama_server(reply=WORDS, stream_usage=server_sends_usage) as server:
        model = make_chat_model("smollm2", base_url=server.url, max_tokens=5, streaming=True)
        recorder = UsageRecorder()
        reply = call_model(model, [("user", "count")], CallLabels("coder", "code"), DoorSettings(recorder=recorder))
    (body,) = server.requests
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True} and body["max_tokens"] == 5
    assert reply.content == "w0 w1 w2 w3 w4"
    (record,) = recorder.records
    assert record.finish_reason == "length"
    assert record.tokens_estimated is not server_sends_usage
    if server_sends_usage:
        assert (record.input_tokens, record.output_tokens) == (server.prompt_tokens(body), 5)


def test_a_prompt_beyond_the_context_window_fails_once_with_the_servers_reason() -> None:
    """A 400 (context_length_exceeded) is not retried: the call fails with the server's own words."""
    with fake_llama_server(n_ctx=8) as server:
        model = make_chat_model("smollm2", base_url=server.url)
        recorder = UsageRecorder()
        with pytest.raises(ModelCallError, match="maximum context length is 8 tokens"):
            call_model(model, [("user", "one two three four five six")], CallLabels("architect", "architecture"),
                       DoorSettings(recorder=recorder, retries=3, backoff=0))
    assert len(server.requests) == 1
    (record,) = recorder.records
    assert record.attempts == 1 and "Error code: 400" in record.error and record.input_tokens == 0


def test_models_of_one_server_answer_in_event_loop_after_event_loop_and_in_threads_at_once() -> None:
    """Each batch unit (and each `run_project` from Python) runs in an event loop of its own. LangChain's
    ChatOpenAI shares one async HTTP client per base URL in the process, and a kept-alive connection
    belongs to the loop that opened it: against a real server the second unit failed with "Event loop is
    closed" (`make smoke-local-model`'s second refine task run)."""
    import threading

    with fake_llama_server(reply="hi there") as server:
        for _ in range(3):  # a new model per unit, as the batches make them
            model = make_chat_model("smollm2", base_url=server.url, max_tokens=10)
            assert asyncio.run(model.ainvoke("hello")).content == "hi there"
        shared = make_chat_model("openai:smollm2", base_url=server.url, max_tokens=10)
        for _ in range(2):  # one model used from one loop after another (the Python API, twice)
            assert asyncio.run(shared.ainvoke("hello")).content == "hi there"
        answers: list[str] = []
        errors: list[BaseException] = []

        def worker() -> None:  # worker threads, each with its loops, one model between them
            try:
                for _ in range(3):
                    answers.append(asyncio.run(shared.ainvoke("hello")).content)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not errors and answers == ["hi there"] * 6
        assert len(server.requests) == 3 + 2 + 6


def test_an_openai_model_without_a_base_url_gets_the_loop_local_client_too(monkeypatch) -> None:
    from projectgen.llm.http_clients import LoopLocalAsyncClient

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for name in ("OPENAI_BASE_URL", "PROJECTGEN_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    model = make_chat_model("openai:gpt-4o-mini")
    assert isinstance(model.http_async_client, LoopLocalAsyncClient)
    assert model.root_async_client._client is model.http_async_client  # what the SDK sends with
