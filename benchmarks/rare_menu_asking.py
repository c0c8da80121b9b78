"""Does asking the patient help the rare-disease menu's fused answer? Accuracy after 0, 1 and 2 questions.

    python benchmarks/rare_menu_asking.py [--episodes 300] [--split validation]

Plays ``rank -> search -> read the leading profiles -> ask_patient x n -> answer fused top (limit)`` on
the first ``--episodes`` tasks of the split (episode ``i`` is task ``i`` reset with seed ``i``) through the
``diagnosis-tools`` menu, for n = 0, 1, 2, and prints the accuracy of each with its 95% bootstrap CI and
the wall time. Not a test; never run on the test split when tuning the menu.
"""

from __future__ import annotations

import argparse
import time

import agentenv  # noqa: F401 - registers the ids
from agentenv.lessons.structured.stats import mean_ci
from agentenv.lessons.structured.wrapper import make_structured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--split", default="validation", choices=("train", "validation"))
    args = parser.parse_args()
    env = make_structured("RareDiseaseDiagnosis-v0", split=args.split)
    started = time.perf_counter()
    for asks in (0, 1, 2):
        correct = []
        for i in range(args.episodes):
            env.reset(seed=i, options={"index": i})
            fused = env.menu.labels.index("answer fused top (limit)")
            info: dict = {}
            for entry in [0, 1, 2, *(3, 4)[:asks], fused]:
                if not env.action_masks()[entry]:
                    entry = fused  # nothing left to ask about: answer now
                _, _, terminated, truncated, info = env.step(entry)
                if terminated or truncated:
                    break
            correct.append(float(info.get("reward_components", {}).get("accuracy", 0.0)))
        summary = mean_ci(correct)
        print(
            f"{asks} question(s): fused top accuracy {summary['mean']:.3f} {summary['ci']} (n={summary['n']})"
        )
    print(
        f"split {args.split}, seeds 0..{args.episodes - 1}; wall {time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
