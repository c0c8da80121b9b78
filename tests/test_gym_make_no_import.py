"""A third-party trainer passes only an id string: ``gym.make("agentenv:MediaSearch-v0")`` must work
in a fresh interpreter that never imported agentenv (Gymnasium imports the module before the colon),
as README's quickstart and docs/gymnasium.md say. ``gym.make_vec`` finds the id the same way
(Gymnasium's ``_find_spec``); vector envs are tested in tests/evaluation/test_vector_envs.py (a fresh
async one here would build three more envs: seconds)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CODE = r"""
import json, sys
import gymnasium as gym

def loaded():
    return any(m == "agentenv" or m.startswith("agentenv.") for m in sys.modules)

assert not loaded()
try:
    gym.make("MediaSearch-v0")  # without the module prefix the id is unknown until agentenv is imported
    bare = "made"
except gym.error.NameNotFound:
    bare = "NameNotFound"
assert not loaded()

env = gym.make("agentenv:MediaSearch-v0")
obs, info = env.reset(seed=0)
step = env.step('<tool_call>{"name": "search", "arguments": {"query": "Heat", "k": 2}}</tool_call>')
print(json.dumps({
    "bare": bare, "id": env.spec.id, "obs": isinstance(obs, str) and bool(obs), "split": info["split"],
    "reset_keys": sorted(info), "step_obs": isinstance(step[0], str), "turn": step[4]["turn"],
    "entry_point": env.spec.entry_point,
}))
"""


def test_gym_make_with_module_prefix_needs_no_import(tmp_path: Path) -> None:
    # Run outside the repository, so agentenv comes from the installed package, not the working directory.
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["bare"] == "NameNotFound"
    assert got["id"] == "MediaSearch-v0" and got["obs"] and got["split"] == "train"
    assert got["reset_keys"] == [
        "messages",
        "reward_components",
        "split",
        "task_id",
        "tool_calls",
        "tools",
        "turn",
    ]
    assert got["step_obs"] and got["turn"] == 1
    assert got["entry_point"] == "agentenv.envs.media_search.env:MediaSearchEnv"
