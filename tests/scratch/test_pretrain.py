"""Pre-training packs documents, lowers the loss, and resumes to the same weights as an unbroken run."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from agentenv.lessons.scratch.pretrain import PretrainConfig, pack, pretrain  # noqa: E402


def _model(seed: int):
    config = transformers.Qwen3Config(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=64,
        tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return transformers.Qwen3ForCausalLM(config)


def _documents() -> list[list[int]]:
    rng = np.random.default_rng(0)
    docs = []
    for _ in range(64):  # a copy task: a random span, a marker, the same span
        span = rng.integers(3, 60, size=6).tolist()
        docs.append(span + [1] + span)
    return docs


def test_pack_keeps_every_token_in_order_within_documents() -> None:
    blocks = pack([[5, 6, 7], [8, 9]], separator=0, block=2, seed=0)
    assert blocks.shape == (3, 3)
    flat = np.concatenate([blocks[0], blocks[1][1:], blocks[2][1:]]).tolist()
    assert sorted(flat) == sorted([5, 6, 7, 0, 8, 9, 0])
    with pytest.raises(ValueError, match="do not fill one block"):
        pack([[1]], separator=0, block=8, seed=0)


def test_loss_falls_and_a_resumed_run_matches_an_unbroken_one(tmp_path) -> None:
    blocks = pack(_documents(), separator=0, block=16, seed=0)
    config = PretrainConfig(steps=12, batch=4, block=16, learning_rate=1e-2, warmup=1, save_every=6)
    whole = _model(0)
    records = pretrain(whole, blocks, config, tmp_path / "whole")
    assert (
        np.mean([r["loss"] for r in records[-3:]])
        < np.mean([r["loss"] for r in records[:3]]) - 0.05
    )

    def crash(record: dict) -> None:
        if record["step"] == 9:  # after the step-6 checkpoint, before the end
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pretrain(_model(0), blocks, config, tmp_path / "broken", log=crash)
    resumed = _model(1)  # other initial weights: everything must come from the checkpoint
    rest = pretrain(resumed, blocks, config, tmp_path / "broken")
    assert [r["step"] for r in rest] == [7, 8, 9, 10, 11, 12]
    for a, b in zip(whole.state_dict().values(), resumed.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b)
    with pytest.raises(ValueError, match="other settings"):
        pretrain(
            _model(0), blocks, PretrainConfig(steps=13, batch=4, block=16), tmp_path / "broken"
        )


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="PretrainConfig.steps"):
        PretrainConfig(steps=0)
    with pytest.raises(ValueError, match="PretrainConfig.learning_rate"):
        PretrainConfig(learning_rate=2.0)
