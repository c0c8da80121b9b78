"""What the small-model choices buy in context length: compact envs and the from-scratch tokenizer.

Prints, for oracle episodes of the lookup and constraint subset (train split):

* tokens per episode with the default JSON outputs and schemas vs ``compact=True``;
* tokens per film title and per person's name with Qwen3's tokenizer vs the from-scratch BPE;
* the share of the episode the model writes (the assistant tokens SFT trains on).

Usage::

    python benchmarks/scratch_context.py [--tokenizer DIR] [--episodes 200]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import gymnasium as gym


def oracle_messages(env_kwargs: dict, episodes: int) -> list[list[dict]]:
    from agentenv.baselines.oracle import OracleAgent

    env = gym.make("agentenv:MediaSearch-v0", **env_kwargs)
    agent, out = OracleAgent(), []
    for seed in range(episodes):
        obs, info = env.reset(seed=seed)
        agent.reset(obs, info, task=env.unwrapped.task, rng=None)
        done = False
        while not done:
            obs, _, term, trunc, info = env.step(agent.act(obs, info))
            done = term or trunc
        out.append((info["messages"], info["tools"]))
    return out


def main() -> None:
    from agentenv.integrations.trl import qwen3_tokenizer
    from agentenv.lessons.scratch.base import shipped_base
    from agentenv.lessons.scratch.tokenizer import load_tokenizer

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--tokenizer", type=Path, default=None, help="from-scratch tokenizer (default: shipped)"
    )
    parser.add_argument("--episodes", type=int, default=200)
    args = parser.parse_args()
    ours = load_tokenizer(args.tokenizer or shipped_base())
    qwen = qwen3_tokenizer()
    kinds = ["lookup", "constraint"]
    default = oracle_messages({"kinds": kinds}, args.episodes)
    compact = oracle_messages({"kinds": kinds, "compact": True}, args.episodes)

    def length(tok, messages, tools) -> int:
        return len(
            tok.apply_chat_template(messages, tools=tools, tokenize=True, return_dict=True)[
                "input_ids"
            ]
        )

    rows = [
        (
            "Qwen3 tokenizer, default env (JSON outputs, tool schemas in the prompt)",
            [length(qwen, m, t) for m, t in default],
        ),
        (
            "Qwen3 tokenizer, compact=True (schemas still rendered by Qwen3's template)",
            [length(qwen, m, t) for m, t in compact],
        ),
        ("Qwen3 tokenizer, compact=True, no schemas", [length(qwen, m, None) for m, _ in compact]),
        (
            "from-scratch tokenizer, compact=True (its template renders no schemas)",
            [length(ours, m, t) for m, t in compact],
        ),
    ]
    print(f"oracle episodes of {', '.join(kinds)}: {args.episodes}, train split")
    for name, lengths in rows:
        print(
            f"  {name}: median {statistics.median(lengths):.0f} tokens, mean {statistics.mean(lengths):.0f}"
        )
    catalog = gym.make("agentenv:MediaSearch-v0").unwrapped.catalog
    titles = [t.title for t in catalog.titles[:2000]]
    names = sorted({p for t in catalog.titles[:2000] for p in t.cast})[:2000]
    for what, texts in (("film title", titles), ("person's name", names)):
        q = statistics.mean(
            len(qwen(" " + x, add_special_tokens=False)["input_ids"]) for x in texts
        )
        o = statistics.mean(
            len(ours(" " + x, add_special_tokens=False)["input_ids"]) for x in texts
        )
        print(f"  tokens per {what}: Qwen3 {q:.2f}, from-scratch {o:.2f} ({len(texts)} of them)")
    print(f"  vocabulary: Qwen3 {len(qwen):,}, from-scratch {len(ours):,}")


if __name__ == "__main__":
    main()
