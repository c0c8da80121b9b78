"""The best-fixed-sequence search against playing every sequence from reset (not a test; prints a table).

    python benchmarks/fixed_sequences.py [--env MediaSearch-v0] [--episodes 20] [--seed 0]

Both score the same sequences (every order of distinct tool entries up to two, then one answer
entry) on the same test episodes, and the script checks that their returns agree. The shared
search (:func:`agentenv.lessons.structured.fixed_sequences.score_sequences`) walks one tree level at a
time, keeps a copy of each node's state, grades equal answer texts once and caches
context-free tool calls; the naive way resets the env and plays each sequence through the
structured wrapper, as an agent would.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import agentenv  # noqa: F401 - registers the ids
from agentenv.families import family_of_env
from agentenv.lessons.structured.fixed_sequences import runner_episodes, score_sequences
from agentenv.lessons.structured.wrapper import StructuredEnv, menu_for


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MediaSearch-v0")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = gym.make(args.env, split="test", reward="strict")
    menu_cls = menu_for(family_of_env(args.env), frozenset(env.unwrapped.tools.names))
    plan = runner_episodes(len(env.unwrapped.tasks), args.episodes, [args.seed])
    for (
        seed,
        index,
    ) in plan:  # first use of each task (patients are simulated once) outside both timings
        env.reset(seed=seed, options={"index": index})

    start = time.perf_counter()
    shared = score_sequences(env, menu_cls, plan, depth=2, full_depth=2)
    shared_s = time.perf_counter() - start

    wrapped = StructuredEnv(gym.make(args.env, split="test", reward="strict"))
    start = time.perf_counter()
    naive = np.zeros((len(shared.sequences), len(plan)))
    for i, sequence in enumerate(shared.sequences):
        for e, (seed, index) in enumerate(plan):
            wrapped.reset(seed=seed, options={"index": index})
            total = 0.0
            for action in sequence:
                _, reward, *_ = wrapped.step(action)
                total += reward
            naive[i, e] = total
    naive_s = time.perf_counter() - start

    agree = bool(np.array_equal(naive, np.stack(shared.returns)))
    print(
        f"{args.env}: {len(shared.sequences)} sequences x {len(plan)} episodes "
        f"({shared.nodes} tool prefixes, {shared.graded} answers graded by the shared search)"
    )
    print(f"{'method':<34}{'seconds':>10}{'ms / sequence-episode':>24}")
    for name, seconds in (
        ("shared prefixes + call cache", shared_s),
        ("replay every sequence from reset", naive_s),
    ):
        print(f"{name:<34}{seconds:>10.2f}{1000 * seconds / naive.size:>24.3f}")
    print(f"speed-up {naive_s / shared_s:.1f}x; returns identical: {agree}")


if __name__ == "__main__":
    main()
