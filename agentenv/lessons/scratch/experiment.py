"""What the from-scratch lessons share: the task subset, the data export and the scoring.

The subset: MediaSearch **lookup** and **constraint** questions (a field of a
named film; the one film meeting stated constraints), with ``compact=True``.
Both are within reach of a 5M-parameter model: the answer is copied from a
tool output. Training, selection and testing use exactly these kinds, on the
train, validation and test splits respectively; every compared arm is scored
on the same test tasks in the same order (same seed).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

KINDS = ("lookup", "constraint")
MULTI_TURN = "MediaSearch-v0"
SINGLE_TURN = "MediaSearch-SingleTurn-v0"


def env_kwargs(env_id: str, kinds: Sequence[str] = KINDS) -> dict[str, Any]:
    """The env options of every from-scratch run: compact prompts, the kind subset, 3 passages single-turn."""
    kwargs: dict[str, Any] = {"compact": True, "kinds": list(kinds)}
    if "SingleTurn" in env_id:
        kwargs["passages"] = 3
    return kwargs


def export_rows(
    env_id: str,
    split: str,
    episodes: int,
    out: Path,
    *,
    kinds: Sequence[str] = KINDS,
    seed: int = 0,
    tokenizer: Any = None,
    agent: str = "oracle",
) -> list[dict[str, Any]]:
    """Oracle conversations on ``split`` (``agentenv export-sft``, no think lines), read back.

    ``agent`` is the demonstrator: ``oracle`` (the catalog's spelling) or
    ``oracle-question-spelling`` (names copied from the question where only case differs).

    Each row also gets its task's ``task_id``, ``kind`` and ``difficulty`` (from the manifest's task
    ids), written to ``out/rows.jsonl``: curricula, selection reports and shift checks read them.
    With ``tokenizer`` (the from-scratch one), ``tokens.jsonl`` holds its token-exact ids.
    """
    import gymnasium as gym

    from agentenv.data.chat_dataset import read_chat_jsonl
    from agentenv.data.sft import ExportConfig, export_sft
    from agentenv.tokens.chat_templates import hf_template

    if split == "test":
        raise ValueError("training and selection data never come from the test split")
    config = ExportConfig(
        env_id=env_id,
        out=out,
        agent=agent,
        split=split,
        episodes=episodes,
        seed=seed,
        think=False,
        env_args=env_kwargs(env_id, kinds),
    )
    export_sft(
        config, template=hf_template(tokenizer) if tokenizer is not None else None, progress=False
    )
    rows = read_chat_jsonl(out / "chat.jsonl")
    task_ids = json.loads((out / "manifest.json").read_text())["task_ids"]
    tasks = {
        t.id: t
        for t in gym.make(
            f"agentenv:{env_id}", split=split, **env_kwargs(env_id, kinds)
        ).unwrapped.tasks
    }
    with (out / "rows.jsonl").open("w", encoding="utf-8") as f:
        for row, task_id in zip(rows, task_ids, strict=True):
            task = tasks[task_id]
            row.update(task_id=task_id, kind=task.kind, difficulty=task.difficulty)
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return rows


def score(
    model_dir: str | Path | None,
    env_id: str,
    episodes: int,
    *,
    seed: int = 0,
    agent: str = "hf",
    max_new_tokens: int = 96,
    split: str = "test",
    device: str = "cpu",
    batch_size: int | None = None,
    max_turns: int | None = None,
) -> dict[str, Any]:
    """Accuracy on ``split`` (mean, 95% bootstrap CI), tool calls per episode and wall time of one agent.

    ``model_dir`` is a checkpoint for the ``hf`` agent; other agents (``random``, ``oracle``) take none.
    ``batch_size`` episodes decode together (the ``hf`` agent's batched, KV-cached loop; None: its
    default); ``max_turns`` caps an episode's turns (None: the env's own).
    ``split="train"`` scores tasks a model may have been trained on: ``task_ids`` lists them, so a
    caller can tell seen from unseen.
    """
    from agentenv.evaluation.runner import RunConfig, run
    from agentenv.lessons.structured.stats import mean_ci

    agent_args: tuple[tuple[str, str], ...] = ()
    if agent == "hf":
        agent_args = (("model", str(model_dir)), ("max_new_tokens", str(max_new_tokens)))
        agent_args += (("device", device),)
        if batch_size is not None:
            agent_args += (("batch_size", str(batch_size)),)
    kwargs = env_kwargs(env_id)
    if max_turns is not None:
        kwargs["max_turns"] = max_turns
    config = RunConfig(
        env_id=env_id,
        agent=agent,
        split=split,
        episodes=episodes,
        seed=seed,
        agent_args=agent_args,
        env_kwargs=tuple(kwargs.items()),
    )
    started = time.perf_counter()
    result = run(config, progress=False)
    records = result.records
    accuracy = [float(r["reward_components"].get("accuracy", 0.0)) for r in records]
    by_kind: dict[str, list[float]] = {}
    for r, a in zip(records, accuracy, strict=True):
        by_kind.setdefault(r["kind"], []).append(a)
    summary = mean_ci(accuracy, seed=seed)
    first_calls = [r["reward_components"].get("first_call") for r in records]
    return {
        "accuracy": summary["mean"],
        "ci": summary["ci"],
        "n": summary["n"],
        # The share of episodes whose first tool call is the gold plan's (MediaSearch; None elsewhere).
        "first_call": (
            round(sum(first_calls) / len(first_calls), 4)
            if first_calls and None not in first_calls
            else None
        ),
        "by_kind": {k: round(sum(v) / len(v), 4) for k, v in sorted(by_kind.items())},
        "tool_calls": round(sum(r["tool_calls"] for r in records) / max(1, len(records)), 3),
        "agent_failures": sum(1 for r in records if r.get("agent_failure")),
        "wall_s": round(time.perf_counter() - started, 1),
        "task_ids": [r["task_id"] for r in records],
        "correct": accuracy,
    }


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as indented JSON, creating the folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def versions() -> dict[str, str]:
    """Versions of the libraries a result depends on."""
    import torch
    import transformers
    import trl

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "trl": trl.__version__,
    }
