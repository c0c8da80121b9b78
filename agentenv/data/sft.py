"""Export agent episodes as SFT data: chat JSONL for TRL, token JSONL through ``TokenEnv``.

``export_sft`` runs an agent (the oracle by default) on one split and writes,
for each kept episode, one row in each of two files, in the same order:

* ``chat.jsonl``: ``{"messages": [...], "tools": [...]}``, the env's
  conversation in chat format (system, user, assistant with ``tool_calls``
  and ``reasoning_content``, tool), ready for TRL's ``SFTTrainer``. Tool-call
  arguments are JSON objects, as Hugging Face chat templates expect (the env's
  own OpenAI-format messages keep them as strings).
* ``tokens.jsonl``: ``{"input_ids": [...], "loss_mask": [...]}`` from
  :class:`agentenv.tokens.TokenEnv`: the agent's action text is encoded once
  with the template's tokenizer, the end-of-turn id is appended, and those ids
  are kept exactly; env turns are rendered by the template (``loss_mask`` 0).

plus ``manifest.json`` (:class:`agentenv.data.manifest.SFTManifest`).

Why one pass for both files: the chat row is read from the same
``info["messages"]`` that the token env was driven by, so the two files
describe the same episodes turn for turn.

Episode ``i`` uses the task, env seed and agent generator that ``agentenv
eval`` uses for episode ``i`` with the same seed, so an export and an
evaluation with one seed see the same tasks. Only episodes whose reward
reaches ``min_reward`` (1.0 by default: solved) are written, and episodes
that use an id the conversation never showed are dropped unless
``allow_ungrounded`` is set (:mod:`agentenv.data.filters` says why);
``keep_all`` writes every episode run. The output is deterministic: same
arguments, same bytes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from agentenv.data.filters import ungrounded_ids
from agentenv.data.manifest import (
    CHAT_FILE,
    MANIFEST_FILE,
    TOKENS_FILE,
    SFTManifest,
    TokenizerInfo,
)
from agentenv.storage.checksums import sha256_file
from agentenv.tokens import TokenEnv
from agentenv.tokens.chat_templates import ChatTemplate, HFTemplate, Qwen3Template, qwen3_template


@dataclass(frozen=True)
class ExportConfig:
    """What to export; the CLI flags of ``agentenv export-sft`` map one to one."""

    env_id: str
    out: Path
    agent: str = "oracle"
    split: str = "train"
    episodes: int = 100
    seed: int = 0
    keep_all: bool = False
    """Write every episode run: no reward filter and no grounding filter."""
    min_reward: float = 1.0
    """Keep episodes whose reward is at least this (1.0: solved under the default preset)."""
    think: bool = True
    """Oracle turns carry a scripted ``<think>`` line; off writes bare actions (and Qwen3's
    no-thinking headers in tokens.jsonl)."""
    reward: str | None = None
    """Reward preset name or config file for the env; None keeps the env's default."""
    allow_ungrounded: bool = False
    """Keep episodes that call a tool with an id never shown before (see :mod:`agentenv.data.filters`)."""
    env_args: Mapping[str, Any] = field(default_factory=dict)
    """Extra ``gym.make`` keyword arguments (``--env-arg``), e.g. ``{"compact": True, "kinds": ["lookup"]}``;
    recorded in ``manifest.json`` as ``env_args``, since they change what the episodes look like."""


class LastText(gym.Wrapper[str, str, str, str]):
    """Remembers the text observation, which ``TokenEnv`` turns into ids, for a text agent."""

    def __init__(self, env: gym.Env[str, str]) -> None:
        super().__init__(env)
        self.text = ""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self.text, info = self.env.reset(seed=seed, options=options)
        return self.text, info

    def step(self, action: str) -> tuple[str, Any, bool, bool, dict[str, Any]]:
        self.text, reward, terminated, truncated, info = self.env.step(action)
        return self.text, reward, terminated, truncated, info


def chat_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The env's messages with tool-call arguments as objects (Hugging Face chat-template form).

    Example:
        >>> chat_messages([{"role": "assistant", "content": "", "tool_calls": [
        ...     {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"q": 1}'}}]}])
        [{'role': 'assistant', 'content': '', 'tool_calls': [{'id': 'c', 'type': 'function', 'function': {'name': 'f', 'arguments': {'q': 1}}}]}]
    """
    out = []
    for message in messages:
        row = dict(message)
        if row.get("tool_calls"):
            calls = []
            for call in row["tool_calls"]:
                function = dict(call["function"])
                if isinstance(function.get("arguments"), str):
                    function["arguments"] = json.loads(function["arguments"])
                calls.append({**call, "function": function})
            row["tool_calls"] = calls
        out.append(row)
    return out


def make_export_agent(name: str, *, think: bool) -> Any:
    """The named agent (from the agent registry); the oracle gets its scripted reasoning lines unless
    ``think`` is off."""
    from agentenv.evaluation.agents import make_agent

    if name == "oracle" and think:
        from agentenv.data.oracle_with_reasoning import ReasoningOracle

        return ReasoningOracle(make_agent("oracle"))
    return make_agent(name)


def tokenizer_info(template: ChatTemplate) -> TokenizerInfo:
    """How the manifest names a template."""
    if isinstance(template, Qwen3Template):
        from agentenv.tokens.qwen3_tokenizer import QWEN_TIKTOKEN_SHA256

        return TokenizerInfo(
            name="qwen3-offline",
            vocab_size=template.vocab_size,
            enable_thinking=template.enable_thinking,
            source_sha256=QWEN_TIKTOKEN_SHA256,
        )
    if isinstance(template, HFTemplate):
        name = str(
            getattr(template.tokenizer, "name_or_path", "") or type(template.tokenizer).__name__
        )
        return TokenizerInfo(name=name, vocab_size=template.vocab_size)
    return TokenizerInfo(name=type(template).__name__, vocab_size=template.vocab_size)


@dataclass(frozen=True)
class ExportOutcome:
    """What :func:`export_episodes` wrote (its manifest) and the best reward it saw."""

    manifest: SFTManifest
    best_reward: float | None
    """The highest reward of an episode that ended (None: none did). Why: when nothing is kept,
    the command says how far ``--min-reward`` was out of reach instead of writing an empty export."""


def export_sft(
    config: ExportConfig, *, template: ChatTemplate | None = None, progress: bool = True
) -> SFTManifest:
    """Run the episodes and write ``chat.jsonl``, ``tokens.jsonl`` and ``manifest.json`` under ``config.out``."""
    return export_episodes(config, template=template, progress=progress).manifest


def export_episodes(
    config: ExportConfig, *, template: ChatTemplate | None = None, progress: bool = True
) -> ExportOutcome:
    """:func:`export_sft`, also returning the best reward of an ended episode (see :class:`ExportOutcome`)."""
    import agentenv
    from agentenv.evaluation.runner import RunConfig, build_env, episode_plan

    if config.episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {config.episodes}")
    template = template or qwen3_template(enable_thinking=config.think)
    for key in ("split", "reward"):
        if key in config.env_args:
            raise ValueError(f"env_args {key!r}: set ExportConfig.{key} (--{key}) instead")
    env_kwargs = {**config.env_args, **({"reward": config.reward} if config.reward else {})}
    run = RunConfig(
        config.env_id,
        config.agent,
        config.split,
        config.episodes,
        config.seed,
        env_kwargs=tuple(env_kwargs.items()),
    )
    text_env = LastText(build_env(run))  # kwargs the env refuses: one line naming them
    env = TokenEnv(text_env, template)
    agent = make_export_agent(config.agent, think=config.think)
    plan = episode_plan(len(env.unwrapped.tasks), config.episodes, config.seed)
    eos = template.eos_ids[0]

    config.out.mkdir(parents=True, exist_ok=True)
    chat_path, tokens_path = config.out / CHAT_FILE, config.out / TOKENS_FILE
    totals = {"turns": 0, "tool_calls": 0, "tokens": 0, "policy_tokens": 0, "ungrounded": 0}
    task_ids: list[str] = []
    best_reward: float | None = None
    bar = tqdm(
        total=config.episodes,
        desc=f"export {config.agent} on {config.env_id}",
        disable=not progress,
    )
    with (
        chat_path.open("w", encoding="utf-8") as chat_file,
        tokens_path.open("w", encoding="utf-8") as tokens_file,
    ):
        for episode, task_index in enumerate(plan):
            _, info = env.reset(seed=config.seed + episode, options={"index": task_index})
            agent.reset(
                text_env.text,
                info,
                task=env.unwrapped.task,
                rng=np.random.default_rng([config.seed, episode]),
            )
            reward, done = 0.0, False
            while not done:
                ids = template.encode_text(agent.act(text_env.text, info)) + [eos]
                _, reward, terminated, truncated, info = env.step(ids)
                done = terminated or truncated
            bar.update()
            if terminated:
                best_reward = max(float(reward), -math.inf if best_reward is None else best_reward)
            if not config.keep_all and not (terminated and float(reward) >= config.min_reward):
                continue
            if not (config.keep_all or config.allow_ungrounded) and ungrounded_ids(
                info["messages"]
            ):
                totals["ungrounded"] += 1
                continue
            chat_file.write(
                _line({"messages": chat_messages(info["messages"]), "tools": info["tools"]})
            )
            tokens_file.write(
                _line({"input_ids": info["input_ids"], "loss_mask": info["loss_mask"]})
            )
            task_ids.append(info["task_id"])
            totals["turns"] += info["turn"]
            totals["tool_calls"] += info["tool_calls"]
            totals["tokens"] += len(info["input_ids"])
            totals["policy_tokens"] += sum(info["loss_mask"])
            bar.set_postfix(kept=len(task_ids))
    bar.close()

    inner = env.unwrapped
    manifest = SFTManifest(
        env_id=config.env_id,
        split=config.split,
        agent=config.agent,
        reasoning="scripted" if config.agent == "oracle" and config.think else None,
        seed=config.seed,
        reward_preset=inner.reward_config.name,
        min_reward=None if config.keep_all else config.min_reward,
        episodes=config.episodes,
        kept=len(task_ids),
        dropped=config.episodes - len(task_ids),
        corpus_checksums=dict(getattr(inner, "corpus_checksums", {})),
        package_version=agentenv.__version__,
        tokenizer=tokenizer_info(template),
        files={CHAT_FILE: sha256_file(chat_path), TOKENS_FILE: sha256_file(tokens_path)},
        task_ids=task_ids,
        **totals,
    )
    record = manifest.model_dump(mode="json")
    record["env_args"] = dict(
        config.env_args
    )  # written even when empty: an export says what env it ran
    (config.out / MANIFEST_FILE).write_text(
        json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    env.close()
    return ExportOutcome(manifest, best_reward)


def _line(row: Mapping[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False) + "\n"
