"""``agentenv reproduce judge-consistency``: a real LLM judge, measured against itself and the rules.

The workshop found the LLM judge too prompt-sensitive to be a reward. Here a
real instruction-tuned model (SmolLM2-135M-Instruct by default, built offline:
``agentenv models install smollm2-135m``) judges the same (answer, gold)
pairs from the test splits of MediaSearch and rare disease
(:func:`agentenv.judge.judge_pairs.draw_pairs`: correct answers in honest
forms, near misses, wrong entities, hedges and the ``":"`` / ``"Thought
process:"`` attacks), each also graded by the env's rule grammar, under five
paraphrased judge prompts (:data:`LESSON_PROMPTS`). Verdicts are read by an
allow-list (:func:`agentenv.judge.verdict_words.read_verdict`): the whole reply
must be one word of the pair its prompt asked for (:data:`VERDICT_PAIRS`);
anything else is unparseable and counted. :mod:`agentenv.judge.prompt_sensitivity` gives
Fleiss' kappa, flip rates, agreement with the rule grader, attack false
positives and the unparseable share, each with a bootstrap CI.

The judge stays monitor-only: nothing here feeds a reward.

Writes ``OUT/summary.json``, ``OUT/verdicts.jsonl`` (every pair with its five
raw replies and verdicts) and two PNGs. :func:`rescore` (``python -m
agentenv.judge.lesson --rescore OUT``) reads the saved raw replies again with
the current verdict reader and rewrites the verdicts, the summary and the
plots, without running the model.
"""

from __future__ import annotations

import json
import math
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

from agentenv.judge.judge_pairs import CATEGORIES, JudgePair, draw_pairs
from agentenv.judge.prompt_sensitivity import bootstrap, prompt_statistics
from agentenv.judge.prompts import PROMPTS, JudgePrompt
from agentenv.judge.verdict_words import CORRECT_INCORRECT, YES_NO, read_verdict

__all__ = [
    "FULL",
    "LESSON_PROMPTS",
    "QUICK",
    "VERDICT_PAIRS",
    "JudgeScale",
    "judge_pairs",
    "read_row",
    "rescore",
    "run",
]

LESSON_PROMPTS: tuple[JudgePrompt, ...] = tuple(
    replace(
        p,
        name="teacher-marks",
        closing="Is the candidate right? Reply with one word: CORRECT or INCORRECT.",
    )
    if p.name == "teacher"
    else p
    for p in PROMPTS
)
"""The package's five judge paraphrases, the teacher's asking for CORRECT / INCORRECT instead of yes / no."""

VERDICT_PAIRS: tuple[tuple[str, str], ...] = tuple(
    CORRECT_INCORRECT if p.name == "teacher-marks" else YES_NO for p in LESSON_PROMPTS
)
"""The verdict pair each of :data:`LESSON_PROMPTS` asks for, in the same order (its closing names both words)."""


def read_row(replies: list[str]) -> list[bool | None]:
    """The verdicts of one pair's replies, one per lesson prompt, each read with that prompt's pair."""
    if len(replies) != len(VERDICT_PAIRS):
        raise ValueError(
            f"expected {len(VERDICT_PAIRS)} replies (one per prompt), got {len(replies)}"
        )
    return [read_verdict(r, pair) for r, pair in zip(replies, VERDICT_PAIRS, strict=True)]


@dataclass(frozen=True)
class JudgeScale:
    """How many pairs are judged, and how."""

    pairs: int = 300
    seed: int = 0
    batch_size: int = 16
    max_new_tokens: int = 5
    resamples: int = 1000


FULL = JudgeScale()
QUICK = JudgeScale(pairs=60, resamples=300)


def judge_pairs(
    pairs: list[JudgePair],
    prompts: tuple[JudgePrompt, ...],
    reply: Callable[[list[Any]], list[str]],
) -> list[list[str]]:
    """The raw reply to every (pair, prompt), ``replies[pair][prompt]``, asked in one call of ``reply``."""
    conversations = [p.messages(x.question, x.answer, x.gold) for x in pairs for p in prompts]
    flat = reply(conversations)
    k = len(prompts)
    return [flat[i * k : (i + 1) * k] for i in range(len(pairs))]


def run(
    out: Path,
    *,
    quick: bool = False,
    model: str = "smollm2-135m",
    scale: JudgeScale | None = None,
    threads: int | None = None,
    plots: bool = True,
) -> dict[str, Any]:
    """Run the lesson into ``out`` and return its summary (also ``out/summary.json``)."""
    from agentenv.judge.local_judge import LocalJudge

    scale = scale or (QUICK if quick else FULL)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    log = _log(out)
    started = time.perf_counter()
    pairs = draw_pairs(scale.pairs, scale.seed)
    drawn_s = time.perf_counter() - started
    log(f"drew and rule-graded {len(pairs)} pairs from the test splits in {drawn_s:.1f} s")
    judge = LocalJudge(
        model, threads=threads, batch_size=scale.batch_size, max_new_tokens=scale.max_new_tokens
    )
    log(f"judge {judge.path} ({judge.dtype}; {judge.thread_note})")
    t0 = time.perf_counter()
    step = max(1, len(pairs) * len(LESSON_PROMPTS) // 10)

    def progress(done: int, total: int) -> None:
        if done == total or done // step != (done - scale.batch_size) // step:
            log(f"judged {done}/{total} ({time.perf_counter() - t0:.0f} s)")

    replies = judge_pairs(
        pairs, LESSON_PROMPTS, lambda conversations: judge.replies(conversations, progress)
    )
    judge_s = time.perf_counter() - t0
    log(f"{len(pairs) * len(LESSON_PROMPTS)} verdicts in {judge_s:.1f} s")
    verdicts = [read_row(row) for row in replies]
    with (out / "verdicts.jsonl").open("w", encoding="utf-8") as f:
        for pair, row, said in zip(pairs, verdicts, replies, strict=True):
            record = {**pair.to_dict(), "replies": said, "verdicts": row}
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    summary = summarize(pairs, verdicts, scale)
    summary["meta"] = {
        "lesson": "judge-consistency",
        "quick": quick,
        "judge": judge.describe(),
        "prompts": [p.name for p in LESSON_PROMPTS],
        "scale": scale.__dict__,
        "seeds": {"pairs": scale.seed, "bootstrap": scale.seed},
        "draw_s": round(drawn_s, 1),
        "judge_s": round(judge_s, 1),
        "wall_s": round(time.perf_counter() - started, 1),
        "machine": f"{platform.machine()}, {_cores()} usable cores, {platform.processor() or 'cpu'}",
        "versions": _versions(),
        "rewards": "monitor-only: no judge verdict feeds a reward",
    }
    (out / "summary.json").write_text(json.dumps(_clean(summary), indent=2) + "\n")
    if plots:
        plot(summary, out)
    return summary


def rescore(out: Path, *, plots: bool = True) -> dict[str, Any]:
    """Read the raw replies saved in ``out/verdicts.jsonl`` again and rewrite the verdicts, summary and plots.

    No model runs: the replies are the ones the judge gave. The run's metadata is
    kept, and ``meta["rescored"]`` records the reader used and how many verdicts
    changed from the ones the file held (``transitions``, e.g. ``"yes->unparseable"``).
    """
    out = Path(out)
    path = out / "verdicts.jsonl"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no saved replies to rescore (run the lesson into {out} first)"
        )
    fields = [f.name for f in dataclass_fields(JudgePair)]
    records, pairs, verdicts = [], [], []
    transitions: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        missing = [k for k in (*fields, "replies", "verdicts") if k not in record]
        if missing:
            raise ValueError(
                f"{path}:{number}: missing {missing}; expected a line the lesson wrote"
            )
        row = read_row(record["replies"])
        for before, after in zip(record["verdicts"], row, strict=True):
            if before is not after:
                key = f"{_label(before)}->{_label(after)}"
                transitions[key] = transitions.get(key, 0) + 1
        records.append({**record, "verdicts": row})
        pairs.append(JudgePair(**{k: record[k] for k in fields}))
        verdicts.append(row)
    summary_path = out / "summary.json"
    old = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    meta = dict(old.get("meta", {}))
    scale = JudgeScale(**meta["scale"]) if "scale" in meta else replace(FULL, pairs=len(pairs))
    started = time.perf_counter()
    summary = summarize(pairs, verdicts, scale)
    meta["rescored"] = {
        "reader": "whole reply is one allow-listed word of its prompt's pair "
        "(agentenv.judge.verdict_words.read_verdict)",
        "at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "changed": sum(transitions.values()),
        "transitions": dict(sorted(transitions.items())),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    kept = {k: v for k, v in old.items() if k not in summary and k != "meta"}
    summary = {**kept, **summary, "meta": meta}
    with path.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    summary_path.write_text(json.dumps(_clean(summary), indent=2) + "\n")
    _log(out)(
        f"rescored {len(records)} pairs from the saved replies: {meta['rescored']['changed']} verdicts "
        f"changed {meta['rescored']['transitions']}"
    )
    if plots:
        plot(summary, out)
    return summary


def _label(verdict: bool | None) -> str:
    return {True: "yes", False: "no", None: "unparseable"}[verdict]


def summarize(
    pairs: list[JudgePair], verdicts: list[list[bool | None]], scale: JudgeScale
) -> dict[str, Any]:
    """The lesson's figures: headline with CIs, per prompt, pairwise flips, by category and family."""
    names = [p.name for p in LESSON_PROMPTS]
    rules = [p.rule_correct for p in pairs]
    attack = [p.category == "attack" for p in pairs]
    stats = bootstrap(verdicts, rules, attack, names, resamples=scale.resamples, seed=scale.seed)
    head_keys = (
        "fleiss_kappa",
        "fleiss_kappa_3way",
        "flip_rate",
        "pairwise_flip_rate",
        "unparseable",
        "majority_rule_accuracy",
        "majority_rule_kappa",
        "attack_false_positive",
        "attack_any_prompt",
    )
    headline: dict[str, Any] = {"pairs": len(pairs), "prompts": len(names)}
    for key in head_keys:
        headline[key] = stats[key]["value"]
        headline[f"{key}_ci"] = stats[key]["ci"]
    per_prompt = {
        name: {
            field: value
            for key, cell in block.items()
            for field, value in ((key, cell["value"]), (f"{key}_ci", cell["ci"]))
        }
        for name, block in stats["per_prompt"].items()
    }
    pairwise = {
        key: {"flip_rate": cell["value"], "flip_rate_ci": cell["ci"]}
        for key, cell in stats["pairwise_flips"].items()
    }
    by_category = {}
    for category in CATEGORIES:
        rows = [i for i, p in enumerate(pairs) if p.category == category]
        credit = [v is True for i in rows for v in verdicts[i]]
        by_category[category] = {
            "pairs": len(rows),
            "rule_correct": sum(pairs[i].rule_correct for i in rows) / len(rows),
            "judge_credit": sum(credit) / len(credit),
            "unparseable": sum(v is None for i in rows for v in verdicts[i]) / len(credit),
        }
    by_family = {}
    for family in sorted({p.family for p in pairs}):
        rows = [i for i, p in enumerate(pairs) if p.family == family]
        point = prompt_statistics(
            [verdicts[i] for i in rows], [rules[i] for i in rows], [attack[i] for i in rows], names
        )
        by_family[family] = {
            "pairs": len(rows),
            **{k: point[k] for k in ("fleiss_kappa", "flip_rate", "majority_rule_accuracy")},
            "attack_false_positive": point["attack_false_positive"],
        }
    return {
        "judge": headline,
        "per_prompt": per_prompt,
        "pairwise_flips": pairwise,
        "by_category": by_category,
        "by_family": by_family,
    }


def plot(summary: dict[str, Any], out: Path) -> list[Path]:
    """``judge_consistency_prompts.png`` (per prompt: agreement with the rules, yes rate, unparseable,
    attack false positives, with CIs) and ``judge_consistency_categories.png`` (credit by answer category)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(summary["per_prompt"])
    metrics = (
        ("rule_accuracy", "agrees with rules"),
        ("yes_rate", "yes rate"),
        ("unparseable", "unparseable"),
        ("attack_false_positive", "credits an attack"),
    )
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(metrics)
    x = np.arange(len(names))
    for j, (key, label) in enumerate(metrics):
        values = [_num(summary["per_prompt"][n][key]) for n in names]
        cis = [summary["per_prompt"][n][f"{key}_ci"] for n in names]
        err = np.array(
            [
                [max(0.0, v - _num(c[0])), max(0.0, _num(c[1]) - v)]
                for v, c in zip(values, cis, strict=True)
            ]
        ).T
        ax.bar(x + j * width, values, width, yerr=err, capsize=2, label=label)
    head = summary["judge"]
    ax.set_xticks(x + 0.4 - width / 2, names)
    ax.set_ylim(0, 1.05)
    ax.set_title(
        f"{head['pairs']} pairs x {head['prompts']} prompts: Fleiss' kappa {_num(head['fleiss_kappa']):.2f}, "
        f"flip rate {head['flip_rate']:.2f}",
        fontsize=10,
    )
    ax.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.08))
    fig.tight_layout()
    first = out / "judge_consistency_prompts.png"
    fig.savefig(first, dpi=110)
    plt.close(fig)

    cats = list(summary["by_category"])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    x = np.arange(len(cats))
    ax.bar(
        x - 0.2, [summary["by_category"][c]["rule_correct"] for c in cats], 0.4, label="rule grader"
    )
    ax.bar(
        x + 0.2,
        [summary["by_category"][c]["judge_credit"] for c in cats],
        0.4,
        label="judge (all prompts)",
    )
    ax.set_xticks(x, cats)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share credited")
    ax.legend(fontsize=8)
    fig.tight_layout()
    second = out / "judge_consistency_categories.png"
    fig.savefig(second, dpi=110)
    plt.close(fig)
    return [first, second]


def _num(value: Any) -> float:
    return float("nan") if value is None else float(value)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("torch", "transformers", "numpy"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "missing"
    return found


def _log(out: Path) -> Callable[[str], None]:
    path = out / "log.txt"

    def log(message: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {message}"
        print(line, flush=True)
        with path.open("a") as f:
            f.write(line + "\n")

    return log


def main(argv: list[str] | None = None) -> int:
    """``python -m agentenv.judge.lesson --rescore DIR``: re-read a run's saved replies (no model)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m agentenv.judge.lesson", description=main.__doc__
    )
    parser.add_argument(
        "--rescore",
        type=Path,
        required=True,
        metavar="DIR",
        help="a judge-consistency output folder holding verdicts.jsonl",
    )
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    args = parser.parse_args(argv)
    try:
        summary = rescore(args.rescore, plots=not args.no_plots)
    except (FileNotFoundError, ValueError) as exc:
        parser.error(str(exc))
    head = summary["judge"]
    print(
        f"Fleiss' kappa {_num(head['fleiss_kappa']):.3f}, flip rate {head['flip_rate']:.3f}, "
        f"unparseable {head['unparseable']:.3f}, attack false positives {head['attack_false_positive']:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
