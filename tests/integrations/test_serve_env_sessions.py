"""serve-env's trajectories: created on first sight, ended on finish, idle or budget, capped, envs reused."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.actions import answer, tool_call
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.sessions import (
    EnvPool,
    StartError,
    Trajectories,
    start_from_fields,
)

SEARCH = tool_call("search", query="heat")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FailsOn(gym.Wrapper):
    """An env with a bug: it raises on one action (agent text never makes a real env raise)."""

    def step(self, action: str):  # noqa: ANN201 - gymnasium's step tuple
        if action == "boom":
            raise RuntimeError("a bug in a tool")
        return self.env.step(action)


@pytest.fixture()
def made() -> list[gym.Env]:
    return []


@pytest.fixture()
def trajectories(made: list[gym.Env]) -> Trajectories:
    def make(split: str) -> gym.Env:
        env = FailsOn(gym.make("MediaSearch-v0", split=split))
        made.append(env)
        return env

    limits = EnvServerLimits(
        max_live_envs=2, trajectory_idle_s=10.0, max_turns=3, remembered_ended=2
    )
    return Trajectories(EnvPool(make, max_idle=2), limits, default_split="test", clock=Clock())


def test_a_trajectory_plays_the_episode_eval_plays(trajectories: Trajectories) -> None:
    env = gym.make("MediaSearch-v0", split="test")
    prompt, _ = env.reset(seed=3, options={"index": 5})
    served_prompt, _ = trajectories.start("a", start_from_fields({"seed": 3, "index": 5}))
    assert served_prompt == prompt
    for action in (SEARCH, "not an action", answer("Heat")):
        expected = env.step(action)
        got = trajectories.step("a", action)
        assert (got.observation, got.reward, got.terminated, got.truncated) == expected[:4]
        assert got.valid == ("parse_error" not in expected[4])
    assert "a" not in trajectories.live and trajectories.ended["a"].startswith("it terminated")


def test_envs_are_reused_and_the_cap_counts_live_trajectories(
    trajectories: Trajectories, made: list
) -> None:
    for tid in ("a", "b"):
        trajectories.start(tid, start_from_fields({"seed": 0}))
    assert not trajectories.room_for(1)  # max_live_envs=2
    assert trajectories.finish("a") and not trajectories.finish("a")
    assert trajectories.room_for(1)
    trajectories.reserved = 1  # a request has promised the free slot to a trajectory it is starting
    assert not trajectories.room_for(1)
    trajectories.reserved = 0
    trajectories.start("c", start_from_fields({"seed": 1}))
    assert len(made) == 2  # c took a's env back from the pool
    assert trajectories.stats.finished == 1 and trajectories.stats.started == 3


def test_idle_trajectories_are_evicted_and_their_ids_remembered(trajectories: Trajectories) -> None:
    trajectories.start("old", start_from_fields({}))
    trajectories.clock.now = 5.0
    trajectories.start("new", start_from_fields({}))
    trajectories.clock.now = 12.0  # old idle 12 s > 10 s, new 7 s
    assert trajectories.sweep() == 1
    assert list(trajectories.live) == ["new"] and "idle" in trajectories.ended["old"]
    trajectories.step("new", SEARCH)  # a step keeps it alive
    trajectories.clock.now = 20.0
    assert trajectories.sweep() == 0
    for tid in ("x", "y"):  # remembered_ended=2: the oldest ended id is forgotten
        trajectories.end(tid, "test")
    assert list(trajectories.ended) == ["x", "y"]


def test_the_turn_budget_and_the_last_step_truncate(trajectories: Trajectories) -> None:
    trajectories.start("budget", start_from_fields({}))
    outcomes = [
        trajectories.step("budget", SEARCH) for _ in range(3)
    ]  # max_turns=3 (the env allows 8)
    assert [o.truncated for o in outcomes] == [False, False, True] and outcomes[-1].turns == 3
    trajectories.start("last", start_from_fields({}))
    outcome = trajectories.step("last", SEARCH, last_step=True)
    assert outcome.truncated and not outcome.terminated and "last" not in trajectories.live


def test_an_env_that_raises_ends_only_its_trajectory(
    trajectories: Trajectories, made: list
) -> None:
    trajectories.start("bug", start_from_fields({}))
    outcome = trajectories.step("bug", "boom")
    assert (
        outcome.done
        and not outcome.valid
        and "RuntimeError: a bug in a tool" in outcome.observation
    )
    assert trajectories.stats.step_errors == 1
    trajectories.start("next", start_from_fields({}))
    assert len(made) == 2  # the failed env was closed, not put back


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"seed": -1}, "'seed' must be a non-negative integer"),
        ({"seed": True}, "'seed' must be a non-negative integer"),
        ({"index": 1, "task_id": "t"}, "not both"),
        ({"index": "0"}, "'index' must be a non-negative integer"),
        ({"task_id": ""}, "'task_id' must be a task id string"),
        ({"split": "../etc"}, "'split' must be a split name"),
    ],
)
def test_bad_start_fields_name_the_field(fields: dict, message: str) -> None:
    with pytest.raises(StartError, match=message):
        start_from_fields(fields)


def test_a_start_the_env_refuses_leaves_nothing_live(trajectories: Trajectories) -> None:
    with pytest.raises(StartError, match="'split' 'nosuch' is not a split"):
        trajectories.start("a", start_from_fields({"split": "nosuch"}))
    with pytest.raises(StartError, match="cannot start an episode"):
        trajectories.start("b", start_from_fields({"index": 10**9}))
    assert not trajectories.live


@pytest.mark.parametrize("refused", [{"index": 10**9}, {"task_id": "no-such-task"}])
def test_a_refused_first_start_leaves_the_pooled_env_playable(
    trajectories: Trajectories, made: list[gym.Env], refused: dict
) -> None:
    """The env a refused start returned to the pool plays the next client's episode.

    Gymnasium's passive env checker (on by default for registered ids) broke this: it marked its
    first reset checked before the reset raised, and the env's first step after the next good reset
    raised TypeError, so one bad start ended another client's episode.
    """
    with pytest.raises(StartError, match="cannot start an episode"):
        trajectories.start("bad", start_from_fields(refused))
    trajectories.start("good", start_from_fields({"index": 0}))
    assert len(made) == 1  # the same env, taken back from the pool
    task = made[0].unwrapped.task
    outcome = trajectories.step("good", answer(task.gold["answer"]))
    assert outcome.done and outcome.reward == 1.0, outcome.observation


def test_a_refused_first_reset_leaves_a_made_env_playable() -> None:
    """The same through gym.make alone, as a trainer calling reset itself meets it."""
    env = gym.make("MediaSearch-v0", split="test")
    with pytest.raises(IndexError):
        env.reset(options={"index": 10**9})
    env.reset(options={"index": 0})
    _, reward, terminated, _, _ = env.step(answer(env.unwrapped.task.gold["answer"]))
    assert terminated and reward == 1.0


ROW = {
    "env_id": "MediaSearch-v0",
    "split": "test",
    "task_index": 3,
    "task_id": "",
    "seed": 10,
    "episode": 0,
    "env_kwargs": "{}",
}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("env_kwargs", "[]", "'env_kwargs' must be a JSON object"),
        ("env_kwargs", "null", "'env_kwargs' must be a JSON object"),
        ("env_kwargs", "1", "'env_kwargs' must be a JSON object"),
        ("env_kwargs", "{bad", "'env_kwargs' is not valid JSON"),
        ("env_kwargs", 7, "'env_kwargs' must be a JSON object"),
        ("split", 5, "'split' must be a split name"),
        ("split", "", "'split' must be a split name"),
        ("env_id", 5, "'env_id' must be an env id"),
        ("task_id", [], "'task_id' must be a task id"),
        ("episode", -1, "'episode' must be a non-negative integer"),
        ("episode", 1.0, "'episode' must be a non-negative integer"),
        ("episode", True, "'episode' must be a non-negative integer"),
        ("episode", "x", "'episode' must be a non-negative integer"),
    ],
)
def test_a_prepare_verl_row_field_of_the_wrong_shape_is_refused_by_name(
    field: str, value: object, message: str
) -> None:
    """Row fields are read by their grammar, not coerced: `str(5)` is no split, `"[]"` no kwargs."""
    with pytest.raises(StartError, match=message):
        start_from_fields({**ROW, field: value})


def test_a_row_read_back_from_a_columnar_file_keeps_its_numpy_integers() -> None:
    """verl reads rows back from parquet: numpy integers are integers to EpisodeSpec."""
    np = pytest.importorskip("numpy")
    from agentenv.integrations.row_episodes import EpisodeSpec

    spec = EpisodeSpec.from_fields({**ROW, "task_index": np.int64(3), "seed": np.int32(10)})
    assert (spec.task_index, spec.seed) == (3, 10) and type(spec.seed) is int
