"""Merge a LoRA adapter (a ``train_sft.py --lora-r N`` checkpoint) into its base model directory.

Why a merged directory: every model consumer of the package (the ``hf`` agent, the TRL scripts,
the perplexity benchmark) takes a plain ``save_pretrained`` directory. The base is the one named
in the adapter's ``adapter_config.json`` (for ``--model smollm2-135m``, the verified directory
under ``$AGENTENV_HOME``); nothing is fetched. The merged weights are written in float32 by
default: LoRA updates are small next to the weights, and rounding the sum to bfloat16 would erase
part of them.

Usage::

    python -m agentenv.models.lora runs/sft/checkpoint-40 runs/sft-merged
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from agentenv.errors import UserInputError

__all__ = ["main", "merge_adapter"]


def merge_adapter(adapter: Path, out: Path, *, dtype: str = "float32") -> Path:
    """Write ``adapter`` merged into its base, with the adapter folder's tokenizer, to ``out``.

    The paths are checked before torch and peft are imported: a wrong path is named at once, and
    on an install without peft too.
    """
    config_file = adapter / "adapter_config.json"
    if not config_file.is_file():
        raise UserInputError(f"{adapter}: no adapter_config.json (not a LoRA checkpoint)")
    base = json.loads(config_file.read_text())["base_model_name_or_path"]
    if not Path(base).is_dir():
        raise UserInputError(
            f"{adapter}: its base model {base} is not a local directory (nothing is fetched)"
        )
    import torch
    from peft import AutoPeftModelForCausalLM
    from transformers import AutoTokenizer

    model = AutoPeftModelForCausalLM.from_pretrained(
        adapter, dtype=getattr(torch, dtype), local_files_only=True
    )
    merged = model.merge_and_unload()
    merged.save_pretrained(out)
    source = adapter if (adapter / "tokenizer.json").is_file() else Path(base)
    AutoTokenizer.from_pretrained(source, local_files_only=True).save_pretrained(out)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentenv.models.lora", description=__doc__)
    parser.add_argument("adapter", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    args = parser.parse_args(argv)
    try:
        print(merge_adapter(args.adapter, args.out, dtype=args.dtype))
    except UserInputError as err:  # a wrong path: one line, as the agentenv command prints it
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
