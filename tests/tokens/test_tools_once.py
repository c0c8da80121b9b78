"""Each tool is described once in what the policy reads, whichever way it is rendered.

The package's LLM paths (TokenEnv, the ``llm`` agent's native mode, SFT export, TRL)
render ``info["messages"]`` with ``tools=info["tools"]``; the default system prompt
then only names the tools. ``tools_in_prompt=True`` writes them into the system
prompt as text, for plain-text agents that get no schemas.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import agentenv  # noqa: F401  (registers the ids)
from agentenv import multiagent
from agentenv.tokens.qwen3_chat import render_qwen3

TOOL_IDS = (
    "MediaSearch-v0",
    "RareDiseaseDiagnosis-v0",
    "DiagnosisDialogue-v0",
    "MediaConcierge-v0",
)


def _first_turn(env_id: str, **kwargs: Any) -> dict[str, Any]:
    if env_id in multiagent.env_ids():
        env = multiagent.make(env_id, split="validation", **kwargs)
        env.reset(seed=0)
        return env.infos[env.lead]
    return gym.make(env_id, split="validation", **kwargs).reset(seed=0)[1]


@pytest.mark.parametrize("env_id", TOOL_IDS)
def test_template_rendering_describes_each_tool_once(env_id: str) -> None:
    info = _first_turn(env_id)
    system = info["messages"][0]["content"]
    text = render_qwen3(info["messages"], info["tools"], add_generation_prompt=True)
    for schema in info["tools"]:
        function = schema["function"]
        assert function["name"] in system  # the prompt still names every tool
        assert text.count(function["description"]) == 1, function["name"]
        assert f"{function['name']}(" not in system  # no text signature next to the schemas


@pytest.mark.parametrize("env_id", TOOL_IDS)
def test_tools_in_prompt_describes_them_as_text(env_id: str) -> None:
    info = _first_turn(env_id, tools_in_prompt=True)
    system = info["messages"][0]["content"]
    for schema in info["tools"]:
        function = schema["function"]
        assert f"- {function['name']}(" in system and function["description"] in system
    # A plain-text agent renders without schemas and still reads each description once.
    text = render_qwen3(info["messages"], None, add_generation_prompt=True)
    assert all(text.count(s["function"]["description"]) == 1 for s in info["tools"])
