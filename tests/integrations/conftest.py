"""Fixtures for the TRL tests: offline hub, a tiny random Qwen3 model, a CPU speed-up for TRL's LM head.

Nothing is downloaded: the model is a randomly initialised 2-layer
Qwen3-architecture network saved to a temp dir with agentenv's offline Qwen3
tokenizer (carrying TRL's copy of Qwen3's chat template, so TRL recognises it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

QWEN3_VOCAB = 151_680
"""The Qwen3 tokenizer's 151,669 ids, rounded up to a multiple of 16 for the embedding matrix."""


@pytest.fixture(scope="session", autouse=True)
def offline_hub() -> Iterator[None]:
    """No test may reach a model hub: a missing file must fail, not download."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        mp.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
        yield


@pytest.fixture(scope="session")
def tiny_qwen3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny Qwen3 model and the offline tokenizer, saved together."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("trl")
    from agentenv.integrations.trl import qwen3_tokenizer

    tokenizer = qwen3_tokenizer()
    assert len(tokenizer) <= QWEN3_VOCAB
    config = transformers.Qwen3Config(
        vocab_size=QWEN3_VOCAB,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=128,
        max_position_embeddings=16_384,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.pad_token_id,
    )
    with (
        torch.random.fork_rng()
    ):  # a seeded init that leaves the session's global torch RNG as it was
        torch.manual_seed(0)
        model = transformers.Qwen3ForCausalLM(config)
    path = tmp_path_factory.mktemp("tiny-qwen3")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture
def compact_lm_head(monkeypatch: pytest.MonkeyPatch) -> None:
    """Score only labelled positions in TRL's fused LM head, as TRL does on CUDA.

    TRL 1.16 scores *every* position on devices without Triton (to keep tile
    shapes fixed for compilers such as Neuron's); with a 151k vocabulary and
    1.6k-token prompts that is ~40 s per step on 2 CPU cores. Scoring only the
    positions that have labels is the same computation restricted to them
    (the values at unlabelled positions are zero either way; checked: the SFT
    losses agree to 1e-6), so the smoke tests ask for it.
    """
    if os.environ.get("AGENTENV_TRL_FULL_HEAD") == "1":
        return
    utils = pytest.importorskip("trl.trainer.utils")
    monkeypatch.setattr(utils, "_use_triton", lambda device: True, raising=False)
