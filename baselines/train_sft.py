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

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv.baselines.train_common import TrainArgs, run


@dataclass
class Args(TrainArgs):
    """SFT on an agentenv export: the data, how long to train on it, what the loss covers.

    The model, optimizer, precision and logging fields are the shared ones of
    :class:`~agentenv.baselines.train_common.TrainArgs`.
    """

    data: str = "data/sft"
    """Directory written by `agentenv export-sft` (chat.jsonl and manifest.json)."""
    output_dir: str = "runs/sft"
    max_steps: int = -1
    """Optimizer steps; -1 trains for num_train_epochs."""
    num_train_epochs: float = 2.0
    """Passes over the data when max_steps is -1."""
    max_length: int | None = 8192
    """Truncate rendered episodes to this many tokens (None: no truncation)."""
    assistant_only_loss: bool = True
    """Train only on assistant turns (tool results and prompts are context)."""
    lr_scheduler_type: str = "linear"
    """transformers' schedule name; ``constant_with_warmup`` suits a run that may be stopped early."""
    warmup_steps: int = 0
    """Steps of linear warm-up."""


def load_chat_dataset(data: str | Path) -> Any:
    """``chat.jsonl`` of an export as a ``datasets.Dataset``; says which export it is."""
    from agentenv.data.chat_dataset import chat_dataset
    from agentenv.data.export_files import read_export

    directory = Path(data)
    manifest, rows = read_export(directory)  # refuses an edited, truncated or empty export
    print(
        f"{directory}: {manifest['kept']} episodes of {manifest['env_id']} ({manifest['split']}), "
        f"agent {manifest['agent']}, reasoning {manifest['reasoning']}"
    )
    # Not load_dataset("json"): Arrow would give each tool call every other tool's arguments as null.
    return chat_dataset(rows)


def build_trainer(args: Args, callbacks: Sequence[Any] = ()) -> Any:
    """The ``SFTTrainer`` for ``args`` (not yet trained), so tests can inspect it."""
    from transformers import set_seed
    from trl import SFTConfig, SFTTrainer

    set_seed(args.seed)
    config = SFTConfig(
        **args.trainer_options(SFTConfig),
        num_train_epochs=args.num_train_epochs,
        max_length=args.max_length,
        assistant_only_loss=args.assistant_only_loss,
        lr_scheduler_type=args.lr_scheduler_type,
        warmup_steps=args.warmup_steps,
    )
    return SFTTrainer(**args.trainer_inputs(config, load_chat_dataset(args.data), callbacks))


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options, train, save the final model."""
    run(Args, build_trainer, argv)


if __name__ == "__main__":
    main()
