"""The ``BaseTextEnv`` subclass: an agentenv episode behind SkyRL-gym's ``init``/``step``/``close``.

Why one class for every id: SkyRL names a row's env by its registered name (``env_class``), and the
registration passes the agentenv id as a keyword, so each id keeps its own turn budget and tools
and a new family needs no class here. The episode comes from the row's extras (split, task index, seed), so a row
written for ``agentenv eval``'s episode ``i`` replays it. ``init`` returns the env's own opening
messages (the system prompt naming the tools, the question); ``step`` returns what the env appended
after the assistant's message (tool results, or an error message saying what was expected), the
env's reward, and ``done`` when the env terminated or truncated. ``metadata`` carries the reward
components, turn count and the env's transcript (``messages``, with parsed tool calls).
"""

from __future__ import annotations

from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from agentenv.integrations.row_episodes import SHARED_POOL, EpisodeSpec


class AgentenvTextEnv(BaseTextEnv):
    """An agentenv episode as a SkyRL-gym text env: ``env_id`` (the registered kwargs of
    :func:`agentenv.integrations.skyrl.register_envs`), or a subclass's ``ENV_ID``."""

    ENV_ID = ""

    def __init__(
        self,
        env_config: Any = None,
        extras: dict[str, Any] | None = None,
        env_id: str | None = None,
    ) -> None:
        super().__init__()
        self.env_id = env_id or self.ENV_ID
        fields = dict(extras or {})
        fields = {
            **dict(fields.get("extra_info") or {}),
            **fields,
        }  # rows written for verl keep them in extra_info
        self.episode = EpisodeSpec.from_fields(fields, env_id=self.env_id)
        if self.env_id and self.episode.env_id.removeprefix("agentenv:") != self.env_id:
            raise ValueError(  # the row's env_id used to win over the env class, silently
                f"the row is for {self.episode.env_id[:80]!r}; this env class plays "
                f"{self.env_id!r}: give the row env_class agentenv/{self.episode.env_id[:80]}"
            )
        self.env = SHARED_POOL.take(self.episode)
        self.max_turns = int(self.env.unwrapped.max_turns)
        self.tools: list[dict[str, Any]] = []
        self._messages = 0
        self._return = 0.0
        self._info: dict[str, Any] = {}

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The env's opening messages (the row's ``prompt`` is the same text, written from them)."""
        _, info = self.env.reset(**self.episode.reset_kwargs())
        self.episode.check_task(info)
        self.tools = list(info.get("tools") or [])
        self._messages, self._return, self._info, self.turns = len(info["messages"]), 0.0, info, 0
        return [dict(m) for m in info["messages"]], {
            "tools": self.tools,
            "task_id": info["task_id"],
        }

    def step(self, action: str) -> BaseTextEnvStepOutput:
        _, reward, terminated, truncated, info = self.env.step(action)
        new = info["messages"][self._messages + 1 :]  # after the assistant message the env recorded
        self._messages, self._info, self.turns = len(info["messages"]), info, int(info["turn"])
        self._return += float(reward)
        return BaseTextEnvStepOutput(
            observations=[dict(m) for m in new],
            reward=float(reward),
            done=bool(terminated or truncated),
            metadata={
                "turn": int(info["turn"]),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                "reward_components": dict(info.get("reward_components") or {}),
                "messages": list(info["messages"]),
                "task_id": info["task_id"],
            },
            postprocessed_action=None,
        )

    def get_metrics(self) -> dict[str, Any]:
        components = dict(self._info.get("reward_components") or {})
        return {
            "return": self._return,
            "turns": self.turns,
            **{f"reward/{k}": v for k, v in components.items()},
        }

    def close(self) -> None:
        if self.env is not None:
            SHARED_POOL.give(self.episode, self.env)
            self.env = None
