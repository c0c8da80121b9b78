"""The dialogue lead and the single-agent env take an action through one function (turns.take_action).

So a call reads, runs and fails the same way in both: the same tool output, the same
reason for a rejected call. The one documented difference, passed to that function, is
where a rejected call is answered: in ``tool`` messages single-agent (as a chat API
answers any parsed call), in a user turn in a dialogue.
"""

from __future__ import annotations

import gymnasium as gym

from agentenv.engine.actions import tool_call
from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.policy_helpers import act_with

SEARCH = tool_call("search", query="Christopher Nolan", k=2)
UNKNOWN = tool_call("no_such_tool", query="x")
BAD_ARGS = tool_call("search", query="")


def _lead_step(env: DialogueEnv, action: str) -> tuple[str, dict]:
    env.reset(seed=0, options={"index": 0})
    if env.agent_selection != env.lead:  # the simulated side opens: its scripted first message
        other = env.agent_selection
        env.step(act_with(env.default_policy(other), str(env.observe(other)), env.infos[other]))
    assert env.agent_selection == env.lead
    env.step(action)
    return str(env.observe(env.lead)), env.infos[env.lead]


def test_a_call_runs_and_fails_alike_in_the_dialogue_and_the_single_agent_env(
    media: DialogueEnv,
) -> None:
    single = gym.make("MediaSearch-v0", split="test").unwrapped
    single.reset(seed=0, options={"index": 0})
    obs, *_, info = single.step(SEARCH)
    lead_obs, lead_info = _lead_step(media, SEARCH)
    assert "parse_error" not in info and "parse_error" not in lead_info
    assert lead_obs == obs and '"results"' in obs
    assert lead_info["messages"][-1]["role"] == info["messages"][-1]["role"] == "tool"

    for action, reason_starts in (
        (UNKNOWN, "unknown tool 'no_such_tool'"),
        (BAD_ARGS, "invalid arguments for search"),
    ):
        single.reset(seed=0, options={"index": 0})
        obs, *_, info = single.step(action)
        lead_obs, lead_info = _lead_step(media, action)
        assert info["parse_error"] == lead_info["parse_error"] and info["parse_error"].startswith(
            reason_starts
        )
        # single-agent: the call is answered in a tool message; the dialogue: in a user turn
        assert [m["role"] for m in info["messages"][-2:]] == ["assistant", "tool"]
        assert [m["role"] for m in lead_info["messages"][-2:]] == ["assistant", "user"]
        assert lead_obs == lead_info["messages"][-1]["content"] and info["parse_error"] in lead_obs
        assert info["turn"] == lead_info["turn"] == 1
