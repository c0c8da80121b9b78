"""What SFT and GRPO need to train any causal LM of the package, on CPU or CUDA.

Why this exists: the lessons were written for the from-scratch 5M model, which is small enough
that every choice below was moot. A real model (SmolLM2-135M, a Llama with a 49,152-token
vocabulary) makes four of them matter:

* **device and precision**: ``auto`` is CUDA where there is one, else the CPU; on CUDA the weights
  stay float32 and the trainer runs under bfloat16 autocast; on a CPU without bf16 matrix units
  (:mod:`agentenv.models.precision`) everything is float32. A checkpoint saved in bfloat16 is
  never trained in bfloat16 on such a CPU (one step took 5 minutes instead of seconds).
* **LoRA**: adapters on every linear layer of the blocks (optionally only the upper blocks),
  merged back into a plain ``save_pretrained`` directory at the end, so every consumer (the ``hf``
  agent, GRPO, the token check) keeps taking a directory.
* **logits only where there is a label**: the LM head of a 49,152-token vocabulary is about a
  fifth of the model's compute, and in an oracle conversation only about one token in five is the
  assistant's. :func:`labelled_loss` projects only the hidden states whose next token is labelled
  (TRL's fused head does so on Triton devices only; on a CPU it scores every position).
* **frozen lower blocks**: no gradient is computed below the first trained block.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "freeze_lower_blocks",
    "labelled_loss",
    "load_for_training",
    "lora_config",
    "merge_if_lora",
    "resolve_device",
    "trainer_options",
]


def resolve_device(device: str = "auto") -> str:
    """``auto`` → ``cuda`` where torch sees a GPU, else ``cpu``; any other value is checked and kept.

    >>> resolve_device("cpu")
    'cpu'
    """
    from agentenv.errors import UserInputError

    if device == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    if device != "cpu" and not device.startswith("cuda"):
        raise UserInputError(f"device must be auto, cpu or cuda[:N], got {device!r}")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UserInputError(f"device {device}: torch sees no CUDA GPU here; use --device cpu")
    return device


def trainer_options(config_class: type, seed: int, device: str) -> dict[str, Any]:
    """Keyword arguments for ``SFTConfig`` / ``GRPOConfig``: seeded, quiet, no checkpoints, on ``device``.

    On a CPU: float32 and no activation checkpointing (bf16 autocast without bf16 units made an SFT
    step several times slower; checkpointing recomputes the forward pass: 52 s → 7.6 s a step in one
    measurement with both off). On CUDA: bfloat16 autocast over float32 weights.
    """
    from agentenv.integrations.trl import checkpointing_option

    cuda = device.startswith("cuda")
    return {
        "save_strategy": "no",
        "report_to": "none",
        "use_cpu": not cuda,
        "bf16": cuda,
        **checkpointing_option(config_class, False),
        "seed": seed,
        "data_seed": seed,
        "dataloader_num_workers": 0,
        "disable_tqdm": True,
    }


def load_for_training(model_dir: Any, device: str) -> Any:
    """The model of ``model_dir`` in float32 (trained weights stay float32; CUDA adds bf16 autocast)."""
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(
        model_dir, local_files_only=True, dtype=torch.float32
    )


def lora_config(r: int, alpha: int | None = None, *, first_block: int = 0, blocks: int = 0) -> Any:
    """A PEFT LoRA config on every linear layer of the blocks (``first_block`` and above)."""
    from peft import LoraConfig

    layers = list(range(first_block, blocks)) if first_block and blocks else None
    return LoraConfig(
        r=r,
        lora_alpha=alpha or 2 * r,
        lora_dropout=0.0,
        target_modules=[
            "q_proj",
            "k_proj",
            "v_proj",
            "o_proj",
            "gate_proj",
            "up_proj",
            "down_proj",
        ],
        layers_to_transform=layers,
        task_type="CAUSAL_LM",
    )


def freeze_lower_blocks(model: Any, first_trained: int) -> int:
    """Freeze the embeddings and the blocks below ``first_trained``; return the trainable parameters.

    With tied embeddings the LM head is the embedding matrix, so it is frozen too.
    """
    backbone = model.get_base_model() if hasattr(model, "get_base_model") else model
    inner = backbone.base_model
    if first_trained > 0:
        inner.embed_tokens.requires_grad_(False)
        for block in inner.layers[:first_trained]:
            block.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def labelled_loss(model: Any, inputs: dict[str, Any], num_items: Any = None) -> tuple[Any, Any]:
    """Mean cross-entropy over labelled next tokens, the LM head applied to those positions only.

    Returns ``(loss, correct)``: ``correct`` is how many labelled tokens the argmax predicts.
    ``inputs`` are a TRL collator's (``input_ids``, ``labels`` with -100 where not trained, and
    ``attention_mask`` or ``position_ids``).
    """
    import torch

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    labels = inputs["labels"]
    kwargs = {k: inputs[k] for k in ("attention_mask", "position_ids") if inputs.get(k) is not None}
    hidden = base.base_model(input_ids=inputs["input_ids"], use_cache=False, **kwargs)
    hidden = hidden.last_hidden_state[:, :-1]
    targets = labels[:, 1:]
    mask = targets != -100
    logits = base.get_output_embeddings()(hidden[mask]).float()
    total = torch.nn.functional.cross_entropy(logits, targets[mask], reduction="sum")
    count = mask.sum() if num_items is None else num_items
    loss = total / torch.as_tensor(count, device=total.device).clamp(min=1)
    correct = (logits.argmax(-1) == targets[mask]).sum()
    return loss, correct


def merge_if_lora(model: Any) -> Any:
    """The plain model: a PEFT model's adapters merged into its weights, anything else as it is."""
    if hasattr(model, "merge_and_unload"):
        return model.merge_and_unload()
    return model
