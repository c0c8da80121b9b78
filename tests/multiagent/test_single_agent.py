"""as_single_agent: a Gymnasium env for any one agent, passing Gymnasium's checker."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from agentenv.envs.media_search.dialogue.scripted_assistant import AskingAssistant
from agentenv.envs.rare_disease.dialogue.scripted_doctor import AskingDoctor
from agentenv.multiagent import as_single_agent, make
from agentenv.multiagent.base import DialogueEnv


@pytest.mark.parametrize("env_id", ["DiagnosisDialogue-v0", "MediaConcierge-v0"])
def test_check_env_lead(env_id: str) -> None:
    env = as_single_agent(make(env_id))
    assert isinstance(env, gym.Env)
    check_env(env, skip_render_check=True)


def test_check_env_simulated_sides(dx: DialogueEnv, media: DialogueEnv) -> None:
    check_env(
        as_single_agent(dx, agent="patient", others={"doctor": AskingDoctor(dx.kb)}),
        skip_render_check=True,
    )
    check_env(
        as_single_agent(
            media, agent="user", others={"assistant": AskingAssistant(media.vocabulary)}
        ),
        skip_render_check=True,
    )


def test_callable_policy_and_rewards(dx: DialogueEnv) -> None:
    """Any callable plays the other side; the lead's reward arrives on its terminating step."""
    heard = []

    def patient(obs: str, info: dict) -> str:
        heard.append(obs)
        return "<say>I'm not sure.</say>"

    env = as_single_agent(dx, agent="doctor", others={"patient": patient})
    obs, info = env.reset(seed=2)
    assert (
        "Present phenotypes" in obs
        and info["tools"]
        and "ask_patient" not in {t["function"]["name"] for t in info["tools"]}
    )
    presented = env.task.public["phenotypes"][0]  # on record: "not sure" about it is an evasion
    obs, reward, terminated, truncated, info = env.step(f"<say>Do you have {presented}?</say>")
    assert heard == [f"Do you have {presented}?"] and obs == "I'm not sure." and reward == 0.0
    gold = env.task.gold["diagnosis"][0]
    obs, reward, terminated, truncated, info = env.step(f"<answer>{gold}</answer>")
    assert terminated and not truncated and reward == 1.0 and info["gold"]["diagnosis"][0] == gold
    assert dx.infos["patient"]["reward_components"]["evasions"] == 1.0
    with pytest.raises(RuntimeError):
        env.step("<answer>x</answer>")


def test_patient_side_is_rewarded_per_faithful_reply(dx: DialogueEnv) -> None:
    env = as_single_agent(dx, agent="patient", others={"doctor": AskingDoctor(dx.kb)})
    obs, info = env.reset(seed=1)
    assert "Your findings, in your own words" in info["messages"][0]["content"] and "?" in obs
    truthful = dx.default_policy("patient").act(obs, info)
    assert "Yes, I have" in truthful  # the doctor asks about at least one finding this patient has
    obs, reward, terminated, truncated, info = env.step(truthful)
    assert reward == 1.0 and info["judgment"]["false_claims"] == 0
    obs, info = env.reset(seed=1)
    obs, reward, *_ = env.step("<say>No.</say>")  # denies a finding the patient has
    assert reward == 0.0


def test_others_must_name_other_agents(dx: DialogueEnv) -> None:
    with pytest.raises(ValueError, match="others"):
        as_single_agent(dx, agent="doctor", others={"doctor": lambda o, i: ""})
    with pytest.raises(ValueError, match="scripted default"):
        as_single_agent(dx, agent="patient")
