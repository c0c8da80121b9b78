"""Plot ``smollm2_cpu_grpo.py combine`` summaries: each run's GRPO reward curve, and test accuracy.

Why: the lesson keeps its per-step log and figures; this draws them from the summaries alone, so a
figure can be redrawn without re-running anything.

    python benchmarks/smollm2_grpo_plot.py OUT/summary.json [MORE/summary.json ...] --out FIG.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

MULTI, SINGLE = "MediaSearch-v0", "MediaSearch-SingleTurn-v0"


def bars(summaries: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, float, list[float]]]:
    """``(label, accuracy, ci)`` on the multi-turn test: SFT first, then every run of every summary.

    >>> s = {"sft": {MULTI: {"accuracy": 0.1, "ci": [0.0, 0.2]}},
    ...      "grpo": {"multi_turn/seed0": {MULTI: {"accuracy": 0.2, "ci": [0.1, 0.3]}}}}
    >>> bars([("4 steps", s)])
    [('SFT', 0.1, [0.0, 0.2]), ('multi_turn/seed0\\n4 steps', 0.2, [0.1, 0.3])]
    """
    first = summaries[0][1]["sft"][MULTI]
    out = [("SFT", first["accuracy"], first["ci"])]
    for name, summary in summaries:
        for key, run in summary["grpo"].items():
            out.append((f"{key}\n{name}", run[MULTI]["accuracy"], run[MULTI]["ci"]))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("summaries", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    loaded = []
    for path in args.summaries:
        summary = json.loads(path.read_text())
        steps = summary["settings"]["steps"]
        loaded.append((f"{steps} steps", summary))
    fig, (curves, acc) = plt.subplots(1, 2, figsize=(13, 4.8))
    for name, summary in loaded:
        for key, run in summary["grpo"].items():
            curve = run["train"]["curve"]
            style = "-" if key.startswith("multi") else "--"
            curves.plot(
                [c["step"] for c in curve],
                [c["reward"] for c in curve],
                style,
                marker="o",
                label=f"{key} ({name})",
            )
    curves.set_xlabel("GRPO step")
    curves.set_ylabel("mean reward of the step's rollouts")
    curves.set_title("GRPO reward per step (groups of 4, 2 prompts a step)")
    curves.legend(fontsize=7)
    rows = bars(loaded)
    xs = range(len(rows))
    means = [r[1] for r in rows]
    low = [r[1] - r[2][0] for r in rows]
    high = [r[2][1] - r[1] for r in rows]
    acc.bar(xs, means, yerr=[low, high], capsize=3, color=["grey"] + ["C0"] * (len(rows) - 1))
    acc.set_xticks(list(xs), [r[0] for r in rows], rotation=60, fontsize=6, ha="right")
    acc.set_ylabel("accuracy, multi-turn test (30 tasks, 95% CI)")
    acc.set_title("SmolLM2-135M: SFT, then GRPO (CPU)")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
