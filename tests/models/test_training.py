"""Training pieces shared by SFT and GRPO (:mod:`agentenv.models.training`), on the tiny from-scratch
checkpoint (seconds), and the sft-then-rl smoke on SmolLM2-135M when it is installed (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from agentenv.errors import UserInputError  # noqa: E402
from agentenv.lessons.scratch.base import shipped_base  # noqa: E402
from agentenv.lessons.scratch.lessons import is_pretrained_base  # noqa: E402
from agentenv.models import training  # noqa: E402

SCRATCH = shipped_base()


def batch(seed: int = 0) -> dict:
    """Two right-padded rows with -100 labels outside a few 'assistant' spans."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(10, 500, (2, 24), generator=gen)
    labels = torch.full_like(ids, -100)
    labels[0, 5:12] = ids[0, 5:12]
    labels[1, 15:20] = ids[1, 15:20]
    mask = torch.ones_like(ids)
    mask[1, 20:] = 0
    return {"input_ids": ids, "labels": labels, "attention_mask": mask}


def test_the_labelled_loss_and_its_gradient_equal_the_full_logits_loss() -> None:
    model = training.load_for_training(SCRATCH, "cpu")
    inputs = batch()
    loss, correct = training.labelled_loss(model, inputs)
    loss.backward()
    mine = model.model.layers[0].self_attn.q_proj.weight.grad.clone()
    model.zero_grad()
    reference = model(**inputs).loss
    reference.backward()
    theirs = model.model.layers[0].self_attn.q_proj.weight.grad
    assert torch.allclose(loss, reference, atol=1e-5), (float(loss), float(reference))
    assert torch.allclose(mine, theirs, atol=1e-6)
    assert 0 <= int(correct) <= 12


def test_frozen_lower_blocks_get_no_gradient_and_upper_ones_do() -> None:
    model = training.load_for_training(SCRATCH, "cpu")
    blocks = model.config.num_hidden_layers
    total = sum(p.numel() for p in model.parameters())
    trainable = training.freeze_lower_blocks(model, blocks - 1)
    assert 0 < trainable < total
    loss, _ = training.labelled_loss(model, batch())
    loss.backward()
    assert model.model.layers[0].mlp.up_proj.weight.grad is None
    assert model.model.layers[-1].mlp.up_proj.weight.grad is not None


def test_lora_on_the_upper_blocks_only_and_merged_back_to_a_plain_model() -> None:
    peft = pytest.importorskip("peft")
    model = training.load_for_training(SCRATCH, "cpu")
    blocks = model.config.num_hidden_layers
    wrapped = peft.get_peft_model(model, training.lora_config(4, first_block=1, blocks=blocks))
    names = [n for n, p in wrapped.named_parameters() if p.requires_grad]
    assert names and all("lora_" in n for n in names)
    assert not any(".layers.0." in n for n in names)
    merged = training.merge_if_lora(wrapped)
    assert not any("lora_" in n for n, _ in merged.named_parameters())


def test_devices_resolve_and_a_wrong_one_is_refused() -> None:
    assert training.resolve_device("auto") in ("cpu", "cuda")
    with pytest.raises(UserInputError, match="auto, cpu or cuda"):
        training.resolve_device("tpu")
    from trl import SFTConfig

    cpu = training.trainer_options(SFTConfig, 3, "cpu")
    cuda = training.trainer_options(SFTConfig, 3, "cuda")
    assert (cpu["use_cpu"], cpu["bf16"], cuda["use_cpu"], cuda["bf16"]) == (
        True,
        False,
        False,
        True,
    )


def test_a_pretrained_base_is_told_from_the_scratch_one(tmp_path) -> None:
    assert not is_pretrained_base(SCRATCH)
    (tmp_path / "config.json").write_text(json.dumps({"vocab_size": 49152}))
    assert is_pretrained_base(tmp_path)
    assert not is_pretrained_base(tmp_path / "missing")


def _smollm2_problem() -> str | None:
    from agentenv.models import smollm2

    try:
        smollm2.model_dir()
    except Exception as err:  # not installed, stale or damaged: the message names the fix
        return str(err)
    return None


@pytest.mark.slow
@pytest.mark.skipif(_smollm2_problem() is not None, reason="SmolLM2-135M is not installed")
def test_sft_then_rl_quick_runs_on_smollm2(tmp_path: Path) -> None:
    """The real model's smoke (several minutes on 2 cores): SFT, both GRPO arms token-exact, each arm
    scored with a CI, and the share of groups with reward variance logged per GRPO step."""
    pytest.importorskip("trl")
    pytest.importorskip("peft")
    from agentenv.cli.main import main

    out = tmp_path / "run"
    assert (
        main(
            [
                "reproduce",
                "sft-then-rl",
                "--base",
                "smollm2-135m",
                "--quick",
                "--no-plots",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["meta"]["scale"]["grpo"]["lora_r"] > 0
    assert summary["sft"]["train"]["loss_after"] < summary["sft"]["train"]["loss_before"]
    for arm in ("sft_rl_multi_turn", "sft_rl_single_turn"):
        train = summary[arm]["train"]
        check = train["token_check"]
        assert check["rollouts"] > 0 and check["exact"] == check["rollouts"], check
        assert all(0.0 <= step["groups_with_variance"] <= 1.0 for step in train["curve"])
    for arm in ("sft", "sft_rl_multi_turn", "sft_rl_single_turn", "random"):
        low, high = summary[arm]["ci"]
        assert 0.0 <= low <= summary[arm]["accuracy"] <= high <= 1.0


def test_an_sft_phase_stops_at_its_time_limit(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from agentenv.lessons.scratch.experiment import MULTI_TURN, export_rows
    from agentenv.lessons.scratch.sft import SFTSettings, train_sft
    from agentenv.lessons.scratch.tokenizer import load_tokenizer

    rows = export_rows(
        MULTI_TURN, "train", 4, tmp_path / "d", kinds=["lookup"], tokenizer=load_tokenizer(SCRATCH)
    )
    limited = SFTSettings(epochs=3.0, batch=1, max_length=512, max_seconds=1e-6)
    record = train_sft(SCRATCH, [(rows, limited)], tmp_path / "sft", probe_rows=2)
    phase = record["phases"][0]
    assert phase["stopped_by_time_limit"] and phase["steps"] == 1, phase
    assert (tmp_path / "sft" / "model" / "model.safetensors").is_file()
