"""PettingZoo's conventions: a done agent steps only with None, env() / raw_env() / parallel_env()
per dialogue module, and ``info["active_agent"]`` in every info of the Parallel version."""

from __future__ import annotations

import copy
from types import ModuleType

import pytest
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

import agentenv.multiagent as multiagent
from agentenv.envs.media_search.dialogue import concierge
from agentenv.envs.rare_disease.dialogue import doctor_patient as dialogue
from agentenv.multiagent import TurnBasedParallel, env_ids
from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.policy_helpers import act_with

MODULES = (dialogue, concierge)
DONE = "only valid action is None"


def _to_lead(env: DialogueEnv) -> None:
    """Let the scripted simulated side speak until the lead has the turn."""
    while env.agent_selection != env.lead:
        obs, *_, info = env.last()
        env.step(act_with(env.default_policy(env.agent_selection), str(obs), info))


def _state(env: DialogueEnv) -> tuple:
    return (
        list(env.agents),
        env.agent_selection,
        dict(env.terminations),
        dict(env.truncations),
        dict(env.rewards),
        dict(env._cumulative_rewards),
        copy.deepcopy(env.infos),
    )


@pytest.mark.parametrize("ended", ["terminated", "truncated"])
@pytest.mark.parametrize("wrap", [False, True], ids=["bare", "wrapped"])
def test_a_done_agent_steps_only_with_none(
    dx: DialogueEnv, media: DialogueEnv, wrap: bool, ended: str
) -> None:
    """As in PettingZoo's own envs (AECEnv._was_dead_step): any action but None for a done agent
    raises ValueError, before anything changes; the None steps then remove the agents."""
    for bare in (dx, media):
        env = OrderEnforcingWrapper(bare) if wrap else bare  # what env() returns
        env.reset(seed=0)
        if ended == "terminated":
            _to_lead(bare)
            env.step("<answer>something</answer>")
        else:
            while not any(env.truncations.values()):
                _to_lead(bare)
                env.step("not an action")
        flags = env.terminations if ended == "terminated" else env.truncations
        assert all(flags.values()), str(bare)
        before = _state(bare)
        for action in ("<say>hello</say>", "", 0):
            with pytest.raises(ValueError, match=DONE):
                env.step(action)
        assert _state(bare) == before  # nothing changed
        env.step(None)
        env.step(None)
        assert env.agents == []


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.ENV_ID)
def test_env_raw_env_and_parallel_env_per_module(
    module: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PettingZoo's names: raw_env() is the bare env, env() the same inside OrderEnforcingWrapper,
    parallel_env() its turn-based Parallel version; kwargs pass through."""
    assert module.ENV_ID in env_ids()
    raw = module.raw_env(max_turns=3)
    assert isinstance(raw, DialogueEnv) and not isinstance(raw, OrderEnforcingWrapper)
    assert raw.unwrapped is raw and raw.max_turns == 3 and str(raw) == module.ENV_ID

    # env() and parallel_env() wrap raw_env(**kwargs); it is not rebuilt here (a build takes seconds).
    seen: list[dict] = []
    monkeypatch.setattr(module, "raw_env", lambda **kwargs: seen.append(kwargs) or raw)
    wrapped = module.env(max_turns=3)
    assert (
        type(wrapped) is OrderEnforcingWrapper
        and wrapped.unwrapped is raw
        and str(wrapped) == module.ENV_ID
    )
    with pytest.raises(AttributeError, match="before reset"):
        _ = wrapped.agents
    with pytest.raises(AssertionError, match="reset"):
        wrapped.step("<say>hi</say>")

    # A scripted dialogue through the wrapper's agent_iter (which checks every agent is stepped).
    wrapped.reset(seed=1)
    leads = raw.scripted_leads()
    for agent in wrapped.agent_iter(60):
        obs, _, terminated, truncated, info = wrapped.last()
        if terminated or truncated:
            wrapped.step(None)
            continue
        policy = leads["asking"] if agent == raw.lead else raw.default_policy(agent)
        wrapped.step(act_with(policy, str(obs), info))
    assert wrapped.agents == [] and raw.infos == {}

    par = module.parallel_env(max_turns=3)
    assert isinstance(par, TurnBasedParallel) and par.unwrapped is raw
    assert seen == [{"max_turns": 3}, {"max_turns": 3}]


def test_registry_names() -> None:
    """The generic registry has PettingZoo's names too; the old ones are unchanged."""
    assert (
        multiagent.raw_env is multiagent.make
        and multiagent.parallel_env is multiagent.parallel_make
    )
    assert multiagent.env.__module__ == "agentenv.multiagent.registry"


@pytest.mark.parametrize("which", ["dx", "media"])
def test_parallel_info_names_the_active_agent(which: str, request: pytest.FixtureRequest) -> None:
    """Every info of the Parallel version (what parallel_make returns) has active_agent: the first
    speaker at reset, then the agent whose action the next step applies, None on the step that ends
    the dialogue."""
    aec: DialogueEnv = request.getfixturevalue(which)
    par = TurnBasedParallel(aec)
    observations, infos = par.reset(seed=2)
    assert set(infos) == set(aec.possible_agents)
    assert all(info["active_agent"] == aec.first for info in infos.values())
    assert all(
        "active_agent" not in info for info in aec.infos.values()
    )  # copies: the AEC infos stay as they were
    policies = {aec.lead: aec.scripted_leads()["asking"], aec.other: aec.default_policy(aec.other)}
    steps = 0
    while par.agents:
        active = next(iter(infos.values()))["active_agent"]
        assert active in par.agents
        actions = {
            a: act_with(policies[a], str(observations[a]), infos[a]) if a == active else "ignored"
            for a in par.agents
        }
        observations, _, terminations, truncations, infos = par.step(actions)
        steps += 1
        expected = aec.agent_selection if aec.agents else None
        assert {info["active_agent"] for info in infos.values()} == {expected}
        assert set(infos) == set(terminations) == set(truncations)
    assert steps > 2 and expected is None and all(terminations.values())
    assert par.step({}) == ({}, {}, {}, {}, {})
