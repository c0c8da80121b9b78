"""A CPU LoRA SFT of SmolLM2-135M on a few oracle conversations, scored once on single-turn test.

Why: on a 2-core CPU an SFT conversation costs 6-13 s, so the lesson's full SFT needs a GPU
(``smollm2_gpu_lessons.sh``); this is the small run that fits a CPU session. It trains as
``smollm2_gpu_lessons.py --budget-s 1`` does (lookup first, then lookup + constraint + single-turn,
LoRA r 16, learning rate 3e-4, one epoch each), with ``--single`` single-turn conversations, and
scores ``MediaSearch-SingleTurn-v0`` on 30 test tasks (seed 0, batch 16, 96 new ids).

    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE python benchmarks/smollm2_cpu_sft_single.py --out DIR --single 40
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--per-kind", type=int, default=12, help="multi-turn oracle episodes per kind")
    p.add_argument("--single", type=int, default=40, help="single-turn oracle episodes")
    p.add_argument("--eval-episodes", type=int, default=30)
    args = p.parse_args(argv)

    from smollm2_gpu_lessons import SINGLE, export_sft_data

    from agentenv.lessons.scratch.experiment import score
    from agentenv.lessons.scratch.sft import SFTSettings, train_sft
    from agentenv.lessons.scratch.tokenizer import load_tokenizer
    from agentenv.models import resolve_model
    from agentenv.models.threads import apply_thread_policy

    apply_thread_policy()
    args.out.mkdir(parents=True, exist_ok=True)
    base = Path(resolve_model("smollm2-135m"))
    tok = load_tokenizer(base)
    started = time.perf_counter()
    sets = export_sft_data(args.out / "data", args.per_kind, args.single, tok)
    lookup, constraint, single = sets["lookup"], sets["constraint"], sets["single"]
    settings = SFTSettings(
        epochs=1.0, learning_rate=3e-4, batch=1, max_length=1024, lora_r=16, warmup_ratio=0.05
    )
    first = SFTSettings(**asdict(settings))
    sft = train_sft(
        base,
        [(lookup, first), (lookup + constraint + single, settings)],
        args.out / "sft",
        device="cpu",
        probe_rows=32,
    )
    trained = time.perf_counter()
    result = score(
        args.out / "sft" / "model",
        SINGLE,
        args.eval_episodes,
        max_new_tokens=96,
        device="cpu",
        batch_size=16,
    )
    summary = {
        "rows": {name: len(rows) for name, rows in sets.items()},
        "sft": sft,
        "sft_s": trained - started,
        "eval_s": time.perf_counter() - trained,
        "single_turn": result,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    print(f"single-turn accuracy {result['accuracy']} {result['ci']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
