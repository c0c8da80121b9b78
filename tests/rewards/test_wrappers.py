"""Reward wrappers: Gymnasium's checker, episode-end changes, recorded components, no mutation."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from agentenv.engine.actions import answer, tool_call
from agentenv.families import env_specs
from agentenv.wrappers import CostShaping, FormatBonus, PredictionLimit, ToolCallCost, TurnCost

from ..core.toy_env import SquareEnv
from .guess_env import COLOURS, POLICIES, GuessEnv, mean_return, run_policy

WRAPPERS: dict[str, Callable[[gym.Env], gym.Env]] = {
    "ToolCallCost": partial(ToolCallCost, cost=0.05),
    "TurnCost": partial(TurnCost, cost=0.02),
    "FormatBonus": partial(FormatBonus, bonus=0.1),
    "PredictionLimit": partial(PredictionLimit, k=3),
    "PredictionLimit-penalty": partial(PredictionLimit, k=3, treatment="penalty", penalty=0.5),
    "CostShaping": CostShaping,
}


def stack(env: gym.Env) -> gym.Env:
    for wrap in WRAPPERS.values():
        env = wrap(env)
    return env


class Spy(gym.Wrapper):
    """Keeps the last info it passed on, to prove outer wrappers do not mutate it."""

    def step(self, action: str) -> Any:
        result = self.env.step(action)
        self.last_info = result[4]
        self.last_components = dict(result[4]["reward_components"])
        return result


# ------------------------------------------------------------------ checker
CHECKER_WARNING = "ignore:.*is different from the unwrapped version"


@pytest.mark.filterwarnings(CHECKER_WARNING)
@pytest.mark.parametrize("name", [*WRAPPERS, "all"])
@pytest.mark.parametrize("make", [SquareEnv, GuessEnv], ids=["square", "guess"])
def test_check_env_on_toy_envs(make: Callable[[], gym.Env], name: str) -> None:
    env = make()
    wrapped = stack(env) if name == "all" else WRAPPERS[name](env)
    check_env(wrapped, skip_render_check=True)


@pytest.fixture(scope="module", params=[spec.id for spec in env_specs()])
def registered(request: pytest.FixtureRequest) -> gym.Env:
    env = gym.make(request.param)
    yield env
    env.close()


@pytest.mark.filterwarnings(CHECKER_WARNING)
@pytest.mark.parametrize("name", list(WRAPPERS))
def test_check_env_on_registered_ids(registered: gym.Env, name: str) -> None:
    check_env(WRAPPERS[name](registered), skip_render_check=True, skip_close_check=True)


@pytest.mark.filterwarnings(CHECKER_WARNING)
def test_registered_stack_rebuilds_from_its_spec(registered: gym.Env) -> None:
    env = stack(registered)
    assert [w.name for w in env.spec.additional_wrappers][-len(WRAPPERS) :] == [
        "ToolCallCost",
        "TurnCost",
        "FormatBonus",
        "PredictionLimit",
        "PredictionLimit",
        "CostShaping",
    ]
    assert env.spec.additional_wrappers[-2].kwargs == {
        "k": 3,
        "treatment": "penalty",
        "penalty": 0.5,
    }
    check_env(env, skip_render_check=True)  # includes gym.make(env.spec): the stack is rebuilt
    assert "<ToolCallCost(cost=0.05)<" in repr(env)


# ------------------------------------------------------------ episode end only
def test_costs_apply_at_the_end_and_are_recorded_without_mutation() -> None:
    spy = Spy(GuessEnv())
    env = FormatBonus(TurnCost(ToolCallCost(spy, cost=0.1), cost=0.01), bonus=0.2)
    assert (
        repr(env)
        == "<FormatBonus(bonus=0.2)<TurnCost(cost=0.01)<ToolCallCost(cost=0.1)<Spy<GuessEnv instance>>>>>"
    )
    env.reset(seed=0, options={"index": 2})
    step = env.step(tool_call("lookup", slot=2))
    assert step[1] == 0.0 and step[4]["reward_components"] == {}, "mid-episode steps are untouched"
    step = env.step(tool_call("lookup", slot=2))
    _, reward, terminated, _, info = env.step(answer("blue"))
    assert terminated and reward == pytest.approx(1.0 - 0.2 - 0.03 + 0.2)
    components = info["reward_components"]
    assert components["tool_call_cost"] == pytest.approx(0.2) and components[
        "turn_cost"
    ] == pytest.approx(0.03)
    assert components["format_bonus"] == 0.2 and components["accuracy"] == 1.0
    assert spy.last_info["reward_components"] == spy.last_components, "inner dict not mutated"
    assert "tool_call_cost" not in spy.last_info["reward_components"]


def test_stacked_costs_add_up() -> None:
    env = ToolCallCost(ToolCallCost(GuessEnv(), cost=0.1), cost=0.2)
    reward, info = run_policy(env, POLICIES["oracle"], 0)
    assert reward == pytest.approx(0.7) and info["reward_components"][
        "tool_call_cost"
    ] == pytest.approx(0.3)


def test_format_bonus_needs_a_clean_episode() -> None:
    env = FormatBonus(GuessEnv(), bonus=0.5)
    env.reset(seed=0, options={"index": 0})
    env.step("not an action")
    _, reward, *_, info = env.step(answer("red"))
    assert reward == 1.0 and info["reward_components"]["format_bonus"] == 0.0


def test_truncated_episodes_are_charged() -> None:
    env = TurnCost(GuessEnv(max_turns=2), cost=0.5)
    env.reset(seed=0)
    env.step(tool_call("hint", slot=1))
    _, reward, terminated, truncated, info = env.step(tool_call("hint", slot=1))
    assert (terminated, truncated, reward) == (False, True, -1.0)


# -------------------------------------------------------------- prediction limit
LIST_ALL = POLICIES["list everything"]


@pytest.mark.parametrize(
    ("preset", "wrap", "expected"),
    [
        ("lenient", partial(PredictionLimit, k=3), 0.0),
        ("lenient", partial(PredictionLimit, k=3, treatment="penalty", penalty=0.25), 0.75),
        ("lenient", partial(PredictionLimit, k=10), 1.0),
        ("strict", partial(PredictionLimit, k=3), 0.0),
        ("strict", partial(PredictionLimit, k=3, treatment="penalty"), -1.0),
        ("efficient", partial(PredictionLimit, k=3), -0.02),
    ],
)
def test_prediction_limit_treatments(preset: str, wrap: Callable, expected: float) -> None:
    reward, info = run_policy(wrap(GuessEnv(reward=preset)), LIST_ALL, 4)
    assert reward == pytest.approx(expected)
    assert info["reward_components"]["prediction_limit_over"] == float(
        len(COLOURS) > wrap.keywords["k"]
    )


def test_prediction_limit_can_tighten_the_family_limit() -> None:
    top3 = POLICIES["honest top-3"]
    env = PredictionLimit(GuessEnv(), k=1)
    assert run_policy(env, top3, 0)[0] == 0.0, "red is guessed first, but 3 guesses > k=1"
    assert run_policy(GuessEnv(), top3, 0)[0] == 1.0


def test_prediction_limit_removes_inner_bonuses_but_never_raises_a_reward() -> None:
    env = PredictionLimit(FormatBonus(GuessEnv(reward="lenient"), bonus=0.1), k=3)
    assert run_policy(env, LIST_ALL, 0)[0] == 0.0
    env = PredictionLimit(GuessEnv(reward={"over_limit": "penalty"}), k=3)
    assert run_policy(env, LIST_ALL, 0)[0] == 0.0, "the env's penalty (1 - 1) is kept, not undone"


def test_prediction_limit_fails_loudly() -> None:
    env = PredictionLimit(SquareEnv(), k=3)
    env.reset(seed=0, options={"index": 2})
    with pytest.raises(
        KeyError,
        match="PredictionLimit needs the 'n_predictions' component, but the env reported only",
    ):
        env.step(answer("4"))
    env = PredictionLimit(SquareEnv(max_turns=1), k=3)
    env.reset(seed=0)
    *_, truncated, info = env.step("no answer")
    assert truncated and info["reward_components"]["prediction_limit_over"] == 0.0, (
        "no answer, no predictions"
    )

    class EndsOnInvalid(gym.Wrapper):  # like a single-turn env: an invalid action ends the episode
        def step(self, action: str) -> Any:
            obs, reward, _, _, info = self.env.step(action)
            return obs, reward, True, False, info

    env = PredictionLimit(EndsOnInvalid(SquareEnv(max_turns=1)), k=3)
    env.reset(seed=0)
    assert env.step("no answer")[4]["reward_components"]["prediction_limit_over"] == 0.0
    with pytest.raises(TypeError, match="needs an agentenv ToolEnv"):
        PredictionLimit(gym.Env(), k=3)
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        PredictionLimit(GuessEnv(), k=0)
    with pytest.raises(ValueError, match="treatment must be 'zero' or 'penalty'"):
        PredictionLimit(GuessEnv(), k=3, treatment="truncate")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "make",
    [
        partial(ToolCallCost, cost=-1),
        partial(TurnCost, cost=float("nan")),
        partial(FormatBonus, bonus="big"),
    ],
)
def test_invalid_amounts_name_the_parameter(make: Callable) -> None:
    with pytest.raises(ValueError, match=r"(cost|bonus) must be a finite number >= 0"):
        make(GuessEnv())


# --------------------------------------------------------- wrappers fix presets
def test_wrappers_turn_a_wrong_preset_into_a_right_one() -> None:
    def lenient_limited() -> gym.Env:
        return PredictionLimit(GuessEnv(reward="lenient"), k=3)

    def strict_costed() -> gym.Env:
        return TurnCost(ToolCallCost(GuessEnv(), cost=0.05), cost=0.02)

    assert mean_return(lenient_limited, LIST_ALL) < mean_return(
        lenient_limited, POLICIES["honest top-3"]
    )
    spam, oracle = (mean_return(strict_costed, POLICIES[p]) for p in ("every tool 8x", "oracle"))
    assert spam < oracle and oracle == pytest.approx(0.91)


# ------------------------------------------------------------------- shaping
def test_cost_shaping_pays_per_step_with_the_same_return() -> None:
    reward = {"preset": "efficient", "latency_cost": 0.001}
    plain, shaped = GuessEnv(reward=reward), CostShaping(GuessEnv(reward=reward))
    for name, policy in POLICIES.items():
        for index in (0, 7):
            assert run_policy(shaped, policy, index)[0] == pytest.approx(
                run_policy(plain, policy, index)[0]
            ), name
    shaped.reset(seed=0, options={"index": 3})
    rewards = [
        shaped.step(tool_call("lookup", slot=3))[1],
        shaped.step(tool_call("hint", slot=3))[1],
    ]
    assert rewards == pytest.approx([-(0.05 + 0.02 + 0.040), -(0.05 + 0.02 + 0.005)])
    _, last, _, _, info = shaped.step(answer("cyan"))
    assert info["reward_components"]["shaping_paid"] == pytest.approx(0.185)
    assert sum(rewards) + last == pytest.approx(1.0 - 0.10 - 0.06 - 0.045)


def test_cost_shaping_respects_the_cap_and_refuses_to_charge_twice() -> None:
    env = CostShaping(GuessEnv(reward="efficient"))
    reward, _ = run_policy(env, POLICIES["every tool 8x"], 0)
    assert reward == pytest.approx(0.5)

    class PaysEveryStep(gym.Wrapper):
        def step(self, action: str) -> Any:
            obs, _, terminated, truncated, info = self.env.step(action)
            return obs, -0.1, terminated, truncated, info

    env = CostShaping(PaysEveryStep(GuessEnv()))
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="would charge twice"):
        env.step(tool_call("hint", slot=0))


def test_prediction_limit_on_rare_disease_lenient() -> None:
    env = gym.make("RareDiseaseDiagnosis-SingleTurn-v0", reward="lenient")
    env.reset(seed=0, options={"index": 0})
    gold = env.unwrapped.task.gold["diagnosis"][0]
    others = [
        "OMIM:100070",
        "OMIM:100100",
        "OMIM:100200",
        "OMIM:100300",
    ]  # universe diseases, whatever the gold
    guesses = [d for d in others if d != gold][:3] + [gold]
    _, reward, *_, info = env.step(answer(guesses))
    assert (
        reward,
        info["reward_components"]["over_limit"],
        info["reward_components"]["hit@any"],
    ) == (1.0, 1.0, 1.0)
    limited = PredictionLimit(gym.make("RareDiseaseDiagnosis-SingleTurn-v0", reward="lenient"), k=3)
    limited.reset(seed=0, options={"index": 0})
    _, reward, *_, info = limited.step(answer(guesses))
    assert reward == 0.0 and info["reward_components"]["prediction_limit"] == -1.0
