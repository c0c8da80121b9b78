"""Installed as the README says, a script beside a clone named ``agentenv`` still makes the env.

Why: ``git clone`` names the folder ``agentenv``. A script run from the folder that holds it has
that folder first on ``sys.path``, where Python finds it as a namespace package before any import
hook is asked; setuptools' default editable install of a ``package_dir`` remap is such a hook, so
``gym.make("agentenv:MediaSearch-v0")`` failed with ``Environment MediaSearch doesn't exist``. A
regular install, or the strict editable install (a real folder of links on ``sys.path``), is found by
Python's own path search, and a regular package anywhere on the path wins over a namespace folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import gymnasium as gym

env = gym.make("agentenv:MediaSearch-SingleTurn-v0")  # no import of agentenv before
obs, info = env.reset(seed=0)
print(type(env.unwrapped).__name__, info["split"])
"""


def test_a_script_beside_a_clone_named_agentenv_makes_the_env(tmp_path: Path) -> None:
    clone = tmp_path / "agentenv"  # what `git clone …/agentenv` leaves: the checkout's own folders
    for folder in ("agentenv", "envs", "corpora", "baselines"):
        (clone / folder).mkdir(parents=True)
    (clone / "setup.cfg").write_text("[metadata]\nname = agentenv\n", encoding="utf-8")
    script = tmp_path / "make_env.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.split() == [
        "MediaSearchEnv",
        "train",
    ], (
        "a folder named agentenv beside the script hid the installed package; install as the README "
        "says (pip install . for users; pip install -e . --config-settings editable_mode=strict for "
        f"development):\n{done.stderr[-1500:]}"
    )
