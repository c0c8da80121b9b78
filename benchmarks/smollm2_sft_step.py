"""Seconds per SFT conversation of SmolLM2-135M on this CPU: full logits against labelled-only logits,
full fine-tuning against LoRA, with and without the lower blocks frozen.

Why: on a 2-core CPU one LoRA SFT step over a conversation took about a minute. Two cheap savings
are measured here. The LM head (576 × 49,152) is about a fifth of the model's compute, and only
the assistant's tokens are labelled (about one in five of an oracle conversation), so projecting
only the labelled positions (:func:`agentenv.models.training.labelled_loss`) skips most of it.
Freezing the lower blocks skips their backward pass.

Each variant trains (forward, backward, AdamW step; batch 1) on the same conversations, after one
untimed warm-up conversation; variants run one after another, in order and then in reverse, and
the median over both passes is reported, in CPU seconds of this process (one thread: the step's
compute, which other work on the machine barely changes) and in wall seconds, with the load
average.

    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE nice -n 10 python benchmarks/smollm2_sft_step.py \\
        --data /path/to/export-sft-dir --conversations 3 --out figures/llm/smollm2-sft-step.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

VARIANTS: dict[str, dict[str, Any]] = {
    "full FT, all logits": {"lora": 0, "labelled": False, "freeze": 0},
    "full FT, labelled logits": {"lora": 0, "labelled": True, "freeze": 0},
    "LoRA r16, all logits": {"lora": 16, "labelled": False, "freeze": 0},
    "LoRA r16, labelled logits": {"lora": 16, "labelled": True, "freeze": 0},
    "LoRA r16, labelled logits, blocks 0-14 frozen": {"lora": 16, "labelled": True, "freeze": 15},
    "full FT, labelled logits, blocks 0-14 frozen": {"lora": 0, "labelled": True, "freeze": 15},
}


def encode(tokenizer: Any, rows: list[dict[str, Any]], max_length: int) -> list[tuple[Any, Any]]:
    """(input_ids, labels) of each conversation, labels -100 outside the assistant's turns."""
    import torch

    out = []
    for row in rows:
        enc = tokenizer.apply_chat_template(
            row["messages"],
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        ids = torch.tensor([enc["input_ids"][:max_length]])
        mask = torch.tensor([enc["assistant_masks"][:max_length]])
        labels = ids.masked_fill(mask == 0, -100)
        out.append((ids, labels))
    return out


def build(model_dir: str, variant: dict[str, Any]) -> tuple[Any, Any]:
    """The model of ``variant`` and its AdamW optimizer."""
    import torch

    from agentenv.models.training import freeze_lower_blocks, load_for_training, lora_config

    model = load_for_training(model_dir, "cpu")
    if variant["lora"]:
        from peft import get_peft_model

        model = get_peft_model(
            model,
            lora_config(
                variant["lora"],
                first_block=variant["freeze"],
                blocks=model.config.num_hidden_layers,
            ),
        )
    freeze_lower_blocks(model, variant["freeze"])
    params = [p for p in model.parameters() if p.requires_grad]
    return model, torch.optim.AdamW(params, lr=1e-5)


def step(model: Any, optimizer: Any, ids: Any, labels: Any, labelled: bool) -> tuple[float, float]:
    """One training step; its wall seconds and this process's CPU seconds (with one thread, the
    CPU seconds are the step's compute, whatever else the machine is doing)."""
    from agentenv.models.training import labelled_loss

    started, cpu = time.perf_counter(), time.process_time()
    if labelled:
        loss, _ = labelled_loss(model, {"input_ids": ids, "labels": labels})
    else:
        loss = model(input_ids=ids, labels=labels).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return time.perf_counter() - started, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="an export-sft directory")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=1024)
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    from agentenv.data.chat_dataset import read_chat_jsonl
    from agentenv.lessons.scratch.tokenizer import load_tokenizer
    from agentenv.models import resolve_model
    from agentenv.models.threads import apply_thread_policy

    threads = apply_thread_policy()
    model_dir = resolve_model(args.model)
    tokenizer = load_tokenizer(model_dir)
    rows = read_chat_jsonl(args.data / "chat.jsonl")[: args.conversations + 1]
    batches = encode(tokenizer, rows, args.max_length)
    warm, timed = batches[0], batches[1:]
    tokens = [int(ids.shape[1]) for ids, _ in timed]
    labelled = [int((labels != -100).sum()) for _, labels in timed]
    times: dict[str, list[float]] = {name: [] for name in args.variants}
    cpu: dict[str, list[float]] = {name: [] for name in args.variants}
    loads = []
    for order in (args.variants, list(reversed(args.variants))):
        for name in order:
            variant = VARIANTS[name]
            model, optimizer = build(model_dir, variant)
            step(model, optimizer, *warm, variant["labelled"])
            for ids, labels in timed:
                wall, used = step(model, optimizer, ids, labels, variant["labelled"])
                times[name].append(wall)
                cpu[name].append(used)
            loads.append(os.getloadavg()[0])
            print(
                f"{name}: {statistics.median(cpu[name]):.2f} CPU s, "
                f"{statistics.median(times[name]):.2f} wall s per conversation",
                flush=True,
            )
            del model, optimizer
    baseline = statistics.median(cpu[args.variants[0]])
    record = {
        "model": args.model,
        "threads": threads,
        "conversations": len(timed),
        "tokens": tokens,
        "labelled_tokens": labelled,
        "load_average_1min": [round(x, 2) for x in loads],
        "seconds_per_conversation": {
            name: {
                "cpu_median": round(statistics.median(cpu[name]), 2),
                "cpu_all": [round(x, 2) for x in cpu[name]],
                "cpu_vs_first": round(statistics.median(cpu[name]) / baseline, 3),
                "wall_median": round(statistics.median(t), 2),
                "wall_all": [round(x, 2) for x in t],
            }
            for name, t in times.items()
        },
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    text = json.dumps(record, indent=2)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
