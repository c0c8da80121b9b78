"""verl-tool: the script through ``serve-env --protocol verl-tool`` over loopback, as verl-tool's agent loop calls it.

verl-tool does not install from the package registry, so its client cannot run here; each request
is the one its agent loop builds (``VerlToolAgentLoop.interact_with_tool_server``: one trajectory id,
its action, ``finish=[False]``, ``is_last_step``, the row's ``extra_info`` as ``extra_fields``, here
the one ``agentenv prepare-verl`` writes), and
the episode ends with the ``finish=[True]`` request its ``close_traj_tool_threads`` sends. The
record is what came back: the reward that ``agentenv.integrations.verl_tool.reward.compute_score``
reads from the observations (kept as verl-tool's loop keeps them), the turns and transcript of the
last one.
"""

from __future__ import annotations

import atexit
import functools
import itertools
from typing import Any

from ..scripts import ParityRecord, Script, shared_env

REQUIRES = "uvicorn"
_ids = itertools.count()


@functools.cache
def _server(env_id: str) -> tuple[Any, Any]:
    import httpx

    from agentenv.integrations.serve_env.runner import BackgroundServer
    from agentenv.integrations.verl_tool import create_app

    server = BackgroundServer(create_app(env_id, split="train")).start()
    client = httpx.Client(base_url=server.url, timeout=30)
    atexit.register(server.stop)
    atexit.register(client.close)
    return server, client


def _row_extra_info(env_id: str, script: Script) -> dict[str, Any]:
    from agentenv.integrations.row_episodes import SHARED_POOL, EpisodeSpec
    from agentenv.integrations.verl.rows import verl_row

    task_id = shared_env(env_id, script.split).unwrapped.tasks[script.task_index].id
    spec = EpisodeSpec(env_id, script.split, script.task_index, script.seed, task_id)
    return dict(verl_row(spec, SHARED_POOL)["extra_info"])


def run(env_id: str, script: Script) -> ParityRecord:
    from agentenv.integrations.verl_tool.reward import compute_score

    _, client = _server(env_id)
    trajectory = f"parity-{env_id}-{script.name}-{next(_ids)}"
    # The row's extra_info as `agentenv prepare-verl` writes it (verl-tool's agent loop sends it as
    # extra_fields); return_messages asks for the transcript in the last observation.
    extra = {**_row_extra_info(env_id, script), "return_messages": True}
    total, obs, interact_info = 0.0, {}, []
    for action in script.actions:
        reply = client.post(
            "/get_observation",
            json={
                "trajectory_ids": [trajectory],
                "actions": [action],
                "finish": [False],
                "is_last_step": [False],
                "extra_fields": [extra],
            },
        )
        reply.raise_for_status()
        body = reply.json()
        obs = body["observations"][0]
        assert body["valids"][0] in (True, False) and isinstance(obs, dict), body
        total += obs["reward"]
        interact_info.append(dict(obs))  # what verl-tool's loop keeps per turn (tool_interact_info)
        if body["dones"][0]:
            break
    else:
        raise AssertionError(
            f"{script.name}: the episode did not end after {len(script.actions)} actions"
        )
    closing = client.post(
        "/get_observation",
        json={
            "trajectory_ids": [trajectory],
            "actions": [""],
            "finish": [True],
            "is_last_step": [True],
        },
    )
    assert closing.json() == {"observations": [""], "dones": [True], "valids": [True]}, closing.text
    # The reward as training sees it: the verl_tool reward function over the turns the loop kept.
    score = compute_score(
        f"agentenv/{env_id}", script.actions[-1], None, {"tool_interact_info": interact_info}
    )
    assert obs["total_reward"] == total and score["turns"] == obs["turns"]
    return ParityRecord(
        reward=score["score"],
        turns=obs["turns"],
        messages=obs["messages"],
        terminated=obs["terminated"],
        truncated=obs["truncated"],
    )
