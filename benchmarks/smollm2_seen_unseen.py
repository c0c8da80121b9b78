"""A trained model's accuracy on train tasks it was fitted on against test tasks it never saw.

Why: a small SFT can learn its conversations by heart; the gap between the two scores says how
much of its test accuracy is the skill rather than the tasks. The train tasks scored are the ones
the SFT export played (``export_rows`` plays the train split from seed 0, as ``score`` does), and
the record lists their ids beside the exported rows' ids, so the overlap is checked, not assumed.

    OMP_NUM_THREADS=1 python benchmarks/smollm2_seen_unseen.py --sft DIR --out seen.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SINGLE = "MediaSearch-SingleTurn-v0"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sft", type=Path, required=True, help="smollm2_cpu_sft_single.py's --out")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--episodes", type=int, default=30)
    args = p.parse_args(argv)

    from agentenv.lessons.scratch.experiment import score
    from agentenv.models.threads import apply_thread_policy

    apply_thread_policy()
    rows = (args.sft / "data" / "single" / "rows.jsonl").read_text().splitlines()
    trained_on = {json.loads(line)["task_id"] for line in rows if line.strip()}
    seen = score(
        args.sft / "sft" / "model",
        SINGLE,
        args.episodes,
        split="train",
        max_new_tokens=96,
        device="cpu",
        batch_size=16,
    )
    unseen = json.loads((args.sft / "summary.json").read_text())["single_turn"]
    overlap = sum(t in trained_on for t in seen["task_ids"])
    record = {
        "seen_train": seen,
        "unseen_test": unseen,
        "train_tasks_in_sft_data": overlap,
        "sft_single_rows": len(trained_on),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(
        f"seen (train, {overlap}/{len(seen['task_ids'])} in the SFT data): {seen['accuracy']} "
        f"{seen['ci']}; unseen (test): {unseen['accuracy']} {unseen['ci']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
