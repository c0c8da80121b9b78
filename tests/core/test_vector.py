"""Vector envs: Text spaces batch as tuples, and async works with Gymnasium's shared memory."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

from agentenv.engine.actions import answer, tool_call
from agentenv.engine.spaces import SharedTextBatch, Text

from .toy_env import SquareEnv

ACTIONS = [
    (tool_call("square", n=2), "héllo ✓ 漢字", answer("0")),
    (answer("4"), tool_call("square", n=3), "<answer>"),
    ("x", answer("16"), answer("64")),
]


def _run(vector: gym.vector.VectorEnv) -> list:
    out = [vector.reset(seed=5)[0]]
    for actions in ACTIONS:
        obs, reward, terminated, truncated, _ = vector.step(actions)
        out.append((tuple(obs), reward.tolist(), terminated.tolist(), truncated.tolist()))
    vector.close()
    return out


def test_async_equals_sync_with_unicode() -> None:
    sync = _run(gym.vector.SyncVectorEnv([SquareEnv for _ in range(3)]))
    async_ = _run(gym.vector.AsyncVectorEnv([SquareEnv for _ in range(3)]))
    assert sync == async_
    assert any("Error:" in text for text in sync[1][0])


def test_shared_memory_round_trips_unicode_and_is_live() -> None:
    space = Text(16)
    memory = create_shared_memory(space, n=2)
    view = read_from_shared_memory(space, memory, n=2)
    assert isinstance(view, SharedTextBatch)
    write_to_shared_memory(space, 0, "naïve 🎬", memory)
    write_to_shared_memory(space, 1, "x" * 16, memory)
    assert tuple(view) == ("naïve 🎬", "x" * 16)
    snapshot = copy.deepcopy(view)
    write_to_shared_memory(space, 0, "\x00é", memory)
    assert snapshot == ("naïve 🎬", "x" * 16) and view[0] == "\x00é"
    assert np.frombuffer(memory.get_obj(), dtype=np.int32).size == 32
