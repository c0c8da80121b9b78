"""CPU smoke tests: GRPO through the env adapter and SFT on exported data, with a tiny random Qwen3.

The point is the protocol, not learning: TRL renders the env's tools, parses
tool calls, calls the adapter, and the reward column the trainer optimises is
exactly the reward the env computes for the same actions (checked against a
fresh env replaying each episode's messages).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("datasets")
pytest.importorskip("trl")

from transformers import TrainerCallback  # noqa: E402

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.actions import tool_call  # noqa: E402
from agentenv.baselines import train_grpo, train_sft  # noqa: E402
from agentenv.data.oracle_with_reasoning import ReasoningOracle  # noqa: E402
from agentenv.data.sft import ExportConfig, export_sft  # noqa: E402
from agentenv.parsing import Answer, parse_action  # noqa: E402

ENV_ID = "MediaSearch-v0"
CLASS_NAME = "MediaSearch_v0"


def replay_reward(messages: list[dict[str, Any]], task_id: str, **make_kwargs: Any) -> float:
    """The reward a fresh env gives the same actions: one step per tool call, else the message text.

    The replay env's turn budget is the number of actions, so an episode the
    model left without answering ends where it ended in training.
    """
    actions = []
    for message in messages[2:]:
        if message["role"] == "assistant":
            calls = message.get("tool_calls") or []
            texts = [tool_call(c["function"]["name"], **json.loads(c["function"]["arguments"])) for c in calls]
            actions.extend(texts or [message["content"]])
    env = gym.make(ENV_ID, max_turns=len(actions), **make_kwargs)
    env.reset(options={"task_id": task_id})
    for i, action in enumerate(actions):
        _, reward, terminated, truncated, _ = env.step(action)
        assert (terminated or truncated) == (i == len(actions) - 1), "the replay ended early or late"
    return float(reward)


class RewardLedger(TrainerCallback):
    """After each step: the trainer's env-reward column next to each rollout env's own record."""

    def __init__(self) -> None:
        self.trainer: Any = None
        self.steps: list[dict[str, Any]] = []

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        envs = list(self.trainer.environments)
        column = list(self.trainer._logs["rewards"][CLASS_NAME])[-len(envs):]  # TRL's per-rollout log
        self.steps.append({
            "trainer": column,
            "env": [e.reward for e in envs],
            "episodes": [(e.info["task_id"], e.info["messages"]) for e in envs],
        })


def grpo_args(model: Path, out: Path, **overrides: Any) -> train_grpo.Args:
    settings: dict[str, Any] = dict(
        model=str(model), env_id=ENV_ID, split="train", tasks=4, output_dir=str(out), max_steps=2,
        learning_rate=1e-3, per_device_train_batch_size=2, gradient_accumulation_steps=1, num_generations=2,
        max_completion_length=24, max_tool_calling_iterations=4, bf16=False, gradient_checkpointing=False,
        use_cpu=True, save_steps=0, logging_steps=1,
    )
    settings.update(overrides)
    return train_grpo.Args(**settings)


@pytest.mark.slow
def test_grpo_steps_through_the_adapter_reward_what_the_env_rewards(
    tiny_qwen3: Path, tmp_path: Path, compact_lm_head: None
) -> None:
    ledger = RewardLedger()
    trainer = train_grpo.build_trainer(grpo_args(tiny_qwen3, tmp_path, reward="efficient"), callbacks=[ledger])
    ledger.trainer = trainer
    trainer.train()

    assert len(ledger.steps) == 2
    for step in ledger.steps:
        assert len(step["trainer"]) == 2
        assert step["trainer"] == pytest.approx(step["env"], abs=1e-6)
        for (task_id, messages), reward in zip(step["episodes"], step["env"], strict=True):
            assert replay_reward(messages, task_id, split="train", reward="efficient") == pytest.approx(reward)
    logged = [row for row in trainer.state.log_history if f"rewards/{CLASS_NAME}/mean" in row]
    assert [row[f"rewards/{CLASS_NAME}/mean"] for row in logged] == pytest.approx(
        [float(np.mean(step["env"])) for step in ledger.steps], abs=1e-6
    )


def oracle_script(task_index: int) -> list[str]:
    """The reasoning oracle's action texts on one train task, its answer turned into an ``answer`` call."""
    env = gym.make(ENV_ID, split="train")
    obs, info = env.reset(options={"index": task_index})
    agent = ReasoningOracle()
    agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(0))
    actions, done, reward = [], False, 0.0
    while not done:
        action = agent.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        actions.append(action)
    assert reward == 1.0, "the oracle solves its task in a plain env"
    final = parse_action(actions[-1])
    assert isinstance(final, Answer)
    actions[-1] = actions[-1].split("<answer>")[0] + tool_call("answer", answer=final.text)
    return actions


@pytest.mark.slow
def test_grpo_with_scripted_rollouts_sees_the_env_rewards(
    tiny_qwen3: Path, tmp_path: Path, compact_lm_head: None
) -> None:
    """Two rollouts of one task through TRL's own tool loop: the oracle's plan (reward 1) and a wrong answer (0).

    Generation is replaced by a script (a random model never calls a tool);
    everything after it is TRL's: response parsing, tool execution through the
    adapter, tool-result tokens, rewards, advantages and the update.
    """
    script = oracle_script(task_index=0)
    wrong = tool_call("answer", answer="I do not know")
    ledger = RewardLedger()
    args = grpo_args(tiny_qwen3, tmp_path, tasks=1, max_steps=1, max_completion_length=4096)
    trainer = train_grpo.build_trainer(args, callbacks=[ledger])
    ledger.trainer = trainer
    tokenizer = trainer.processing_class
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")

    def scripted(prompt_ids: list[list[int]], *_: Any, **__: Any) -> tuple[list[list[int]], None]:
        out = []
        for position, ids in enumerate(prompt_ids):
            text = tokenizer.decode(ids)
            turn = text.count("<tool_response>")
            if "Answer received" in text:
                action = "Done."
            elif turn == 0:
                action = script[0] if position == 0 else wrong
            else:
                action = script[turn]
            out.append(tokenizer.encode(action, add_special_tokens=False) + [end])
        return out, None

    trainer._generate_single_turn = scripted  # TRL 1.16's generation hook; the tool loop stays TRL's
    trainer.train()

    (step,) = ledger.steps
    assert step["env"] == [1.0, 0.0]
    assert step["trainer"] == pytest.approx([1.0, 0.0])
    for (task_id, messages), reward in zip(step["episodes"], step["env"], strict=True):
        assert replay_reward(messages, task_id, split="train") == reward
    turns = [m for m in step["episodes"][0][1] if m["role"] == "assistant"]
    assert len(turns) == len(script)  # every planned call and the answer reached the env, one turn each
    history = trainer.state.log_history[0]
    assert history["tools/call_frequency"] > 0
    assert math.isfinite(history["loss"]) and history["grad_norm"] > 0


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sft-export")
    manifest = export_sft(ExportConfig(ENV_ID, out, episodes=8, seed=0), progress=False)
    assert manifest.kept >= 4
    return out


@pytest.mark.slow
def test_sft_steps_on_exported_data(tiny_qwen3: Path, export_dir: Path, tmp_path: Path, compact_lm_head: None) -> None:
    args = train_sft.Args(
        model=str(tiny_qwen3), data=str(export_dir), output_dir=str(tmp_path), max_steps=2, learning_rate=1e-3,
        per_device_train_batch_size=2, gradient_accumulation_steps=1, max_length=4096, bf16=False,
        gradient_checkpointing=False, use_cpu=True, logging_steps=1, save_steps=0,
    )
    trainer = train_sft.build_trainer(args)
    first = trainer.train_dataset[0]  # TRL 1.16 marks the untrained positions with label -100
    trained = [i for i, label in zip(first["input_ids"], first["labels"], strict=True) if label != -100]
    assert "<tool_call>" in trainer.processing_class.decode(trained)  # the loss covers the assistant's calls
    assert 0 < len(trained) < len(first["input_ids"]) // 4  # and not the prompt or the tool results
    trainer.train()
    losses = [row["loss"] for row in trainer.state.log_history if "loss" in row]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    assert all(row["grad_norm"] > 0 for row in trainer.state.log_history if "grad_norm" in row)
