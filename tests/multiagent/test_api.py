"""PettingZoo's own checkers on both envs: api_test, parallel_api_test and the seed tests."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from agentenv.multiagent import env as wrapped_env
from agentenv.multiagent import env_ids, make, parallel_make
from agentenv.multiagent.base import DialogueEnv

from ._helpers import rollout, with_dialogue_actions

IDS = env_ids()


# api_test advises numeric spaces, "<name>_<n>" agent names and numpy observations (not for text
# agents), and passes reset(options={"options": 1}), which the envs ignore with a warning.
pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning:pettingzoo"),
    pytest.mark.filterwarnings("ignore:reset options"),
]


@pytest.mark.parametrize("env_id", IDS)
def test_api_test_random_text(env_id: str) -> None:
    """On the env as PettingZoo's own ``env()`` returns one (inside OrderEnforcingWrapper); the
    dialogue-shaped test below runs it on the bare env."""
    env = wrapped_env(env_id)
    assert isinstance(env, OrderEnforcingWrapper) and isinstance(env.unwrapped, DialogueEnv)
    api_test(env, num_cycles=200)


@pytest.mark.parametrize("env_id", IDS)
def test_api_test_dialogue_shaped_actions(env_id: str) -> None:
    """Random actions built from <say>, tool-call and answer fragments reach every branch of both agents."""
    env = with_dialogue_actions(make(env_id))
    api_test(env, num_cycles=200)
    acted, ends = {a: 0 for a in env.possible_agents}, set()
    for episode in range(20):
        env.reset(seed=episode)
        for agent in env.agent_iter(200):
            _, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                ends.add("terminated" if terminated else "truncated")
                env.step(None)
                continue
            acted[agent] += 1
            env.step(env.action_space(agent).sample())
    assert min(acted.values()) > 0 and ends == {"terminated", "truncated"}


@pytest.mark.parametrize("env_id", IDS)
def test_parallel_api_test(env_id: str) -> None:
    parallel_api_test(parallel_make(env_id), num_cycles=200)
    par = parallel_make(env_id)
    with_dialogue_actions(par.unwrapped)
    parallel_api_test(par, num_cycles=200)


@pytest.mark.parametrize("env_id", IDS)
def test_seed_tests(env_id: str) -> None:
    seed_test(lambda: with_dialogue_actions(make(env_id)), num_cycles=50)
    parallel_seed_test(lambda: _parallel_dialogue(env_id), num_cycles=50)


def _parallel_dialogue(env_id: str):  # noqa: ANN202
    par = parallel_make(env_id)
    with_dialogue_actions(par.unwrapped)
    return par


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_dialogue(env_id: str) -> None:
    """Scripted play repeats bit for bit (observations, rewards, infos), and another seed differs."""
    env = make(env_id)

    def trace(seed: int) -> list:
        env.reset(seed=seed)
        out = []
        for agent in env.agent_iter(40):
            obs, reward, terminated, truncated, info = env.last()
            out.append((agent, str(obs), reward, terminated, truncated, info))
            if terminated or truncated:
                env.step(None)
                continue
            policy = env.default_policy(agent) if agent == env.other else _lead_script(env)
            env.step(policy(obs, info) if callable(policy) else policy.act(obs, info))
        return out

    assert trace(3) == trace(3)
    assert trace(3) != trace(4)


def _lead_script(env: DialogueEnv):  # noqa: ANN202
    return env.scripted_leads()["asking"]


def test_registry() -> None:
    assert env_ids() == ["DiagnosisDialogue-v0", "MediaConcierge-v0"]
    env = make("MediaConcierge-v0", max_turns=4)
    assert (
        env.max_turns == 4
        and env.possible_agents == ["assistant", "user"]
        and str(env) == "MediaConcierge-v0"
    )
    with pytest.raises(KeyError, match="known: DiagnosisDialogue-v0"):
        make("Nope-v0")


def test_registry_reads_the_family_records() -> None:
    """The ids are the families' DialogueSpecs; 'module:Id' imports the module first, as gym.make does."""
    from agentenv.families import dialogue_specs

    assert env_ids() == sorted(s.id for s in dialogue_specs())
    env = make("agentenv.envs.media_search.dialogue.concierge:MediaConcierge-v0", max_turns=3)
    assert (
        env.max_turns == 3
        and type(env).__module__ == "agentenv.envs.media_search.dialogue.concierge"
    )
    with pytest.raises(ModuleNotFoundError):
        make("no_such_module_here:MediaConcierge-v0")


def test_reset_options_follow_the_single_agent_rules(dx: DialogueEnv, media: DialogueEnv) -> None:
    """A task dict goes through the family's _task_from_dict, as in ToolEnv; an unknown key only warns."""
    from agentenv.engine.turns import ResetOptionWarning

    dx.reset(seed=0, options={"task": {"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"]}})
    assert dx.task.split == "custom" and "HP:0001166" in dx.observe("doctor")
    with pytest.raises(
        ValueError, match="constraint or superlative"
    ):  # a user question has no filter plan
        media.reset(seed=0, options={"task": {"question": "Which film?", "answer": "Heat"}})
    with pytest.warns(ResetOptionWarning):
        media.reset(seed=0, options={"options": 1})
    with pytest.raises(IndexError):
        media.reset(options={"index": True})


def test_reset_options_pin_the_task(dx: DialogueEnv) -> None:
    dx.reset(seed=0, options={"index": 5})
    task = dx.task
    dx.reset(seed=1, options={"task_id": task.id})
    assert dx.task is task
    with pytest.raises(IndexError):
        dx.reset(options={"index": 10**6})
    with pytest.raises(ValueError, match="at most one"):
        dx.reset(options={"index": 1, "task_id": task.id})


def test_truncation_and_dead_steps(dx: DialogueEnv) -> None:
    """Spent turns truncate both agents; each then takes one None step (any other action raises)."""
    dx.reset(seed=0)
    for _ in range(dx.max_turns):
        dx.step("not an action")
    assert all(dx.truncations.values()) and not any(dx.terminations.values())
    assert dx.infos["doctor"]["reward_components"]["invalid_actions"] == dx.max_turns
    assert "gold" in dx.infos["doctor"] and "parse_error" in dx.infos["doctor"]
    with pytest.raises(ValueError, match="only valid action is None"):
        dx.step("not None")
    dx.step(None)
    dx.step(None)
    assert dx.agents == []
    with pytest.raises(RuntimeError, match="reset"):
        dx.step("x")


def test_import_agentenv_does_not_import_multiagent() -> None:
    code = (
        "import sys, agentenv; print(any(m.startswith('agentenv.multiagent') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_rollout_helper_smoke(media: DialogueEnv) -> None:
    from agentenv.envs.media_search.dialogue.scripted_assistant import AskingAssistant

    assert rollout(media, AskingAssistant(media.vocabulary), range(2))[0]["accuracy"] == 1.0
