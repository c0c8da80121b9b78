"""TokenEnv: policy ids kept exactly, env ids rendered, info aligned."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

from agentenv.tokens import TokenEnv

TOOL_CALL = (
    "<think>\nI should search.\n</think>\n\n"
    '<tool_call>\n{"name": "search", "arguments": {"query": "nolan inception", "k": 1}}\n</tool_call>'
)
ANSWER = "<think>\nThe note says Inception.\n</think>\n\n<answer>Inception</answer>"


@pytest.fixture(params=["bytes", "qwen3"])
def template(request, byte_template):
    return byte_template if request.param == "bytes" else request.getfixturevalue("qwen3")


def run_episode(env: TokenEnv, actions: list[list[int]], logprobs: list[list[float]] | None = None):
    obs, info = env.reset(seed=0, options={"index": 0})
    chunks = [("env", obs.tolist())]
    for i, ids in enumerate(actions):
        action = ids if logprobs is None else {"token_ids": ids, "logprobs": logprobs[i]}
        obs, reward, terminated, truncated, info = env.step(action)
        chunks += [("policy", list(ids)), ("env", obs.tolist())]
    return chunks, info, reward, terminated, truncated


def test_reset_returns_the_prompt_ids(fake_env, template):
    env = TokenEnv(fake_env, template)
    obs, info = env.reset(seed=0, options={"index": 0})
    expected = template.render_prefix(info["messages"], info["tools"])
    assert obs.dtype == np.int64 and obs.tolist() == expected == info["input_ids"]
    assert info["loss_mask"] == [0] * len(obs) and info["logprobs"] == [0.0] * len(obs)
    assert template.decode(obs).endswith("<|im_start|>assistant\n")
    assert obs in env.observation_space


def test_trajectory_is_prompt_then_policy_and_env_ids(fake_env, template):
    eos = template.eos_ids[0]
    actions = [template.encode(TOOL_CALL) + [eos], template.encode(ANSWER) + [eos]]
    logprobs = [[-0.5 - i / 100 for i in range(len(a))] for a in actions]
    env = TokenEnv(fake_env, template)
    chunks, info, reward, terminated, truncated = run_episode(env, actions, logprobs)
    assert (reward, terminated, truncated) == (1.0, True, False)
    ids, mask, lps = info["input_ids"], info["loss_mask"], info["logprobs"]
    assert len(ids) == len(mask) == len(lps)
    assert ids == [i for _, chunk in chunks for i in chunk]
    assert [i for i, m in zip(ids, mask, strict=True) if m] == actions[0] + actions[1]
    assert [lp for lp, m in zip(lps, mask, strict=True) if m] == logprobs[0] + logprobs[1]
    assert all(lp == 0.0 for lp, m in zip(lps, mask, strict=True) if not m)
    # The env turn after the tool call: the separator, the grouped tool response, the next header.
    env_turn = template.decode(chunks[2][1])
    assert env_turn.startswith("\n<|im_start|>user\n<tool_response>\nInception (2010)")
    assert env_turn.endswith("</tool_response><|im_end|>\n<|im_start|>assistant\n")
    assert chunks[-1] == ("env", [])  # the answer ends the episode; nothing is appended
    assert info["action_text"] == ANSWER  # the trailing eos is not shown to the env


def test_missing_eos_is_closed_by_the_env_turn(fake_env, template):
    env = TokenEnv(fake_env, template)
    env.reset(seed=0, options={"index": 0})
    policy = template.encode(TOOL_CALL)
    obs, *_, info = env.step(policy)
    assert obs[0] == template.eos_ids[0]
    assert template.decode(obs).startswith("<|im_end|>\n<|im_start|>user\n")
    assert [i for i, m in zip(info["input_ids"], info["loss_mask"], strict=True) if m] == policy
    assert info["logprobs"][-len(obs) - len(policy) : -len(obs)] == [None] * len(policy)


def test_parse_error_becomes_a_user_turn(fake_env, template):
    env = TokenEnv(fake_env, template)
    env.reset(seed=0, options={"index": 0})
    obs, reward, terminated, truncated, info = env.step(
        template.encode("I am not sure.") + [template.eos_ids[0]]
    )
    assert not (terminated or truncated)
    assert template.decode(obs) == (
        "\n<|im_start|>user\nError: expected <tool_call>{...}</tool_call> or <answer>...</answer>."
        "<|im_end|>\n<|im_start|>assistant\n"
    )


def test_truncation_renders_the_last_tool_results_without_a_new_header(make_fake_env, template):
    env = TokenEnv(make_fake_env(max_turns=1), template)
    env.reset(seed=0, options={"index": 0})
    obs, _, terminated, truncated, info = env.step(
        template.encode(TOOL_CALL) + [template.eos_ids[0]]
    )
    assert (terminated, truncated) == (False, True)
    text = template.decode(obs)
    assert text.startswith("\n<|im_start|>user\n<tool_response>") and text.endswith("<|im_end|>\n")
    assert info["input_ids"][-len(obs) :] == obs.tolist()


def test_actions_may_be_arrays_and_are_validated(fake_env, byte_template):
    env = TokenEnv(fake_env, byte_template)
    with pytest.raises(ResetNeeded):
        env.step([1, 2])
    env.reset(seed=0)
    with pytest.raises(ValueError, match="must lie in"):
        env.step([byte_template.vocab_size])
    with pytest.raises(ValueError, match="flat sequence of ints"):
        env.step(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="flat sequence of ints"):
        env.step([0.5])
    with pytest.raises(ValueError, match="2 logprobs for 1 token ids"):
        env.step({"token_ids": [65], "logprobs": [-1.0, -2.0]})
    ids = np.asarray(byte_template.encode(ANSWER), dtype=np.int32)
    *_, info = env.step(ids)
    assert [
        i for i, m in zip(info["input_ids"], info["loss_mask"], strict=True) if m
    ] == ids.tolist()


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")
def test_check_env_passes(fake_env, template):
    env = TokenEnv(fake_env, template)
    check_env(env, skip_render_check=True)


def test_same_seed_same_trajectory(make_fake_env, template):
    def rollout() -> list[int]:
        env = TokenEnv(make_fake_env(), template)
        env.reset(seed=7)
        env.action_space.seed(7)
        for _ in range(3):
            *_, terminated, truncated, info = env.step(env.action_space.sample())
            if terminated or truncated:
                break
        return info["input_ids"]

    assert rollout() == rollout()


def test_sync_vector_env(make_fake_env, byte_template):
    envs = gym.vector.SyncVectorEnv([lambda: TokenEnv(make_fake_env(), byte_template)] * 2)
    obs, info = envs.reset(seed=0)
    assert len(obs) == 2 and all(o[-1] == byte_template.encode("\n")[0] for o in obs)
    eos = byte_template.eos_ids[0]
    obs, *_ = envs.step(
        (byte_template.encode(TOOL_CALL) + [eos], byte_template.encode("?") + [eos])
    )
    assert byte_template.decode(obs[0]).startswith("\n<|im_start|>user\n<tool_response>")
    assert byte_template.decode(obs[1]).startswith("\n<|im_start|>user\nError:")


def test_logprobs_may_be_none_per_id_and_bad_ones_are_named(fake_env, byte_template) -> None:
    """``[None]`` raised a bare TypeError from float(); NaN was stored for the trainer to read."""
    from agentenv.tokens import TokenEnv

    env = TokenEnv(fake_env, byte_template)
    env.reset(seed=0)
    ids = byte_template.encode("<answer>Inception</answer>")
    *_, info = env.step({"token_ids": ids, "logprobs": [None] * len(ids)})
    assert info["logprobs"][-len(ids) :] == [None] * len(ids)
    for bad, message in (
        ({"token_ids": ids, "logprobs": [float("nan")] * len(ids)}, r"logprobs\[0\] must be"),
        ({"token_ids": ids, "logprobs": ["x"] * len(ids)}, r"logprobs\[0\] must be"),
        ({"logprobs": [0.0]}, "needs 'token_ids'"),
    ):
        env.reset(seed=0)
        with pytest.raises(ValueError, match=message):
            env.step(bad)


def test_a_turn_stopped_on_another_eos_is_still_closed_by_the_template(qwen3) -> None:
    """Stopping on Qwen3's <|endoftext|> left the turn without <|im_end|>, a shape the template
    never writes; the next ids now close it first."""
    env = TokenEnv(gym.make("agentenv:MediaSearch-v0", compact=True), qwen3)
    env.reset(seed=0)
    call = qwen3.encode_text(
        '<tool_call>{"name": "search", "arguments": {"query": "Heat"}}</tool_call>'
    )
    endoftext, im_end = qwen3.encode("<|endoftext|>")[0], qwen3.eos_ids[0]
    obs, *_ = env.step(call + [endoftext])
    assert list(obs[:1]) == [im_end]
    env.reset(seed=0)
    obs, *_ = env.step(call + [im_end])
    assert im_end not in list(obs[:1])
