"""The TRL adapter driven directly, the way TRL 1.16 calls it (no TRL needed)."""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.baselines.oracle import OracleAgent
from agentenv.integrations.trl import ANSWER_NOTE, BUDGET_SPENT, EPISODE_OVER, environment_factory
from agentenv.parsing import Answer, parse_action

ENV_ID = "MediaSearch-v0"


def trl_tools(instance: Any) -> dict[str, Any]:
    """What TRL exposes as tools: public functions of the class except reset and get_reward."""
    return {
        name: getattr(instance, name)
        for name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


@pytest.fixture(scope="module")
def plain_env() -> gym.Env:
    return gym.make(ENV_ID, split="train", reward="efficient")


def plain_oracle(env: gym.Env, index: int) -> tuple[list[Any], float, dict[str, float]]:
    """The oracle's parsed actions on a plain env, with the env's reward and components."""
    obs, info = env.reset(options={"index": index})
    agent = OracleAgent()
    agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(0))
    actions, done = [], False
    while not done:
        action = agent.act(obs, info)
        actions.append(parse_action(action))
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return actions, float(reward), info["reward_components"]


@pytest.fixture(scope="module")
def factory() -> type:
    return environment_factory(ENV_ID, split="train", reward="efficient", seed=7)


@pytest.fixture(scope="module")
def instance(factory: type) -> Any:
    """One adapter for the module: TRL too reuses instances, resetting them per rollout."""
    return factory()


def test_the_class_exposes_the_env_tools_and_answer(factory: type, instance: Any) -> None:
    assert sorted(trl_tools(instance)) == ["answer", "filter_titles", "find_person", "get_title", "search"]
    assert factory.__name__ == "MediaSearch_v0"


def test_oracle_calls_through_the_adapter_earn_the_plain_env_reward(instance: Any, plain_env: gym.Env) -> None:
    tools = trl_tools(instance)
    for index in (0, 1, 2, 3, 5, 8, 13, 21):
        actions, reward, components = plain_oracle(plain_env, index)
        task_id = plain_env.unwrapped.tasks[index].id
        assert instance.reset(prompt=[], task_id=task_id, index=None, split="train") is None
        for action in actions:
            if isinstance(action, Answer):
                assert "episode is over" in tools["answer"](answer=action.text)
            else:
                for call in action.calls:
                    assert tools[call.name](**call.arguments)  # the tool output, as TRL would show it
        assert instance.done and instance.get_reward() == pytest.approx(reward)
        assert instance.info["reward_components"] == components
        assert 0 < reward < 1  # the efficient preset charges the calls: a non-trivial value to match


def test_a_rollout_that_stops_without_answering_is_one_invalid_turn_then_truncated(instance: Any) -> None:
    instance.reset(index=4)
    trl_tools(instance)["search"](query="Inception")
    reward = instance.get_reward()
    components = instance.info["reward_components"]
    assert components["accuracy"] == 0.0 and components["format"] == 0.0
    assert components["turns"] == 2.0 and components["invalid_actions"] == 1.0 and components["tool_calls"] == 1.0
    assert reward == pytest.approx(-(0.05 * 1 + 0.02 * 2))  # efficient: the env's own costs, nothing made up
    assert instance._env.unwrapped.max_turns == 8  # the budget is restored for the next episode


def test_calls_after_the_end_are_not_run_and_the_budget_is_announced() -> None:
    instance = environment_factory(ENV_ID, split="train", max_turns=2)()
    instance.reset(index=0)
    search = trl_tools(instance)["search"]
    assert not search(query="Alien").endswith(BUDGET_SPENT)
    assert search(query="Aliens").endswith(BUDGET_SPENT)
    assert instance.done and search(query="Alien 3") == EPISODE_OVER
    assert instance.answer(answer="Alien") == EPISODE_OVER
    assert instance.info["turn"] == 2 and instance.get_reward() == 0.0


def test_reset_pins_by_task_id_then_index_and_checks_the_split(instance: Any) -> None:
    tasks = instance._env.unwrapped.tasks
    instance.reset(task_id=tasks[3].id, index=9)
    assert instance.info["task_id"] == tasks[3].id
    instance.reset(index=9)
    assert instance.info["task_id"] == tasks[9].id and instance.reward is None and not instance.done
    with pytest.raises(ValueError, match="split 'test'"):
        instance.reset(index=1, split="test")


def test_reset_without_a_task_draws_one_and_returns_the_prompt_text(factory: type) -> None:
    first, second = factory(), factory()
    text = first.reset(prompt=[{"role": "user", "content": ""}])
    assert ANSWER_NOTE in text and first.info["messages"][1]["content"] in text
    second.reset(prompt=[{"role": "user", "content": ""}])
    assert first.info["task_id"] == second.info["task_id"]  # the same seed gives the same draw


def test_dataset_rows_pin_the_tasks_of_the_split() -> None:
    pytest.importorskip("datasets")
    from agentenv.integrations.trl import dataset

    rows = dataset(ENV_ID, "validation", n=3)
    assert rows.column_names == ["prompt", "task_id", "index", "split"]
    tasks = gym.make(ENV_ID, split="validation").unwrapped.tasks
    for i, row in enumerate(rows):
        assert row["index"] == i and row["task_id"] == tasks[i].id and row["split"] == "validation"
        system, user = row["prompt"]
        assert system["role"] == "system" and system["content"].endswith(ANSWER_NOTE)
        assert user == {"role": "user", "content": tasks[i].prompt}
