"""Model calls in flight, capped per model or endpoint across a batch's threads (`projectgen.llm.call_slots`).

Concurrency is asserted by counting the calls that overlap (a probe between the cap and a model
behind a latency fault), never by wall time.
"""
from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from projectgen.errors import ProjectGenError
from projectgen.llm import CallLabels, DoorSettings, ModelRoles, ScriptedChatModel, UsageRecorder, acall_model
from projectgen.llm.call_slots import CallSlots, endpoint_key, limit_calls
from projectgen.llm.faults import FaultPlan, inject_faults
from projectgen.llm.naming import describe_model, model_name


class Overlap:
    """Counts the calls in flight at once (the highest count seen)."""

    def __init__(self) -> None:
        self.lock, self.now, self.peak, self.calls = threading.Lock(), 0, 0, 0

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.calls += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


def probed(model: Any, overlap: Overlap) -> Any:
    """`model` with every call counted while it is answered (a latency fault makes it take a while)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.outputs import ChatGeneration, ChatResult

    from projectgen.llm.call_slots import wrapped_config

    class Probe(BaseChatModel):
        wrapped: Any

        @property
        def _llm_type(self) -> str:
            return "probe"

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001 - LangChain's
            raise NotImplementedError

        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001
            overlap.enter()
            try:
                reply = await self.wrapped.ainvoke(messages, config=wrapped_config(run_manager))
            finally:
                overlap.leave()
            return ChatResult(generations=[ChatGeneration(message=reply)])

    return Probe(wrapped=model)


def replay() -> Any:
    """A replay answering every call "ok"."""
    return ScriptedChatModel.from_responses({"label": "unit replay", "fallback": "ok"})


def slow_replay(latency: str = "latency=0.05s") -> Any:
    return inject_faults(replay(), latency)


async def many_calls(model: Any, count: int, recorder: UsageRecorder | None = None) -> list[str]:
    door = DoorSettings(recorder=recorder)
    replies = await asyncio.gather(*(acall_model(model, "hi", CallLabels("coder", "code", f"m{i}.py", 1), door)
                                     for i in range(count)))
    return [reply.content for reply in replies]


def test_calls_wait_concurrently_up_to_the_cap_and_no_further() -> None:
    uncapped = Overlap()
    assert asyncio.run(many_calls(probed(slow_replay(), uncapped), 12)) == ["ok"] * 12
    assert uncapped.peak == 12  # nothing serialises the waiting calls
    capped, recorder = Overlap(), UsageRecorder()
    model = limit_calls(probed(slow_replay(), capped), CallSlots(3))
    assert asyncio.run(many_calls(model, 12, recorder)) == ["ok"] * 12
    assert capped.peak == 3 and capped.calls == 12
    assert len(recorder.records) == 12 and all(r.error is None for r in recorder.records)


def test_the_cap_holds_across_threads_each_with_its_own_event_loop() -> None:
    """A batch's units run on threads of their own (one event loop each): the cap is the batch's."""
    overlap, slots = Overlap(), CallSlots(4)
    model = limit_calls(probed(slow_replay(), overlap), slots)
    threads = [threading.Thread(target=lambda: asyncio.run(many_calls(model, 6))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlap.calls == 18 and overlap.peak == 4


def test_a_blocking_call_takes_a_slot_too() -> None:
    slots = CallSlots(1)
    model = limit_calls(replay(), slots)
    with slots.held(endpoint_key(model.wrapped)):  # the one slot is taken: a blocking call would wait
        assert not slots.slot(endpoint_key(model.wrapped)).acquire(blocking=False)
    assert model.invoke("hi").content == "ok"


def test_the_wrapper_is_named_and_priced_as_the_model_and_roles_stay_shared() -> None:
    inner = replay()
    wrapped = limit_calls(inner, CallSlots(2))
    assert model_name(wrapped) == model_name(inner) and describe_model(wrapped) == describe_model(inner)
    roles = limit_calls(ModelRoles(default=inner, overrides={"coder": inner}), CallSlots(2))
    assert roles.default is roles.overrides["coder"]
    with pytest.raises(ProjectGenError, match="at least 1"):
        CallSlots(0)


def test_a_rate_limited_call_holds_no_slot_while_it_backs_off() -> None:
    """The door's back-off sleeps outside the cap: a 429 on one call does not stall the others."""
    overlap, slots = Overlap(), CallSlots(1)
    inner = replay()
    faulty = inject_faults(inner, FaultPlan(rates={"rate_limit": 0.5}, seed=1))
    model = limit_calls(probed(faulty, overlap), slots)
    key = endpoint_key(probed(faulty, overlap))
    held_while_sleeping: list[bool] = []

    async def sleep(seconds: float) -> None:
        free = slots.slot(key).acquire(blocking=False)
        held_while_sleeping.append(not free)
        if free:
            slots.slot(key).release()

    async def one() -> str:
        reply = await acall_model(model, "hi", CallLabels("coder", "code", "a.py", 1), DoorSettings(retries=20),
                                  sleep=sleep)
        return reply.content

    assert asyncio.run(one()) == "ok"
    assert held_while_sleeping and not any(held_while_sleeping)
