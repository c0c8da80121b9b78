"""Token-exact rollouts of a served model: the server conditions on the trajectory's own ids.

:func:`llm_token_rollout` plays one episode through
:class:`agentenv.tokens.TokenEnv`. Each turn it sends ``info["input_ids"]``
(the trajectory so far: prompt, sampled ids, env ids) as the ``prompt`` of
``/v1/completions`` and appends the ids the server sampled to the trajectory
verbatim. Nothing is re-rendered, so what the model was conditioned on and
what the trainer scores are the same ids.

Why not the chat endpoint: it receives messages and renders them with the
server's chat template, and that rendering differs from the trajectory's ids
in common cases (all four are tested in ``tests/baselines/test_llm_exact.py``):

* ``tool_format=hermes``: no ``tools`` are sent, so the server's prompt has no
  ``<tools>`` block while TokenEnv's has;
* after an invalid turn (the env's error is a user message) Qwen3's template
  drops the ``<think>`` of earlier assistant turns;
* a tool call sampled as compact JSON is re-serialised by the env and by the
  server (``json.loads`` then ``tojson``), with other separators;
* no-think mode: the server renders Qwen3's empty ``<think>`` block only when
  it is sent ``chat_template_kwargs``.

``endpoint="chat"`` keeps that path for comparison (and for servers without a
completions endpoint); such rollouts list the turns whose server-side prompt
differed in ``prompt_mismatch_turns``. The rollout is a
:class:`agentenv.tokens.TokenRollout`, the type the Ray pool returns too.

Example:
    >>> rollout = TokenRollout([1, 2, 3], [0, 1, 1], [0.0, -0.5, -0.1], [1.0], True, False, prompt_lengths=[1])
    >>> rollout.policy_ids, rollout.prompts
    ([2, 3], [[1]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from agentenv.tokens.rollout import TokenRollout

if TYPE_CHECKING:  # pragma: no cover - typing only
    import gymnasium as gym

    from agentenv.tokens import ChatTemplate


class SampledIds(Protocol):
    """What one completions call sampled (:class:`agentenv.baselines.llm_agent.CompletionIds`)."""

    @property
    def token_ids(self) -> list[int]: ...
    @property
    def logprobs(self) -> list[float] | None: ...
    @property
    def prompt_ids(self) -> list[int] | None: ...


class TokenSamplingAgent(Protocol):
    """What a rollout asks of its agent (:class:`agentenv.baselines.llm_agent.LLMAgent` is one).

    A protocol rather than the class, so that this module does not import
    :mod:`agentenv.baselines.llm_agent`, which re-exports it.
    """

    @property
    def url(self) -> str: ...
    @property
    def last_token_ids(self) -> list[int] | None: ...
    @property
    def last_logprobs(self) -> list[float] | None: ...
    @property
    def last_prompt_ids(self) -> list[int] | None: ...
    def reset(
        self, obs: str, info: Mapping[str, Any], *, rng: np.random.Generator | None = None
    ) -> None: ...
    def complete_ids(
        self, prompt_ids: Sequence[int], stop_ids: Sequence[int] = ()
    ) -> SampledIds: ...
    def act(self, obs: str, info: Mapping[str, Any]) -> str: ...


def llm_token_rollout(
    env: gym.Env[str, str],
    template: ChatTemplate,
    agent: TokenSamplingAgent,
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    rng: np.random.Generator | None = None,
    endpoint: Literal["completions", "chat"] = "completions",
) -> TokenRollout:
    """Play one episode whose actions are the ids the server sampled, fed to ``TokenEnv`` as they are.

    ``template`` must be the served model's chat template (it renders the
    prompt and the env turns, and its ``eos_ids`` are sent as
    ``stop_token_ids``). With ``endpoint="completions"`` (the default) the
    server is asked to continue the trajectory's own ids: token-exact. With
    ``endpoint="chat"`` the agent sends the chat (its ``return_token_ids``
    must be on) and the server renders it: not token-exact, see the module
    docstring; the turns where the server's rendering differed are listed in
    ``prompt_mismatch_turns``.

    Raises:
        AgentFailure: the endpoint failed (after the agent's retries) or sent no token ids.
        ValueError: an unknown ``endpoint``.
    """
    from agentenv.evaluation.agents import AgentFailure
    from agentenv.tokens import TokenEnv

    if endpoint not in ("completions", "chat"):
        raise ValueError(f"endpoint must be 'completions' or 'chat', got {endpoint!r}")
    token_env = TokenEnv(env, template)
    _, info = token_env.reset(seed=seed, options=options)
    agent.reset("", info, rng=rng if rng is not None else np.random.default_rng(seed))
    stop_ids = list(template.eos_ids)
    rewards: list[float] = []
    mismatches: list[int] = []
    lengths: list[int] = []
    terminated = truncated = False
    turn = 0
    while not (terminated or truncated):
        turn += 1
        running = list(info["input_ids"])
        lengths.append(len(running))
        if endpoint == "completions":
            sampled = agent.complete_ids(running, stop_ids)
            ids, logprobs, server_prompt = sampled.token_ids, sampled.logprobs, sampled.prompt_ids
        else:
            agent.act("", info)
            ids, logprobs, server_prompt = (
                agent.last_token_ids,
                agent.last_logprobs,
                agent.last_prompt_ids,
            )
            if ids is None:
                raise AgentFailure(
                    f"{agent.url} sent no choices[0].token_ids: serve with vLLM >= 0.10.2 and set return_token_ids=true"
                )
        if server_prompt is not None and server_prompt != running:
            mismatches.append(turn)
        action: Any = {"token_ids": ids, "logprobs": logprobs} if logprobs else ids
        _, reward, terminated, truncated, info = token_env.step(action)
        rewards.append(float(reward))
    return TokenRollout(
        input_ids=list(info["input_ids"]),
        loss_mask=list(info["loss_mask"]),
        logprobs=list(info["logprobs"]),
        rewards=rewards,
        terminated=bool(terminated),
        truncated=bool(truncated),
        prompt_mismatch_turns=mismatches,
        prompt_lengths=lengths,
        info=info,
        reward_components=dict(info.get("reward_components") or {}),
        messages=list(info.get("messages") or ()),
    )
