"""The sft-more-data lesson: SFT the from-scratch model on five times the data, then GRPO with successes.

Why: an audit of the sft-then-rl lesson found its SFT model scoring 0.33 on
train tasks whose conversations it had seen and 0.08 on unseen ones, after
only 571 of the subset's 9,600 train tasks (about 35k supervised assistant
tokens); and GRPO at temperature 1.0 succeeding in 3.1% of rollouts, so most
groups carried no gradient. This lesson tests the first two remedies the audit
suggests, in order, on the same subset and test tasks as sft-then-rl:

1. **SFT on more data**: ``Scale.more_rows`` oracle conversations of the
   train split (lookup and constraint together; five times or more the
   assistant tokens), scored on the test split (unseen tasks) and on the first
   ``Scale.seen_episodes`` train tasks of the export's own order (each one
   trained on, unless the export dropped its episode; the summary counts them);
2. **GRPO with successes in its groups**: from that SFT model, sampling at
   temperature 0.7 (10.9% success against 3.1% at 1.0 in the audit) with
   groups of 8, rewarded by the ``strict`` preset, scored on the same test
   tasks; and the same GRPO rewarded by ``first-call-credit`` (0.2 more for
   the gold plan's first call: the audit found the right call in 37-66% of
   rollouts, so the groups differ in reward), reported as its own arm with the
   share of test episodes whose first call is right.

The SFT conversations come from ``Scale.more_demos``: by default the
``oracle-question-spelling`` demonstrator, which writes names as the question
spells them where only case differs (the tools ignore case), so every name the
model must put in a call is a copy of the question's tokens; ``--demos oracle``
gives the catalog's spelling, as the first runs did.

The audit's third step, longer pre-training, is the same lesson from another
base: ``python -m agentenv.lessons.scratch.base --init DIR`` continues pre-training a
model, and ``agentenv reproduce sft-more-data --base DIR/model`` starts from
it. Every figure has a 95% bootstrap CI; the summary records the assistant
tokens trained on, the demonstrator and the wall time of each phase, whatever
the result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenv.lessons.scratch.experiment import KINDS, MULTI_TURN, env_kwargs, export_rows, score

FIRST_CALL_PRESET = "first-call-credit"
"""The reward of the second GRPO arm: strict accuracy plus 0.2 for the gold plan's first call."""

OLD_ASSISTANT_TOKENS = 35_000
"""Supervised assistant tokens of the sft-then-rl lesson's SFT, as the audit counted them."""


def assistant_tokens(export_dir: Path) -> int:
    """Assistant (loss-bearing) tokens of an export with token ids, as its manifest counts them."""
    return int(json.loads((export_dir / "manifest.json").read_text())["policy_tokens"])


def run(out: Path, base: Path, scale: Any, log: Callable[[str], None]) -> dict[str, Any]:
    """Export, SFT, score seen and unseen, GRPO at temperature 0.7, score again; return the summary."""
    from agentenv.lessons.scratch.sft import train_sft
    from agentenv.lessons.scratch.tokenizer import load_tokenizer

    tok = load_tokenizer(base)
    export_dir = out / "data" / "multi"
    rows = export_rows(
        MULTI_TURN,
        "train",
        scale.more_rows,
        export_dir,
        kinds=list(KINDS),
        tokenizer=tok,
        agent=scale.more_demos,
    )
    trained_ids = [r["task_id"] for r in rows]
    tokens = assistant_tokens(export_dir)
    log(
        f"SFT data: {len(rows)} conversations, {tokens} assistant tokens "
        f"({tokens / OLD_ASSISTANT_TOKENS:.1f}x the sft-then-rl lesson's ~35k)"
    )
    sft = train_sft(base, [(rows, scale.more_sft)], out / "sft")
    log(f"SFT: {sft['wall_s']} s, loss {sft['loss_before']} -> {sft['loss_after']}")
    sft_model = out / "sft" / "model"
    summary: dict[str, Any] = {
        "data": {
            "conversations": len(rows),
            "distinct_tasks": len(set(trained_ids)),
            "assistant_tokens": tokens,
            "times_old_tokens": round(tokens / OLD_ASSISTANT_TOKENS, 2),
            "demonstrator": scale.more_demos,
        }
    }
    unseen = score(sft_model, MULTI_TURN, scale.eval_episodes, max_new_tokens=scale.max_new_tokens)
    seen = score(
        sft_model,
        MULTI_TURN,
        scale.seen_episodes,
        max_new_tokens=scale.max_new_tokens,
        split="train",
    )
    trained = set(trained_ids)
    seen["trained_on"] = sum(1 for t in seen["task_ids"] if t in trained)
    summary["sft"] = {
        **_headline(unseen),
        "test": unseen,
        "train_seen": seen,
        "train": sft,
        "model": str(sft_model),
    }
    log(
        f"SFT: test (unseen) {unseen['accuracy']} {unseen['ci']}; train tasks seen in SFT "
        f"({seen['trained_on']}/{seen['n']} of them trained on) {seen['accuracy']} {seen['ci']}"
    )
    # The same GRPO from the same SFT model, under strict and with partial credit for the right first call.
    for arm, difference, reward in (
        ("sft_grpo", "grpo_minus_sft", "strict"),
        ("sft_grpo_first_call", "first_call_grpo_minus_sft", FIRST_CALL_PRESET),
    ):
        summary[arm] = _grpo_arm(sft_model, out / arm, reward, scale, log)
        summary[difference] = _paired_difference(summary[arm]["test"]["correct"], unseen["correct"])
        log(
            f"SFT + GRPO ({reward}): right first call {summary[arm]['first_call']} "
            f"(SFT {unseen['first_call']}); difference to SFT {summary[difference]}"
        )
    summary["random"] = _headline(score(None, MULTI_TURN, scale.eval_episodes, agent="random"))
    return summary


def _grpo_arm(
    sft_model: Path, out: Path, reward: str, scale: Any, log: Callable[[str], None]
) -> dict[str, Any]:
    """GRPO from ``sft_model`` under ``reward`` (saved in ``out``), scored on the test tasks: the arm's summary."""
    from agentenv.lessons.scratch.grpo import train_grpo

    grpo = scale.more_grpo
    record = train_grpo(
        sft_model, out, MULTI_TURN, {**env_kwargs(MULTI_TURN), "reward": reward}, grpo
    )
    log(
        f"GRPO with {reward} (temperature {grpo.temperature}, groups of {grpo.num_generations}): "
        f"{record['wall_s']} s; mean reward per step {[c['reward'] for c in record['curve']]}"
    )
    after = score(
        out / "model", MULTI_TURN, scale.eval_episodes, max_new_tokens=scale.max_new_tokens
    )
    log(f"SFT + GRPO ({reward}): test {after['accuracy']} {after['ci']}")
    return {**_headline(after), "test": after, "train": record, "reward": reward}


def _headline(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "accuracy": result["accuracy"],
        "ci": result["ci"],
        "tool_calls": result["tool_calls"],
        "first_call": result.get("first_call"),
    }


def _paired_difference(after: list[float], before: list[float]) -> dict[str, Any]:
    """Mean of ``after - before`` per test task (same tasks, same order), with its 95% bootstrap CI."""
    from agentenv.lessons.structured.stats import mean_ci

    diffs = [a - b for a, b in zip(after, before, strict=True)]
    result = mean_ci(diffs, seed=0)
    return {"mean": result["mean"], "ci": result["ci"], "n": result["n"]}
