"""SFT labels when pad == eos (SmolLM2's ``<|im_end|>``): every assistant turn's final end token is
trained, padding is not; LoRA and the loss log on the tiny from-scratch checkpoint (seconds, CPU)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
peft = pytest.importorskip("peft")

from agentenv.baselines import train_sft  # noqa: E402
from agentenv.data.sft import ExportConfig, export_sft  # noqa: E402
from agentenv.lessons.scratch.base import shipped_base  # noqa: E402

SCRATCH = shipped_base()  # the tiny from-scratch checkpoint (Qwen3-style template, 21 MB)
END = "<|im_end|>"


@pytest.fixture(scope="module")
def pad_is_eos(tmp_path_factory) -> Path:
    """The tiny checkpoint with its tokenizer's pad set to its eos, as SmolLM2's is."""
    from transformers import AutoTokenizer

    out = tmp_path_factory.mktemp("pad-eos") / "model"
    shutil.copytree(SCRATCH, out)
    tok = AutoTokenizer.from_pretrained(out)
    tok.pad_token = END
    tok.save_pretrained(out)
    config = json.loads((out / "config.json").read_text())
    config["pad_token_id"] = tok.convert_tokens_to_ids(END)
    (out / "config.json").write_text(json.dumps(config))
    return out


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sft") / "data"
    env_args = {"compact": True, "kinds": ["lookup", "constraint"]}
    export_sft(
        ExportConfig("MediaSearch-v0", out, episodes=4, seed=0, think=False, env_args=env_args),
        progress=False,
    )
    return out


def args(model: Path, data: Path, out: Path, **extra) -> train_sft.Args:
    return train_sft.Args(
        model=str(model),
        data=str(data),
        output_dir=str(out),
        max_steps=1,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=1,
        max_length=1024,
        bf16=False,
        gradient_checkpointing=False,
        use_cpu=True,
        logging_steps=1,
        save_steps=0,
        **extra,
    )


def test_the_final_end_token_of_every_assistant_turn_is_trained_and_padding_is_not(
    pad_is_eos, export, tmp_path
) -> None:
    trainer = train_sft.build_trainer(args(pad_is_eos, export, tmp_path))
    tok = trainer.processing_class
    end = tok.convert_tokens_to_ids(END)
    assert tok.pad_token_id == tok.eos_token_id == end
    rows = [trainer.train_dataset[i] for i in range(len(trainer.train_dataset))]
    rows.sort(key=lambda r: len(r["input_ids"]))
    short, long_ = rows[0], rows[-1]
    assert len(short["input_ids"]) < len(long_["input_ids"])
    batch = trainer.data_collator([short, long_])
    ids, labels = batch["input_ids"][0], batch["labels"][0]
    n = len(short["input_ids"])
    assert (ids[n:] == end).all() and (labels[n:] == -100).all()  # padding: pad id, never trained
    text = tok.decode(short["input_ids"])
    turns = text.count("<|im_start|>assistant\n")
    trained_ends = int(((ids[:n] == end) & (labels[:n] == end)).sum())
    assert turns >= 2 and trained_ends == turns  # each assistant turn's <|im_end|>, and no other
    last = max(i for i in range(n) if labels[i] != -100)
    assert int(ids[last]) == end  # the conversation's last trained id is its final end token


@pytest.mark.slow
def test_lora_trains_only_the_adapter_and_the_loss_log_has_every_step(
    pad_is_eos, export, tmp_path
) -> None:
    log = tmp_path / "loss.jsonl"
    trainer = train_sft.build_trainer(
        args(pad_is_eos, export, tmp_path, lora_r=4, loss_log=str(log), learning_rate=1e-3)
    )
    assert isinstance(trainer.model, peft.PeftModel)
    trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in trainer.model.parameters())
    assert 0 < trainable < total // 10
    trainer.train()
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    steps = [r for r in rows if "loss" in r]
    assert [r["step"] for r in steps] == [1] and steps[0]["loss"] > 0 and steps[0]["wall_s"] >= 0
    # The adapter merges into a plain directory the hf agent can load, and the update is in it.
    from safetensors.torch import load_file

    from agentenv.models.lora import merge_adapter

    trainer.save_model(str(tmp_path / "adapter"))
    merged = merge_adapter(tmp_path / "adapter", tmp_path / "merged")
    after = load_file(str(merged / "model.safetensors"))
    before = load_file(str(pad_is_eos / "model.safetensors"))
    assert set(after) == set(before)
    assert any(not torch.equal(after[k], before[k]) for k in before if "proj" in k)
