"""SFT then GRPO (single- and multi-turn, several seeds) on SmolLM2-135M, inside a wall-clock budget.

The GPU form of ``agentenv reproduce sft-then-rl --base smollm2-135m``: one SFT on oracle
conversations of the train split (lookup first, then lookup, constraint and single-turn
together), then from that one SFT model a GRPO run per arm (``MediaSearch-v0`` with tools,
``MediaSearch-SingleTurn-v0`` with passages) and per seed, each scored on the same test tasks in
the same order as the SFT model and the zero-shot model. Effects are paired per test task (the
same tasks, the same order): GRPO minus SFT for each arm and seed, and multi-turn minus
single-turn gain per seed.

It never overruns ``--budget-s``: a GRPO run starts only if the time left holds the longest
one so far (the first needs ``--grpo-reserve-s``), and what was skipped is written down.
``summary.json`` is rewritten after every stage, so a run cut short still reports.

    python benchmarks/smollm2_gpu_lessons.py --out runs/smol-gpu --device auto --budget-s 540
    python benchmarks/smollm2_gpu_lessons.py --out /tmp/smol-tiny --tiny   # CPU smoke, minutes

Nothing is tuned on test: the settings are fixed before the run, and the test split is only scored.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

MULTI, SINGLE = "MediaSearch-v0", "MediaSearch-SingleTurn-v0"


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--base", default="smollm2-135m")
    p.add_argument("--device", default="auto")
    p.add_argument("--budget-s", type=float, default=540.0)
    p.add_argument("--per-kind", type=int, default=1500, help="multi-turn oracle episodes per kind")
    p.add_argument("--single", type=int, default=1000, help="single-turn oracle episodes")
    p.add_argument("--epochs", type=float, default=3.0)
    p.add_argument("--sft-batch", type=int, default=16)
    p.add_argument("--sft-lr", type=float, default=3e-4)
    p.add_argument("--lora-r", type=int, default=16, help="0: full fine-tuning")
    p.add_argument("--max-length", type=int, default=1024)
    p.add_argument("--eval-episodes", type=int, default=200)
    p.add_argument("--eval-batch", type=int, default=64)
    p.add_argument("--max-new-tokens", type=int, default=96)
    p.add_argument("--max-turns", type=int, default=None)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--grpo-steps", type=int, default=20)
    p.add_argument("--grpo-prompts", type=int, default=8)
    p.add_argument("--grpo-generations", type=int, default=8)
    p.add_argument("--grpo-lr", type=float, default=2e-5)
    p.add_argument("--grpo-temperature", type=float, default=0.7)
    p.add_argument("--grpo-completion", type=int, default=256)
    p.add_argument("--grpo-reserve-s", type=float, default=60.0)
    p.add_argument("--zero-shot", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--zero-shot-episodes", type=int, default=100)
    p.add_argument(
        "--sft-share",
        type=float,
        default=0.35,
        help="SFT stops after this share of the budget (each phase its part of it)",
    )
    p.add_argument("--copy-summary", type=Path, default=None, help="also write summary.json here")
    p.add_argument(
        "--tiny", action="store_true", help="a CPU smoke: every stage once at the smallest size"
    )
    args = p.parse_args(argv)
    if args.tiny:
        args.device = "cpu"
        args.per_kind, args.single, args.epochs, args.sft_batch = 2, 1, 1.0, 2
        args.max_length, args.eval_episodes, args.eval_batch = 768, 2, 2
        args.max_new_tokens, args.max_turns, args.seeds = 24, 2, [0]
        args.grpo_steps, args.grpo_prompts, args.grpo_generations = 1, 1, 2
        args.grpo_completion, args.lora_r, args.zero_shot = 24, 8, False
        args.budget_s = float("inf")  # a smoke runs every stage, however slow the machine is today
    return args


def paired(a: list[float], b: list[float], seed: int = 0) -> dict[str, Any]:
    """Mean of ``a - b`` over the same test tasks (same order), with a 95% bootstrap interval."""
    from agentenv.lessons.structured.stats import mean_ci

    return mean_ci([x - y for x, y in zip(a, b, strict=True)], seed=seed)


def export_sft_data(data: Path, per_kind: int, single: int, tokenizer: Any) -> dict[str, list]:
    """The lesson's SFT conversations of the train split: ``lookup`` and ``constraint`` multi-turn
    (``per_kind`` episodes each) and ``single`` single-turn ones, exported under ``data``."""
    from agentenv.lessons.scratch.experiment import export_rows

    def multi(kind: str) -> list:
        return export_rows(MULTI, "train", per_kind, data / kind, kinds=[kind], tokenizer=tokenizer)

    return {
        "lookup": multi("lookup"),
        "constraint": multi("constraint"),
        "single": export_rows(SINGLE, "train", single, data / "single", tokenizer=tokenizer),
    }


def grpo_with_token_check(
    sft_model: Path, folder: Path, env_id: str, settings: Any, device: str
) -> dict[str, Any]:
    """One GRPO run from ``sft_model`` into ``folder``, its record with every recorded rollout
    replayed through ``TokenEnv`` (``token_check``: how many came back id for id)."""
    from agentenv.lessons.scratch.experiment import env_kwargs
    from agentenv.lessons.scratch.grpo import train_grpo
    from agentenv.lessons.scratch.token_check import check_rollouts
    from agentenv.lessons.scratch.tokenizer import load_tokenizer

    record = train_grpo(sft_model, folder, env_id, env_kwargs(env_id), settings, device=device)
    batches = json.loads((folder / "batches.json").read_text())
    check = check_rollouts(
        [r for b in batches for r in b["rollouts"]],
        env_id,
        env_kwargs(env_id),
        load_tokenizer(sft_model),
    )
    record["token_check"] = {k: v for k, v in check.to_dict().items() if k != "mismatches"}
    return record


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)

    from agentenv.lessons.scratch.experiment import score, versions
    from agentenv.lessons.scratch.grpo import GRPOSettings
    from agentenv.lessons.scratch.sft import SFTSettings, train_sft
    from agentenv.lessons.scratch.tokenizer import load_tokenizer
    from agentenv.models import resolve_model
    from agentenv.models.threads import apply_thread_policy
    from agentenv.models.training import resolve_device

    threads = apply_thread_policy()
    device = resolve_device(args.device)
    base = Path(resolve_model(args.base))
    summary: dict[str, Any] = {
        "meta": {
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "device": device,
            "device_name": _device_name(device),
            "host": platform.node(),
            "threads": threads,
            "versions": versions(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        },
        "stages": {},
    }

    def save(stage: str | None = None, seconds: float | None = None) -> None:
        if stage is not None:
            summary["stages"][stage] = round(seconds or 0.0, 1)
        summary["meta"]["wall_s"] = round(time.perf_counter() - started, 1)
        text = json.dumps(summary, indent=2) + "\n"
        (args.out / "summary.json").write_text(text)
        if args.copy_summary is not None:
            args.copy_summary.parent.mkdir(parents=True, exist_ok=True)
            args.copy_summary.write_text(text)
        print(f"[{summary['meta']['wall_s']:7.1f} s] {stage}", flush=True)

    def evaluate(model: Path | str, envs: tuple[str, ...], episodes: int = 0) -> dict[str, Any]:
        return {
            env: score(
                model,
                env,
                episodes or args.eval_episodes,
                max_new_tokens=args.max_new_tokens,
                device=device,
                batch_size=args.eval_batch,
                max_turns=args.max_turns,
            )
            for env in envs
        }

    t = time.perf_counter()
    sets = export_sft_data(args.out / "data", args.per_kind, args.single, load_tokenizer(base))
    lookup, constraint, single = sets["lookup"], sets["constraint"], sets["single"]
    summary["data"] = {name: len(rows) for name, rows in sets.items()}
    save("data", time.perf_counter() - t)

    if args.zero_shot:
        t = time.perf_counter()
        summary["zero_shot"] = evaluate(base, (MULTI,), args.zero_shot_episodes)
        save("zero_shot_eval", time.perf_counter() - t)

    t = time.perf_counter()
    settings = SFTSettings(
        epochs=args.epochs,
        learning_rate=args.sft_lr,
        batch=args.sft_batch,
        max_length=args.max_length,
        lora_r=args.lora_r,
        warmup_ratio=0.05,
        max_seconds=args.sft_share * args.budget_s * 0.75 if args.budget_s < 1e9 else None,
    )
    first_limit = settings.max_seconds / 3 if settings.max_seconds else None
    first = SFTSettings(**{**asdict(settings), "epochs": 1.0, "max_seconds": first_limit})
    sft = train_sft(
        base,
        [(lookup, first), (lookup + constraint + single, settings)],
        args.out / "sft",
        device=device,
        probe_rows=32,
    )
    sft_model = args.out / "sft" / "model"
    summary["sft"] = {"train": sft}
    save("sft", time.perf_counter() - t)

    t = time.perf_counter()
    summary["sft"].update(evaluate(sft_model, (MULTI, SINGLE)))
    save("sft_eval", time.perf_counter() - t)

    runs: dict[str, Any] = {}
    summary["grpo"] = runs
    summary["skipped"] = []
    longest = args.grpo_reserve_s
    for seed in args.seeds:
        for arm, env_id in (("multi_turn", MULTI), ("single_turn", SINGLE)):
            left = args.budget_s - (time.perf_counter() - started)
            if left < longest:
                summary["skipped"].append(
                    {
                        "arm": arm,
                        "seed": seed,
                        "left_s": round(left, 1),
                        "needs_s": round(longest, 1),
                    }
                )
                save(f"skip {arm} seed {seed}")
                continue
            t = time.perf_counter()
            grpo = GRPOSettings(
                steps=args.grpo_steps,
                prompts_per_step=args.grpo_prompts,
                num_generations=args.grpo_generations,
                learning_rate=args.grpo_lr,
                temperature=args.grpo_temperature,
                max_completion_length=args.grpo_completion,
                tasks=max(args.grpo_prompts * args.grpo_steps, 8),
                seed=seed,
                lora_r=args.lora_r,
            )
            folder = args.out / f"grpo_{arm}_seed{seed}"
            record = grpo_with_token_check(sft_model, folder, env_id, grpo, device)
            scores = evaluate(folder / "model", (MULTI, SINGLE))
            effect = {
                env: paired(scores[env]["correct"], summary["sft"][env]["correct"], seed)
                for env in (MULTI, SINGLE)
            }
            runs[f"{arm}/seed{seed}"] = {"train": record, **scores, "minus_sft": effect}
            longest = max(longest, time.perf_counter() - t)
            save(f"grpo {arm} seed {seed}", time.perf_counter() - t)
    summary["effects"] = _effects(summary)
    save("done")
    _slim(summary)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return 0


def _effects(summary: dict[str, Any]) -> dict[str, Any]:
    """Per seed, multi-turn GRPO gain minus single-turn GRPO gain on the multi-turn test, paired."""
    out: dict[str, Any] = {}
    runs = summary["grpo"]
    sft = summary["sft"][MULTI]["correct"]
    for key, run in runs.items():
        arm, seed = key.split("/")
        other = runs.get(f"{'single_turn' if arm == 'multi_turn' else 'multi_turn'}/{seed}")
        if arm == "multi_turn" and other is not None:
            out[f"multi_minus_single/{seed}"] = paired(
                run[MULTI]["correct"], other[MULTI]["correct"]
            )
    for arm in ("multi_turn", "single_turn"):
        gains = [
            x - y
            for key, run in runs.items()
            if key.startswith(arm)
            for x, y in zip(run[MULTI]["correct"], sft, strict=True)
        ]
        if gains:
            from agentenv.lessons.structured.stats import mean_ci

            out[f"{arm}_minus_sft_pooled_seeds"] = mean_ci(gains)
    return out


def _slim(summary: dict[str, Any]) -> None:
    """Per-episode lists stay in the summary (they are the paired data); the trainer's ids do not."""
    for run in summary.get("grpo", {}).values():
        run["train"].pop("env_kwargs", None)


def _device_name(device: str) -> str:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    return platform.processor() or platform.machine()


if __name__ == "__main__":
    raise SystemExit(main())
