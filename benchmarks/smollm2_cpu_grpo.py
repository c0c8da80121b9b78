"""GRPO after SFT on SmolLM2-135M on a CPU: 3 seeds × multi-turn and single-turn, paired against SFT.

Why: the lesson's full GRPO (``smollm2_gpu_lessons.sh``) is sized for a GPU; on a 2-core CPU a GRPO
step of 8 rollouts costs minutes, so this runs the same arms at the size a CPU session can afford,
from one SFT model (``smollm2_cpu_sft_single.py``'s ``DIR/sft/model``), and reports the effect on
the same test tasks whatever its sign. Each stage is its own process so that arms can run side by
side on separate cores, and each writes its own record:

    python benchmarks/smollm2_cpu_grpo.py --sft DIR --out OUT sft-eval          # SFT on multi-turn test
    python benchmarks/smollm2_cpu_grpo.py --sft DIR --out OUT grpo multi_turn 0  # one arm, one seed
    python benchmarks/smollm2_cpu_grpo.py --sft DIR --out OUT combine            # OUT/summary.json

Every arm is scored on the multi-turn test (the lesson's claim: multi-turn RL gains more there);
the single-turn arm is also scored on the single-turn test, against the SFT score that
``smollm2_cpu_sft_single.py`` recorded on the same 30 tasks in the same order.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

MULTI, SINGLE = "MediaSearch-v0", "MediaSearch-SingleTurn-v0"
ARMS = {"multi_turn": MULTI, "single_turn": SINGLE}
SCORE = {"max_new_tokens": 96, "device": "cpu", "batch_size": 16}


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sft", type=Path, required=True, help="smollm2_cpu_sft_single.py's --out")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--episodes", type=int, default=30, help="test episodes per score")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--prompts", type=int, default=2, help="prompts per step")
    p.add_argument("--generations", type=int, default=4, help="samples per prompt (the group)")
    p.add_argument("--lr", type=float, default=1e-4, help="LoRA learning rate")
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--completion", type=int, default=128, help="new ids per rollout, all turns")
    p.add_argument("--tool-rounds", type=int, default=3)
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("stage", choices=["sft-eval", "grpo", "combine"])
    p.add_argument("arm", nargs="?", choices=sorted(ARMS))
    p.add_argument("seed", nargs="?", type=int)
    args = p.parse_args(argv)
    if args.stage == "grpo" and (args.arm is None or args.seed is None):
        p.error("grpo needs an arm (multi_turn or single_turn) and a seed, e.g. grpo multi_turn 0")
    return args


def _score(model: Path, env_id: str, episodes: int) -> dict[str, Any]:
    from agentenv.lessons.scratch.experiment import score

    return score(model, env_id, episodes, **SCORE)


def sft_eval(args: argparse.Namespace) -> dict[str, Any]:
    """The SFT model on the multi-turn test (its single-turn score is in the SFT run's summary)."""
    return {MULTI: _score(args.sft / "sft" / "model", MULTI, args.episodes)}


def grpo(args: argparse.Namespace) -> dict[str, Any]:
    """One GRPO run from the SFT model, its token check, and its scores."""
    from smollm2_gpu_lessons import grpo_with_token_check

    from agentenv.lessons.scratch.grpo import GRPOSettings

    env_id = ARMS[args.arm]
    settings = GRPOSettings(
        steps=args.steps,
        prompts_per_step=args.prompts,
        num_generations=args.generations,
        learning_rate=args.lr,
        temperature=args.temperature,
        max_completion_length=args.completion,
        max_tool_calling_iterations=args.tool_rounds,
        tasks=max(args.prompts * args.steps, 8),
        seed=args.seed,
        lora_r=args.lora_r,
    )
    folder = args.out / f"grpo_{args.arm}_seed{args.seed}"
    record = grpo_with_token_check(args.sft / "sft" / "model", folder, env_id, settings, "cpu")
    record.pop("env_kwargs", None)
    scored = time.perf_counter()
    envs = (MULTI,) if args.arm == "multi_turn" else (MULTI, SINGLE)
    scores = {env: _score(folder / "model", env, args.episodes) for env in envs}
    return {"train": record, **scores, "eval_s": round(time.perf_counter() - scored, 1)}


def combine(args: argparse.Namespace) -> dict[str, Any]:
    """Every run's paired effect against SFT, and multi- minus single-turn per seed, on the same tasks."""
    from agentenv.lessons.structured.stats import mean_ci

    def paired(a: list[float], b: list[float]) -> dict[str, Any]:
        return mean_ci([x - y for x, y in zip(a, b, strict=True)], seed=0)

    sft = json.loads((args.out / "sft_eval.json").read_text())
    sft[SINGLE] = json.loads((args.sft / "summary.json").read_text())["single_turn"]
    runs: dict[str, Any] = {}
    for path in sorted(args.out.glob("grpo_*_seed*.json")):
        run = json.loads(path.read_text())
        for env in (MULTI, SINGLE):
            if env in run:
                if run[env]["task_ids"] != sft[env]["task_ids"]:
                    raise SystemExit(f"{path}: {env} was scored on other tasks than the SFT model")
                run.setdefault("minus_sft", {})[env] = paired(
                    run[env]["correct"], sft[env]["correct"]
                )
        runs[path.stem.removeprefix("grpo_").replace("_seed", "/seed")] = run
    effects: dict[str, Any] = {}
    for key, run in runs.items():
        arm, seed = key.split("/")
        other = runs.get(f"single_turn/{seed}")
        if arm == "multi_turn" and other is not None:
            effects[f"multi_minus_single/{seed}"] = paired(
                run[MULTI]["correct"], other[MULTI]["correct"]
            )
    for arm in ARMS:
        for env in (MULTI, SINGLE):
            gains = [
                x - y
                for key, run in runs.items()
                if key.startswith(arm) and env in run
                for x, y in zip(run[env]["correct"], sft[env]["correct"], strict=True)
            ]
            if gains:
                effects[f"{arm}_minus_sft_pooled_seeds/{env}"] = mean_ci(gains, seed=0)
    return {
        "settings": vars(args) | {"sft": str(args.sft), "out": str(args.out)},
        "sft": sft,
        "grpo": runs,
        "effects": effects,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    from agentenv.models.threads import apply_thread_policy

    apply_thread_policy()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if args.stage == "sft-eval":
        result, name = sft_eval(args), "sft_eval.json"
    elif args.stage == "grpo":
        result, name = grpo(args), f"grpo_{args.arm}_seed{args.seed}.json"
    else:
        result, name = combine(args), "summary.json"
    result["wall_s"] = round(time.perf_counter() - started, 1)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    (args.out / name).write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"{name}: {result['wall_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
