"""CPU smoke tests: GRPO through the env adapter and SFT on exported data, with a tiny random Qwen3.

The point is the protocol, not learning. A random model never calls a tool,
so its rewards are constant and its advantages zero; the GRPO test scripts
the generated tokens instead (oracle plan, the same plan as parallel calls, a
wrong answer, no answer) and leaves everything after generation to TRL:
response parsing, tool execution through the adapter, rewards, advantages and
the update. The rewards must be what ``agentenv eval`` computes for the same
texts, they must differ across the group, and the update must move the weights.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("datasets")
pytest.importorskip("trl")

import torch  # noqa: E402

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.baselines import train_grpo, train_sft  # noqa: E402
from agentenv.baselines.oracle import OracleAgent  # noqa: E402
from agentenv.data.sft import ExportConfig, export_sft  # noqa: E402
from agentenv.engine.actions import answer, tool_call, tool_calls  # noqa: E402
from agentenv.engine.parsing import ToolCalls, parse_action  # noqa: E402
from agentenv.evaluation.runner import RunConfig, make_env, run_episode  # noqa: E402

from ..scripted_play import agent_actions  # noqa: E402

ENV_ID = "MediaSearch-v0"
CLASS_NAME = "MediaSearch_v0"
SHAPED = {"preset": "efficient", "shaping": True}


def grpo_args(model: Path, out: Path, **overrides: Any) -> train_grpo.Args:
    settings: dict[str, Any] = dict(
        model=str(model),
        env_id=ENV_ID,
        split="train",
        tasks=4,
        output_dir=str(out),
        max_steps=2,
        learning_rate=1e-3,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=1,
        num_generations=2,
        max_completion_length=24,
        max_tool_calling_iterations=4,
        bf16=False,
        gradient_checkpointing=False,
        use_cpu=True,
        save_steps=0,
        logging_steps=1,
    )
    settings.update(overrides)
    return train_grpo.Args(**settings)


def group_scripts(task_index: int) -> dict[str, list[str]]:
    """Four policies for one train task, as the raw assistant texts a model would generate.

    ``a``: a search, then the oracle's plan, one call per message, then its answer; ``b``: the same calls as
    parallel calls in one message, then the answer; ``c``: one search, then a wrong answer;
    ``d``: plain text, no answer. Each message opens with ``Plan X.`` so a turn can be told apart.
    """
    env = gym.make(ENV_ID, split="train")
    oracle, _ = agent_actions(env, OracleAgent(), index=task_index)
    plan = [tool_call("search", query="family film 2008", k=1), *oracle]
    calls = [c for a in plan if isinstance(p := parse_action(a), ToolCalls) for c in p.calls]
    scripts = {
        "a": plan,
        "b": [tool_calls((c.name, c.arguments) for c in calls), oracle[-1]],
        "c": [tool_call("search", query="film", k=1), answer("I do not know")],
        "d": ["It is probably a film from the forties."],
    }
    return {key: [f"Plan {key}.\n{text}" for text in texts] for key, texts in scripts.items()}


class Scripted:
    """An eval agent that sends a script's texts in order (as ``--agent llm --agent-args tool_format=hermes``)."""

    name = "scripted"

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def reset(self, obs: str, info: Any, *, task: Any, rng: Any) -> None:
        self.turn = 0

    def act(self, obs: str, info: Any) -> str:
        self.turn += 1
        return self.texts[self.turn - 1]


class ReturnRecorder(gym.Wrapper):
    """Sums the step rewards of the episode (the runner's record keeps the last step's reward)."""

    def reset(self, **kwargs: Any) -> Any:
        self.episode_return = 0.0
        return self.env.reset(**kwargs)

    def step(self, action: str) -> Any:
        result = self.env.step(action)
        self.episode_return += float(result[1])
        return result


@pytest.mark.slow
def test_grpo_group_with_tools_and_answers_rewards_what_eval_rewards_and_updates(
    tiny_qwen3: Path, tmp_path: Path, compact_lm_head: None
) -> None:
    """One GRPO step on a group of four scripted rollouts of one task under shaped rewards."""
    scripts = group_scripts(task_index=0)
    order = list(scripts)
    args = grpo_args(
        tiny_qwen3,
        tmp_path,
        tasks=1,
        max_steps=1,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=4096,
        reward=SHAPED,
    )
    trainer = train_grpo.build_trainer(args)
    (reward_func,) = [f for f in trainer.reward_funcs if getattr(f, "__name__", "") == CLASS_NAME]
    tokenizer = trainer.processing_class
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")

    def scripted(prompt_ids: list[list[int]], *_: Any, **__: Any) -> tuple[list[list[int]], None]:
        out = []
        for position, ids in enumerate(prompt_ids):
            text = tokenizer.decode(ids)
            turn = text.count("<|im_start|>assistant") - 1  # assistant turns before this one
            key = order[position] if turn == 0 else next(k for k in order if f"Plan {k}." in text)
            out.append(tokenizer.encode(scripts[key][turn], add_special_tokens=False) + [end])
        return out, None

    trainer._generate_single_turn = (
        scripted  # TRL 1.16's generation hook; the tool loop stays TRL's
    )
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()

    results = reward_func.last_results
    rewards = [r.reward for r in results]
    logged = trainer.state.log_history[0]
    assert logged[f"rewards/{CLASS_NAME}/mean"] == pytest.approx(float(np.mean(rewards)), abs=1e-6)
    # the same texts through the eval runner: same components, same episode return. TRL ends a
    # rollout at its first message without tool calls, so `d` (no answer) is compared with an eval
    # whose turn budget ends there too; with more turns, eval would show the error and ask again.
    for key, result in zip(order, results, strict=True):
        budget = (("max_turns", len(scripts[key])),) if key == "d" else ()
        config = RunConfig(
            ENV_ID, agent="scripted", split="train", env_kwargs=(("reward", SHAPED), *budget)
        )
        env = ReturnRecorder(make_env(config))
        record = run_episode(env, Scripted(scripts[key]), config, episode=0, task_index=0)
        assert result.components == record["reward_components"], key
        assert result.reward == pytest.approx(env.episode_return), key
        assert result.reward == pytest.approx(sum(result.step_rewards))
    by_key = dict(zip(order, results, strict=True))
    assert by_key["a"].components["accuracy"] == by_key["b"].components["accuracy"] == 1.0
    assert (
        by_key["b"].components["turns"] == 2.0 < by_key["a"].components["turns"]
    )  # parallel calls: one turn
    assert by_key["b"].reward > by_key["a"].reward > by_key["c"].reward and by_key["d"].truncated
    assert len(set(rewards)) == 4  # rewards differ across the group: non-zero advantages
    assert logged["tools/call_frequency"] > 0
    assert math.isfinite(logged["loss"]) and logged["grad_norm"] > 0
    moved = [
        n for n, p in trainer.model.named_parameters() if not torch.equal(p.detach(), before[n])
    ]
    assert moved, "the update changed no parameter"


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sft-export")
    manifest = export_sft(ExportConfig(ENV_ID, out, episodes=8, seed=0), progress=False)
    assert manifest.kept >= 4
    return out


@pytest.mark.slow
def test_sft_steps_on_exported_data(
    tiny_qwen3: Path, export_dir: Path, tmp_path: Path, compact_lm_head: None
) -> None:
    args = train_sft.Args(
        model=str(tiny_qwen3),
        data=str(export_dir),
        output_dir=str(tmp_path),
        max_steps=2,
        learning_rate=1e-3,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=1,
        max_length=4096,
        bf16=False,
        gradient_checkpointing=False,
        use_cpu=True,
        logging_steps=1,
        save_steps=0,
    )
    trainer = train_sft.build_trainer(args)
    first = trainer.train_dataset[0]  # TRL 1.16 marks the untrained positions with label -100
    trained = [
        i for i, label in zip(first["input_ids"], first["labels"], strict=True) if label != -100
    ]
    assert "<tool_call>" in trainer.processing_class.decode(
        trained
    )  # the loss covers the assistant's calls
    assert 0 < len(trained) < len(first["input_ids"]) // 4  # and not the prompt or the tool results
    rendered = trainer.processing_class.decode(first["input_ids"])
    schemas = rendered[rendered.index("<tools>\n") : rendered.rindex("</tools>")]
    assert (
        '"name": "get_title"' in schemas
    )  # and no other tool's properties as null (only real defaults):
    assert re.search(r'"(?!default")[a-z_]+": null', schemas) is None, schemas
    trainer.train()
    losses = [row["loss"] for row in trainer.state.log_history if "loss" in row]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    assert all(row["grad_norm"] > 0 for row in trainer.state.log_history if "grad_norm" in row)
