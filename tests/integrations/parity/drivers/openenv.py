"""OpenEnv: the script through ``serve-env --protocol openenv`` over loopback, with OpenEnv's own ``EnvClient``.

The client is :class:`agentenv.integrations.openenv.client.AgentEnvClient`, OpenEnv's ``EnvClient``
(its WebSocket session, its ``reset``/``step`` messages, its ``.sync()`` wrapper) with agentenv's
action and observation types; the server is OpenEnv's ``create_fastapi_app``. The record is what
the client returned: the step rewards, and the turn count and transcript of the last observation.
"""

from __future__ import annotations

import atexit
import functools
from typing import Any

from ..scripts import ParityRecord, Script

REQUIRES = "openenv"


@functools.cache
def _server(env_id: str) -> Any:
    from agentenv.integrations.openenv import create_app
    from agentenv.integrations.serve_env.runner import BackgroundServer

    server = BackgroundServer(create_app(env_id, split="train"), websockets=True).start()
    atexit.register(server.stop)
    return server


def run(env_id: str, script: Script) -> ParityRecord:
    from agentenv.integrations.openenv.client import AgentEnvClient
    from agentenv.integrations.openenv.models import TextAction

    with AgentEnvClient(base_url=_server(env_id).url).sync() as env:
        result = env.reset(seed=script.seed, index=script.task_index, split=script.split)
        total = 0.0
        for action in script.actions:
            result = env.step(TextAction(text=action))
            total += result.reward
            if result.done:
                break
        else:
            raise AssertionError(
                f"{script.name}: the episode did not end after {len(script.actions)} actions"
            )
        state = env.state()
    observation = result.observation
    assert state.step_count == observation.turn and state.total_reward == total
    return ParityRecord(
        reward=total,
        turns=observation.turn,
        messages=observation.messages,
        terminated=result.done and not observation.truncated,
        truncated=observation.truncated,
    )
