"""``TokenRollout``: one episode played through :class:`~agentenv.tokens.TokenEnv`, as a trainer consumes it.

Why one type: a served model's token-exact rollout
(:func:`agentenv.baselines.llm_tokens.llm_token_rollout`) and a Ray actor's
(:class:`agentenv.integrations.ray.RolloutPool`) carry the same trajectory,
the ids, loss mask and logprobs a trainer scores, so they are one record with
one meaning per field. Each producer fills the extra fields it knows: the
served model's prompt bookkeeping (``prompt_lengths``, ``prompt_mismatch_turns``,
``info``), the pool's run plan (``episode``, ``seed``, ``task_id``,
``task_index``, ``group``, ``failure``).

Example:
    >>> r = TokenRollout([1, 2, 3, 4], [0, 1, 0, 1], [0.0, -0.5, 0.0, None], [0.0, 1.0], True, False,
    ...                  prompt_lengths=[1, 3])
    >>> r.policy_ids, r.prompts, r.prompt_length, r.episode_return
    ([2, 4], [[1], [1, 2, 3]], 1, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TokenRollout:
    """One episode through ``TokenEnv``: the ids to train on and what the env made of them."""

    input_ids: list[int]
    """Prompt, sampled and env ids, interleaved exactly as the episode ran."""
    loss_mask: list[int]
    """1 on sampled ids, 0 on env ids."""
    logprobs: list[float | None]
    """The policy's (or server's) logprob of each sampled id (None where it gave none), 0.0 on env ids."""
    rewards: list[float]
    """Reward of each step."""
    terminated: bool
    truncated: bool
    reward_components: dict[str, float] = field(default_factory=dict)
    """The last step's ``info["reward_components"]``."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The last step's ``info["messages"]``: the whole conversation as text."""
    prompt_lengths: list[int] = field(default_factory=list)
    """Length of the trajectory before each turn: ``input_ids[:n]`` was (completions) or should have
    been (chat) that turn's prompt. Filled by ``llm_token_rollout``."""
    prompt_mismatch_turns: list[int] = field(default_factory=list)
    """Turns (1-based) where the prompt the server reports it conditioned on (``prompt_token_ids``)
    differed from the trajectory so far: the model saw ids other than the ones trained on. Empty when
    the server sends no prompt ids; always empty on the completions path with an honest server."""
    info: dict[str, Any] = field(default_factory=dict)
    """The last step's whole info (``llm_token_rollout``); empty from the Ray pool, which sends only
    ``reward_components`` and ``messages`` back from its actors."""
    episode: int = 0
    """The pool's episode number (Ray pool)."""
    seed: int = 0
    """The seed the episode reset with (Ray pool)."""
    task_id: str = ""
    task_index: int = 0
    group: int = 0
    """``episode // group_size``: the rollouts of one group share their task (Ray pool)."""
    failure: str | None = None
    """Why the policy gave up (an endpoint down after its retries); such a rollout ends early (Ray pool)."""

    @property
    def policy_ids(self) -> list[int]:
        """The sampled ids, all turns together."""
        return [i for i, m in zip(self.input_ids, self.loss_mask, strict=True) if m]

    @property
    def prompts(self) -> list[list[int]]:
        """The prompt of each turn: the trajectory before it (a prefix of ``input_ids``)."""
        return [self.input_ids[:n] for n in self.prompt_lengths]

    @property
    def prompt_length(self) -> int:
        """Ids before the first sampled one (the prompt)."""
        return self.loss_mask.index(1) if 1 in self.loss_mask else len(self.loss_mask)

    @property
    def episode_return(self) -> float:
        """The sum of the step rewards."""
        return float(sum(self.rewards))
