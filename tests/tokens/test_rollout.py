"""One rollout type: the served model's token-exact rollouts and the Ray pool's are ``agentenv.tokens.TokenRollout``.

Why: a trainer that consumes one must consume the other with the same code
(``trl_fields``), so the fields and their meanings cannot drift apart.
"""

from __future__ import annotations

import dataclasses

import pytest

from agentenv.tokens import TokenRollout


def test_both_producers_return_the_one_type() -> None:
    from agentenv.baselines import llm_tokens

    rollouts = pytest.importorskip("agentenv.integrations.ray.rollouts")
    assert llm_tokens.TokenRollout is TokenRollout
    assert rollouts.Rollout is TokenRollout


def test_a_served_model_rollout_feeds_the_pools_trl_fields() -> None:
    rollouts = pytest.importorskip("agentenv.integrations.ray.rollouts")
    r = TokenRollout(
        [1, 2, 3, 4],
        [0, 1, 0, 1],
        [0.0, -0.5, 0.0, None],
        [0.0, 1.0],
        True,
        False,
        prompt_lengths=[1, 3],
    )
    assert rollouts.trl_fields([r]) == {
        "prompt_ids": [[1]],
        "completion_ids": [[2, 3, 4]],
        "logprobs": [[-0.5, 0.0, 0.0]],
        "env_mask": [[1, 0, 1]],
        "env_return": [1.0],
    }
    assert r.prompts == [[1], [1, 2, 3]] and r.policy_ids == [2, 4]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.rewards = []  # type: ignore[misc]
