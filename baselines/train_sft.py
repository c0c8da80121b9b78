"""SFT with TRL on data written by ``agentenv export-sft`` (its ``chat.jsonl``).

Run on a GPU (the model is a path or hub id you supply; nothing is fetched by
the tests)::

    agentenv export-sft MediaSearch-v0 --agent oracle --split train --episodes 5000 --out data/media-sft
    python baselines/train_sft.py --model Qwen/Qwen3-0.6B --data data/media-sft --output-dir runs/sft-media

Each row of ``chat.jsonl`` is one solved episode: ``messages`` (system, user,
assistant turns with ``tool_calls`` and scripted ``reasoning_content``, tool
results) and the env's ``tools``. TRL renders each row with the tokenizer's
chat template and the tools; with ``--assistant-only-loss true`` (the
default) only the assistant turns are trained on, which TRL implements by
swapping in its training variant of the template (Qwen3's included). The
reasoning lines are templated, not a model's reasoning: see
``docs/sft-data.md``.

Seeding: ``transformers.set_seed`` is called here, in the script, because
model init and data order use torch's global generators; the library itself
never touches global RNGs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv.baselines.train_common import load_tokenizer


@dataclass
class Args:
    """SFT on an agentenv export."""

    model: str = "Qwen/Qwen3-0.6B"
    """Model to train: a local directory or a hub id (fetched by transformers, never by agentenv)."""
    tokenizer: str | None = None
    """Tokenizer path or id; None uses the model's. 'offline-qwen3' uses agentenv's offline Qwen3 tokenizer."""
    data: str = "data/sft"
    """Directory written by `agentenv export-sft` (chat.jsonl and manifest.json)."""
    output_dir: str = "runs/sft"
    """Where checkpoints and logs go."""
    max_steps: int = -1
    """Optimizer steps; -1 trains for num_train_epochs."""
    num_train_epochs: float = 2.0
    """Passes over the data when max_steps is -1."""
    learning_rate: float = 1e-5
    """AdamW learning rate."""
    per_device_train_batch_size: int = 4
    """Episodes per device per micro-batch."""
    gradient_accumulation_steps: int = 4
    """Micro-batches per optimizer step."""
    max_length: int | None = 8192
    """Truncate rendered episodes to this many tokens (None: no truncation)."""
    assistant_only_loss: bool = True
    """Train only on assistant turns (tool results and prompts are context)."""
    bf16: bool = True
    """Train in bfloat16 (set false on CPU)."""
    gradient_checkpointing: bool = True
    """Trade compute for memory on long episodes."""
    use_cpu: bool = False
    """Force CPU (smoke tests)."""
    logging_steps: int = 10
    """Log every N steps."""
    save_steps: int = 500
    """Checkpoint every N steps (0 saves nothing)."""
    report_to: str = "none"
    """Where to report metrics: 'none', 'wandb', 'tensorboard', ..."""
    seed: int = 0
    """Seed of model init and data order (through transformers.set_seed)."""


def load_chat_dataset(data: str | Path) -> Any:
    """``chat.jsonl`` of an export as a ``datasets.Dataset``; says which export it is."""
    import datasets

    directory = Path(data)
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    print(
        f"{directory}: {manifest['kept']} episodes of {manifest['env_id']} ({manifest['split']}), "
        f"agent {manifest['agent']}, reasoning {manifest['reasoning']}"
    )
    return datasets.load_dataset("json", data_files=str(directory / "chat.jsonl"), split="train")


def build_trainer(args: Args, callbacks: Sequence[Any] = ()) -> Any:
    """The ``SFTTrainer`` for ``args`` (not yet trained), so tests can inspect it."""
    from transformers import set_seed
    from trl import SFTConfig, SFTTrainer

    from agentenv.integrations.trl import checkpointing_option

    set_seed(args.seed)
    config = SFTConfig(
        output_dir=args.output_dir,
        max_steps=args.max_steps,
        num_train_epochs=args.num_train_epochs,
        learning_rate=args.learning_rate,
        per_device_train_batch_size=args.per_device_train_batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        max_length=args.max_length,
        assistant_only_loss=args.assistant_only_loss,
        bf16=args.bf16,
        **checkpointing_option(SFTConfig, args.gradient_checkpointing),
        use_cpu=args.use_cpu,
        logging_steps=args.logging_steps,
        save_strategy="steps" if args.save_steps > 0 else "no",
        save_steps=max(args.save_steps, 1),
        report_to=args.report_to,
        seed=args.seed,
    )
    return SFTTrainer(
        model=args.model,
        args=config,
        train_dataset=load_chat_dataset(args.data),
        processing_class=load_tokenizer(args.model, args.tokenizer),
        callbacks=list(callbacks),
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options, train, save the final model."""
    from agentenv.integrations.script_args import parse_args

    args = parse_args(Args, argv)
    trainer = build_trainer(args)
    trainer.train()
    trainer.save_model(args.output_dir)


if __name__ == "__main__":
    main()
