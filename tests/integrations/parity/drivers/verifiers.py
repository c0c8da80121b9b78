"""verifiers: ``load_environment(env_id)``'s ``Env`` run by verifiers' own episode loop (``serving()``,
``run_slot``: the seat's ``null`` harness program in the subprocess runtime, its interception server
and eval client) against a scripted chat endpoint that streams the script's action texts.

Slow (the harness is a separate program: about 8 s a turn on 2 busy cores), so CI runs these cases
in their own venv step (``.ci/run``), not in the main suite.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from ..scripted_chat import ScriptedChat
from ..scripts import ParityRecord, Script

REQUIRES = "verifiers"


def run(env_id: str, script: Script) -> ParityRecord:
    return asyncio.run(_run(env_id, script))


async def _run(env_id: str, script: Script) -> ParityRecord:
    from verifiers.v1.clients import EvalClientConfig, ModelContext
    from verifiers.v1.env import RunSlot

    from agentenv.integrations.row_episodes import EpisodeSpec
    from agentenv.integrations.verifiers import load_environment
    from agentenv.integrations.verifiers.environment import episode_task

    # The harness program is set up with uv: the venv's (installed with the verifiers extra) comes first.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ.setdefault("AGENTENV_SCRIPTED_KEY", "scripted")
    env = load_environment(env_id, split=script.split, episodes=1, seed=script.seed)
    task = episode_task(
        EpisodeSpec(env_id, script.split, script.task_index, script.seed), env.taskset.config.task
    )
    with ScriptedChat(script.actions) as server:
        ctx = ModelContext(
            model="scripted",
            client=EvalClientConfig(base_url=server.url, api_key_var="AGENTENV_SCRIPTED_KEY"),
        )
        async with env.serving():
            episode = await env.run_slot(RunSlot(task), ctx)
    assert episode.ok and not episode.errors, episode.errors
    (trace,) = episode.traces
    assert trace.info["agentenv_done"], "the script ended before the env did"
    # The model saw the env's turns: each request after the first ends with the env's observation.
    assert len(server.requests) == trace.info["agentenv_turns"]
    return ParityRecord(
        reward=trace.reward,
        turns=trace.info["agentenv_turns"],
        messages=list(trace.info["agentenv_messages"]),
    )
