"""The wire types of an agentenv env under OpenEnv: one text action, one text observation, the state.

OpenEnv envs declare pydantic subclasses of its ``Action``, ``Observation`` and
``State``; its server validates each step against the action class and
serialises the observation's fields (``reward`` and ``done`` travel beside
them). Needs the ``openenv`` extra (``openenv-core``).
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class TextAction(Action):
    """What the agent wrote this turn, as an LLM emits it (tool calls or a final answer)."""

    text: str = Field(
        description="the agent's message: <tool_call>{...}</tool_call> blocks, or <answer>...</answer>"
    )


class TextObservation(Observation):
    """What the agent reads next, with what a trainer needs beside it.

    ``reward`` and ``done`` are OpenEnv's own fields. At reset ``tools`` holds
    the env's OpenAI function schemas and ``messages`` the opening chat (system
    and user), so that ``tokenizer.apply_chat_template(messages, tools=tools)``
    renders the prompt; on the step that ends the episode ``messages`` holds the
    whole transcript and ``reward_components`` the graded components.
    """

    text: str = Field(
        default="", description="the prompt on reset, then tool output or an error message"
    )
    turn: int = Field(default=0, description="turns taken in this episode")
    valid: bool = Field(default=True, description="False when the env could not parse the action")
    parse_error: str | None = Field(default=None, description="why the action could not be parsed")
    truncated: bool = Field(
        default=False, description="the episode ended without an answer (turn budget)"
    )
    task_id: str | None = Field(default=None, description="the task's content-hash id")
    tools: list[dict[str, Any]] = Field(
        default_factory=list, description="OpenAI function schemas (reset only)"
    )
    messages: list[dict[str, Any]] = Field(
        default_factory=list, description="the chat so far (reset, and the final step)"
    )
    reward_components: dict[str, float] = Field(
        default_factory=dict, description="graded components (final step)"
    )


class EpisodeState(State):
    """OpenEnv's state (``episode_id``, ``step_count``) plus the episode's task, split and running reward."""

    task_id: str | None = None
    split: str | None = None
    total_reward: float = 0.0
    done: bool = False
