"""Decoding speed of the hf agent's batched loop: SmolLM2-135M beside the from-scratch model.

For each model and batch size (1, 8, 32 by default) it times :func:`agentenv.baselines.hf_batch.generate_batch`
on real prompts (the compact MediaSearch prompt of distinct test tasks, rendered by each model's own
chat template), with stop ids and stop strings off so every row decodes exactly ``--new-tokens``
ids. Printed per case: prompt length, prefill seconds (the cache fill and the first id), decode
tokens/s (the ids after the first over the decode steps' seconds, timed inside the same call) and
overall tokens/s (all new ids over the whole call).
Cases are run in interleaved passes (:mod:`benchmarks._bench_common`), and the medians printed.

Set the thread policy before starting (what the agents do): ``OMP_WAIT_POLICY=PASSIVE``, and
``--threads`` (default: 2).

Usage::

    OMP_WAIT_POLICY=PASSIVE python benchmarks/llm_decode_speed.py [--batches 1 8 32] [--new-tokens 48]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import print_machine  # noqa: E402


def scratch_model_dir() -> Path:
    """The shipped from-scratch checkpoint's model folder (wherever the package keeps it)."""
    import importlib

    for name in ("agentenv.lessons.scratch", "agentenv.scratch"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        path = Path(module.__file__).parent / "checkpoint" / "model"
        if path.is_dir():
            return path
    raise SystemExit("the shipped from-scratch checkpoint was not found")


def prompts(tokenizer: Any, n: int) -> list[list[int]]:
    """The first-turn prompt ids of ``n`` distinct compact MediaSearch test tasks."""
    import gymnasium as gym

    from agentenv.tokens.chat_templates import hf_template

    env = gym.make("agentenv:MediaSearch-v0", split="test", compact=True)
    template = hf_template(tokenizer, end_of_turn="<|im_end|>")
    out = []
    for i in range(n):
        _, info = env.reset(seed=i, options={"index": i})
        out.append(template.render_prefix(info["messages"], None))
    return out


def one_pass(model: Any, batch: list[list[int]], new_tokens: int, pad_id: int) -> dict[str, float]:
    """One call on ``batch``: the prefill (the cache fill and the first id of every row) and the
    decode steps, both timed inside the call."""
    from agentenv.baselines.hf_batch import Request, generate_batch

    timings: dict[str, float] = {}
    out = generate_batch(
        model,
        [Request(list(p), new_tokens) for p in batch],
        stop_ids=frozenset(),
        pad_id=pad_id,
        decode=lambda ids: "",
        stop_strings=(),
        timings=timings,
    )
    assert all(len(g.ids) == new_tokens for g in out)
    total = timings["prefill_s"] + timings["decode_s"]
    return {
        "prefill_s": timings["prefill_s"],
        "decode_tok_s": len(batch) * (new_tokens - 1) / max(timings["decode_s"], 1e-9),
        "overall_tok_s": len(batch) * new_tokens / total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--new-tokens", type=int, default=48)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--models", nargs="+", default=["smollm2-135m", "scratch"])
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()

    from agentenv.models.threads import apply_thread_policy

    machine = print_machine("hf agent batched decoding: tokens/s by batch size")
    print(f"# {apply_thread_policy(args.threads)}; {args.new_tokens} new ids per row")
    from agentenv.baselines.hf_agent import load_model
    from agentenv.models import resolve_model

    paths = {
        name: str(scratch_model_dir()) if name == "scratch" else resolve_model(name)
        for name in args.models
    }
    loaded = {name: load_model(path) for name, path in paths.items()}
    rows = {name: prompts(tok, max(args.batches)) for name, (_, tok) in loaded.items()}
    results: dict[str, dict[int, list[dict[str, float]]]] = {
        n: {b: [] for b in args.batches} for n in paths
    }
    for name, (model, tok) in loaded.items():  # warm-up: one small call each
        one_pass(model, rows[name][:1], 4, int(tok.pad_token_id or 0))
    for _ in range(args.passes):
        for name, (model, tok) in loaded.items():
            for b in args.batches:
                figures = one_pass(
                    model, rows[name][:b], args.new_tokens, int(tok.pad_token_id or 0)
                )
                results[name][b].append(figures)
    print(
        f"{'model':14s} {'dtype':9s} {'batch':>5s} {'prompt':>7s} {'prefill s':>9s} "
        f"{'decode tok/s':>12s} {'overall tok/s':>13s}"
    )
    report: dict[str, Any] = {"machine": machine, "new_tokens": args.new_tokens, "cases": []}
    for name, (model, _) in loaded.items():
        dtype = str(next(model.parameters()).dtype).replace("torch.", "")
        for b in args.batches:
            med = {
                k: statistics.median(r[k] for r in results[name][b]) for k in results[name][b][0]
            }
            prompt = statistics.median(len(p) for p in rows[name][:b])
            print(
                f"{name:14s} {dtype:9s} {b:5d} {prompt:7.0f} {med['prefill_s']:9.2f} "
                f"{med['decode_tok_s']:12.1f} {med['overall_tok_s']:13.1f}"
            )
            report["cases"].append(
                {"model": name, "dtype": dtype, "batch": b, "prompt_tokens": prompt, **med}
            )
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
