"""What the TRL training scripts share: the common args, the common trainer options, the tokenizer, ``main``.

Kept to what is the same logic in both scripts. Each script declares only the
fields that are its own (GRPO's env and rollout settings, SFT's data) and the
defaults it changes, and passes TRL the options no other script sets; a
reader of one script still sees all of its settings: its own in the script,
the shared ones here, each with its docstring.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

A = TypeVar("A", bound="TrainArgs")


@dataclass
class TrainArgs:
    """The settings every TRL training script takes: model, output, optimizer, precision, logging, seed."""

    model: str = "smollm2-135m"
    """Model to train: a packaged model's name (``smollm2-135m``: its verified directory, built by
    ``agentenv models install``), a local directory, or a hub id already in the local Hugging Face
    cache (read with the hub offline: nothing is downloaded)."""
    tokenizer: str | None = None
    """Tokenizer path or id; None uses the model's. 'offline-qwen3' uses agentenv's offline Qwen3 tokenizer."""
    output_dir: str = "runs/train"
    """Where checkpoints and logs go."""
    max_steps: int = -1
    """Optimizer steps; -1 trains for TRL's number of epochs instead."""
    learning_rate: float = 1e-5
    """AdamW learning rate."""
    per_device_train_batch_size: int = 4
    """Episodes per device per micro-batch."""
    gradient_accumulation_steps: int = 4
    """Micro-batches per optimizer step."""
    bf16: bool = True
    """Train in bfloat16 (set false on CPU)."""
    gradient_checkpointing: bool = True
    """Trade compute for memory on long multi-turn episodes."""
    use_cpu: bool = False
    """Force CPU (smoke tests)."""
    logging_steps: int = 10
    """Log every N steps."""
    save_steps: int = 500
    """Checkpoint every N steps (0 saves nothing)."""
    report_to: str = "none"
    """Where to report metrics: 'none', 'wandb', 'tensorboard', ..."""
    seed: int = 0
    """Seed of model init, data order and sampling (through transformers.set_seed)."""
    lora_r: int = 0
    """LoRA rank (needs peft: the smollm extra); 0 trains every weight."""
    lora_alpha: int = 32
    """LoRA scaling numerator (the update is scaled by alpha / r)."""
    lora_dropout: float = 0.0
    """Dropout on the LoRA branch."""
    threads: int | None = None
    """CPU threads for torch (None: OMP_NUM_THREADS, else the usable cores up to 4); see
    :mod:`agentenv.models.threads`."""
    model_dtype: str | None = None
    """dtype the model is loaded in (``float32``, ``bfloat16``); None: float32 when training on a CPU
    without bf16 matrix units (:mod:`agentenv.models.precision`), else the checkpoint's."""
    loss_log: str | None = None
    """Append every logged step (loss, learning rate, wall time) as a JSON line to this file."""

    def trainer_options(self, config_cls: type) -> dict[str, Any]:
        """The options of TRL's ``config_cls`` (``GRPOConfig``, ``SFTConfig``) set from these shared fields."""
        from agentenv.integrations.trl import checkpointing_option

        return {
            "output_dir": self.output_dir,
            "max_steps": self.max_steps,
            "learning_rate": self.learning_rate,
            "per_device_train_batch_size": self.per_device_train_batch_size,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
            "bf16": self.bf16,
            **checkpointing_option(config_cls, self.gradient_checkpointing),
            "use_cpu": self.use_cpu,
            "logging_steps": self.logging_steps,
            "save_strategy": "steps" if self.save_steps > 0 else "no",
            "save_steps": max(self.save_steps, 1),
            "report_to": self.report_to,
            "seed": self.seed,
            **self._model_init(),
        }

    def _model_init(self) -> dict[str, Any]:
        """``model_init_kwargs`` with the load dtype, when one is asked for or this CPU needs float32."""
        dtype = self.model_dtype
        if dtype is None and (self.use_cpu or not _has_cuda()):
            from agentenv.models.precision import fast_cpu_bf16

            dtype = None if fast_cpu_bf16() else "float32"
        return {"model_init_kwargs": {"dtype": dtype}} if dtype else {}

    def trainer_inputs(
        self, config: Any, train_dataset: Any, callbacks: Sequence[Any] = ()
    ) -> dict[str, Any]:
        """What every TRL trainer is given: the model, its config, the data, the tokenizer, the callbacks,
        and a LoRA config when ``lora_r > 0``. A packaged model's name becomes its verified directory."""
        from agentenv.models import local_model

        model = local_model(self.model)
        extra = list(callbacks)
        if self.loss_log:
            extra.append(loss_log_callback(self.loss_log))
        inputs = {
            "model": model,
            "args": config,
            "train_dataset": train_dataset,
            "processing_class": load_tokenizer(model, self.tokenizer),
            "callbacks": extra,
        }
        if self.lora_r > 0:
            from peft import LoraConfig

            inputs["peft_config"] = LoraConfig(
                r=self.lora_r,
                lora_alpha=self.lora_alpha,
                lora_dropout=self.lora_dropout,
                target_modules="all-linear",
                task_type="CAUSAL_LM",
            )
        return inputs


def _has_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def loss_log_callback(path: str) -> Any:
    """A ``TrainerCallback`` that appends each log (step, loss, learning rate, seconds since the start)
    to ``path`` as one JSON line, flushed at once: a long CPU run can be read, plotted or stopped
    at any time without losing the curve."""
    import json
    import time

    from transformers import TrainerCallback

    class LossLog(TrainerCallback):
        def __init__(self) -> None:
            self.start = time.perf_counter()

        def on_log(
            self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any
        ) -> None:
            row = {"step": state.global_step, "epoch": state.epoch, **(logs or {})}
            row["wall_s"] = round(time.perf_counter() - self.start, 2)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")

    return LossLog()


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

    from agentenv.models import local_model

    return AutoTokenizer.from_pretrained(
        local_model(tokenizer, "--tokenizer") if tokenizer else model
    )


def run(
    args_cls: type[A], build_trainer: Callable[[A], Any], argv: Sequence[str] | None = None
) -> None:
    """A script's ``main``: parse the options into ``args_cls``, train, save the final model."""
    from agentenv.errors import UserInputError
    from agentenv.integrations.dataclass_cli import parse_args
    from agentenv.models.threads import apply_thread_policy

    # Nothing is fetched from a model hub: a hub id is read from the local cache or refused.
    os.environ["HF_HUB_OFFLINE"] = "1"
    args = parse_args(args_cls, argv)
    print(apply_thread_policy(args.threads))
    try:
        if not args.use_cpu and not _has_cuda():
            raise UserInputError(
                "no CUDA GPU here: pass --use-cpu true to train on the CPU (a smoke test), or run "
                "on a machine with a GPU"
            )
        trainer = build_trainer(args)
    except UserInputError as err:  # bad data or options: one line, no traceback
        raise SystemExit(f"error: {err}") from None
    trainer.train()
    trainer.save_model(args.output_dir)
