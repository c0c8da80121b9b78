"""The from-scratch tokenizer speaks Qwen3's format: token-exact env turns, TRL parsing, assistant masks."""

from __future__ import annotations

import gymnasium as gym
import pytest

pytest.importorskip("trl")

from agentenv.baselines.oracle import OracleAgent  # noqa: E402
from agentenv.lessons.scratch.chat_template import SPECIAL_TOKENS  # noqa: E402
from agentenv.lessons.scratch.tokenizer import load_tokenizer, train_tokenizer  # noqa: E402
from agentenv.tokens import TokenEnv  # noqa: E402
from agentenv.tokens.chat_templates import hf_template  # noqa: E402

ENV_ARGS = {"compact": True, "kinds": ["lookup", "constraint"]}


def _oracle_episodes(n: int) -> list[list[dict]]:
    env = gym.make("agentenv:MediaSearch-v0", **ENV_ARGS)
    agent, out = OracleAgent(), []
    for seed in range(n):
        obs, info = env.reset(seed=seed)
        agent.reset(obs, info, task=env.unwrapped.task, rng=None)
        done = False
        while not done:
            obs, _, term, trunc, info = env.step(agent.act(obs, info))
            done = term or trunc
        out.append(info["messages"])
    return out


@pytest.fixture(scope="module", params=[False, True], ids=["gpt2_pretokens", "aligned_names"])
def tokenizer(request, tmp_path_factory):
    episodes = _oracle_episodes(12)
    texts = [m["content"] or "" for e in episodes for m in e] + [str(e) for e in episodes]
    tok = train_tokenizer(texts * 3, vocab_size=700, aligned_names=request.param)
    path = tmp_path_factory.mktemp("tok")
    tok.save_pretrained(path)
    return load_tokenizer(path)


def _aligned(tokenizer) -> bool:
    return tokenizer.backend_tokenizer.normalizer is not None


def test_special_tokens_are_single_ids_and_text_round_trips(tokenizer) -> None:
    whole = ("<answer", "</answer>") if _aligned(tokenizer) else ("<answer>", "</answer>")
    for token in SPECIAL_TOKENS + whole:
        assert len(tokenizer(token, add_special_tokens=False)["input_ids"]) == 1, token
    text = "Who directed Le Corbeau (1943)? Héléna Manson — <answer>Henri-Georges Clouzot</answer>"
    assert tokenizer.decode(tokenizer(text, add_special_tokens=False)["input_ids"]) == text


def test_token_env_trajectory_equals_the_rendered_conversation(tokenizer) -> None:
    """Policy ids in, env ids appended: the trajectory is the chat template's rendering of the episode,
    so SFT data (rendered) and rollouts (token-exact) are the same ids."""
    env = TokenEnv(gym.make("agentenv:MediaSearch-v0", **ENV_ARGS), hf_template(tokenizer))
    inner_agent = OracleAgent()
    checked = 0
    for seed in range(6):
        ids, info = env.reset(seed=seed)
        inner = env.unwrapped
        inner_agent.reset(info["messages"][-1]["content"], info, task=inner.task, rng=None)
        done = False
        while not done:
            action = inner_agent.act(info["messages"][-1]["content"], info)
            if "<tool_call>" in action:  # the model writes calls as the template renders them
                message = {"role": "assistant", "content": "", "tool_calls": _calls(action)}
                rendered = tokenizer.apply_chat_template([message], tokenize=False)
                action = rendered.split("<|im_start|>assistant\n", 1)[1].rsplit("<|im_end|>", 1)[0]
            policy = tokenizer(action, add_special_tokens=False)["input_ids"] + [
                tokenizer.eos_token_id
            ]
            _, _, term, trunc, info = env.step(policy)
            done = term or trunc
        assert info["reward_components"]["accuracy"] == 1.0
        expected = tokenizer.apply_chat_template(info["messages"], tokenize=True, return_dict=True)[
            "input_ids"
        ]
        got = list(info["input_ids"])
        assert got == expected[: len(got)]
        assert (
            tokenizer.decode(expected[len(got) :]) == "\n"
        )  # only the last turn's closing newline is left
        checked += 1
    assert checked == 6


def _calls(action: str) -> list[dict]:
    import json
    import re

    return [
        {"type": "function", "function": json.loads(body)}
        for body in re.findall(r"<tool_call>\s*(.*?)\s*</tool_call>", action, re.S)
    ]


def test_trl_parses_completions_as_for_qwen3_and_the_template_is_prefix_preserving(
    tokenizer,
) -> None:
    from trl.chat_template_utils import is_chat_template_prefix_preserving

    assert is_chat_template_prefix_preserving(tokenizer)
    prefix = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Who directed Heat?"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    text = '<tool_call>\n{"name": "search", "arguments": {"query": "Heat"}}\n</tool_call><|im_end|>'
    parsed = tokenizer.parse_response(text, prefix=prefix)
    assert parsed["tool_calls"][0]["function"] == {"name": "search", "arguments": {"query": "Heat"}}
    answer = tokenizer.parse_response("<answer>Heat</answer><|im_end|>", prefix=prefix)
    assert answer["content"] == "<answer>Heat</answer>" and not answer.get("tool_calls")


def test_assistant_mask_covers_exactly_the_assistant_turns(tokenizer) -> None:
    messages = _oracle_episodes(1)[0]
    enc = tokenizer.apply_chat_template(
        messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    ids, mask = enc["input_ids"], enc["assistant_masks"]
    trained = tokenizer.decode([i for i, m in zip(ids, mask, strict=True) if m])
    for m in messages:
        if m["role"] == "assistant":
            assert (m["content"] or "<tool_call>") in trained
        elif m["role"] in ("user", "tool"):
            assert m["content"][:30] not in trained
