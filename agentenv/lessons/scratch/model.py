"""A tiny Qwen3-architecture causal LM, initialised from scratch.

Why Qwen3's architecture: it is the model family the workshop trained, so the
code path (transformers' ``Qwen3ForCausalLM``, its chat format, TRL's trainers)
is the one a GPU user takes with ``Qwen/Qwen3-0.6B``, only smaller.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ModelSize:
    """Shape of the model. The default (4 layers, width 256) has about 5M parameters with an 8k vocabulary
    and trains at a few thousand tokens/s on 2 CPU cores."""

    layers: int = 4
    width: int = 256
    heads: int = 4
    kv_heads: int = 2
    mlp: int = 768
    context: int = 1024

    def __post_init__(self) -> None:
        for name in ("layers", "width", "heads", "kv_heads", "mlp", "context"):
            if getattr(self, name) < 1:
                raise ValueError(f"ModelSize.{name} must be positive, got {getattr(self, name)}")
        if self.width % self.heads:
            raise ValueError(
                f"ModelSize.width ({self.width}) must be a multiple of heads ({self.heads})"
            )
        if self.heads % self.kv_heads:
            raise ValueError(
                f"ModelSize.heads ({self.heads}) must be a multiple of kv_heads ({self.kv_heads})"
            )


def qwen3_config(vocab_size: int, size: ModelSize, *, pad_id: int, eos_id: int) -> Any:
    """The ``Qwen3Config`` of a model of ``size`` over a ``vocab_size`` vocabulary (tied embeddings)."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=vocab_size,
        hidden_size=size.width,
        intermediate_size=size.mlp,
        num_hidden_layers=size.layers,
        num_attention_heads=size.heads,
        num_key_value_heads=size.kv_heads,
        head_dim=size.width // size.heads,
        max_position_embeddings=size.context,
        tie_word_embeddings=True,
        rope_theta=10_000.0,
        pad_token_id=pad_id,
        eos_token_id=eos_id,
        bos_token_id=None,
    )


def new_model(tokenizer: Any, size: ModelSize, seed: int) -> Any:
    """A freshly initialised ``Qwen3ForCausalLM`` for ``tokenizer``, the same for the same seed.

    torch initialises weights from its global generator; it is forked (and restored on exit),
    so the caller's random state is untouched.
    """
    import torch
    from transformers import Qwen3ForCausalLM

    config = qwen3_config(
        len(tokenizer), size, pad_id=tokenizer.pad_token_id, eos_id=tokenizer.eos_token_id
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
    return model


def parameter_count(model: Any) -> int:
    """Number of distinct parameters (tied embeddings count once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def size_record(size: ModelSize) -> dict[str, int]:
    """``size`` as a plain dict, for summaries."""
    return asdict(size)
