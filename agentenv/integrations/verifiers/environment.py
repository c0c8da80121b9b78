"""The verifiers taskset and env behind :func:`agentenv.integrations.verifiers.load_environment`.

Why the env plays the user: agentenv's envs parse the model's text themselves (tool calls in
``<tool_call>`` blocks, the answer in ``<answer>``), so the model's reply is handed over unchanged
and graded by the env's own grammar, as in ``agentenv eval``. The tool schemas are appended to the
system prompt the model sees (the env's system prompt says they come with it); the env's transcript,
kept in the trace's ``info``, holds the env's own messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from agentenv.integrations.row_episodes import (
    SHARED_POOL,
    EpisodeSpec,
    episode_specs,
    first_messages,
)
from agentenv.integrations.verifiers.taskset_id import TASKSET_ID

__all__ = ["AgentenvEnv", "AgentenvTaskset"]


class AgentenvTasksetConfig(vf.TasksetConfig):
    env_id: str = "MediaSearch-v0"
    """The agentenv id to play."""
    split: str = "test"
    episodes: int | None = None
    """Episodes (``None``: one pass over the split's or task file's tasks)."""
    seed: int = 0
    """``agentenv eval --seed``: episode ``i`` is its episode ``i``."""
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    """``gym.make`` keyword arguments (``tasks`` for a task file, ``reward``, ...)."""


class AgentenvData(vf.TaskData):
    info: dict
    """The episode (env id, split, task index and id, reset seed, env kwargs), as row_episodes writes it."""


class AgentenvTask(vf.Task[AgentenvData, vf.State, vf.TaskConfig]):
    pass


def tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    """The function schemas as the model reads them beside the env's system prompt."""
    if not tools:
        return ""
    return "\n\nFunction schemas:\n" + "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)


def episode_task(spec: EpisodeSpec, config: vf.TaskConfig) -> AgentenvTask:
    """The verifiers task of one episode: the env's opening messages (the schemas after its system prompt)."""
    messages, tools = first_messages(spec)
    system = [m["content"] for m in messages if m["role"] == "system"]
    return AgentenvTask(
        AgentenvData(
            id=f"{spec.task_id}#{spec.episode}",
            name=f"{spec.env_id}/{spec.split}/{spec.episode}",
            prompt=[
                {"role": "user", "content": m["content"]} for m in messages if m["role"] == "user"
            ],
            system_prompt=(system[0] if system else "") + tools_text(tools),
            info=spec.fields(),
        ),
        config,
    )


class AgentenvTaskset(vf.Taskset[AgentenvTask, AgentenvTasksetConfig]):
    """``agentenv eval``'s episodes for the configured id, split or task file, seed and count."""

    def load(self) -> Iterator[AgentenvTask]:
        c = self.config
        for spec in episode_specs(
            c.env_id, split=c.split, episodes=c.episodes, seed=c.seed, env_kwargs=c.env_kwargs
        ):
            yield episode_task(spec, c.task)


def observation_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """What the env appended after a reply, as one user turn: tool results in ``<tool_response>`` blocks
    (as Qwen3's template renders them), error messages as they are."""
    parts = []
    for m in messages:
        content = str(m.get("content") or "")
        parts.append(
            f"<tool_response>\n{content}\n</tool_response>" if m.get("role") == "tool" else content
        )
    return "\n".join(parts)


def default_agent() -> vf.AgentConfig:
    """The seat's default: verifiers' ``null`` harness (a plain chat loop, no code execution) in the local
    subprocess runtime, so ``vf-eval agentenv_verifiers`` needs no sandbox account."""
    from verifiers.v1.harnesses.null import NullHarnessConfig

    return vf.AgentConfig(harness=NullHarnessConfig(id="null"), runtime=vf.SubprocessConfig())


class AgentenvEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = default_agent()


class AgentenvEnv(vf.Env[AgentenvEnvConfig]):
    """Plays one agentenv episode per task: the model's replies are the env's actions, the env's turns the user's."""

    async def run(self, task: AgentenvTask, agents: vf.Agents) -> None:
        spec = EpisodeSpec.from_fields(task.data.info)
        with SHARED_POOL.lend(spec) as env:
            _, info = env.reset(**spec.reset_kwargs())
            spec.check_task(info)
            seen, episode_return, done = len(info["messages"]), 0.0, False
            async with agents.agent.interaction(task) as interaction:
                segment = await interaction.turn()
                while not segment.terminated:
                    _, reward, terminated, truncated, info = env.step(segment.last_reply)
                    episode_return += float(reward)
                    new = info["messages"][
                        seen + 1 :
                    ]  # after the assistant message the env recorded
                    seen = len(info["messages"])
                    if terminated or truncated:
                        done = True
                        break
                    segment = await interaction.turn(observation_text(new))
            trace = interaction.trace
            trace.record_reward("agentenv_reward", episode_return, 1.0)
            trace.record_metrics(
                {
                    f"agentenv/{k}": float(v)
                    for k, v in (info.get("reward_components") or {}).items()
                }
            )
            trace.record_metric("agentenv/turns", float(info["turn"]))
            trace.info["agentenv_messages"] = list(info["messages"])
            trace.info["agentenv_turns"] = int(info["turn"])
            trace.info["agentenv_done"] = done


def build_environment(
    env_id: str,
    *,
    split: str,
    episodes: int | None,
    seed: int,
    env_kwargs: dict[str, Any],
    harness: str,
    max_turns: int | None,
) -> AgentenvEnv:
    from verifiers.v1.utils.loaders import harness_class

    agent = default_agent()
    if harness != "null":
        config_cls = type(harness_class(harness)(vf.HarnessConfig(id=harness)).config)
        agent = agent.model_copy(update={"harness": config_cls(id=harness)})
    config = AgentenvEnvConfig(
        taskset=AgentenvTasksetConfig(
            id=TASKSET_ID,
            env_id=env_id,
            split=split,
            episodes=episodes,
            seed=seed,
            env_kwargs=env_kwargs,
        ),
        agent=agent.model_copy(update={"max_turns": max_turns}),
    )
    return AgentenvEnv(config)
