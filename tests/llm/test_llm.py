"""The one door to the LLM, all offline: factory, scripted replay, retries, records, budgets."""
from __future__ import annotations

import asyncio
import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypedDict

import httpx
import openai
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

from projectgen import llm
from projectgen.errors import ProjectGenError
from projectgen.llm import (
    BudgetExceededError,
    CallLabels,
    CallRecord,
    DoorSettings,
    ModelCallError,
    ModelRoles,
    ScriptExhaustedError,
    TokenBudget,
    UsageRecorder,
    acall_model,
    call_model,
    describe_model,
    estimate_tokens,
    is_transient,
    make_chat_model,
)

ScriptedChatModel = llm.ScriptedChatModel
_ENV = ("PROJECTGEN_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_BASE", "PROJECTGEN_API_KEY", "OPENAI_API_KEY")


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests must not depend on (or leak) a developer's endpoint or key."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


def _request() -> httpx.Request:
    return httpx.Request("POST", "http://model.invalid/v1/chat/completions")


def _api_error(cls: type[openai.APIStatusError], status: int, headers: dict[str, str] | None = None) -> Exception:
    return cls(f"status {status}", response=httpx.Response(status, request=_request(), headers=headers), body=None)


class FlakyModel(BaseChatModel):
    """Raises the queued errors one per call, then answers; remembers the metadata it was called with."""

    errors: list[Any] = Field(default_factory=list)
    reply: str = "ok"
    usage: dict[str, int] | None = Field(default_factory=lambda: {"input_tokens": 11, "output_tokens": 7,
                                                                  "total_tokens": 18})
    _calls: int = PrivateAttr(default=0)
    _metadata: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "flaky-fake"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self._calls += 1
        self._metadata.append(dict(run_manager.metadata))
        if self.errors:
            raise self.errors.pop(0)
        message = AIMessage(content=self.reply, usage_metadata=self.usage) if self.usage else AIMessage(self.reply)
        return ChatResult(generations=[ChatGeneration(message=message)])


# --------------------------------------------------------------------------- factory

def test_openai_model_is_created_offline_with_temperature_0() -> None:
    model = make_chat_model("openai:gpt-4o-mini", api_key="sk-test")
    assert type(model).__name__ == "ChatOpenAI"
    assert model.model_name == "gpt-4o-mini"
    assert model.temperature == 0
    assert model.max_retries == 0  # call_model is the one retry layer
    assert model.openai_api_base is None


def test_a_base_url_gives_an_openai_compatible_model() -> None:
    model = make_chat_model("openai:qwen2.5-coder", base_url="http://gpu-box:8000/v1", api_key="sk-local")
    assert type(model).__name__ == "OpenAICompatibleChat"  # ChatOpenAI as such servers read it
    assert model.openai_api_base == "http://gpu-box:8000/v1"
    assert model.model_name == "qwen2.5-coder"
    assert model.openai_api_key.get_secret_value() == "sk-local"
    assert "gpu-box" in describe_model(model)


def test_a_base_url_from_the_environment_routes_any_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROJECTGEN_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("PROJECTGEN_API_KEY", "from-env")
    model = make_chat_model("ollama:llama3:8b", temperature=0.3)
    assert type(model).__name__ == "OpenAICompatibleChat"
    assert (model.openai_api_base, model.model_name, model.temperature) == ("http://localhost:11434/v1", "llama3:8b", 0.3)
    assert model.openai_api_key.get_secret_value() == "from-env"


def test_openai_base_url_env_applies_to_openai_specs_and_a_keyless_endpoint_gets_a_placeholder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://vllm:8000/v1")
    model = make_chat_model("openai:my-served-model")
    assert model.openai_api_base == "http://vllm:8000/v1"
    assert model.openai_api_key.get_secret_value()  # local servers ignore it, the SDK insists on one


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("foo:bar", "unknown model provider 'foo' in 'foo:bar' (known: "),
        (":gpt-4o", "malformed model spec ':gpt-4o'"),
        ("openai:", "malformed model spec 'openai:'"),
        ("", "malformed model spec ''"),
        ("mystery-model", "cannot tell the provider of model 'mystery-model'"),
        ("openai:gpt-4o-mini", "cannot create 'openai:gpt-4o-mini'"),  # no API key anywhere
        ("scripted:/no/such/script.json", "/no/such/script.json: script file not found"),
    ],
)
def test_bad_specs_are_one_line_project_errors(spec: str, message: str) -> None:
    with pytest.raises(ProjectGenError) as info:
        make_chat_model(spec)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_missing_integration_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_deepseek", None)  # importing it now fails
    with pytest.raises(ProjectGenError) as info:
        make_chat_model("deepseek:deepseek-chat", api_key="sk-test")
    assert "langchain-deepseek" in str(info.value) and "\n" not in str(info.value)


def test_scripted_spec_loads_a_script_file(tmp_path: Path) -> None:
    path = tmp_path / "demo.json"
    path.write_text(json.dumps({"label": "demo", "responses": [{"role": "architect", "content": "hi"}]}))
    model = make_chat_model(f"scripted:{path}")
    assert isinstance(model, ScriptedChatModel)
    assert model._llm_type == "scripted"
    assert describe_model(model) == f"scripted model (demo, replay of {path})"


def test_invalid_script_files_are_project_errors(tmp_path: Path) -> None:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json")
    missing_role = tmp_path / "missing.json"
    missing_role.write_text(json.dumps({"responses": [{"content": "x"}]}))
    with pytest.raises(ProjectGenError, match="not a readable JSON script"):
        make_chat_model(f"scripted:{bad_json}")
    with pytest.raises(ProjectGenError, match=r"invalid script at responses\.0\.role: Field required"):
        make_chat_model(f"scripted:{missing_role}")


def test_model_roles_default_and_overrides() -> None:
    roles = ModelRoles.from_specs("openai:gpt-4o-mini", api_key="sk-test", coder="openai:gpt-4o",
                                  code_judge="openai:gpt-4o")
    assert roles.for_role("architect").model_name == "gpt-4o-mini"
    assert roles["coder"].model_name == "gpt-4o"
    assert roles["coder"] is roles["code_judge"]  # one model object per distinct spec
    assert roles["knowledge"] is roles.default
    assert set(roles.describe()) == set(llm.ROLES)
    with pytest.raises(ProjectGenError, match="unknown model role"):
        ModelRoles.from_specs("openai:gpt-4o-mini", api_key="sk-test", painter="openai:gpt-4o")
    with pytest.raises(ProjectGenError, match="unknown model role"):
        roles.for_role("painter")


def test_model_roles_say_when_a_model_is_a_replay() -> None:
    scripted = ScriptedChatModel.from_responses([], label="replay of demo.json")
    roles = ModelRoles(default=scripted)
    assert roles.describe()["coder"] == "scripted model (replay of demo.json)"


# --------------------------------------------------------------------------- scripted model

SCRIPT = {
    "label": "unit",
    "responses": [
        {"role": "architect", "content": "arch-any"},
        {"role": "architect", "iteration": 2, "content": "arch-2"},
        {"role": "coder", "content": "coder-any"},
        {"role": "coder", "target": "kv/store.py", "content": "store-any"},
        {"role": "coder", "target": "kv/store.py", "iteration": 1, "content": "store-1"},
        {"role": "coder", "target": "kv/store.py", "iteration": 3, "content": "store-3"},
        {"role": "coder", "target": "kv/store.py", "iteration": 1, "attempt": 2, "content": "store-1-attempt-2"},
        {"role": "code_judge", "target": "kv/store.py", "content": {"score": 9, "feedback": []}},
    ],
}


def _ask(model: Any, role: str, target: str | None = None, iteration: int = 0, **extra: Any) -> str:
    metadata = {"projectgen_role": role, "projectgen_iteration": iteration, **extra}
    if target is not None:
        metadata["projectgen_target"] = target
    return model.invoke([HumanMessage("go")], config={"metadata": metadata}).content


@pytest.mark.parametrize(
    ("role", "target", "iteration", "expected"),
    [
        ("coder", "kv/store.py", 1, "store-1"),          # role + target + iteration
        ("coder", "kv/store.py", 3, "store-3"),
        ("coder", "kv/store.py", 2, "store-1"),          # latest earlier iteration of that target
        ("coder", "kv/store.py", 9, "store-3"),
        ("coder", "kv/store.py", 0, "store-any"),        # the target's iteration-free entry
        ("coder", "kv/other.py", 1, "coder-any"),        # role only
        ("coder", None, 5, "coder-any"),
        ("architect", None, 1, "arch-any"),
        ("architect", None, 2, "arch-2"),
        ("architect", None, 3, "arch-2"),
        ("code_judge", "kv/store.py", 1, '{\n  "score": 9,\n  "feedback": []\n}'),  # JSON content as text
    ],
)
def test_scripted_matching_is_most_specific_first(role: str, target: str | None, iteration: int,
                                                  expected: str) -> None:
    model = ScriptedChatModel.from_responses(SCRIPT)
    assert _ask(model, role, target, iteration) == expected


def test_scripted_attempt_metadata_selects_attempt_entries() -> None:
    model = ScriptedChatModel.from_responses(SCRIPT)
    assert _ask(model, "coder", "kv/store.py", 1, projectgen_attempt=1) == "store-1"
    assert _ask(model, "coder", "kv/store.py", 1, projectgen_attempt=2) == "store-1-attempt-2"
    assert _ask(model, "coder", "kv/store.py", 3, projectgen_attempt=4) == "store-1-attempt-2"


def test_scripted_stage_entries_answer_only_their_stage_and_win_over_stage_free_ones() -> None:
    """One script answers a task in two edit formats: their calls differ only in the stage label."""
    model = ScriptedChatModel.from_responses([
        {"role": "reflection", "target": "t", "content": "any stage"},
        {"role": "reflection", "target": "t", "stage": "reflection_patch", "iteration": 1, "content": "patch 1"},
        {"role": "reflection", "target": "t", "stage": "reflection_whole", "iteration": 1, "content": "whole 1"},
        {"role": "reflection", "target": "t", "stage": "reflection_whole", "iteration": 2, "content": "whole 2"},
    ])
    assert call_model(model, "go", CallLabels("reflection", "reflection_patch", "t", 1)).content == "patch 1"
    assert call_model(model, "go", CallLabels("reflection", "reflection_patch", "t", 2)).content == "patch 1"
    assert call_model(model, "go", CallLabels("reflection", "reflection_whole", "t", 2)).content == "whole 2"
    assert call_model(model, "go", CallLabels("reflection", "other", "t", 1)).content == "any stage"
    with pytest.raises(ProjectGenError, match="stage='x'"):
        llm.load_script([{"role": "r", "stage": "x", "content": "a"}, {"role": "r", "stage": "x", "content": "b"}])


def test_run_manager_metadata_reaches_generate_sync_and_async() -> None:
    """langchain-core 1.7 hands the run config's metadata to _generate/_agenerate via run_manager.metadata."""
    model = FlakyModel()
    model.invoke("hi", config={"metadata": {"projectgen_role": "coder", "projectgen_target": "a.py"}})
    asyncio.run(model.ainvoke("hi", config={"metadata": {"projectgen_role": "skeleton"}}))
    assert model._metadata[0]["projectgen_role"] == "coder" and model._metadata[0]["projectgen_target"] == "a.py"
    assert model._metadata[1]["projectgen_role"] == "skeleton"


def test_metadata_reaches_the_model_inside_a_langgraph_node() -> None:
    """Inside a graph, call_model's metadata and the graph run's metadata (e.g. the attempt) both arrive."""
    from langgraph.graph import END, START, StateGraph

    model = ScriptedChatModel.from_responses(SCRIPT)

    class State(TypedDict):
        out: str

    def node(state: State) -> State:
        return {"out": call_model(model, "go", CallLabels("coder", "code", "kv/store.py", 1)).content}

    builder = StateGraph(State)
    builder.add_node("code", node)
    builder.add_edge(START, "code")
    builder.add_edge("code", END)
    graph = builder.compile()
    assert graph.invoke({"out": ""})["out"] == "store-1"
    assert graph.invoke({"out": ""}, config={"metadata": {"projectgen_attempt": 2}})["out"] == "store-1-attempt-2"


def test_scripted_replies_are_deterministic_under_concurrent_fan_out() -> None:
    targets = [f"pkg/mod{i:02d}.py" for i in range(20)]
    model = ScriptedChatModel.from_responses(
        [{"role": "coder", "target": t, "iteration": 1, "content": f"code of {t}"} for t in targets])
    recorder = UsageRecorder()

    async def fan_out() -> list[Any]:
        return await asyncio.gather(*(
            acall_model(model, [HumanMessage(f"write {t}")], CallLabels("coder", "code", t, 1),
                        DoorSettings(recorder=recorder)) for t in reversed(targets)))

    for _ in range(3):
        replies = asyncio.run(fan_out())
        assert [r.content for r in replies] == [f"code of {t}" for t in reversed(targets)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(lambda t: call_model(model, "go", CallLabels("coder", "code", t, 1),
                                                     DoorSettings(recorder=recorder)), targets))
    assert [r.content for r in replies] == [f"code of {t}" for t in targets]
    assert len(recorder.records) == 80 and len(model.calls) == 80


def test_a_global_llm_cache_does_not_answer_for_another_role() -> None:
    from langchain_core.caches import InMemoryCache
    from langchain_core.globals import get_llm_cache, set_llm_cache

    model = ScriptedChatModel.from_responses(SCRIPT)
    previous = get_llm_cache()
    set_llm_cache(InMemoryCache())
    try:
        assert _ask(model, "architect") == "arch-any"
        assert _ask(model, "coder") == "coder-any"  # same prompt, different key
    finally:
        set_llm_cache(previous)


def test_no_match_raises_script_exhausted_naming_the_key() -> None:
    model = ScriptedChatModel.from_responses(SCRIPT)
    with pytest.raises(ScriptExhaustedError) as info:
        _ask(model, "skeleton_judge", "kv/store.py", 2)
    err = info.value
    assert (err.role, err.target, err.iteration) == ("skeleton_judge", "kv/store.py", 2)
    assert "role='skeleton_judge' target='kv/store.py' iteration=2" in str(err)
    assert isinstance(err, ProjectGenError)


def test_entries_for_later_iterations_do_not_answer_earlier_ones() -> None:
    model = ScriptedChatModel.from_responses([{"role": "coder", "target": "a.py", "iteration": 2, "content": "x"}])
    with pytest.raises(ScriptExhaustedError):
        _ask(model, "coder", "a.py", 1)


def test_a_call_without_metadata_is_told_how_to_pass_it() -> None:
    model = ScriptedChatModel.from_responses(SCRIPT)
    with pytest.raises(ScriptExhaustedError, match="without 'projectgen_role' metadata"):
        model.invoke("hello")


def test_fallback_answers_unmatched_calls() -> None:
    model = ScriptedChatModel.from_responses({"fallback": "FALLBACK", "responses": []})
    assert _ask(model, "knowledge") == "FALLBACK"
    assert ScriptedChatModel.from_responses([], fallback="given")._generate([], None, None).generations[0].text \
        == "given"


def test_duplicate_script_keys_are_rejected() -> None:
    with pytest.raises(ProjectGenError, match="two responses for role='coder' target='a.py' iteration=1"):
        ScriptedChatModel.from_responses([{"role": "coder", "target": "a.py", "iteration": 1, "content": "x"},
                                          {"role": "coder", "target": "a.py", "iteration": 1, "content": "y"}])


def test_scripted_usage_is_an_estimate_and_says_so() -> None:
    model = ScriptedChatModel.from_responses([{"role": "architect", "content": "x" * 40}])
    prompt = [SystemMessage("s" * 20), HumanMessage("h" * 19)]
    reply = model.invoke(prompt, config={"metadata": {"projectgen_role": "architect"}})
    assert reply.usage_metadata["output_tokens"] == estimate_tokens("x" * 40) == 11
    assert reply.usage_metadata["input_tokens"] == estimate_tokens("s" * 20 + "\n" + "h" * 19) == 11
    assert reply.response_metadata["tokens_estimated"] is True
    assert reply.response_metadata["model_name"] == "scripted:in-memory script"
    recorder = UsageRecorder()
    call_model(model, prompt, CallLabels("architect", "architecture"), DoorSettings(recorder=recorder))
    record = recorder.records[0]
    assert record.tokens_estimated and record.model == "scripted:in-memory script"
    assert (record.input_tokens, record.output_tokens) == (11, 11)


def test_stop_sequences_cut_the_scripted_reply() -> None:
    model = ScriptedChatModel.from_responses([{"role": "coder", "content": "code\nEND\nchatter"}])
    reply = model.invoke("go", stop=["END"], config={"metadata": {"projectgen_role": "coder"}})
    assert reply.content == "code\n"


# --------------------------------------------------------------------------- call_model

def test_call_model_retries_transient_errors_with_backoff() -> None:
    model = FlakyModel(errors=[_api_error(openai.RateLimitError, 429), openai.APITimeoutError(request=_request())])
    recorder, sleeps = UsageRecorder(), []
    reply = call_model(model, "hi", CallLabels("coder", "code", "a.py", 2), DoorSettings(recorder=recorder),
                       sleep=sleeps.append)
    assert reply.content == "ok"
    assert sleeps == [1.0, 2.0]
    assert model._calls == 3
    (record,) = recorder.records
    assert (record.attempts, record.error, record.input_tokens, record.output_tokens) == (3, None, 11, 7)
    assert record.tokens_estimated is False
    assert (record.role, record.stage, record.target, record.iteration) == ("coder", "code", "a.py", 2)
    assert record.model == "FlakyModel"
    assert 0 <= record.latency_s <= record.elapsed_s


def test_call_model_passes_the_key_in_the_run_config_and_merges_the_callers_config() -> None:
    model = FlakyModel()
    call_model(model, "hi", CallLabels("code_judge", "code", "a.py", 4),
               config={"metadata": {"projectgen_attempt": 2, "projectgen_role": "overridden"}, "tags": ["t"]})
    metadata = model._metadata[0]
    assert metadata["projectgen_role"] == "code_judge" and metadata["projectgen_stage"] == "code"
    assert metadata["projectgen_target"] == "a.py" and metadata["projectgen_iteration"] == 4
    assert metadata["projectgen_attempt"] == 2


def test_retry_after_is_honoured_up_to_the_cap() -> None:
    model = FlakyModel(errors=[_api_error(openai.RateLimitError, 429, {"retry-after": "7"}),
                               _api_error(openai.RateLimitError, 429, {"retry-after": "700"})])
    sleeps: list[float] = []
    call_model(model, "hi", CallLabels("coder", "code"), DoorSettings(max_backoff=30.0), sleep=sleeps.append)
    assert sleeps == [7.0, 30.0]


@pytest.mark.parametrize(
    "error",
    [
        _api_error(openai.AuthenticationError, 401),
        _api_error(openai.BadRequestError, 400),
        ValueError("unsupported parameter"),
    ],
)
def test_non_transient_errors_are_not_retried(error: Exception) -> None:
    model = FlakyModel(errors=[error])
    recorder, sleeps = UsageRecorder(), []
    with pytest.raises(ModelCallError) as info:
        call_model(model, "hi", CallLabels("architect", "architecture"), DoorSettings(recorder=recorder),
                   sleep=sleeps.append)
    assert model._calls == 1 and sleeps == []
    assert info.value.cause is error and info.value.record.attempts == 1
    assert "non-retryable" in str(info.value) and type(error).__name__ in str(info.value)
    (record,) = recorder.records
    assert record.error and record.error.startswith(type(error).__name__)
    assert record.total_tokens == 0


def test_persistent_transient_errors_fail_after_the_last_retry() -> None:
    model = FlakyModel(errors=[_api_error(openai.InternalServerError, 503) for _ in range(5)])
    recorder, sleeps = UsageRecorder(), []
    with pytest.raises(ModelCallError, match=r"after 3 attempt\(s\), transient error persisted"):
        call_model(model, "hi", CallLabels("coder", "code"), DoorSettings(recorder=recorder, retries=2, backoff=0.5),
                   sleep=sleeps.append)
    assert model._calls == 3 and sleeps == [0.5, 1.0]
    assert recorder.records[0].attempts == 3 and recorder.totals().failed_calls == 1


def test_project_errors_from_the_model_pass_through_and_are_recorded() -> None:
    model = ScriptedChatModel.from_responses([])
    recorder = UsageRecorder()
    with pytest.raises(ScriptExhaustedError):
        call_model(model, "hi", CallLabels("coder", "code", "x.py", 1), DoorSettings(recorder=recorder))
    assert recorder.records[0].error.startswith("ScriptExhaustedError")


def test_missing_usage_is_estimated_from_text_and_flagged() -> None:
    model = FlakyModel(reply="r" * 12, usage=None)
    recorder = UsageRecorder()
    call_model(model, "p" * 8, CallLabels("knowledge", "knowledge"), DoorSettings(recorder=recorder))
    record = recorder.records[0]
    assert record.tokens_estimated is True
    assert (record.input_tokens, record.output_tokens) == (estimate_tokens("p" * 8), estimate_tokens("r" * 12))


def test_acall_model_retries_with_an_async_sleep() -> None:
    model = FlakyModel(errors=[httpx.ConnectError("refused"), _api_error(openai.RateLimitError, 429)])
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    reply = asyncio.run(acall_model(model, "hi", CallLabels("coder", "code"), DoorSettings(backoff=0.25),
                                    sleep=fake_sleep))
    assert reply.content == "ok" and sleeps == [0.25, 0.5]


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (_api_error(openai.RateLimitError, 429), True),
        (_api_error(openai.InternalServerError, 500), True),
        (_api_error(openai.APIStatusError, 502), True),
        (_api_error(openai.APIStatusError, 408), True),
        (openai.APITimeoutError(request=_request()), True),
        (openai.APIConnectionError(request=_request()), True),
        (httpx.ReadTimeout("slow"), True),
        (httpx.ConnectError("refused"), True),
        (TimeoutError(), True),
        (ConnectionResetError(), True),
        (_api_error(openai.AuthenticationError, 401), False),
        (_api_error(openai.PermissionDeniedError, 403), False),
        (_api_error(openai.NotFoundError, 404), False),
        (_api_error(openai.BadRequestError, 400), False),
        (ValueError("bad"), False),
        (KeyError("x"), False),
    ],
)
def test_transient_error_classification(error: Exception, transient: bool) -> None:
    assert is_transient(error) is transient


def test_a_wrapped_transient_error_is_still_transient() -> None:
    class ProviderError(Exception):
        pass

    try:
        try:
            raise _api_error(openai.RateLimitError, 429)
        except openai.RateLimitError as inner:
            raise ProviderError("provider wrapper") from inner
    except ProviderError as outer:
        assert is_transient(outer)


def test_status_code_attributes_of_unknown_error_classes_decide() -> None:
    class GatewayError(Exception):
        def __init__(self, status_code: int) -> None:
            super().__init__(f"status {status_code}")
            self.status_code = status_code

    assert is_transient(GatewayError(504)) and is_transient(GatewayError(429))
    assert not is_transient(GatewayError(422))


# --------------------------------------------------------------------------- records

def _record(role: str = "coder", stage: str = "code", tokens: tuple[int, int] = (3, 2), **kw: Any) -> CallRecord:
    return CallRecord(role=role, stage=stage, model="m", input_tokens=tokens[0], output_tokens=tokens[1], **kw)


def test_recorder_totals_by_role_and_stage() -> None:
    recorder = UsageRecorder()
    recorder.record(_record("architect", "architecture", (10, 5)))
    recorder.record(_record("architecture_judge", "architecture", (4, 1), tokens_estimated=True))
    recorder.record(_record("coder", "code", (7, 3)))
    recorder.record(_record("coder", "code", (0, 0), error="RateLimitError: 429"))
    by_stage = recorder.totals_by("stage")
    assert by_stage["architecture"].total_tokens == 20 and by_stage["architecture"].calls == 2
    assert by_stage["code"].failed_calls == 1
    by_role = recorder.totals_by("role")
    assert by_role["coder"].input_tokens == 7 and by_role["architecture_judge"].estimated_calls == 1
    total = recorder.totals()
    assert (total.calls, total.input_tokens, total.output_tokens, total.total_tokens) == (4, 21, 9, 30)


def test_recorder_writes_jsonl_and_reads_it_back_despite_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "run" / "calls.jsonl"
    recorder = UsageRecorder(path)
    recorder.record(_record("architect", "architecture", (10, 5)))
    recorder.record(_record("coder", "code", (1, 1), target="a.py", iteration=2))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"role": "coder", "sta')  # a kill mid-write
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["total_tokens"] == 15
    loaded = UsageRecorder.load(path)
    assert [r.role for r in loaded.records] == ["architect", "coder"]
    assert loaded.records[1].target == "a.py" and loaded.records[1].iteration == 2
    assert loaded.records == recorder.records


def test_recorder_is_thread_safe(tmp_path: Path) -> None:
    recorder = UsageRecorder(tmp_path / "calls.jsonl")
    barrier = threading.Barrier(16)

    def work(i: int) -> None:
        barrier.wait()
        for _ in range(25):
            recorder.record(_record(target=f"t{i}.py"))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(recorder.records) == 400
    assert len(UsageRecorder.load(tmp_path / "calls.jsonl").records) == 400


# --------------------------------------------------------------------------- budget

def test_token_budget_stops_the_run_once_exceeded() -> None:
    budget = TokenBudget(max_tokens=40)
    model = FlakyModel()  # 18 tokens a call
    recorder = UsageRecorder()
    call_model(model, "a", CallLabels("coder", "code"), DoorSettings(recorder=recorder, budget=budget))
    call_model(model, "b", CallLabels("coder", "code"), DoorSettings(recorder=recorder, budget=budget))
    assert budget.used == 36
    with pytest.raises(BudgetExceededError, match="token budget exceeded: 54 > 40"):
        call_model(model, "c", CallLabels("coder", "code"), DoorSettings(recorder=recorder, budget=budget))
    assert len(recorder.records) == 3  # the over-budget call is still accounted for
    with pytest.raises(BudgetExceededError, match="token budget spent"):
        call_model(model, "d", CallLabels("coder", "code"), DoorSettings(recorder=recorder, budget=budget))
    assert model._calls == 3  # refused before calling the model


def test_a_custom_budget_sees_every_record() -> None:
    seen: list[CallRecord] = []

    class Spy:
        def check(self, record: CallRecord) -> None:
            seen.append(record)

    call_model(FlakyModel(), "a", CallLabels("skeleton", "skeleton"), DoorSettings(budget=Spy()))
    assert [r.role for r in seen] == ["skeleton"]


def test_importing_llm_does_not_import_langchain() -> None:
    import subprocess

    code = ("import sys, projectgen.llm, projectgen.llm.parsing; "
            "print(any(m.split('.')[0] in ('langchain', 'langchain_core', 'openai', 'asyncio') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_a_bare_model_name_uses_the_inferred_provider() -> None:
    model = make_chat_model("gpt-4o-mini", api_key="sk-test")
    assert type(model).__name__ == "ChatOpenAI" and model.max_retries == 0


def test_every_real_model_gets_explicit_sampling_from_the_per_model_table() -> None:
    """temperature 0, top_p 1.0 and the papers' output caps (DeepSeek-V3 8k, GPT-4o 16k) are sent, never left
    to the provider; each can be overridden."""
    from projectgen.llm.sampling import max_output_tokens, sampling_of

    url = "http://localhost:8000/v1"
    assert sampling_of(make_chat_model("openai:gpt-4o", base_url=url)) == {
        "temperature": 0.0, "top_p": 1.0, "max_tokens": 16384}
    assert sampling_of(make_chat_model("deepseek-chat", base_url=url))["max_tokens"] == 8192
    assert sampling_of(make_chat_model("qwen2.5-coder", base_url=url))["max_tokens"] == max_output_tokens("other")
    custom = make_chat_model("openai:gpt-4o", base_url=url, temperature=0.7, top_p=0.9, max_tokens=1000)
    assert sampling_of(custom) == {"temperature": 0.7, "top_p": 0.9, "max_tokens": 1000}
    assert sampling_of(ScriptedChatModel.from_responses([])) == {}  # a replay samples nothing
