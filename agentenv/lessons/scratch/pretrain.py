"""Pre-training: next-token prediction on packed blocks, resumable, with a loss log.

Why a plain loop rather than a trainer: pre-training reads one long stream of
documents packed into fixed blocks (no padding, no per-example masks), and the
loop is short enough to read in full. It checkpoints every ``save_every``
steps (model, optimizer, step and the data order), so a run killed at any
point resumes where it stopped and reaches the same weights as an unbroken run
(up to floating-point reduction order across thread counts).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PretrainConfig:
    """Optimisation settings. ``steps`` × ``batch`` × ``block`` tokens are read in all."""

    steps: int = 900
    batch: int = 16
    block: int = 256
    learning_rate: float = 1e-3
    warmup: int = 100
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.1
    seed: int = 0
    save_every: int = 250

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "block", "save_every"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"PretrainConfig.{name} must be at least 1, got {getattr(self, name)}"
                )
        if not 0 < self.learning_rate < 1:
            raise ValueError(
                f"PretrainConfig.learning_rate must be in (0, 1), got {self.learning_rate}"
            )

    def lr_at(self, step: int) -> float:
        """Linear warm-up, then cosine decay to ``min_lr_ratio`` of the peak."""
        if step < self.warmup:
            return self.learning_rate * (step + 1) / self.warmup
        progress = min(1.0, (step - self.warmup) / max(1, self.steps - self.warmup))
        ratio = self.min_lr_ratio + (1 - self.min_lr_ratio) * 0.5 * (
            1 + math.cos(math.pi * progress)
        )
        return self.learning_rate * ratio


def pack(documents: Sequence[Sequence[int]], separator: int, block: int, seed: int) -> np.ndarray:
    """Shuffle ``documents`` (seeded), join them with ``separator`` and cut the stream into blocks.

    Returns an ``(n_blocks, block + 1)`` array: each row is a block plus the next token, the
    last input's target. The tail shorter than a block is dropped.

    >>> pack([[1, 2], [3], [4, 5, 6]], separator=0, block=3, seed=0).shape
    (2, 4)
    """
    order = np.random.default_rng(seed).permutation(len(documents))
    stream: list[int] = []
    for i in order:
        stream.extend(documents[i])
        stream.append(separator)
    n = (len(stream) - 1) // block
    if n < 1:
        raise ValueError(f"{len(stream)} tokens do not fill one block of {block}")
    data = np.asarray(stream[: n * block + 1], dtype=np.int64)
    starts = np.arange(n) * block
    return np.stack([data[s : s + block + 1] for s in starts])


def pretrain(
    model: Any,
    blocks: np.ndarray,
    config: PretrainConfig,
    out: Path,
    *,
    log: Callable[[dict[str, float]], None] | None = None,
) -> list[dict[str, float]]:
    """Train ``model`` on ``blocks`` (from :func:`pack`) for ``config.steps`` steps; resume from ``out``.

    Writes ``out/checkpoint.pt`` every ``save_every`` steps and at the end, and ``out/loss.jsonl``.
    Returns the loss records of this call's steps.
    """
    import torch

    out.mkdir(parents=True, exist_ok=True)
    ckpt_path = out / "checkpoint.pt"
    optimizer = torch.optim.AdamW(
        model.parameters(),
        lr=config.learning_rate,
        betas=(0.9, 0.95),
        weight_decay=config.weight_decay,
    )
    step = 0
    if ckpt_path.is_file():
        state = torch.load(ckpt_path, weights_only=False)
        if state["config"] != asdict(config):
            raise ValueError(
                f"{ckpt_path} was written with other settings {state['config']}; use a new --out"
            )
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step = state["step"]
    epoch_orders: dict[int, np.ndarray] = {}

    def batch_rows(s: int) -> np.ndarray:
        first = s * config.batch
        rows = []
        for k in range(first, first + config.batch):
            epoch, pos = divmod(k, len(blocks))
            if epoch not in epoch_orders:
                epoch_orders[epoch] = np.random.default_rng([config.seed, epoch]).permutation(
                    len(blocks)
                )
            rows.append(epoch_orders[epoch][pos])
        return blocks[rows]

    records = []
    model.train()
    loss_log = (out / "loss.jsonl").open("a")
    try:
        while step < config.steps:
            start = time.perf_counter()
            rows = torch.from_numpy(batch_rows(step))
            for group in optimizer.param_groups:
                group["lr"] = config.lr_at(step)
            logits = model(input_ids=rows[:, :-1]).logits
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), rows[:, 1:].reshape(-1)
            )
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            seconds = time.perf_counter() - start
            record = {
                "step": step,
                "loss": loss.item(),
                "lr": config.lr_at(step - 1),
                "tokens_per_s": config.batch * config.block / seconds,
            }
            records.append(record)
            loss_log.write(json.dumps(record) + "\n")
            if log is not None:
                log(record)
            if step % config.save_every == 0 or step == config.steps:
                loss_log.flush()
                tmp = ckpt_path.with_suffix(".tmp")
                torch.save(
                    {
                        "model": model.state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "step": step,
                        "config": asdict(config),
                    },
                    tmp,
                )
                tmp.replace(ckpt_path)
    finally:
        loss_log.close()
    model.eval()
    return records
