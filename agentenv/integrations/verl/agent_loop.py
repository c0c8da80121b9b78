"""The ``agentenv`` agent loop: verl rolls a row out by playing its agentenv episode on token ids.

verl (0.9.1) rolls out each row of a batch with the agent loop its ``agent_name`` column names: a
subclass of ``verl.experimental.agent_loop.AgentLoopBase``, registered with that module's
``register`` decorator, whose ``run`` asks ``server_manager.generate`` (the rollout server, vLLM or
SGLang) for token ids and returns an ``AgentLoopOutput``. This loop wraps the row's env in
:class:`~agentenv.tokens.TokenEnv` and hands it exactly the ids the server sampled, so:

* ``prompt_ids`` are TokenEnv's prompt (the env's system and user messages and the tool schemas,
  rendered with the chat template, up to the first assistant header);
* ``response_ids`` and ``response_mask`` are the rest of TokenEnv's ``input_ids`` and ``loss_mask``:
  sampled ids (mask 1) and env turns (tool results, error messages, next assistant header; mask 0);
* ``reward_score`` is the episode's return from the env's own grader, so verl's reward loop is
  skipped; the components, turns and transcript go to ``extra_fields``.

Two registered names: ``agentenv`` renders env turns with the tokenizer's own chat template
(:func:`~agentenv.tokens.hf_template`, checked prefix-stable); ``agentenv_qwen3`` with agentenv's
offline Qwen3 renderer (for a Qwen3 tokenizer without its template). Importing this module imports
verl; ``pip install agentenv[verl]``.
"""

from __future__ import annotations

import time
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import (
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    register,
)

from agentenv.integrations.row_episodes import SHARED_POOL, EpisodeSpec
from agentenv.integrations.verl import AGENT_LOOP, AGENT_LOOP_QWEN3
from agentenv.integrations.verl.reward import every_component, reported_components
from agentenv.tokens import ChatTemplate, TokenEnv

__all__ = ["AgentenvAgentLoop", "AgentenvQwen3AgentLoop"]


@register(AGENT_LOOP)
class AgentenvAgentLoop(AgentLoopBase):
    """Plays the row's episode (``extra_info`` from ``agentenv prepare-verl``) through TokenEnv on the server's ids."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.prompt_length = int(self.rollout_config.prompt_length)
        self.response_length = int(self.rollout_config.response_length)
        self._template: ChatTemplate | None = None

    def chat_template(self) -> ChatTemplate:
        """How env turns are rendered around the policy's ids: the tokenizer's own chat template."""
        if self._template is None:
            from agentenv.tokens import hf_template

            self._template = hf_template(
                self.tokenizer, **dict(self.apply_chat_template_kwargs or {})
            )
        return self._template

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        spec = EpisodeSpec.from_fields(dict(kwargs["extra_info"]))
        with SHARED_POOL.lend(spec) as env:
            return await self._play(env, spec, sampling_params)

    async def _play(
        self, env: Any, spec: EpisodeSpec, sampling_params: dict[str, Any]
    ) -> AgentLoopOutput:
        token_env = TokenEnv(env, self.chat_template())
        prompt, info = token_env.reset(**spec.reset_kwargs())
        spec.check_task(info)
        prompt_ids = [int(i) for i in prompt]
        if len(prompt_ids) > self.prompt_length:
            raise ValueError(
                f"{spec.env_id} task {spec.task_id}: the prompt is {len(prompt_ids)} tokens, over "
                f"data.max_prompt_length={self.prompt_length}; raise it (left-truncating would "
                "train on a prompt the env never gave)"
            )
        request_id = uuid4().hex
        episode_return, done, out_of_budget = 0.0, False, False
        generate_s = 0.0
        logprobs_given = True
        while not done:
            started = time.perf_counter()
            output = await self.server_manager.generate(
                request_id=request_id,
                prompt_ids=list(info["input_ids"]),
                sampling_params=sampling_params,
            )
            generate_s += time.perf_counter() - started
            ids = [int(i) for i in output.token_ids]
            logprobs = list(output.log_probs) if output.log_probs else None
            logprobs_given = logprobs_given and logprobs is not None
            action = {"token_ids": ids, "logprobs": logprobs} if logprobs is not None else ids
            _, reward, terminated, truncated, info = token_env.step(action)
            episode_return += float(reward)
            done = bool(terminated or truncated)
            if not done and len(info["input_ids"]) - len(prompt_ids) >= self.response_length:
                out_of_budget = True  # the response budget ran out before the env ended the episode
                break
        response_ids = info["input_ids"][len(prompt_ids) :][: self.response_length]
        response_mask = info["loss_mask"][len(prompt_ids) :][: self.response_length]
        logprobs_out = None
        if logprobs_given:
            logprobs_out = [
                float(x) for x in info["logprobs"][len(prompt_ids) :][: self.response_length]
            ]
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids,
            response_mask=response_mask,
            response_logprobs=logprobs_out,
            reward_score=episode_return,
            num_turns=len(info["messages"]),
            metrics=AgentLoopMetrics(generate_sequences=generate_s),
            extra_fields={
                "agentenv_reward": episode_return,
                "agentenv_turns": int(info["turn"]),
                "agentenv_reward_components": every_component(
                    info.get("reward_components"), reported_components(env)
                ),
                "agentenv_messages": list(info["messages"]),
                "agentenv_out_of_budget": out_of_budget,
                "agentenv_task_id": info.get("task_id"),
                "turn_scores": [],
                "tool_rewards": [],
            },
        )


@register(AGENT_LOOP_QWEN3)
class AgentenvQwen3AgentLoop(AgentenvAgentLoop):
    """:class:`AgentenvAgentLoop` rendering env turns in agentenv's offline Qwen3 chat format (thinking on unless
    ``data.apply_chat_template_kwargs.enable_thinking`` is false)."""

    def chat_template(self) -> ChatTemplate:
        if self._template is None:
            from agentenv.tokens import qwen3_template

            thinking = bool(
                dict(self.apply_chat_template_kwargs or {}).get("enable_thinking", True)
            )
            self._template = qwen3_template(enable_thinking=thinking)
        return self._template
