"""GRPO from an SFT checkpoint with TRL's ``environment_factory``, multi-turn or single-turn.

The env's tools are the model's tools and the env's reward (the ``strict``
preset: accuracy only, unless ``env_kwargs`` names another) is the reward, through
:class:`agentenv.integrations.trl.AgentEnvFactory`. The trainer is TRL's
``GRPOTrainer`` with one addition: :class:`RecordingGRPOTrainer` keeps the
ids of each generated batch (prompt, completion, tool mask and the rows'
task ids), so :mod:`agentenv.lessons.scratch.token_check` can replay them through
:class:`agentenv.tokens.TokenEnv` and show that the ids the trainer optimises
are the ids the env records.

Multi-turn: ``MediaSearch-v0`` (tools; TRL runs the model's tool calls against
the env). Single-turn: ``MediaSearch-SingleTurn-v0`` (retrieved passages in the
prompt, one answer, no tools). Both with ``compact=True`` and the same kinds,
tasks and seeds.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GRPOSettings:
    """Settings of one GRPO run, sized for 2 CPU cores."""

    steps: int = 40
    prompts_per_step: int = 4
    num_generations: int = 8
    learning_rate: float = 2e-5
    temperature: float = 1.0
    max_completion_length: int = 384
    max_tool_calling_iterations: int = 4
    beta: float = 0.0
    tasks: int = 2000
    seed: int = 0
    lora_r: int = 0
    """LoRA rank on every linear layer of the blocks (0: full fine-tuning); merged when saved."""

    def __post_init__(self) -> None:
        if self.num_generations < 2:
            raise ValueError(
                f"GRPOSettings.num_generations must be at least 2 (a group), got {self.num_generations}"
            )
        if self.steps < 1 or self.prompts_per_step < 1 or self.tasks < self.prompts_per_step:
            raise ValueError(
                "GRPOSettings.steps and prompts_per_step must be ≥ 1 and tasks ≥ prompts_per_step"
            )


def _trainer_class() -> type:
    from trl import GRPOTrainer

    class RecordingGRPOTrainer(GRPOTrainer):
        """``GRPOTrainer`` that keeps every generated batch's ids for the token-exactness check."""

        recorded: list[dict[str, Any]]

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            output = super()._generate_and_score_completions(inputs)
            if not hasattr(self, "recorded"):
                self.recorded = []
            prompt_ids, prompt_mask = output["prompt_ids"], output["prompt_mask"]
            completion_ids, completion_mask = output["completion_ids"], output["completion_mask"]
            tool_mask = output.get("tool_mask")
            batch = []
            for i, row in enumerate(inputs):
                prompt = prompt_ids[i][prompt_mask[i].bool()].tolist()
                n = int(completion_mask[i].sum())
                completion = completion_ids[i][:n].tolist()
                mask = tool_mask[i][:n].tolist() if tool_mask is not None else [1] * n
                batch.append(
                    {
                        "task_id": row.get("task_id"),
                        "split": row.get("split"),
                        "prompt_ids": prompt,
                        "completion_ids": completion,
                        "tool_mask": mask,
                    }
                )
            self.recorded.append({"step": self.state.global_step, "rollouts": batch})
            return output

    return RecordingGRPOTrainer


def build_grpo_trainer(
    model_dir: str | Path,
    out: str | Path,
    env_id: str,
    env_kwargs: Mapping[str, Any],
    settings: GRPOSettings,
    *,
    device: str = "cpu",
) -> Any:
    """The (untrained) recording GRPO trainer for ``env_id`` with ``env_kwargs``, from ``model_dir``."""
    from trl import GRPOConfig

    from agentenv.integrations.trl import AgentEnvFactory, dataset
    from agentenv.lessons.scratch.tokenizer import load_tokenizer
    from agentenv.models.training import (
        load_for_training,
        lora_config,
        resolve_device,
        trainer_options,
    )

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    device = resolve_device(device)
    tokenizer = load_tokenizer(model_dir)
    model = load_for_training(model_dir, device)
    train = dataset(env_id, "train", n=settings.tasks, **env_kwargs).shuffle(seed=settings.seed)
    factory = AgentEnvFactory(
        env_id, split="train", seed=settings.seed, **{"reward": "strict", **env_kwargs}
    )
    config = GRPOConfig(
        output_dir=str(out),
        max_steps=settings.steps,
        learning_rate=settings.learning_rate,
        per_device_train_batch_size=settings.prompts_per_step * settings.num_generations,
        num_generations=settings.num_generations,
        max_completion_length=settings.max_completion_length,
        max_tool_calling_iterations=settings.max_tool_calling_iterations,
        temperature=settings.temperature,
        beta=settings.beta,
        logging_steps=1,
        **trainer_options(GRPOConfig, settings.seed, device),
        lr_scheduler_type="constant",
    )
    return _trainer_class()(
        model=model,
        peft_config=lora_config(settings.lora_r) if settings.lora_r else None,
        args=config,
        processing_class=tokenizer,
        train_dataset=train,
        environment_factory=factory,
        reward_funcs=factory.reward_func,
    )


def train_grpo(
    model_dir: str | Path,
    out: str | Path,
    env_id: str,
    env_kwargs: Mapping[str, Any],
    settings: GRPOSettings,
    *,
    device: str = "cpu",
) -> dict[str, Any]:
    """Run GRPO and save ``out/model``; return (and write ``out/grpo.json``) the reward curve and ids.

    Each step of the curve holds ``groups_with_variance``: the share of prompt groups whose rewards
    are not all equal. A group of equal rewards has zero advantage and teaches nothing.
    """
    from agentenv.models.training import merge_if_lora

    out = Path(out)
    started = time.perf_counter()
    trainer = build_grpo_trainer(model_dir, out, env_id, env_kwargs, settings, device=device)
    trainer.train()
    history = [h for h in trainer.state.log_history if "reward" in h]
    record = {
        "env_id": env_id,
        "env_kwargs": dict(env_kwargs),
        "settings": asdict(settings),
        "model_dir": str(model_dir),
        "wall_s": round(time.perf_counter() - started, 1),
        "curve": [
            {
                "step": h["step"],
                "reward": float(h["reward"]),
                "tool_calls": float(h.get("tools/call_frequency", 0.0)),
                "completion_length": float(h.get("completions/mean_length", 0.0)),
                "groups_with_variance": (
                    round(1.0 - float(h["frac_reward_zero_std"]), 4)
                    if "frac_reward_zero_std" in h
                    else None
                ),
            }
            for h in history
        ],
    }
    merge_if_lora(trainer.model).save_pretrained(str(out / "model"), safe_serialization=True)
    trainer.processing_class.save_pretrained(out / "model")
    out.mkdir(parents=True, exist_ok=True)
    (out / "grpo.json").write_text(json.dumps(record, indent=2) + "\n")
    (out / "batches.json").write_text(json.dumps(getattr(trainer, "recorded", [])) + "\n")
    return record


def single_turn_id(env_id: str) -> str:
    """The single-turn sibling of a multi-turn MediaSearch id.

    >>> single_turn_id("MediaSearch-v0")
    'MediaSearch-SingleTurn-v0'
    """
    name, version = env_id.rsplit("-", 1)
    return f"{name}-SingleTurn-{version}"
