"""What model calls cost: a price table per model name, in US dollars.

`PriceTable` maps model names to list prices in USD per million input and output
tokens. Keys are exact names, names with a date or ``-latest`` suffix
(``gpt-4o-mini`` also prices ``gpt-4o-mini-2024-07-18``), or globs (``claude-sonnet-4*``);
when several keys match, an exact match wins, then the longest key. A ``PROVIDER:``
prefix (``openai:gpt-4o``) is ignored. Scripted replays (``scripted:...``) cost 0. A
model no key matches has no price: `cost_of` returns None and reports show "n/a"; a
price is never guessed.

The defaults (`DEFAULT_PRICES`) are the providers' public list prices as of
`PRICES_AS_OF` (standard tier, no caching or batch discounts). Prices change: override
them with a file (`PriceTable.from_file`, TOML or JSON) or a mapping
(`PriceTable.with_overrides`)::

    # prices.toml: USD per 1M tokens
    [models."gpt-4o"]
    input = 2.5
    output = 10.0

    [models."my-finetune*"]
    input = 0.3
    output = 1.2

(JSON: ``{"models": {"gpt-4o": {"input": 2.5, "output": 10.0}}}``; the ``models``
level may be left out.)

`projectgen.llm.budgets.CostBudget` stops a run once its priced calls have cost more
than a limit.
"""
from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from projectgen.errors import ProjectGenError
from projectgen.llm.usage import CallRecord
from projectgen.llm.specs import SCRIPTED_PREFIX

PRICES_AS_OF = "2025-10-01"
"""The date the default list prices were copied; check your provider's page and override as needed."""

_GLOB_CHARS = frozenset("*?[")
_VERSION_SUFFIX = re.compile(r"-(?:\d{4}-?\d{2}-?\d{2}|\d{4}|latest)$")


@dataclass(frozen=True)
class ModelPrice:
    """USD per one million input and output tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


# List prices (USD per 1M tokens, standard tier, uncached input) as of PRICES_AS_OF. Override them.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    # OpenAI
    "gpt-4o": ModelPrice(2.50, 10.00),
    "gpt-4o-2024-05-13": ModelPrice(5.00, 15.00),
    "gpt-4o-mini": ModelPrice(0.15, 0.60),
    "gpt-4.1": ModelPrice(2.00, 8.00),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40),
    # DeepSeek (V3.2 pricing, cache-miss input)
    "deepseek-chat": ModelPrice(0.28, 0.42),
    "deepseek-reasoner": ModelPrice(0.28, 0.42),
    # Anthropic
    "claude-opus-4-5*": ModelPrice(5.00, 25.00),
    "claude-opus-4-1*": ModelPrice(15.00, 75.00),
    "claude-opus-4-2025*": ModelPrice(15.00, 75.00),
    "claude-opus-4-0": ModelPrice(15.00, 75.00),
    "claude-sonnet-4*": ModelPrice(3.00, 15.00),
    "claude-haiku-4-5*": ModelPrice(1.00, 5.00),
    "claude-3-7-sonnet*": ModelPrice(3.00, 15.00),
    "claude-3-5-sonnet*": ModelPrice(3.00, 15.00),
    "claude-3-5-haiku*": ModelPrice(0.80, 4.00),
    "claude-3-opus*": ModelPrice(15.00, 75.00),
    "claude-3-haiku*": ModelPrice(0.25, 1.25),
}


def is_scripted(model: str) -> bool:
    """A replay of a script (``scripted:LABEL``), not a model: it costs nothing."""
    return model.startswith(SCRIPTED_PREFIX)


def _bare_name(model: str) -> str:
    """``openai:gpt-4o`` -> ``gpt-4o``; ``llama3:8b`` (a served name with a tag) stays as it is."""
    provider, sep, rest = model.strip().partition(":")
    if sep and rest and provider.replace("-", "_").lower() in _KNOWN_PROVIDERS:
        return rest
    return model.strip()


_KNOWN_PROVIDERS = frozenset({"openai", "azure_openai", "anthropic", "deepseek", "google_genai", "groq", "mistralai",
                              "ollama", "xai", "together", "fireworks", "bedrock"})


def _matches(key: str, name: str) -> bool:
    if _GLOB_CHARS & set(key):
        return fnmatch.fnmatchcase(name, key)
    if name == key:
        return True
    return name.startswith(key) and _VERSION_SUFFIX.fullmatch(name[len(key):]) is not None


def _price(value: Any, where: str) -> ModelPrice:
    if isinstance(value, ModelPrice):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - {"input", "output"}
        if unknown or not {"input", "output"} <= set(value):
            raise ProjectGenError(f"{where}: a price needs exactly 'input' and 'output' (USD per 1M tokens), "
                                  f"got {sorted(value)}")
        pair = (value["input"], value["output"])
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        pair = (value[0], value[1])
    else:
        raise ProjectGenError(f"{where}: expected {{input = ..., output = ...}} in USD per 1M tokens, got {value!r}")
    try:
        numbers = tuple(float(v) for v in pair)
    except (TypeError, ValueError):
        raise ProjectGenError(f"{where}: prices must be numbers, got {pair!r}") from None
    if any(not 0 <= v < float("inf") for v in numbers) or any(isinstance(v, bool) for v in pair):
        raise ProjectGenError(f"{where}: prices must be non-negative numbers, got {pair!r}")
    return ModelPrice(*numbers)


@dataclass(frozen=True)
class PriceTable:
    """USD per 1M input/output tokens per model name (exact, dated-suffix or glob keys)."""

    prices: Mapping[str, ModelPrice] = field(default_factory=lambda: dict(DEFAULT_PRICES))

    @classmethod
    def default(cls) -> PriceTable:
        """The list prices of `DEFAULT_PRICES` (as of `PRICES_AS_OF`)."""
        return cls(dict(DEFAULT_PRICES))

    @classmethod
    def empty(cls) -> PriceTable:
        """No prices at all: every real model is "n/a" (scripted replays still cost 0)."""
        return cls({})

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], *, base: PriceTable | None = None,
                     where: str = "prices") -> PriceTable:
        entries = mapping.get("models", mapping) if isinstance(mapping.get("models"), Mapping) else mapping
        prices = dict(base.prices) if base is not None else {}
        for key, value in entries.items():
            if not isinstance(key, str) or not key.strip():
                raise ProjectGenError(f"{where}: model names must be non-empty strings, got {key!r}")
            prices[key.strip()] = _price(value, f"{where}: {key}")
        return cls(prices)

    @classmethod
    def from_file(cls, path: Path | str, *, defaults: bool = True) -> PriceTable:
        """Prices from a TOML or JSON file, on top of the defaults unless `defaults` is False."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ProjectGenError(f"{path}: price file not found") from None
        except OSError as exc:
            raise ProjectGenError(f"{path}: cannot read the price file ({exc.strerror})") from None
        except UnicodeDecodeError as exc:
            raise ProjectGenError(f"{path}: the price file is not valid UTF-8 (byte {exc.start})") from None
        if path.suffix.lower() == ".json":
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ProjectGenError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        else:
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10
                import tomli as tomllib  # type: ignore[no-redef]
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise ProjectGenError(f"{path}: not valid TOML ({exc})") from None
        if not isinstance(data, Mapping):
            raise ProjectGenError(f"{path}: expected a table of model prices")
        return cls.from_mapping(data, base=cls.default() if defaults else None, where=str(path))

    def with_overrides(self, mapping: Mapping[str, Any]) -> PriceTable:
        """A copy with `mapping`'s prices (``{"name": {"input": .., "output": ..}}`` or ``(in, out)``) added."""
        return PriceTable.from_mapping(mapping, base=self, where="price overrides")

    def price_of(self, model: str) -> ModelPrice | None:
        """The price of a model name; 0 for scripted replays; None when no key matches."""
        if is_scripted(model):
            return ModelPrice(0.0, 0.0)
        name = _bare_name(model)
        if name in self.prices:
            return self.prices[name]
        matching = [key for key in self.prices if _matches(key, name)]
        if not matching:
            return None
        return self.prices[max(matching, key=lambda k: (len(k), k))]

    def cost_of(self, record: CallRecord | Mapping[str, Any]) -> float | None:
        """USD of one call record (a `CallRecord` or its JSON dict); None when its model has no price."""
        if isinstance(record, Mapping):
            model, tokens_in, tokens_out = (str(record.get("model") or ""), int(record.get("input_tokens") or 0),
                                            int(record.get("output_tokens") or 0))
        else:
            model, tokens_in, tokens_out = record.model, record.input_tokens, record.output_tokens
        price = self.price_of(model)
        return None if price is None else price.cost(tokens_in, tokens_out)

    def total(self, records: Iterable[CallRecord | Mapping[str, Any]]) -> CostTotal:
        return CostTotal.of(records, self)


def price_table(path: Path | None) -> tuple[PriceTable, str]:
    """The prices of a price file over the list prices (None: the list prices), and a phrase naming where they
    came from (what the results and tables print beside the costs)."""
    if path is None:
        return PriceTable.default(), f"list prices as of {PRICES_AS_OF}"
    return PriceTable.from_file(path), f"{path} over list prices as of {PRICES_AS_OF}"


@dataclass
class CostTotal:
    """USD over a set of calls, with the calls that had no price counted apart (never guessed)."""

    usd: float = 0.0
    priced_calls: int = 0
    unpriced_calls: int = 0
    unpriced_models: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, records: Iterable[CallRecord | Mapping[str, Any]], prices: PriceTable) -> CostTotal:
        total = cls()
        for record in records:
            total.add(record, prices)
        return total

    def add(self, record: CallRecord | Mapping[str, Any], prices: PriceTable) -> None:
        cost = prices.cost_of(record)
        if cost is None:
            self.unpriced_calls += 1
            model = record.get("model") if isinstance(record, Mapping) else record.model
            self.unpriced_models.add(str(model))
        else:
            self.usd += cost
            self.priced_calls += 1

    @property
    def known(self) -> bool:
        """At least one call had a price (or there were no calls)."""
        return self.priced_calls > 0 or self.unpriced_calls == 0

    @property
    def value(self) -> float | None:
        """The sum when every call had a price; None when any had none."""
        return self.usd if self.unpriced_calls == 0 else None

    def label(self, short: bool = False) -> str:
        """``$0.0123``; ``n/a`` when no call had a price; ``$0.0123 + n/a (2 calls)`` when some had none.

        `short` drops the count of unpriced calls (``$0.0123 + n/a``), for chart labels.
        """
        if self.priced_calls == 0 and self.unpriced_calls == 0:
            return "-"
        if self.priced_calls == 0:
            return "n/a"
        text = format_usd(self.usd)
        if not self.unpriced_calls:
            return text
        if short:
            return f"{text} + n/a"
        return f"{text} + n/a ({self.unpriced_calls} call{'s' if self.unpriced_calls != 1 else ''})"


def format_usd(value: float | None) -> str:
    """Dollars as reports show them: "n/a" when unknown, more decimals the smaller the sum."""
    if value is None:
        return "n/a"
    if value == 0:
        return "$0"
    if abs(value) < 0.01:
        return f"${value:.4f}"
    return f"${value:.2f}" if abs(value) >= 1 else f"${value:.3f}"
