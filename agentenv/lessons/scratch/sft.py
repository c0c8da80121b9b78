"""SFT of a from-scratch model on ``agentenv export-sft`` conversations, with TRL's ``SFTTrainer``.

The loss is on assistant tokens only (``assistant_only_loss``: the chat
template marks them with ``{% generation %}``), so the model learns to act,
not to predict tool outputs. Phases run in order on the same weights, which is
how a curriculum is given: lookup questions first, then lookup and constraint
questions together.
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

    def __post_init__(self) -> None:
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
) -> dict[str, Any]:
    """Fine-tune the model in ``model_dir`` through ``phases`` and save it to ``out/model``.

    Returns (and writes to ``out/sft.json``) the loss curve, tokens seen, wall time and tokens/s.
    """
    import torch
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig, SFTTrainer

    from agentenv.lessons.scratch.cpu_training import cpu_trainer_options
    from agentenv.lessons.scratch.tokenizer import load_tokenizer

    if threads:
        torch.set_num_threads(threads)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    out = Path(out)
    tokenizer = load_tokenizer(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True)
    record: dict[str, Any] = {"phases": [], "model_dir": str(model_dir)}
    probe = _probe_rows(phases)
    max_length = max(settings.max_length for _, settings in phases)
    record["loss_before"] = _mean_loss(model, tokenizer, probe, max_length)
    started = time.perf_counter()
    for number, (rows, settings) in enumerate(phases):
        config = SFTConfig(
            output_dir=str(out / f"phase{number}"),
            assistant_only_loss=True,
            max_length=settings.max_length,
            per_device_train_batch_size=settings.batch,
            num_train_epochs=settings.epochs,
            learning_rate=settings.learning_rate,
            lr_scheduler_type="cosine",
            warmup_steps=settings.warmup_ratio,  # transformers 5: a value below 1 is a share of the steps
            logging_steps=5,
            **cpu_trainer_options(SFTConfig, settings.seed),
        )
        phase_start = time.perf_counter()
        trainer = SFTTrainer(
            model=model, args=config, train_dataset=_dataset(rows), processing_class=tokenizer
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
            }
        )
        model = trainer.model
    record["wall_s"] = round(time.perf_counter() - started, 1)
    record["loss_after"] = _mean_loss(model, tokenizer, probe, max_length)
    model.save_pretrained(out / "model", safe_serialization=True)
    tokenizer.save_pretrained(out / "model")
    (out / "sft.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


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
