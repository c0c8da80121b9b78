"""Accuracy, valid actions and tool use of ``agentenv eval`` runs, with 95% bootstrap intervals.

A valid action is a turn the env could read (a tool call or a graded answer): one minus the
episode's ``invalid_actions`` over its ``turns`` (reward components every MediaSearch record
holds). The intervals resample episodes (seed 0), as ``agentenv eval``'s own do.

Usage::

    python benchmarks/run_action_stats.py runs/smol-zero-shot runs/smol-sft-10-eval
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def stats(run: Path) -> dict[str, object]:
    from agentenv.evaluation.stats import bootstrap_ci

    records = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
    accuracy = [float(r["reward_components"].get("accuracy", 0.0)) for r in records]
    valid = [
        1.0 - float(r["reward_components"].get("invalid_actions", 0.0)) / max(1, r["turns"])
        for r in records
    ]
    summary = (
        json.loads((run / "summary.json").read_text()) if (run / "summary.json").exists() else {}
    )
    return {
        "run": str(run),
        "episodes": len(records),
        "accuracy": bootstrap_ci(accuracy),
        "valid_action_rate": bootstrap_ci(valid),
        "tool_calls": sum(r["tool_calls"] for r in records) / max(1, len(records)),
        "turns": sum(r["turns"] for r in records) / max(1, len(records)),
        "answered": sum(bool(r["terminated"]) for r in records),
        "wall_s": summary.get("wall_s", summary.get("timing", {}).get("wall_s")),
        "complete": summary.get("complete"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", type=Path, nargs="+")
    args = parser.parse_args()
    for run in args.runs:
        s = stats(run)
        acc, val = s["accuracy"], s["valid_action_rate"]
        print(
            f"{s['run']}: {s['episodes']} episodes, accuracy {acc[0]:.3f} [{acc[1]:.3f}, {acc[2]:.3f}], "
            f"valid actions {val[0]:.3f} [{val[1]:.3f}, {val[2]:.3f}], tool calls/episode "
            f"{s['tool_calls']:.2f}, turns/episode {s['turns']:.2f}, answered {s['answered']}, "
            f"wall {s['wall_s']} s, complete {s['complete']}"
        )


if __name__ == "__main__":
    main()
