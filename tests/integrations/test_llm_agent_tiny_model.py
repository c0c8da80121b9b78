"""The llm agent end to end against a real model served over loopback.

A small OpenAI-compatible server (tests/baselines/fake_openai.py's HTTP shell)
answers each chat request by running ``generate`` on the tiny random Qwen3
model with the offline tokenizer, and returns vLLM-style ``token_ids``. The
score is ≈ 0 (the model is random); what is tested is the protocol, the
tool-call path and that the sampled ids reach ``TokenEnv`` unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agentenv  # noqa: F401
from agentenv.evaluation.runner import RunConfig, timed_run

from ..baselines.fake_openai import FakeOpenAI, Reply, chat_reply, completion_reply

NEW_TOKENS = 12


class TinyModelServer:
    """Turns a chat-completions body into a real generation of the tiny model."""

    def __init__(self, path: Path) -> None:
        import torch
        import transformers

        self.torch = torch
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(path)
        self.model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
        self.sampled: list[list[int]] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        text = self.tokenizer.apply_chat_template(
            body["messages"], tools=body.get("tools"), add_generation_prompt=True, tokenize=False
        )
        prompt = self.tokenizer.encode(text, add_special_tokens=False)
        with self.torch.no_grad():
            out = self.model.generate(
                self.torch.tensor([prompt]),
                max_new_tokens=NEW_TOKENS,
                do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        ids = out[0, len(prompt) :].tolist()
        self.sampled.append(ids)
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        return chat_reply(content=text, token_ids=ids, prompt_token_ids=prompt)

    def complete(self, body: dict[str, Any]) -> Reply:
        """``/v1/completions`` with a prompt of token ids: the token-exact path."""
        prompt = body["prompt"]
        with self.torch.no_grad():
            out = self.model.generate(
                self.torch.tensor([prompt]),
                max_new_tokens=min(NEW_TOKENS, body["max_tokens"]),
                do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        ids = out[0, len(prompt) :].tolist()
        self.sampled.append(ids)
        return completion_reply(ids, prompt_token_ids=prompt)


@pytest.fixture(scope="module")
def served(tiny_qwen3: Path):
    server = TinyModelServer(tiny_qwen3)
    with FakeOpenAI(server, server.complete) as http:
        yield server, http


def test_llm_agent_evaluates_through_a_served_model(served) -> None:
    server, http = served
    args = (
        ("base_url", http.url),
        ("model", "tiny-qwen3"),
        ("tool_format", "hermes"),
        ("max_tokens", str(NEW_TOKENS)),
        ("retries", "0"),
    )
    records, _ = timed_run(
        RunConfig("MediaSearch-v0", "llm", split="validation", episodes=2, agent_args=args),
        progress=False,
    )
    assert len(records) == 2
    assert all(r["terminated"] or r["truncated"] for r in records)
    assert all("agent_failure" not in r for r in records)
    first = http.requests[0]
    assert first["messages"][0]["role"] == "system" and first["messages"][1]["role"] == "user"
    # Random text is no valid action: the env answered with explained errors, never crashed.
    assert records[0]["reward_components"]["invalid_actions"] >= 1


def test_sampled_ids_reach_token_env_unchanged(served) -> None:
    from agentenv.baselines.llm_agent import LLMAgent, LLMAgentArgs, llm_token_rollout
    from agentenv.tokens import qwen3_template

    server, http = served
    agent = LLMAgent(
        LLMAgentArgs(
            base_url=http.url,
            model="tiny-qwen3",
            tool_format="hermes",
            max_tokens=NEW_TOKENS,
            return_token_ids=True,
            retries=0,
        )
    )
    env = gym.make("MediaSearch-v0", split="validation", max_turns=3)
    before = len(server.sampled)
    rollout = llm_token_rollout(
        env, qwen3_template(), agent, seed=0, options={"index": 0}, rng=np.random.default_rng(0)
    )
    sampled = server.sampled[before:]
    assert sampled and len(rollout.input_ids) == len(rollout.loss_mask)
    policy_ids = [i for i, m in zip(rollout.input_ids, rollout.loss_mask, strict=True) if m == 1]
    assert policy_ids[: sum(map(len, sampled))] == [i for ids in sampled for i in ids]
