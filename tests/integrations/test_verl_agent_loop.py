"""The verl agent loop's other paths: the ``agentenv`` loop renders env turns with the tokenizer's own chat
template (ids equal to TokenEnv's with that template), and the prompt and response budgets of verl's config."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("verl")

from .parity.drivers.verl import ScriptedServer, agent_loop, extra_info  # noqa: E402
from .parity.scripts import policy_ids, script  # noqa: E402

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>{{ c.function.name }}</tool_call>{% endfor %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""A small ChatML template (what the offline Qwen3 tokenizer lacks): any prefix-stable template will do."""


def chatml_loop(server: ScriptedServer, **rollout: int):
    loop = agent_loop(server, "agentenv", **rollout)
    loop.tokenizer.chat_template = CHATML
    return loop


def test_verl_agentenv_loop_uses_the_tokenizers_template() -> None:
    from agentenv.integrations.row_episodes import SHARED_POOL, EpisodeSpec
    from agentenv.tokens import TokenEnv, hf_template

    s = script("MediaSearch-v0", "oracle")
    server = ScriptedServer(s.actions)
    loop = chatml_loop(server)
    output = asyncio.run(loop.run({}, raw_prompt=[], extra_info=extra_info(s)))
    template = hf_template(loop.tokenizer)
    spec = EpisodeSpec(s.env_id, s.split, s.task_index, s.seed)
    with SHARED_POOL.lend(spec) as env:
        token_env = TokenEnv(env, template)
        token_env.reset(**spec.reset_kwargs())
        for action in s.actions:
            *_, info = token_env.step(policy_ids(action, template))
    assert list(output.prompt_ids) + list(output.response_ids) == info["input_ids"]
    assert output.reward_score == 1.0
    assert template.decode(output.prompt_ids).endswith("<|im_start|>assistant\n")


def test_verl_loop_refuses_a_prompt_over_its_budget() -> None:
    s = script("RareDiseaseDiagnosis-v0", "oracle")
    loop = agent_loop(ScriptedServer(s.actions), prompt_length=64)
    with pytest.raises(ValueError, match="data.max_prompt_length=64"):
        asyncio.run(loop.run({}, raw_prompt=[], extra_info=extra_info(s)))


def test_verl_loop_stops_when_the_response_budget_runs_out() -> None:
    s = script("MediaSearch-v0", "truncation")
    loop = agent_loop(ScriptedServer(s.actions), response_length=200)
    output = asyncio.run(loop.run({}, raw_prompt=[], extra_info=extra_info(s)))
    assert output.extra_fields["agentenv_out_of_budget"] is True
    assert len(output.response_ids) == len(output.response_mask) <= 200
    assert output.extra_fields["agentenv_turns"] < len(s.actions) and output.reward_score == 0.0
