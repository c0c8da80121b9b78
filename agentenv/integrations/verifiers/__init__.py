"""verifiers: ``load_environment(env_id)`` returns a verifiers ``Env`` that plays agentenv episodes, graded by the env.

verifiers 0.4.0 (``verifiers.v1``) composes an environment from a taskset (which tasks) and an
``Env`` (how one task becomes an episode: ``run(task, agents)``), with the model reached through an
agent seat's harness and its ``interaction``. Here the taskset yields ``agentenv eval``'s episodes
for an id (split or task file, seed, count) and the env plays the agentenv env as the run's user:
each model reply goes to ``env.step`` exactly as text, the env's tool results or error message come
back as the next user turn, and the episode's return from the env's own grader is the trace's
reward (``agentenv_reward``), with the reward components as metrics. So ``vf eval`` and prime-rl
score a reply as ``agentenv eval`` does. The implementation lives in
:mod:`agentenv.integrations.verifiers.environment` (imports verifiers; ``pip install agentenv[verifiers]``).
"""

from __future__ import annotations

from typing import Any

from agentenv.integrations.verifiers.taskset_id import TASKSET_ID

__all__ = ["TASKSET_ID", "AgentenvEnv", "AgentenvTaskset", "load_environment"]


def __getattr__(name: str) -> Any:
    if name in ("AgentenvEnv", "AgentenvTaskset"):
        from agentenv.integrations.verifiers import environment

        return getattr(environment, name)
    raise AttributeError(name)


def load_environment(
    env_id: str,
    *,
    split: str = "test",
    episodes: int | None = None,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    harness: str = "null",
    max_turns: int | None = None,
) -> Any:
    """A verifiers ``Env`` over ``env_id``'s episodes (those of ``agentenv eval --split S --seed N --episodes E``).

    ``harness`` is the agent seat's verifiers harness (``null``: verifiers' plain chat loop, no code
    execution); ``max_turns`` caps model turns (default: the env's own turn budget decides).
    """
    from agentenv.integrations.verifiers.environment import build_environment

    return build_environment(
        env_id,
        split=split,
        episodes=episodes,
        seed=seed,
        env_kwargs=env_kwargs or {},
        harness=harness,
        max_turns=max_turns,
    )
