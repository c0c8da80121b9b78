"""Prompt tokens of each env's first turn, rendered with the offline Qwen3 template and its tools.

What a trainer pays before the policy writes anything: ``render_prefix(info["messages"],
info["tools"])`` after ``reset(seed=0)`` (the lead's view for the dialogue envs), split into
the system message and the rest. With ``--tools-in-prompt`` the envs also describe the tools
in the system message as text (what plain-text agents and ``agentenv play`` read).

Measured 2026-12-03 (``template`` column, default settings) before ``tools_in_prompt``
existed, when every system prompt listed the tools as text as well: MediaSearch-v0 1,733;
MediaSearch-SingleTurn-v0 572; RareDiseaseDiagnosis-v0 1,655; RareDiseaseDiagnosis-SingleTurn-v0
496; DiagnosisDialogue-v0 (doctor) 1,533; MediaConcierge-v0 (assistant) 1,738.

Run: ``python benchmarks/prompt_tokens.py [--tools-in-prompt]`` (builds the offline Qwen3
tokenizer on first use; needs the ``tokens`` extra).
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any

import gymnasium as gym

import agentenv  # noqa: F401  (registers the ids)
from agentenv import multiagent
from agentenv.tokens import qwen3_template

SINGLE = (
    "MediaSearch-v0",
    "MediaSearch-SingleTurn-v0",
    "RareDiseaseDiagnosis-v0",
    "RareDiseaseDiagnosis-SingleTurn-v0",
)
DIALOGUE = ("DiagnosisDialogue-v0", "MediaConcierge-v0")


def _kwargs(factory: Any, tools_in_prompt: bool | None) -> dict[str, Any]:
    """``tools_in_prompt`` only where the env knows it (so the script also runs on older code)."""
    if tools_in_prompt is None:
        return {}
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return {"tools_in_prompt": tools_in_prompt}
    return {"tools_in_prompt": tools_in_prompt} if "tools_in_prompt" in params else {}


def first_turn(
    env_id: str, tools_in_prompt: bool | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages, tools) the policy is prompted with on the first turn, after ``reset(seed=0)``."""
    if env_id in DIALOGUE:
        entry = multiagent.spec(env_id).entry_point
        cls = _load(entry) if isinstance(entry, str) else entry
        env = multiagent.make(env_id, split="validation", **_kwargs(cls, tools_in_prompt))
        env.reset(seed=0)
        info = env.infos[env.lead]
        return list(info["messages"]), list(info["tools"])
    spec = gym.spec(env_id)
    cls = _load(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
    env = gym.make(env_id, split="validation", **_kwargs(cls, tools_in_prompt))
    _, info = env.reset(seed=0)
    return list(info["messages"]), list(info["tools"])


def _load(entry: str) -> Any:
    import importlib

    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tools-in-prompt",
        dest="tools_in_prompt",
        action="store_true",
        default=None,
        help="only the envs built with tools_in_prompt=True (default: the default envs, then those)",
    )
    args = parser.parse_args(argv)
    template = qwen3_template()
    settings = [True] if args.tools_in_prompt else [None, True]
    print(
        "Qwen3 template, reset(seed=0), split=validation; 'template' = render_prefix(messages, info['tools']),"
    )
    print("'text only' = render_prefix(messages, None) (what a plain-text agent reads).")
    print(
        f"{'env id':38} {'tools_in_prompt':>15} {'tools':>5} {'system':>7} {'template':>8} {'text only':>9}"
    )
    for env_id in SINGLE + DIALOGUE:
        for setting in settings:
            messages, tools = first_turn(env_id, setting)
            total = len(template.render_prefix(messages, tools or None))
            text_only = len(template.render_prefix(messages, None))
            system = len(template.render_prefix(messages[:1], None))
            label = "default" if setting is None else str(setting)
            print(f"{env_id:38} {label:>15} {len(tools):>5} {system:>7} {total:>8} {text_only:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
