"""SFT of a from-scratch model on ``agentenv export-sft`` conversations, with TRL's ``SFTTrainer``.

The loss is on assistant tokens only (``assistant_only_loss``: the chat
template marks them with ``{% generation %}``), so the model learns to act,
not to predict tool outputs. Phases run in order on the same weights, which is
how a curriculum is given: lookup questions first, then lookup and constraint
questions together.

The same code trains a real model (SmolLM2-135M, :mod:`agentenv.models.training`): on CPU or
CUDA, full fine-tuning or LoRA (merged into the saved model), the loss computed from the logits of
labelled positions only, and optionally the lower blocks frozen.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SFTSettings:
    """Settings of one SFT phase."""

    epochs: float = 3.0
    learning_rate: float = 5e-4
    batch: int = 16
    max_length: int = 640
    warmup_ratio: float = 0.05
    seed: int = 0
    lora_r: int = 0
    """LoRA rank on every linear layer of the blocks (0: full fine-tuning); merged when saved."""
    freeze_below: int = 0
    """Blocks below this index (and the embeddings) are not trained: no gradient below it."""
    labelled_logits: bool = True
    """The LM head only where the next token is labelled (the assistant's); False: TRL's own loss."""
    grad_accumulation: int = 1
    max_seconds: float | None = None
    """Stop the phase after this many seconds of training (a budgeted run's guard; None: no limit)."""

    def __post_init__(self) -> None:
        if self.lora_r < 0 or self.freeze_below < 0 or self.grad_accumulation < 1:
            raise ValueError(
                "SFTSettings.lora_r and freeze_below must be ≥ 0 and grad_accumulation ≥ 1, got "
                f"{self.lora_r}, {self.freeze_below}, {self.grad_accumulation}"
            )
        if self.epochs <= 0:
            raise ValueError(f"SFTSettings.epochs must be positive, got {self.epochs}")
        if self.batch < 1 or self.max_length < 16:
            raise ValueError(
                f"SFTSettings.batch must be ≥ 1 and max_length ≥ 16, got {self.batch}, {self.max_length}"
            )


def _dataset(rows: Sequence[Mapping[str, Any]]) -> Any:
    """The rows as a ``datasets.Dataset`` that renders as they do (:mod:`agentenv.data.chat_dataset`);
    the from-scratch template renders no tool schemas, so those are dropped."""
    from agentenv.data.chat_dataset import chat_dataset

    return chat_dataset(rows, keep_tools=False)


def train_sft(
    model_dir: str | Path,
    phases: Sequence[tuple[Sequence[Mapping[str, Any]], SFTSettings]],
    out: str | Path,
    *,
    threads: int | None = None,
    device: str = "cpu",
    probe_rows: int = 32,
) -> dict[str, Any]:
    """Fine-tune the model in ``model_dir`` through ``phases`` and save it to ``out/model``.

    Returns (and writes to ``out/sft.json``) the loss curve, tokens seen, wall time and tokens/s.
    LoRA (``lora_r`` of the first phase) wraps the model once; the adapters are merged before saving.
    """
    import torch
    from trl import SFTConfig

    from agentenv.lessons.scratch.tokenizer import load_tokenizer
    from agentenv.models.training import (
        freeze_lower_blocks,
        load_for_training,
        merge_if_lora,
        resolve_device,
        trainer_options,
    )

    if threads:
        torch.set_num_threads(threads)
    device = resolve_device(device)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    out = Path(out)
    tokenizer = load_tokenizer(model_dir)
    model = load_for_training(model_dir, device).to(device)
    first = phases[0][1]
    if first.lora_r:
        from peft import get_peft_model

        from agentenv.models.training import lora_config

        blocks = model.config.num_hidden_layers
        model = get_peft_model(
            model, lora_config(first.lora_r, first_block=first.freeze_below, blocks=blocks)
        )
    trainable = freeze_lower_blocks(model, first.freeze_below)
    record: dict[str, Any] = {
        "phases": [],
        "model_dir": str(model_dir),
        "device": device,
        "trainable_parameters": trainable,
    }
    probe = _probe_rows(phases, probe_rows)
    max_length = max(settings.max_length for _, settings in phases)
    record["loss_before"] = _mean_loss(model, tokenizer, probe, max_length)
    started = time.perf_counter()
    for number, (rows, settings) in enumerate(phases):
        config = SFTConfig(
            output_dir=str(out / f"phase{number}"),
            assistant_only_loss=True,
            max_length=settings.max_length,
            per_device_train_batch_size=settings.batch,
            gradient_accumulation_steps=settings.grad_accumulation,
            num_train_epochs=settings.epochs,
            learning_rate=settings.learning_rate,
            lr_scheduler_type="cosine",
            warmup_steps=settings.warmup_ratio,  # transformers 5: a value below 1 is a share of the steps
            logging_steps=1 if len(rows) < 40 * settings.batch else 5,
            **trainer_options(SFTConfig, settings.seed, device),
        )
        phase_start = time.perf_counter()
        trainer = _trainer_class(settings.labelled_logits)(
            model=model,
            args=config,
            train_dataset=_dataset(rows),
            processing_class=tokenizer,
            callbacks=[_time_limit(settings.max_seconds)] if settings.max_seconds else None,
        )
        trainer.train()
        seconds = time.perf_counter() - phase_start
        history = [h for h in trainer.state.log_history if "loss" in h]
        tokens = max((float(h.get("num_tokens", 0)) for h in history), default=0.0)
        record["phases"].append(
            {
                "rows": len(rows),
                "settings": asdict(settings),
                "wall_s": round(seconds, 1),
                "tokens": tokens,
                "tokens_per_s": round(tokens / seconds, 1) if seconds else None,
                "loss": [{"step": h["step"], "loss": float(h["loss"])} for h in history],
                "s_per_conversation": round(seconds / max(1.0, len(rows) * settings.epochs), 2),
                "steps": trainer.state.global_step,
                "stopped_by_time_limit": any(
                    "stopped_by_time_limit_at_step" in h for h in trainer.state.log_history
                ),
            }
        )
        model = trainer.model
    record["wall_s"] = round(time.perf_counter() - started, 1)
    record["loss_after"] = _mean_loss(model, tokenizer, probe, max_length)
    model = merge_if_lora(model)
    model.save_pretrained(out / "model", safe_serialization=True)
    tokenizer.save_pretrained(out / "model")
    (out / "sft.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def _time_limit(seconds: float) -> Any:
    """A callback that ends training at the first step past ``seconds`` (the record says so)."""
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        def __init__(self) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if time.perf_counter() - self.started > seconds:
                control.should_training_stop = True
                state.log_history.append({"stopped_by_time_limit_at_step": state.global_step})
            return control

    return TimeLimit()


def _trainer_class(labelled_logits: bool) -> type:
    """TRL's ``SFTTrainer``, or one whose loss projects only the labelled positions through the LM head
    (:func:`agentenv.models.training.labelled_loss`: the same loss, about a fifth less compute on a
    49k vocabulary; TRL's entropy and token-accuracy metrics are not logged then)."""
    from trl import SFTTrainer

    if not labelled_logits:
        return SFTTrainer

    class LabelledLogitsSFTTrainer(SFTTrainer):
        def compute_loss(
            self,
            model: Any,
            inputs: dict[str, Any],
            return_outputs: bool = False,
            num_items_in_batch: Any = None,
        ) -> Any:
            from agentenv.models.training import labelled_loss

            loss, _ = labelled_loss(model, inputs, num_items_in_batch)
            return (loss, None) if return_outputs else loss

    return LabelledLogitsSFTTrainer


def _probe_rows(
    phases: Sequence[tuple[Sequence[Mapping[str, Any]], SFTSettings]], n: int = 32
) -> list[Any]:
    """A fixed sample of the training rows (every k-th of the last phase) on which the loss is measured
    before and after training: the assistant-token loss must fall."""
    rows = list(phases[-1][0])
    step = max(1, len(rows) // n)
    return rows[::step][:n]


def _mean_loss(
    model: Any, tokenizer: Any, rows: Sequence[Mapping[str, Any]], max_length: int
) -> float:
    from agentenv.data.selection import holdout_losses

    losses = holdout_losses(model, tokenizer, rows, max_length=max_length, batch_size=8)
    return round(float(losses.mean()), 4)
