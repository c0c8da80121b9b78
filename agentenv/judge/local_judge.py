"""A local causal LM as a judge: chat prompts in, a few greedy tokens out, many prompts at once.

Why its own small generator: a judge's reply is one word, so each call is a
prefill of ~130 tokens and 2-5 decoded tokens. Batching the prefill is what
pays on a CPU (measured for SmolLM2-135M on this kind of machine: decode 13
tokens/s at batch 1, 71 at batch 8). Prompts are sorted by length before
batching so that little of a batch is padding, left-padded (the last position
of every row is its own last token), and decoded greedily with the KV cache
(transformers' ``generate``, ``do_sample=False``): the same prompt gives the
same reply, whatever batch it lands in, up to float rounding.

The model is any local ``save_pretrained`` directory with a chat template, or a
packaged name (``smollm2-135m``, :func:`agentenv.models.resolve_model`). The
thread policy is set deliberately (:func:`agentenv.models.threads.apply_thread_policy`)
and bfloat16 is used only where this CPU multiplies it in hardware
(:func:`agentenv.models.precision.cpu_dtype`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LocalJudge"]

Messages = Sequence[dict[str, str]]


class LocalJudge:
    """Greedy replies of a local model to chat prompts, in length-sorted, left-padded batches."""

    def __init__(
        self,
        model: str = "smollm2-135m",
        *,
        threads: int | None = None,
        batch_size: int = 16,
        max_new_tokens: int = 5,
    ) -> None:
        from agentenv.models import resolve_model
        from agentenv.models.threads import apply_thread_policy

        self.thread_note = apply_thread_policy(threads)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from agentenv.models.precision import cpu_dtype

        self.path = resolve_model(model)
        self.dtype = cpu_dtype(_saved_dtype(self.path))
        self.tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(
            self.path, local_files_only=True, dtype=getattr(torch, self.dtype)
        ).eval()
        config = self.model.generation_config
        for key in ("temperature", "top_p", "top_k"):  # greedy: no sampling settings to warn about
            if hasattr(config, key):
                setattr(config, key, None)
        self.batch_size = max(1, int(batch_size))
        self.max_new_tokens = max(1, int(max_new_tokens))
        self.prompt_tokens = 0
        self.new_tokens = 0

    def replies(
        self,
        conversations: Sequence[Messages],
        progress: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        """One greedy reply (special tokens dropped) for each conversation, in the order given;
        ``progress(done, total)`` is called after each batch."""
        import torch

        texts = [
            self.tokenizer.apply_chat_template(list(m), tokenize=False, add_generation_prompt=True)
            for m in conversations
        ]
        ids = [self.tokenizer(t, add_special_tokens=False).input_ids for t in texts]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out: list[str] = [""] * len(ids)
        stop = [self.tokenizer.eos_token_id]
        end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        if isinstance(end, int) and end not in stop and end != self.tokenizer.unk_token_id:
            stop.append(end)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            batch = self.tokenizer.pad(
                {"input_ids": [ids[i] for i in chunk]}, padding=True, return_tensors="pt"
            )
            with torch.inference_mode():
                generated = self.model.generate(
                    **batch,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    pad_token_id=self.tokenizer.pad_token_id,
                    eos_token_id=stop,
                )
            width = batch["input_ids"].shape[1]
            for row, i in enumerate(chunk):
                new = generated[row, width:].tolist()
                self.prompt_tokens += len(ids[i])
                self.new_tokens += sum(1 for t in new if t not in stop)
                out[i] = self.tokenizer.decode(new, skip_special_tokens=True)
            if progress is not None:
                progress(min(start + self.batch_size, len(order)), len(order))
        return out

    def describe(self) -> dict[str, Any]:
        """What judged: model directory, dtype, thread policy, batch and decode settings, tokens processed."""
        return {
            "model_dir": str(self.path),
            "dtype": self.dtype,
            "threads": self.thread_note,
            "batch_size": self.batch_size,
            "max_new_tokens": self.max_new_tokens,
            "decoding": "greedy",
            "prompt_tokens": self.prompt_tokens,
            "new_tokens": self.new_tokens,
        }


def _saved_dtype(path: str) -> str | None:
    try:
        config = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = config.get("dtype", config.get("torch_dtype"))
    return found if isinstance(found, str) else None
