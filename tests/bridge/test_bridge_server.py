"""The model bridge over HTTP, on the host, with the `openai` client an external system uses: the paper's
sampling enforced whatever the system asks, a prompt asked again counted so a resumed run replays each
asking in order, errors the client reports without retrying, streaming, and the request size cap."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai_server import fake_llama_server

from projectgen.bridge.server import BRIDGE_ROLE, BridgeSettings, ModelBridge
from projectgen.bridge.serving import ServedBridge, serve_bridge
from projectgen.llm.budgets import TokenBudget
from projectgen.llm.call_cache import CallCache
from projectgen.llm.door import DoorSettings
from projectgen.llm.factory import make_chat_model
from projectgen.llm.prompt_store import PromptStore
from projectgen.llm.scripted import scripted_chat_model_class
from projectgen.llm.usage import UsageRecorder

ASK = [{"role": "user", "content": "Write the file app.py"}]


def door(run: Path) -> DoorSettings:
    run.mkdir(exist_ok=True)
    return DoorSettings(recorder=UsageRecorder(run / "usage.jsonl"), prompts=PromptStore(run / "prompts.jsonl"),
                        cache=CallCache(run / "call_cache.jsonl"), retries=0)


@contextmanager
def bridged(model: Any, settings: DoorSettings, max_request_bytes: int = 1 << 20) -> Iterator[ServedBridge]:
    bridge = ModelBridge(model, BridgeSettings(system="sys", door=settings, max_request_bytes=max_request_bytes))
    with serve_bridge(bridge, unix_socket=False, tcp=True) as served:
        yield served


def client(served: ServedBridge) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.url, api_key="anything")  # the default: 2 retries


def test_the_experiments_sampling_is_sent_whatever_the_system_asks(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    with fake_llama_server(reply="print('hi')") as server:
        model = make_chat_model("openai:gpt-4o", base_url=server.url, api_key="key")
        with bridged(model, door(tmp_path)) as served:
            reply = client(served).chat.completions.create(model="some-other-model", messages=ASK, temperature=0.9,
                                                           top_p=0.5, max_tokens=10)
    assert reply.choices[0].message.content == "print('hi')"
    assert reply.model == "gpt-4o"
    sent = server.requests[-1]
    assert sent["model"] == "gpt-4o"
    assert (sent["temperature"], sent["top_p"]) == (0.0, 1.0)
    assert sent.get("max_tokens", sent.get("max_completion_tokens")) == 16384  # the paper's cap for GPT-4o
    assert reply.usage is not None and reply.usage.prompt_tokens == server.prompt_tokens(sent)
    said = [record.getMessage() for record in caplog.records if "sends the experiment's model" in record.getMessage()]
    assert said == ["sys asked for temperature=0.9, top_p=0.5, max_tokens=10; the bridge sends the experiment's "
                    "model's own sampling instead: {'temperature': 0.0, 'top_p': 1.0, 'max_tokens': 16384}"]


@pytest.mark.parametrize(("asked", "said"), [
    ({"temperature": 0, "top_p": 1.0, "max_completion_tokens": 16384}, None),  # what is sent anyway
    ({"temperature": 0.0, "max_tokens": 10}, "sys asked for max_tokens=10;"),  # only the value it changes
    ({"temperature": 0.0, "seed": 7}, "sys asked for seed=7;"),  # never sent
])
def test_the_bridge_warns_only_of_sampling_it_changes(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                      asked: dict, said: str | None) -> None:
    with fake_llama_server(reply="print('hi')") as server:
        model = make_chat_model("openai:gpt-4o", base_url=server.url, api_key="key")
        with bridged(model, door(tmp_path)) as served:
            client(served).chat.completions.create(model="m", messages=ASK, **asked)
    warned = [record.getMessage() for record in caplog.records if "sends the experiment's model" in record.getMessage()]
    assert [message.split(" the bridge")[0] for message in warned] == ([said] if said else [])


def test_each_asking_of_a_prompt_is_a_call_and_a_resumed_run_replays_them_in_order(tmp_path: Path) -> None:
    script = {"label": "asked again", "responses": [
        {"role": BRIDGE_ROLE, "iteration": n, "content": word} for n, word in ((1, "one"), (2, "two"), (3, "three"))]}
    first = scripted_chat_model_class().from_responses(script)
    with bridged(first, door(tmp_path)) as served:
        asked = [client(served).chat.completions.create(model="m", messages=ASK) for _ in range(2)]
    assert [r.choices[0].message.content for r in asked] == ["one", "two"]
    again = scripted_chat_model_class().from_responses(script)  # a new process over the same run folder
    with bridged(again, door(tmp_path)) as served:
        asked = [client(served).chat.completions.create(model="m", messages=ASK) for _ in range(3)]
    assert [r.choices[0].message.content for r in asked] == ["one", "two", "three"]
    assert [call["iteration"] for call in again.calls] == [3]  # the first two were replayed, not sent
    records = UsageRecorder.load(tmp_path / "usage.jsonl").records
    assert [(r.target, r.iteration) for r in records] == [("Write the file app.py", n) for n in (1, 2, 3)]


def test_a_failed_call_is_an_openai_error_the_client_does_not_retry(tmp_path: Path) -> None:
    model = scripted_chat_model_class().from_responses({"label": "empty", "responses": []})
    with bridged(model, door(tmp_path)) as served:
        with pytest.raises(openai.InternalServerError, match="the model call failed: scripted model"):
            client(served).chat.completions.create(model="m", messages=ASK)
        with pytest.raises(openai.BadRequestError, match="'tools' is not supported"):
            client(served).chat.completions.create(model="m", messages=ASK, tools=[{
                "type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}])
    records = UsageRecorder.load(tmp_path / "usage.jsonl").records
    assert len(records) == 1 and records[0].error  # one failed call: the client's two retries did not happen


def test_past_the_budget_every_call_is_refused_before_it_reaches_the_model(tmp_path: Path) -> None:
    model = scripted_chat_model_class().from_responses([{"role": BRIDGE_ROLE, "content": "x" * 400}])
    settings = door(tmp_path)
    settings = DoorSettings(recorder=settings.recorder, prompts=settings.prompts, cache=settings.cache,
                            budget=TokenBudget(50), retries=0)
    with bridged(model, settings) as served:
        with pytest.raises(openai.RateLimitError, match="token budget exceeded: 10[0-9] > 50"):
            client(served).chat.completions.create(model="m", messages=ASK)  # made, recorded, then refused
        with pytest.raises(openai.RateLimitError, match="token budget spent"):
            client(served).chat.completions.create(model="m", messages=[{"role": "user", "content": "again"}])
    assert len(model.calls) == 1
    assert len(UsageRecorder.load(tmp_path / "usage.jsonl").records) == 1


def test_a_streamed_reply_is_the_same_text_cut_at_the_stop_sequence(tmp_path: Path) -> None:
    model = scripted_chat_model_class().from_responses([{"role": BRIDGE_ROLE, "content": "x = 1\nEND\ny = 2"}])
    with bridged(model, door(tmp_path)) as served:
        chunks = list(client(served).chat.completions.create(model="m", messages=ASK, stream=True, stop=["END"],
                                                             stream_options={"include_usage": True}))
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == "x = 1\n"
    assert [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_a_request_over_the_size_cap_is_refused_before_the_model(tmp_path: Path) -> None:
    model = scripted_chat_model_class().from_responses([{"role": BRIDGE_ROLE, "content": "ok"}])
    with bridged(model, door(tmp_path), max_request_bytes=4096) as served:
        big = [{"role": "user", "content": "x" * 10_000}]
        answer = httpx.post(f"{served.url}/chat/completions", json={"model": "m", "messages": big})
        listed = httpx.get(f"{served.url}/models").json()
    assert answer.status_code == 413 and "limit of 4096 bytes" in answer.json()["error"]["message"]
    assert model.calls == []
    assert [entry["id"] for entry in listed["data"]] == ["scripted:in-memory script"]


class CountingModel:
    """A model that counts its calls in flight (the door calls ``ainvoke``), each answered after a pause."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0

    async def ainvoke(self, messages: Any, config: Any = None) -> Any:
        import asyncio

        from langchain_core.messages import AIMessage

        self.now += 1
        self.most = max(self.most, self.now)
        await asyncio.sleep(0.3)  # long enough for all twelve to arrive while the first are answered
        self.now -= 1
        return AIMessage(content="ok", usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2})


def test_a_system_firing_many_calls_at_once_has_at_most_max_in_flight_at_the_model(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    model = CountingModel()
    bridge = ModelBridge(model, BridgeSettings(system="sys", door=door(tmp_path), max_in_flight=3))
    with serve_bridge(bridge, unix_socket=False, tcp=True) as served:
        asker = client(served)
        with ThreadPoolExecutor(12) as pool:
            list(pool.map(lambda n: asker.chat.completions.create(
                model="m", messages=[{"role": "user", "content": f"call {n}"}]), range(12)))
    assert model.most == 3
    assert len(UsageRecorder.load(tmp_path / "usage.jsonl").records) == 12
