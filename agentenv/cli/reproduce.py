"""``agentenv reproduce LESSON``: run one of the workshop's reward lessons as learning runs.

The parser and the run function live here; ``agentenv/cli/main.py`` adds the
sub-command with ``reproduce_cli.add_parser(sub)``. See
:mod:`agentenv.lessons.structured.lessons` for what each lesson trains and reports.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentenv.evaluation.run_args import MAX_EPISODES, out_path
from agentenv.lessons.structured.rl_extra import ALGORITHMS

LESSON_NAMES = ("reward-hacking", "tool-cost", "single-vs-multi")
LLM_LESSONS = ("sft-then-rl", "holdout-selection", "sft-more-data")
"""Lessons that train a from-scratch LLM (agentenv.lessons.scratch; need the trl extra)."""
BC_LESSONS = ("sft-then-rl-classic", "holdout-selection-classic")
"""Behaviour-cloning lessons on the classic policy network (classic_sft_then_rl, classic_holdout; rl extra)."""
JUDGE_LESSONS = ("judge-consistency",)
"""A real LLM judge (SmolLM2-135M-Instruct by default) measured across paraphrased prompts (agentenv.judge.lesson)."""

MAX_SEEDS = 100
"""The most seeds one command trains per condition: a run took 222-332 s (docs/REPRODUCE.md), so
100 seeds of a two-condition lesson are about 16 hours; ``--seeds 10**18`` ran out of memory."""
MAX_SEED = 2**32 - 1
"""The largest seed the trainer takes (numpy's ``SeedSequence`` for stable-baselines3)."""
MAX_TIMESTEPS = 1_000_000_000
"""The most training steps per run: 20k steps took minutes, so 10^9 is months of one run."""
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")
"""A model folder's tokenizer: the LLM lessons read the first (their own loader); the judge, through
transformers, any of them."""
WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
"""Any one of these is a model folder's weights."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``reproduce`` to the ``agentenv`` sub-commands."""
    p = sub.add_parser(
        "reproduce",
        help="train on a lesson's envs and write summary.json and plots (rl or trl extra)",
        description="Reproduce a workshop lesson as learning curves: reward-hacking (strict vs lenient on "
        "RareDiseaseDiagnosis-v0), tool-cost (free tools vs efficient on MediaSearch-v0), single-vs-multi (each "
        "family's single- and multi-turn ids), with PPO on structured actions; sft-then-rl-classic and "
        "holdout-selection-classic (behaviour cloning from menu-oracle demonstrations, then PPO, on the same policy "
        "network); sft-then-rl (SFT, then multi- or "
        "single-turn GRPO), holdout-selection (SFT on holdout-loss selected data) and sft-more-data (SFT on 5x the "
        "data, then GRPO at temperature 0.7), with a from-scratch LLM "
        "from the shipped base checkpoint; judge-consistency (a real LLM judge, SmolLM2-135M-Instruct, on test-split "
        "answer/gold pairs under five paraphrased prompts: Fleiss' kappa, flip rate, agreement with the rule grader, "
        "attack false positives). Trains on the train split, scores on test with the evaluation "
        "runner, writes DIR/summary.json and DIR/*.png.",
    )
    p.add_argument("lesson", choices=LESSON_NAMES + LLM_LESSONS + BC_LESSONS + JUDGE_LESSONS)
    p.add_argument(
        "--out",
        type=out_path,
        required=True,
        help="output directory; one that holds a run is refused unless --overwrite",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run in --out (kept until the new one completes, and given back if it stops)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a small budget, a smoke run: measured, reward-hacking's took 54 s of CPU and "
        "7.6 min of wall time on 2 shared cores (load 12); quick lessons took 168-203 s at load 2-4 "
        "(docs/benchmarks.md)",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=None,
        help=f"train seeds 0..N-1 per condition, N from 1 to {MAX_SEEDS} (default: 3; quick: 1)",
    )
    p.add_argument(
        "--seed-list",
        type=_seed_list,
        default=None,
        metavar="A,B,...",
        help=f"train these seeds instead, e.g. 3,4: at most {MAX_SEEDS} distinct seeds from 0 to "
        f"{MAX_SEED} (not with --seeds)",
    )
    p.add_argument(
        "--timesteps",
        type=int,
        default=None,
        help=f"training steps per run, 1 to {MAX_TIMESTEPS:,} (default: the lesson's)",
    )
    p.add_argument(
        "--eval-episodes",
        type=int,
        default=None,
        help=f"test episodes per trained policy, 1 to {MAX_EPISODES:,}",
    )
    p.add_argument(
        "--baseline-episodes",
        type=int,
        default=None,
        help="test episodes of each seed's plan that random, bm25 and oracle play (default: all the "
        f"policies' episodes; 0: no baselines; at most {MAX_EPISODES:,})",
    )
    p.add_argument(
        "--algo",
        default="maskable_ppo",
        choices=list(ALGORITHMS),
        help="algorithm (default: %(default)s, sb3-contrib's MaskablePPO: only allowed menu entries sampled)",
    )
    p.add_argument(
        "--no-fixed-sequences",
        action="store_true",
        help="skip scoring every fixed menu sequence (the best-fixed-sequence arm)",
    )
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument(
        "--base",
        "--model",
        dest="base",
        type=Path,
        default=None,
        help="LLM lessons (also spelt --model): the model to start from, a directory or a packaged "
        "name such as smollm2-135m (default: the shipped base checkpoint); "
        "judge-consistency: the judge model, a directory or a packaged name (default: smollm2-135m)",
    )
    p.add_argument(
        "--device",
        default="cpu",
        help="sft-then-rl: where to train and evaluate: cpu (default), cuda[:N] or auto (cuda where "
        "torch sees a GPU); on cuda the trainer runs bf16 autocast",
    )
    p.add_argument(
        "--demos",
        default=None,
        choices=("oracle-question-spelling", "oracle"),
        help="sft-more-data: the demonstrator of the SFT data (default: oracle-question-spelling, names "
        "as the question spells them; oracle: the catalog's spelling, as the runs before it)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the lesson into ``--out`` through the lesson writer (:mod:`agentenv.evaluation.lesson_runs`): a folder
    holding a complete run is refused unless ``--overwrite``, an unfinished one is replaced; ``--quick`` is
    labelled a smoke run in ``summary.json`` and in the output; the headline figures print as a short table."""
    from agentenv.evaluation.lesson_runs import finish, lesson_output

    _check_flags(args)  # before the writer touches --out: a refused command leaves nothing behind
    with lesson_output(args.out, args.lesson, overwrite=args.overwrite, quick=args.quick):
        status = _run(args)
    return status if status else finish(args.out, args.lesson, args.quick)


def _run(args: argparse.Namespace) -> int:
    """Run the lesson, which writes ``summary.json`` and its plots into ``args.out``."""
    if args.lesson in LLM_LESSONS:
        return _run_llm_lesson(args)
    if args.lesson in JUDGE_LESSONS:
        from agentenv.judge.lesson import run as run_judge_lesson

        run_judge_lesson(
            args.out,
            quick=args.quick,
            model=str(args.base) if args.base is not None else "smollm2-135m",
            plots=not args.no_plots,
        )
        return 0
    if args.lesson in BC_LESSONS:
        return _run_bc_lesson(args)
    from agentenv.lessons.structured.lessons import run_lesson

    run_lesson(
        args.lesson,
        args.out,
        quick=args.quick,
        seeds=args.seeds,
        timesteps=args.timesteps,
        eval_episodes=args.eval_episodes,
        baseline_episodes=args.baseline_episodes,
        algo=args.algo,
        plots=not args.no_plots,
        seed_list=args.seed_list,
        fixed_sequences=not args.no_fixed_sequences,
    )
    return 0


def _check_flags(args: argparse.Namespace) -> None:
    """Refuse flags that cannot apply to the lesson (or to each other), in one line."""
    from agentenv.errors import UserInputError

    if args.lesson in LLM_LESSONS + JUDGE_LESSONS and (
        args.seeds is not None or args.seed_list is not None
    ):
        raise UserInputError(
            f"reproduce {args.lesson}: --seeds/--seed-list apply to the classic lessons; "
            "the LLM lessons train one seed (drop the flag)"
        )
    if args.seeds is not None and args.seed_list is not None:
        raise UserInputError("give --seeds N (seeds 0..N-1) or --seed-list A,B,..., not both")
    _check_count("--seeds", args.seeds, 1, MAX_SEEDS)
    _check_count("--timesteps", args.timesteps, 1, MAX_TIMESTEPS)
    _check_count("--eval-episodes", args.eval_episodes, 1, MAX_EPISODES)
    _check_count("--baseline-episodes", args.baseline_episodes, 0, MAX_EPISODES)
    if args.base is not None:
        _check_base(args.lesson, args.base)
    if args.device != "cpu" and args.lesson != "sft-then-rl":
        raise UserInputError(
            f"reproduce {args.lesson}: --device applies to sft-then-rl only; the other lessons "
            "train on the CPU (drop the flag)"
        )
    if args.demos is not None and args.lesson != "sft-more-data":
        raise UserInputError(
            f"reproduce {args.lesson}: --demos applies to sft-more-data only (drop the flag)"
        )


def _check_count(flag: str, value: int | None, least: int, most: int) -> None:
    """Refuse a count flag outside ``least..most`` in one line, in the classic lessons' words.

    Why here: each lesson checked its own flags, or none (``--eval-episodes 0`` made sft-then-rl
    write a "complete" summary with NaN accuracy); ``--seeds 10**18`` ran out of memory.
    """
    from agentenv.errors import UserInputError

    if value is None:
        return
    if value < least:
        raise UserInputError(f"{flag} must be >= {least}, got {value}")
    if value > most:
        raise UserInputError(f"{flag} must be from {least} to {most:,}, got {value}")


def _check_base(lesson: str, base: Path) -> None:
    """Refuse a ``--base`` that is neither a packaged model name nor a model folder, in one line.

    Why: a wrong name or an empty folder failed deep in the tokenizer loader ("no tokenizer.json",
    "Couldn't instantiate the backend tokenizer") with exit 1, after ``--out`` was made.
    """
    from agentenv.errors import UserInputError
    from agentenv.models import MODEL_NAMES, is_model_name, resolve_model

    if lesson not in LLM_LESSONS + JUDGE_LESSONS:
        raise UserInputError(
            f"reproduce {lesson}: --base applies to the LLM lessons and judge-consistency only "
            "(drop the flag)"
        )
    if is_model_name(str(base)):
        resolve_model(str(base))  # not installed: one line naming the install command
        return
    judge = lesson in JUDGE_LESSONS
    if judge and not base.exists() and _in_hub_cache(str(base)):
        return  # the judge loads a hub id from the local cache (transformers, offline)
    tokenizers = TOKENIZER_FILES if judge else TOKENIZER_FILES[:1]
    problem = _not_a_model_folder(base, tokenizers)
    if problem is not None:
        raise UserInputError(
            f"--base {str(base)!r}: {problem}; give a model folder written by save_pretrained "
            f"(config.json, {' or '.join(tokenizers)}, and its weights) or a packaged model "
            f"name: {', '.join(MODEL_NAMES)} (`agentenv models list` shows which are installed)"
        )


def _not_a_model_folder(path: Path, tokenizers: tuple[str, ...]) -> str | None:
    """What ``path`` lacks to be a model folder with one of ``tokenizers``, or None when it is one."""
    if not path.is_dir():
        return "no such folder, and not a packaged model name"
    if not (path / "config.json").is_file():
        return "the folder holds no config.json"
    if not any((path / name).is_file() for name in tokenizers):
        return f"the folder holds no tokenizer ({' or '.join(tokenizers)})"
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        return f"the folder holds no weights ({' or '.join(WEIGHT_FILES[::2])})"
    return None


def _in_hub_cache(name: str) -> bool:
    """Whether ``name`` is a hub id whose ``config.json`` is in the local Hugging Face cache."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except Exception:  # noqa: BLE001 - not a valid hub id: not in the cache
        return False


def _seed_list(text: str) -> list[int]:
    """``--seed-list 3,4``: at most ``MAX_SEEDS`` distinct comma-separated seeds, each 0..2**32-1."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seeds like 3,4, got {text!r}") from None
    if not seeds or any(not 0 <= s <= MAX_SEED for s in seeds):
        raise argparse.ArgumentTypeError(
            f"expected seeds from 0 to {MAX_SEED} (2**32-1) like 3,4, got {text!r}"
        )
    if len(set(seeds)) != len(seeds) or len(seeds) > MAX_SEEDS:
        raise argparse.ArgumentTypeError(
            f"expected at most {MAX_SEEDS} distinct seeds like 3,4, got {text!r}"
        )
    return seeds


def _run_llm_lesson(args: argparse.Namespace) -> int:
    from agentenv.lessons.scratch.lessons import (
        DEFAULT,
        QUICK,
        REAL_DEFAULT,
        REAL_QUICK,
        is_pretrained_base,
        run_lesson,
        with_overrides,
    )
    from agentenv.models import resolve_model

    real = args.base is not None and is_pretrained_base(Path(resolve_model(str(args.base))))
    quick, full = (REAL_QUICK, REAL_DEFAULT) if real else (QUICK, DEFAULT)
    scale = with_overrides(
        quick if args.quick else full, eval_episodes=args.eval_episodes, more_demos=args.demos
    )
    run_lesson(
        args.lesson,
        args.out,
        quick=args.quick,
        base=args.base,
        scale=scale,
        plots=not args.no_plots,
        device=args.device,
    )
    return 0


def _run_bc_lesson(args: argparse.Namespace) -> int:
    from agentenv.lessons.structured import classic_holdout, classic_sft_then_rl

    if args.lesson == "sft-then-rl-classic":
        classic_sft_then_rl.run(
            args.out,
            quick=args.quick,
            seeds=args.seeds,
            seed_list=args.seed_list,
            timesteps=args.timesteps,
            eval_episodes=args.eval_episodes,
            plots=not args.no_plots,
        )
    else:
        classic_holdout.run(
            args.out,
            quick=args.quick,
            seeds=args.seeds,
            seed_list=args.seed_list,
            eval_episodes=args.eval_episodes,
            plots=not args.no_plots,
        )
    return 0
