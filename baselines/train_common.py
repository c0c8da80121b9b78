"""What the TRL training scripts share: loading the tokenizer they hand to the trainer.

Kept to what is the same logic in both scripts; each script still spells out
its own args dataclass and the full config it passes to TRL.
"""

from __future__ import annotations

from typing import Any


def load_tokenizer(model: str, tokenizer: str | None) -> Any:
    """The tokenizer: the model's, a named one, or agentenv's offline Qwen3 tokenizer.

    Args:
        model: the model path or hub id, whose tokenizer is the default.
        tokenizer: a tokenizer path or id; None uses the model's; ``"offline-qwen3"``
            uses agentenv's offline Qwen3 tokenizer (no download).
    """
    if tokenizer == "offline-qwen3":
        from agentenv.integrations.trl import qwen3_tokenizer

        return qwen3_tokenizer()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer or model)
