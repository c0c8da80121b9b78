"""``agentenv reproduce sft-then-rl`` and ``holdout-selection``: the LLM lessons, from the base checkpoint.

* **sft-then-rl**: SFT on oracle conversations (lookup first, then lookup and
  constraint, multi-turn and single-turn), then GRPO from that checkpoint
  twice, multi-turn (``MediaSearch-v0``, tools) and single-turn
  (``MediaSearch-SingleTurn-v0``, passages), the same steps, prompts and seed.
  The three checkpoints and the random agent are scored on the same test tasks.
* **holdout-selection**: SFT on four training sets of the same candidates: all,
  a random 30%, the top 30% by in-context holdout loss with a holdout drawn
  like the test set (validation, both kinds), and the same with a mismatched
  holdout (validation, constraint questions only). ``agentenv data
  shift-check`` compares each holdout with the test tasks.

Every run writes ``DIR/summary.json`` and PNGs. Nothing is tuned on test: the
settings below were chosen before the test runs, and the holdouts come from
validation.

A pretrained base (``--base smollm2-135m``, or any model directory whose vocabulary is larger
than the from-scratch tokenizer's) gets its own scales (:data:`REAL_DEFAULT`, :data:`REAL_QUICK`):
LoRA SFT and GRPO, batched evaluation, and on a CPU budgets small enough for a smoke run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from agentenv.lessons.scratch.experiment import (
    KINDS,
    MULTI_TURN,
    SINGLE_TURN,
    export_rows,
    score,
    versions,
    write_json,
)
from agentenv.lessons.scratch.grpo import GRPOSettings
from agentenv.lessons.scratch.sft import SFTSettings

LESSONS = ("sft-then-rl", "holdout-selection", "sft-more-data")


@dataclass(frozen=True)
class Scale:
    """How much each lesson trains and evaluates."""

    multi_rows: int = 300
    """Oracle multi-turn conversations exported per kind (train split)."""
    single_rows: int = 100
    """Oracle single-turn conversations exported per kind (sft-then-rl only)."""
    lookup_first: SFTSettings = field(default_factory=lambda: SFTSettings(epochs=1.0))
    together: SFTSettings = field(default_factory=lambda: SFTSettings(epochs=2.0))
    grpo: GRPOSettings = field(default_factory=lambda: GRPOSettings(steps=10))
    eval_episodes: int = 100
    max_new_tokens: int = 96
    candidates: int = 400
    """holdout-selection: candidate conversations (split evenly between kinds)."""
    holdout_rows: int = 32
    holdout_per_example: int = 2
    fraction: float = 0.3
    selection_sft: SFTSettings = field(default_factory=lambda: SFTSettings(epochs=2.0))
    more_rows: int = 4500
    """sft-more-data: oracle episodes exported from the train split, lookup and constraint (about 80% are
    kept: the export drops those that open an id no tool listed): ~6x the sft-then-rl lesson's tokens."""
    more_sft: SFTSettings = field(default_factory=lambda: SFTSettings(epochs=1.0))
    more_demos: str = "oracle-question-spelling"
    """sft-more-data: the demonstrator. ``oracle-question-spelling`` writes names as the question
    does where only case differs, so they are copies; ``oracle`` writes the catalog's spelling
    (the runs before it: 0.05 on test, docs/REPRODUCE.md §5b)."""
    seen_episodes: int = 100
    """sft-more-data: train tasks scored, the first of the export's own order (the summary counts how many
    were trained on: those whose episode the export dropped were not)."""
    more_grpo: GRPOSettings = field(
        default_factory=lambda: GRPOSettings(
            steps=20, prompts_per_step=2, num_generations=8, temperature=0.7
        )
    )
    eval_batch: int | None = None
    """Test episodes decoded together by the ``hf`` agent (None: its default for a directory, 1)."""
    eval_max_turns: int | None = None
    """Turns of a test episode (None: the env's own, 8); the smoke run of a real model caps them."""
    probe_rows: int = 32
    """Training rows whose loss is measured before and after SFT."""


DEFAULT = Scale()
QUICK = Scale(
    multi_rows=8,
    single_rows=4,
    lookup_first=SFTSettings(epochs=1.0, batch=8),
    together=SFTSettings(epochs=1.0, batch=8),
    grpo=GRPOSettings(
        steps=1, prompts_per_step=2, num_generations=2, max_completion_length=96, tasks=8
    ),
    eval_episodes=4,
    max_new_tokens=48,
    candidates=24,
    holdout_rows=8,
    holdout_per_example=1,
    selection_sft=SFTSettings(epochs=1.0, batch=8),
    more_rows=6,
    more_sft=SFTSettings(epochs=1.0, batch=8),
    seen_episodes=2,
    more_grpo=GRPOSettings(
        steps=1,
        prompts_per_step=2,
        num_generations=2,
        max_completion_length=96,
        tasks=8,
        temperature=0.7,
    ),
)

_REAL_SFT = SFTSettings(epochs=3.0, learning_rate=3e-4, batch=8, max_length=1024, lora_r=16)
REAL_DEFAULT = Scale(
    multi_rows=1500,
    single_rows=500,
    lookup_first=replace(_REAL_SFT, epochs=1.0),
    together=_REAL_SFT,
    grpo=GRPOSettings(
        steps=30,
        prompts_per_step=8,
        num_generations=8,
        learning_rate=2e-5,
        temperature=0.7,
        max_completion_length=384,
        lora_r=16,
    ),
    eval_episodes=200,
    eval_batch=64,
    selection_sft=replace(_REAL_SFT, epochs=2.0),
    more_sft=replace(_REAL_SFT, epochs=1.0),
    more_grpo=GRPOSettings(
        steps=20, prompts_per_step=2, num_generations=8, temperature=0.7, lora_r=16
    ),
)
"""A pretrained base (SmolLM2-135M) at full size: meant for a GPU (``--device cuda``); on 2 CPU
cores its SFT alone would take days."""
REAL_QUICK = Scale(
    multi_rows=2,
    single_rows=1,
    lookup_first=SFTSettings(
        epochs=1.0, learning_rate=3e-4, batch=1, max_length=768, lora_r=8, warmup_ratio=0.0
    ),
    together=SFTSettings(
        epochs=1.0, learning_rate=3e-4, batch=2, max_length=768, lora_r=8, warmup_ratio=0.0
    ),
    grpo=GRPOSettings(
        steps=1,
        prompts_per_step=1,
        num_generations=2,
        max_completion_length=32,
        max_tool_calling_iterations=1,
        temperature=0.7,
        tasks=4,
        lora_r=8,
    ),
    eval_episodes=2,
    max_new_tokens=32,
    eval_batch=2,
    eval_max_turns=2,
    probe_rows=2,
    candidates=4,
    holdout_rows=8,  # the shift check's classifier test needs 5 kept rows a file
    holdout_per_example=1,
    selection_sft=SFTSettings(
        epochs=1.0, learning_rate=3e-4, batch=2, max_length=768, lora_r=8, warmup_ratio=0.0
    ),
    more_rows=4,
    more_sft=SFTSettings(
        epochs=1.0, learning_rate=3e-4, batch=2, max_length=768, lora_r=8, warmup_ratio=0.0
    ),
    seen_episodes=2,
    more_grpo=GRPOSettings(
        steps=1,
        prompts_per_step=1,
        num_generations=2,
        max_completion_length=32,
        max_tool_calling_iterations=1,
        temperature=0.7,
        tasks=4,
        lora_r=8,
    ),
)
"""A pretrained base's smoke run: every stage once, on CPU in minutes; its figures are not results."""


def is_pretrained_base(model_dir: Path) -> bool:
    """Whether ``model_dir`` holds a pretrained model rather than a from-scratch one: its vocabulary
    is larger than the from-scratch tokenizer's 8,192 (SmolLM2: 49,152)."""
    config = Path(model_dir) / "config.json"
    if not config.is_file():
        return False
    return int(json.loads(config.read_text()).get("vocab_size", 0)) > 16_384


def _log(out: Path) -> Callable[[str], None]:
    path = out / "log.txt"

    def log(message: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {message}"
        print(line, flush=True)
        with path.open("a") as f:
            f.write(line + "\n")

    return log


def run_lesson(
    name: str,
    out: Path,
    *,
    quick: bool = False,
    base: Path | None = None,
    scale: Scale | None = None,
    plots: bool = True,
    device: str = "cpu",
) -> dict[str, Any]:
    """Run lesson ``name`` into ``out`` and return its summary (also ``out/summary.json``).

    ``scale`` None: :data:`QUICK` / :data:`DEFAULT`, or for a pretrained base :data:`REAL_QUICK` /
    :data:`REAL_DEFAULT`. ``device``: ``cpu``, ``cuda`` or ``auto`` (sft-then-rl; the other lessons
    train on the CPU).
    """
    from agentenv.lessons.scratch.base import shipped_base
    from agentenv.models.threads import apply_thread_policy
    from agentenv.models.training import resolve_device

    if name not in LESSONS:
        raise ValueError(f"unknown lesson {name!r}; the LLM lessons are {', '.join(LESSONS)}")
    out.mkdir(parents=True, exist_ok=True)
    threads_note = apply_thread_policy()
    if base is None:
        base = shipped_base()
    else:  # a directory, or a packaged model's name (smollm2-135m): its verified directory
        from agentenv.models import resolve_model

        base = Path(resolve_model(str(base)))
    if scale is None and is_pretrained_base(base):
        scale = REAL_QUICK if quick else REAL_DEFAULT
    scale = scale or (QUICK if quick else DEFAULT)
    device = resolve_device(device)
    started = time.perf_counter()
    if name == "sft-more-data":
        from agentenv.lessons.scratch import sft_more_data

        summary = sft_more_data.run(out, base, scale, _log(out))
    elif name == "sft-then-rl":
        summary = _sft_then_rl(out, base, scale, _log(out), device=device)
    else:
        summary = _holdout_selection(out, base, scale, _log(out))
    summary["meta"] = {
        "lesson": name,
        "quick": quick,
        "device": device,
        "threads": threads_note,
        "base": str(base),
        "scale": asdict(scale),
        "kinds": list(KINDS),
        "wall_s": round(time.perf_counter() - started, 1),
        "versions": versions(),
    }
    write_json(out / "summary.json", summary)
    if plots:
        from agentenv.lessons.scratch.plots import plot_summary

        plot_summary(name, summary, out)
    return summary


def _sft_then_rl(
    out: Path, base: Path, scale: Scale, log: Callable[[str], None], *, device: str = "cpu"
) -> dict[str, Any]:
    from agentenv.lessons.scratch.grpo import train_grpo
    from agentenv.lessons.scratch.sft import train_sft
    from agentenv.lessons.scratch.token_check import check_rollouts
    from agentenv.lessons.scratch.tokenizer import load_tokenizer

    data = out / "data"
    tok = load_tokenizer(base)
    lookup = export_rows(
        MULTI_TURN,
        "train",
        scale.multi_rows,
        data / "multi_lookup",
        kinds=["lookup"],
        tokenizer=tok,
    )
    constraint = export_rows(
        MULTI_TURN,
        "train",
        scale.multi_rows,
        data / "multi_constraint",
        kinds=["constraint"],
        tokenizer=tok,
    )
    single = export_rows(
        SINGLE_TURN, "train", 2 * scale.single_rows, data / "single", tokenizer=tok
    )
    log(
        f"SFT data: {len(lookup)} lookup, {len(constraint)} constraint, {len(single)} single-turn conversations"
    )
    sft = train_sft(
        base,
        [(lookup, scale.lookup_first), (lookup + constraint + single, scale.together)],
        out / "sft",
        device=device,
        probe_rows=scale.probe_rows,
    )
    log(f"SFT: {sft['wall_s']} s, loss {sft['loss_before']} -> {sft['loss_after']}")
    sft_model = out / "sft" / "model"
    arms: dict[str, Any] = {"sft": {"model": str(sft_model), "train": sft}}
    for arm, env_id in (("sft_rl_multi_turn", MULTI_TURN), ("sft_rl_single_turn", SINGLE_TURN)):
        from agentenv.lessons.scratch.experiment import env_kwargs

        record = train_grpo(
            sft_model, out / arm, env_id, env_kwargs(env_id), scale.grpo, device=device
        )
        batches = json.loads((out / arm / "batches.json").read_text())
        check = check_rollouts(
            [r for b in batches for r in b["rollouts"]],
            env_id,
            env_kwargs(env_id),
            load_tokenizer(sft_model),
        )
        record["token_check"] = check.to_dict()
        variance = [c["groups_with_variance"] for c in record["curve"]]
        log(
            f"GRPO {arm}: {record['wall_s']} s; token-exact {check.exact}/{check.rollouts} rollouts; "
            f"groups with reward variance by step {variance}"
        )
        arms[arm] = {"model": str(out / arm / "model"), "train": record}
    summary: dict[str, Any] = {}
    for arm, info in arms.items():
        summary[arm] = {
            env: score(
                info["model"],
                env,
                scale.eval_episodes,
                max_new_tokens=scale.max_new_tokens,
                device=device,
                batch_size=scale.eval_batch,
                max_turns=scale.eval_max_turns,
            )
            for env in (MULTI_TURN, SINGLE_TURN)
        }
        summary[arm].update(_headline(summary[arm]))
        summary[arm]["train"] = info["train"]
        log(f"{arm}: test accuracy {summary[arm]['accuracy']} {summary[arm]['ci']}")
    summary["random"] = {
        env: score(None, env, scale.eval_episodes, agent="random", max_turns=scale.eval_max_turns)
        for env in (MULTI_TURN, SINGLE_TURN)
    }
    summary["random"].update(_headline(summary["random"]))
    return summary


def _headline(by_env: dict[str, Any]) -> dict[str, Any]:
    """The headline figures of an arm: its multi-turn test accuracy with CI (the agentic task)."""
    head = by_env[MULTI_TURN]
    return {"accuracy": head["accuracy"], "ci": head["ci"], "tool_calls": head["tool_calls"]}


def _holdout_selection(
    out: Path, base: Path, scale: Scale, log: Callable[[str], None]
) -> dict[str, Any]:
    from agentenv.data.selection import (
        SelectionConfig,
        in_context_scores,
        select_random,
        select_top,
        write_selection,
    )
    from agentenv.data.shift_check import shift_check
    from agentenv.lessons.scratch.sft import train_sft

    data = out / "data"
    half = scale.candidates // 2
    model, tokenizer = _load(base)
    candidates = export_rows(
        MULTI_TURN, "train", half, data / "candidates_lookup", kinds=["lookup"], tokenizer=tokenizer
    ) + export_rows(
        MULTI_TURN,
        "train",
        half,
        data / "candidates_constraint",
        kinds=["constraint"],
        tokenizer=tokenizer,
    )
    matched = export_rows(
        MULTI_TURN, "validation", scale.holdout_rows, data / "holdout_matched", tokenizer=tokenizer
    )
    mismatched = export_rows(
        MULTI_TURN,
        "validation",
        scale.holdout_rows,
        data / "holdout_mismatched",
        kinds=["constraint"],
        tokenizer=tokenizer,
    )
    test_tasks = _write_test_tasks(data / "test_tasks.jsonl")
    shift = {
        name: shift_check(
            data / f"holdout_{name}" / "rows.jsonl", test_tasks, seed=0, baseline=False
        ).to_dict()
        for name in ("matched", "mismatched")
    }
    config = SelectionConfig(
        fraction=scale.fraction,
        holdout_per_example=scale.holdout_per_example,
        max_length=1024,
        batch_size=8,
        seed=0,
    )
    sets: dict[str, list[dict[str, Any]]] = {
        "all": candidates,
        "random": select_random(candidates, scale.fraction, seed=0),
    }
    selection_s = {}
    for name, holdout in (("matched_holdout", matched), ("mismatched_holdout", mismatched)):
        t0 = time.perf_counter()
        scores = in_context_scores(model, tokenizer, candidates, holdout, config)
        selection_s[name] = round(time.perf_counter() - t0, 1)
        sets[name] = select_top(candidates, scores, scale.fraction)
        log(f"scored {len(candidates)} candidates against the {name}: {selection_s[name]} s")
    summary: dict[str, Any] = {}
    for name, rows in sets.items():
        write_selection(rows, data / "sets" / f"{name}.jsonl")
        record = train_sft(base, [(rows, scale.selection_sft)], out / name)
        result = score(
            out / name / "model",
            MULTI_TURN,
            scale.eval_episodes,
            max_new_tokens=scale.max_new_tokens,
        )
        kinds = {k: sum(1 for r in rows if r["kind"] == k) for k in KINDS}
        summary[name] = {
            **result,
            "rows": len(rows),
            "rows_by_kind": kinds,
            "sft_wall_s": record["wall_s"],
            "selection_s": selection_s.get(name),
        }
        log(f"{name}: {len(rows)} rows {kinds}; test accuracy {result['accuracy']} {result['ci']}")
    summary["random_agent"] = score(None, MULTI_TURN, scale.eval_episodes, agent="random")
    summary["shift"] = shift
    return summary


def _write_test_tasks(path: Path) -> Path:
    """The test split's tasks of the subset (text, kind, difficulty), for the shift check only."""
    import gymnasium as gym

    from agentenv.lessons.scratch.experiment import env_kwargs

    env = gym.make(f"agentenv:{MULTI_TURN}", split="test", **env_kwargs(MULTI_TURN))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for t in env.unwrapped.tasks:
            f.write(
                json.dumps({"prompt": t.prompt, "kind": t.kind, "difficulty": t.difficulty}) + "\n"
            )
    return path


def _load(model_dir: Path) -> tuple[Any, Any]:
    """Model (float32: a bfloat16 checkpoint is slow on a CPU without bf16 units) and tokenizer."""
    from agentenv.lessons.scratch.tokenizer import load_tokenizer
    from agentenv.models.training import load_for_training

    return load_for_training(model_dir, "cpu"), load_tokenizer(model_dir)


def with_overrides(scale: Scale, **changes: Any) -> Scale:
    """``scale`` with some fields replaced (for the command line)."""
    return replace(scale, **{k: v for k, v in changes.items() if v is not None})
