"""Prompt dataset, tokenizer and trainer-config helpers for training agentenv envs with TRL.

Why apart: these need optional extras (``datasets``, TRL), imported lazily inside each
function, while the env adapter (:mod:`agentenv.integrations.trl`) needs neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentenv.integrations.trl.episodes import make_episode_env

if TYPE_CHECKING:  # pragma: no cover - typing only
    import datasets
    import transformers

__all__ = ["checkpointing_option", "dataset", "qwen3_tokenizer"]


# ----------------------------------------------------------------------------- data and tokenizer
def dataset(env_id: str, split: str, n: int | None = None, **make_kwargs: Any) -> datasets.Dataset:
    """The prompt dataset for :class:`AgentEnvFactory`: one row per task of ``split``, in split order.

    Columns: ``prompt`` (the env's own system and user messages, as ``agentenv eval`` sends them),
    ``task_id``, ``index`` and ``split``. ``n`` keeps the first ``n`` tasks.
    """
    from datasets import Dataset

    env = make_episode_env(env_id, {**make_kwargs, "split": split})
    count = len(env.unwrapped.tasks) if n is None else min(int(n), len(env.unwrapped.tasks))
    rows: dict[str, list[Any]] = {"prompt": [], "task_id": [], "index": [], "split": []}
    for index in range(count):
        _, info = env.reset(options={"index": index})
        system, user = info["messages"][:2]
        rows["prompt"].append(
            [
                {"role": "system", "content": system["content"]},
                {"role": "user", "content": user["content"]},
            ]
        )
        rows["task_id"].append(info["task_id"])
        rows["index"].append(index)
        rows["split"].append(env.unwrapped.split)
    env.close()
    return Dataset.from_dict(rows)


def checkpointing_option(config_cls: type, enabled: bool) -> dict[str, bool]:
    """The activation-checkpointing switch under the name this transformers version uses.

    transformers 5.2x renamed ``gradient_checkpointing`` to ``activation_checkpointing``
    (the old name warns); TRL 1.16 works with either release.
    """
    import dataclasses

    names = {f.name for f in dataclasses.fields(config_cls)}
    key = (
        "activation_checkpointing"
        if "activation_checkpointing" in names
        else "gradient_checkpointing"
    )
    return {key: enabled}


def qwen3_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """agentenv's offline Qwen3 tokenizer carrying Qwen3's own chat template as shipped inside TRL.

    TRL recognises a chat template by its exact text: for Qwen3's it sets the
    response template that parses tool calls and swaps in its
    prefix-preserving training template. agentenv's template renders the same
    text but is not byte-identical, so for TRL the tokenizer carries TRL's
    copy of Qwen3's template (read from the installed TRL, nothing fetched).
    """
    from trl.chat_template_utils import qwen3_chat_template

    from agentenv.tokens.qwen3_tokenizer import load_tokenizer

    tokenizer = load_tokenizer()
    tokenizer.chat_template = qwen3_chat_template
    return tokenizer
