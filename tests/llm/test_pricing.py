"""Prices per model name, costs of call records, and the dollar budget, with hand-computed figures."""
from __future__ import annotations

import json

import pytest

from projectgen.errors import ProjectGenError
from projectgen.llm import (
    BudgetExceededError,
    CallLabels,
    CallRecord,
    CostBudget,
    DoorSettings,
    UsageRecorder,
    call_model,
)
from projectgen.llm.pricing import (
    DEFAULT_PRICES,
    PRICES_AS_OF,
    CostTotal,
    ModelPrice,
    PriceTable,
    format_usd,
)


def record(model: str, tokens_in: int, tokens_out: int, **fields) -> CallRecord:
    return CallRecord(role=fields.pop("role", "coder"), stage=fields.pop("stage", "code"), model=model,
                      input_tokens=tokens_in, output_tokens=tokens_out, **fields)


# --------------------------------------------------------------------------- prices


def test_defaults_are_documented_list_prices():
    assert PRICES_AS_OF
    assert DEFAULT_PRICES["gpt-4o-mini"] == ModelPrice(0.15, 0.60)
    assert DEFAULT_PRICES["gpt-4o"] == ModelPrice(2.50, 10.00)
    for name in ("gpt-4.1", "gpt-4.1-mini", "deepseek-chat", "deepseek-reasoner"):
        assert name in DEFAULT_PRICES


def test_cost_of_a_record_hand_computed():
    prices = PriceTable.default()
    # gpt-4o-mini: 1000 * 0.15 / 1e6 + 500 * 0.60 / 1e6 = 0.00015 + 0.0003
    assert prices.cost_of(record("gpt-4o-mini", 1000, 500)) == pytest.approx(0.00045)
    # gpt-4o: 1M in + 1M out = 2.50 + 10.00
    assert prices.cost_of(record("gpt-4o", 1_000_000, 1_000_000)) == pytest.approx(12.5)
    # deepseek-chat: 2M * 0.28 / 1e6 + 0.5M * 0.42 / 1e6 = 0.56 + 0.21
    assert prices.cost_of(record("deepseek-chat", 2_000_000, 500_000)) == pytest.approx(0.77)
    # a usage.jsonl line (dict) works as well
    line = json.loads(record("gpt-4.1", 10_000, 2_000).model_dump_json())
    assert prices.cost_of(line) == pytest.approx(10_000 * 2.0 / 1e6 + 2_000 * 8.0 / 1e6)  # 0.02 + 0.016


def test_matching_dated_versions_provider_prefix_globs_and_longest_key():
    prices = PriceTable.default()
    assert prices.price_of("gpt-4o-mini-2024-07-18") == ModelPrice(0.15, 0.60)
    assert prices.price_of("gpt-4.1-mini-2025-04-14") == ModelPrice(0.40, 1.60)
    assert prices.price_of("openai:gpt-4o") == ModelPrice(2.50, 10.00)
    assert prices.price_of("gpt-4o-2024-05-13") == ModelPrice(5.00, 15.00)  # the exact key beats the dated prefix
    assert prices.price_of("claude-sonnet-4-5-20250929") == ModelPrice(3.00, 15.00)
    assert prices.price_of("claude-opus-4-5") == ModelPrice(5.00, 25.00)  # longer glob beats a shorter one
    assert prices.price_of("claude-3-5-haiku-20241022") == ModelPrice(0.80, 4.00)
    # a different model that merely starts like a priced one gets no price: never guessed
    assert prices.price_of("gpt-4o-audio-preview") is None
    assert prices.price_of("gpt-4o-mini-tts") is None


def test_scripted_models_cost_zero_and_unknown_models_have_no_price():
    prices = PriceTable.default()
    assert prices.cost_of(record("scripted:kvstore demo replay", 50_000, 9_000)) == 0.0
    assert prices.cost_of(record("my-local-llama", 1000, 1000)) is None
    assert PriceTable.empty().cost_of(record("gpt-4o", 1000, 1000)) is None
    assert PriceTable.empty().cost_of(record("scripted:x", 1000, 1000)) == 0.0


def test_cost_total_keeps_unpriced_calls_apart():
    prices = PriceTable.default()
    calls = [record("gpt-4o-mini", 1000, 500), record("mystery", 10, 10), record("gpt-4o-mini", 1000, 500)]
    total = CostTotal.of(calls, prices)
    assert total.usd == pytest.approx(0.0009)
    assert (total.priced_calls, total.unpriced_calls, total.unpriced_models) == (2, 1, {"mystery"})
    assert total.value is None
    assert total.label() == "$0.0009 + n/a (1 call)"
    assert total.label(short=True) == "$0.0009 + n/a"
    assert CostTotal.of([record("mystery", 1, 1)], prices).label() == "n/a"
    assert CostTotal.of([], prices).label() == "-"
    assert CostTotal.of([record("scripted:x", 10, 10)], prices).label() == "$0"
    assert format_usd(None) == "n/a"
    assert format_usd(12.345) == "$12.35"
    assert format_usd(0.1234) == "$0.123"


def test_price_file_toml_and_json_and_overrides(tmp_path):
    toml = tmp_path / "prices.toml"
    toml.write_text('[models."my-finetune*"]\ninput = 0.3\noutput = 1.2\n\n[models."gpt-4o"]\ninput = 2\noutput = 8\n')
    table = PriceTable.from_file(toml)
    # my-finetune-v2: 1M * 0.3 / 1e6 + 0.5M * 1.2 / 1e6 = 0.3 + 0.6
    assert table.cost_of(record("my-finetune-v2", 1_000_000, 500_000)) == pytest.approx(0.9)
    assert table.price_of("gpt-4o") == ModelPrice(2.0, 8.0)  # overridden
    assert table.price_of("gpt-4o-mini") == ModelPrice(0.15, 0.60)  # defaults kept
    assert PriceTable.from_file(toml, defaults=False).price_of("gpt-4o-mini") is None

    js = tmp_path / "prices.json"
    js.write_text(json.dumps({"local-qwen": {"input": 0, "output": 0.1}}))
    assert PriceTable.from_file(js).cost_of(record("local-qwen", 5, 2_000_000)) == pytest.approx(0.2)

    base = PriceTable.default()
    changed = base.with_overrides({"gpt-4o-mini": {"input": 1, "output": 2}, "other": (0.5, 0.5)})
    assert changed.price_of("gpt-4o-mini") == ModelPrice(1.0, 2.0)
    assert changed.price_of("other") == ModelPrice(0.5, 0.5)
    assert base.price_of("gpt-4o-mini") == ModelPrice(0.15, 0.60)  # the original is untouched


@pytest.mark.parametrize("content, suffix, message", [
    ("not = [valid", ".toml", "not valid TOML"),
    ("{", ".json", "not valid JSON"),
    ('{"m": {"input": -1, "output": 1}}', ".json", "non-negative"),
    ('{"m": {"input": 1}}', ".json", "exactly 'input' and 'output'"),
    ('{"m": "cheap"}', ".json", "expected"),
])
def test_bad_price_files_are_one_line_errors(tmp_path, content, suffix, message):
    path = tmp_path / f"prices{suffix}"
    path.write_text(content)
    with pytest.raises(ProjectGenError, match=message):
        PriceTable.from_file(path)


def test_missing_price_file(tmp_path):
    with pytest.raises(ProjectGenError, match="price file not found"):
        PriceTable.from_file(tmp_path / "nope.toml")


# --------------------------------------------------------------------------- budget


def test_cost_budget_counts_priced_calls_and_reports_unpriced_ones():
    budget = CostBudget(0.001, PriceTable.default())
    budget.before_call()
    budget.check(record("gpt-4o-mini", 1000, 500))  # 0.00045
    budget.check(record("mystery-model", 10**6, 10**6))  # no price: counts 0, reported
    budget.check(record("gpt-4o-mini", 1000, 500))  # 0.0009
    assert budget.spent == pytest.approx(0.0009)
    assert (budget.unpriced_calls, budget.unpriced_models) == (1, {"mystery-model"})
    budget.before_call()
    with pytest.raises(BudgetExceededError, match=r"cost budget exceeded: \$0.0014 > \$0.0010.*1 call\(s\) without"):
        budget.check(record("gpt-4o-mini", 1000, 500))  # 0.00135
    with pytest.raises(BudgetExceededError, match="cost budget spent"):
        budget.before_call()


def test_cost_budget_carries_over_spent_and_rejects_negative():
    budget = CostBudget(1.0, spent=0.99)
    with pytest.raises(BudgetExceededError):
        budget.check(record("gpt-4o", 10_000, 1_000))  # + 0.025 + 0.01
    with pytest.raises(ProjectGenError):
        CostBudget(-1)


class _PricedFakeModel:
    """Answers with provider-style usage metadata under a real model name."""

    model_name = "gpt-4o"

    def invoke(self, messages, config=None):
        from langchain_core.messages import AIMessage

        return AIMessage(content="ok", usage_metadata={"input_tokens": 10_000, "output_tokens": 1_000,
                                                       "total_tokens": 11_000})


def test_cost_budget_stops_calls_through_the_model_door():
    budget = CostBudget(0.05, PriceTable.default())
    recorder = UsageRecorder()
    model = _PricedFakeModel()
    call_model(model, "hi", CallLabels("coder", "code"), DoorSettings(recorder=recorder, budget=budget))  # 0.025 + 0.01
    assert budget.spent == pytest.approx(0.035)
    with pytest.raises(BudgetExceededError):
        call_model(model, "hi", CallLabels("coder", "code"),
                   DoorSettings(recorder=recorder, budget=budget))  # 0.07 > 0.05
    with pytest.raises(BudgetExceededError, match="spent"):
        call_model(model, "hi", CallLabels("coder", "code"),
                   DoorSettings(recorder=recorder, budget=budget))  # refused up front
    assert len(recorder.records) == 2  # the refused call was never made
    assert PriceTable.default().total(recorder.records).usd == pytest.approx(0.07)
