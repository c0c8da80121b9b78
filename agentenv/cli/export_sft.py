"""``agentenv export-sft``: the command-line face of :func:`agentenv.data.sft.export_sft`.

The main ``agentenv`` parser calls :func:`add_parser` and hands the parsed
namespace to :func:`run`; ``python -m agentenv.cli.export_sft`` runs it alone.

Example:
    >>> import argparse
    >>> sub = argparse.ArgumentParser().add_subparsers(dest="command")
    >>> _ = add_parser(sub)
    >>> args = sub.choices["export-sft"].parse_args(["MediaSearch-v0", "--out", "sft", "--episodes", "8"])
    >>> config_from_args(args)
    ExportConfig(env_id='MediaSearch-v0', out=PosixPath('sft'), agent='oracle', split='train', episodes=8, seed=0, keep_all=False, min_reward=1.0, think=True, reward=None, allow_ungrounded=False, env_args={})
    >>> args = sub.choices["export-sft"].parse_args(["MediaSearch-v0", "--out", "sft",
    ...     "--env-arg", "compact=true", "--env-arg", 'kinds=["lookup"]'])
    >>> config_from_args(args).env_args
    {'compact': True, 'kinds': ['lookup']}
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentenv.data.sft import ExportConfig, ExportOutcome
from agentenv.evaluation.run_args import (
    MAX_EPISODES,
    count_of,
    out_path,
    seed_number,
    tasks_path,
)
from agentenv.terminal_text import terminal_text

COMMAND = "export-sft"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``export-sft`` to an ``argparse`` sub-parser collection."""
    from agentenv.cli.help_format import HelpFormatter

    p = subparsers.add_parser(
        COMMAND,
        help="export agent episodes as SFT data (chat JSONL for TRL, token JSONL through TokenEnv)",
        description="Run an agent on a split and write chat.jsonl, tokens.jsonl and manifest.json. "
        "The split is train unless you pick another: SFT data must not come from the test split.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("env_id", help="a registered env id, e.g. MediaSearch-v0 (see agentenv list)")
    p.add_argument(
        "--out",
        type=out_path,
        required=True,
        help="output directory; written in a temporary folder beside it and renamed into place",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an export already in --out")
    p.add_argument("--agent", default="oracle", help="agent name")
    p.add_argument(
        "--split",
        default="train",
        choices=["train", "validation", "test"],
        help="split whose tasks are run (never export from test for training)",
    )
    p.add_argument(
        "--tasks",
        type=tasks_path,
        help="your own tasks instead of the split (as agentenv eval --tasks); recorded in "
        "manifest.json's env_args",
    )
    p.add_argument(
        "--episodes", type=count_of("episodes", MAX_EPISODES), default=100, help="episodes to run"
    )
    p.add_argument("--seed", type=seed_number, default=0, help="seed of the first episode")
    p.add_argument(
        "--keep-all",
        action="store_true",
        help="write every episode run (no reward or grounding filter)",
    )
    p.add_argument(
        "--min-reward",
        type=float,
        default=1.0,
        help="keep episodes with at least this reward (1.0: solved)",
    )
    p.add_argument(
        "--no-think",
        action="store_true",
        help="no scripted <think> line on the oracle's turns (Qwen3 no-thinking headers)",
    )
    p.add_argument("--reward", help="reward preset name or config file (default: the env's reward)")
    p.add_argument(
        "--allow-ungrounded",
        action="store_true",
        help="keep episodes that call a tool with an id the conversation never showed",
    )
    p.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keyword argument for gym.make, as for agentenv eval, e.g. compact=true or "
        "kinds='[\"lookup\"]' (repeatable; VALUE is read as JSON when it parses, else as a string); "
        "recorded in manifest.json",
    )
    p.add_argument(
        "--tokenizer",
        help="a Hugging Face tokenizer (path) for tokens.jsonl (default: the offline Qwen3 template)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def config_from_args(args: argparse.Namespace) -> ExportConfig:
    """The export config of parsed arguments (``--env-arg`` read by :func:`agentenv.evaluation.run_args.parse_env_args`)."""
    from agentenv.evaluation.run_args import parse_env_args

    env_args = parse_env_args(getattr(args, "env_arg", None) or [])
    if getattr(args, "tasks", None) is not None:
        env_args["tasks"] = str(args.tasks.resolve())
    return ExportConfig(
        env_id=args.env_id,
        out=args.out,
        agent=args.agent,
        split=args.split,
        episodes=args.episodes,
        seed=args.seed,
        keep_all=args.keep_all,
        min_reward=args.min_reward,
        think=not args.no_think,
        reward=args.reward,
        allow_ungrounded=args.allow_ungrounded,
        env_args=env_args,
    )


def run(args: argparse.Namespace) -> int:
    """Run the export into a temporary folder beside ``--out``, then rename it into place.

    Why: an interrupted export over an earlier one must not leave the old
    ``manifest.json`` beside new rows. The old export stays whole until the new
    one is complete; an existing export in ``--out`` is refused unless ``--overwrite``, and a folder
    holding anything else always is (``--overwrite`` replaces the whole folder, so it may only
    replace an export). An export that keeps no episode is refused too: it is no SFT data.
    """
    from dataclasses import replace

    from agentenv.data.sft import export_episodes
    from agentenv.errors import UserInputError
    from agentenv.evaluation.run_dir import replace_folder, sigterm_as_interrupt, staging_folder

    if args.episodes < 1:
        raise UserInputError(f"--episodes must be at least 1, got {args.episodes}")
    if not math.isfinite(args.min_reward):
        raise UserInputError(f"--min-reward must be a finite number, got {args.min_reward}")
    config = _checked_config(args)
    template = _template(args)
    staged = staging_folder(config.out)
    try:
        with sigterm_as_interrupt():
            outcome = export_episodes(
                replace(config, out=staged), template=template, progress=not args.no_progress
            )
            if outcome.manifest.kept == 0:
                raise UserInputError(_nothing_kept(outcome, config))
            _check_out(args, config)  # again: a file the user put there meanwhile stays theirs
            replace_folder(staged, config.out)
    except KeyboardInterrupt:
        print(
            f"agentenv: interrupted; nothing written (the export was staged in a temporary folder), "
            f"{terminal_text(config.out)} is as it was",
            file=sys.stderr,
        )
        return 130
    finally:
        if staged.exists():
            import shutil

            shutil.rmtree(staged, ignore_errors=True)
    manifest = outcome.manifest
    print(
        f"kept {manifest.kept} of {manifest.episodes} episodes "
        f"({manifest.ungrounded} dropped for ungrounded ids); {manifest.tokens} tokens, "
        f"{manifest.policy_tokens} with loss"
    )
    print(
        terminal_text(
            f"wrote {config.out / 'chat.jsonl'}, {config.out / 'tokens.jsonl'} and "
            f"{config.out / 'manifest.json'}"
        )
    )
    return 0


def _checked_config(args: argparse.Namespace) -> ExportConfig:
    """The export config, its env, ``--env-arg``, ``--tasks`` and ``--out`` checked before any episode."""
    from agentenv.evaluation.run_args import (
        check_env_args,
        check_tasks_path,
        env_spec,
        parse_env_args,
    )

    if args.tasks is not None:
        check_tasks_path(args.tasks, env_id=args.env_id)
    config = config_from_args(args)
    env_spec(config.env_id)  # an unknown id is a one-line error
    given = parse_env_args(args.env_arg)
    if given:
        # the checks of `agentenv eval --env-arg` (own flags, unknown keywords), not a copy
        check_env_args(config.env_id, given)
    _check_out(args, config)
    return config


def _check_out(args: argparse.Namespace, config: ExportConfig) -> None:
    """Refuse an ``--out`` that ``--overwrite`` may not replace: one that is, holds or lies in an
    input, is not a folder (a link, a FIFO, a device), or holds anything but a previous export."""
    from agentenv.data.export_files import (
        refuse_non_export,
        refuse_out_node,
        refuse_out_over_inputs,
    )
    from agentenv.evaluation.run_dir import refuse_file

    refuse_out_over_inputs(config.out, _inputs(args))
    refuse_out_node(config.out, "folder")
    refuse_file(config.out)
    refuse_non_export(config.out, overwrite=args.overwrite)


def _inputs(args: argparse.Namespace) -> dict[str, Path | None]:
    """The paths the export reads: ``--tasks``, and ``--reward`` and ``--tokenizer`` where they
    name a file or folder (rather than a preset or a packaged model)."""
    named = {"--reward": args.reward, "--tokenizer": args.tokenizer}
    inputs: dict[str, Path | None] = {"--tasks": args.tasks}
    inputs.update(
        (flag, Path(value)) for flag, value in named.items() if value and Path(value).exists()
    )
    return inputs


def _template(args: argparse.Namespace) -> Any:
    """The chat template of ``--tokenizer`` (a folder or a packaged name), or None: the offline Qwen3 one."""
    if not args.tokenizer:
        return None
    from transformers import AutoTokenizer

    from agentenv.errors import UserInputError
    from agentenv.models import resolve_model
    from agentenv.tokens.chat_templates import hf_template

    where = resolve_model(args.tokenizer)  # a packaged name (smollm2-135m) or a folder
    if not Path(where).is_dir():  # nothing is fetched from a hub
        raise UserInputError(
            f"--tokenizer {args.tokenizer}: no such folder; give a folder holding a Hugging "
            "Face tokenizer with a chat template, or a packaged model name (smollm2-135m)"
        )
    chat_kwargs = {"enable_thinking": False} if args.no_think else {}
    return hf_template(AutoTokenizer.from_pretrained(where), **chat_kwargs)


def _nothing_kept(outcome: ExportOutcome, config: ExportConfig) -> str:
    """The one-line refusal of an export that kept no episode, naming the filter that dropped them.

    Why: ``--min-reward 5`` printed "kept 0 of 1 episodes", exited 0 and wrote an empty export,
    which is no SFT data; the trainer's reader refuses it only later.
    """
    manifest = outcome.manifest
    ran = f"kept none of {manifest.episodes} episodes"
    if manifest.ungrounded:
        return (
            f"--out {config.out}: {ran}: the {manifest.ungrounded} that reached --min-reward "
            f"{config.min_reward:g} call ids the conversation never showed; nothing written; "
            "pass --allow-ungrounded, or run more --episodes"
        )
    best = (
        "no episode ended"
        if outcome.best_reward is None
        else f"the best reward was {outcome.best_reward:g}"
    )
    return (
        f"--min-reward {config.min_reward:g}: {ran} ({best}); nothing written to {config.out}; "
        "lower --min-reward, run more --episodes, or pass --keep-all"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``export-sft`` alone (before or without the main ``agentenv`` command)."""
    sub = argparse.ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    return run(add_parser(sub).parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
