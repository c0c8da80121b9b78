"""Asking first vs answering at once: the scripted lead baselines on the same tasks and seeds.

Why a script: the claim that talking to the simulated side pays is a number,
and the doc quotes it; this prints it, reproducibly (task ``i`` with seed
``i``, for i < episodes).

    python -m agentenv.multiagent.compare --env DiagnosisDialogue-v0 --episodes 804
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.policy_helpers import PolicyLike, act_with
from agentenv.multiagent.registry import env_ids, make
from agentenv.multiagent.single_agent import as_single_agent


def leads(env: DialogueEnv) -> dict[str, PolicyLike]:
    """The family's scripted leads of an env (``answer-at-once`` and ``asking``; its ``scripted_leads`` hook)."""
    return env.scripted_leads()


def evaluate(env: DialogueEnv, lead: PolicyLike, episodes: int) -> dict[str, float]:
    """Mean final reward components of ``lead`` over tasks 0..episodes-1 (seed = task index)."""
    single = as_single_agent(env, agent=env.lead)
    totals: dict[str, float] = {}
    for i in range(episodes):
        obs, info = single.reset(seed=i, options={"index": i})
        done = False
        while not done:
            obs, _, terminated, truncated, info = single.step(act_with(lead, obs, info))
            done = terminated or truncated
        for key, value in info["reward_components"].items():
            totals[key] = totals.get(key, 0.0) + value
    return {key: value / episodes for key, value in totals.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Print accuracy, questions, tool calls and turns of both leads."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", required=True, choices=env_ids())
    parser.add_argument("--split", default="test", choices=["train", "validation", "test"])
    parser.add_argument(
        "--episodes", type=int, default=0, help="tasks 0..N-1 (default: the whole split)"
    )
    args = parser.parse_args(argv)
    env = make(args.env, split=args.split)
    n = min(args.episodes or len(env.tasks), len(env.tasks))
    print(f"{args.env} {args.split}, tasks 0-{n - 1}")
    for name, lead in leads(env).items():
        m: dict[str, Any] = evaluate(env, lead, n)
        print(
            f"{name:15s} accuracy {m['accuracy']:.3f}  questions {m['questions_asked']:.1f}  "
            f"tool calls {m['tool_calls']:.1f}  turns {m['turns']:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
