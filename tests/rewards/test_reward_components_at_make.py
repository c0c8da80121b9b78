"""A reward that reads a component the env never reports is refused when the env is made, not at the first episode's end."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.cli.main import main
from agentenv.engine.actions import answer
from agentenv.engine.turns import BEHAVIOUR_COMPONENTS

DECLARED = ("MediaSearch-v0", "MediaSearch-SingleTurn-v0", "RareDiseaseDiagnosis-v0")


@pytest.mark.parametrize("env_id", DECLARED)
def test_the_declared_components_are_exactly_those_reported(env_id: str) -> None:
    env = gym.make(env_id, split="test")
    env.reset(seed=0)
    *_, info = env.step(answer("no idea"))
    declared = env.unwrapped._graded_components() | BEHAVIOUR_COMPONENTS
    assert set(info["reward_components"]) == declared


@pytest.mark.parametrize(
    ("env_id", "reward", "missing"),
    [
        ("RareDiseaseDiagnosis-v0", "first-call-credit", "['first_call']"),
        ("MediaSearch-v0", {"weights": {"accuracy": 1.0, "hit@3": 0.5}}, "['hit@3']"),
        ("MediaSearch-v0", {"preset": "strict", "weights": {"acuracy": 1.0}}, "['acuracy']"),
    ],
)
def test_a_reward_for_another_env_fails_at_make(env_id: str, reward: object, missing: str) -> None:
    with pytest.raises(ValueError, match="does not report") as refused:
        gym.make(env_id, reward=reward)
    assert f"reads {missing}" in str(refused.value)


def test_every_preset_that_fits_is_accepted() -> None:
    for reward in ("strict", "lenient", "efficient"):
        gym.make("RareDiseaseDiagnosis-v0", reward=reward)
    for reward in ("strict", "lenient", "efficient", "first-call-credit"):
        gym.make("MediaSearch-v0", reward=reward)
    gym.make(
        "MediaSearch-v0", reward={"weights": {"accuracy": 1.0, "hit@3": 0.0}}
    )  # weight 0: log only


def test_the_cli_says_it_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "eval",
            "RareDiseaseDiagnosis-v0",
            "--agent",
            "random",
            "--episodes",
            "1",
            "--reward",
            "first-call-credit",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and "does not report" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
