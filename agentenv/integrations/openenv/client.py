"""OpenEnv's ``EnvClient`` for an agentenv env served by ``agentenv serve-env --protocol openenv``.

OpenEnv clients are per env: they say how an action becomes the step
message and how the server's answer becomes an observation. Everything else
(the WebSocket session, ``reset``/``step``/``state``, ``.sync()``) is OpenEnv's own.

Example (with a server on port 8710)::

    from agentenv.integrations.openenv.client import AgentEnvClient
    from agentenv.integrations.openenv.models import TextAction

    with AgentEnvClient(base_url="http://127.0.0.1:8710").sync() as env:
        first = env.reset(seed=0, index=0)          # first.observation.text: the question
        result = env.step(TextAction(text="<answer>Heat</answer>"))
        result.reward, result.done                  # graded as `agentenv eval` grades it
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from agentenv.integrations.openenv.models import EpisodeState, TextAction, TextObservation


class AgentEnvClient(EnvClient[TextAction, TextObservation, EpisodeState]):
    """Typed client: ``step(TextAction(text=...))`` returns a ``StepResult[TextObservation]``."""

    def _step_payload(self, action: TextAction) -> dict[str, Any]:
        return {"text": action.text}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[TextObservation]:
        observation = TextObservation(
            **payload.get("observation", {}),
            done=bool(payload.get("done", False)),
            reward=payload.get("reward"),
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=observation.done
        )

    def _parse_state(self, payload: dict[str, Any]) -> EpisodeState:
        return EpisodeState(**payload)
