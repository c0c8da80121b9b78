"""Where a from-scratch model's copying breaks: the three copies of a lookup, probed one at a time.

A lookup needs three copies: the title from the question into ``search``, the asked title's id
from the real search output into ``get_title``, and the field from the real ``get_title`` record
into ``<answer>``. Each is probed on validation lookups with the gold context up to that point
(greedy), so one broken copy does not hide the others. Only lookups planned as
``search`` then ``get_title`` are probed. Prints the three counts per model.

Usage::

    python benchmarks/scratch_copy_probe.py [MODEL_DIR ...] [--questions 30]

With no model given, probes the shipped base checkpoint.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import gymnasium as gym


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def probe(model_dir: Path, questions: int) -> dict[str, int]:
    import torch
    from transformers import AutoModelForCausalLM

    from agentenv.lessons.scratch.tokenizer import load_tokenizer

    tokenizer = load_tokenizer(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True).eval()
    env = gym.make("agentenv:MediaSearch-v0", split="validation", compact=True, kinds=["lookup"])
    tools = env.unwrapped.tools

    def reply(messages: list[dict[str, Any]], max_new_tokens: int = 64) -> str:
        ids = tokenizer.apply_chat_template(
            messages, tokenize=True, add_generation_prompt=True, return_dict=True
        )["input_ids"]
        with torch.no_grad():
            out = model.generate(
                torch.tensor([ids]),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
            )
        return tokenizer.decode(out[0, len(ids) :]).lower()

    def run(name: str, arguments: dict[str, Any]) -> str:
        return tools.execute(tools[name], tools[name].args_model(**arguments)).content

    counts = {"title into search": 0, "id into get_title": 0, "field into answer": 0}
    probed, seed = 0, -1
    while probed < questions:
        seed += 1
        _, info = env.reset(seed=seed)
        case = env.unwrapped.task.case.to_dict()
        if [step["tool"] for step in case["plan"]] != ["search", "get_title"]:
            continue  # other plans (a person's credits, say) have other copies
        probed += 1
        search, lookup = case["plan"][0]["arguments"], case["plan"][1]["arguments"]
        messages = list(info["messages"])
        counts["title into search"] += search["query"].lower() in reply(messages)
        messages += [_call("search", search), {"role": "tool", "content": run("search", search)}]
        counts["id into get_title"] += lookup["title_id"].lower() in reply(messages)
        messages += [
            _call("get_title", lookup),
            {"role": "tool", "content": run("get_title", lookup)},
        ]
        counts["field into answer"] += case["answer"].lower() in reply(messages)
    return counts


def main() -> None:
    from agentenv.lessons.scratch.base import shipped_base

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "models", nargs="*", type=Path, help="save_pretrained directories (default: shipped base)"
    )
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    for model_dir in args.models or [shipped_base()]:
        counts = probe(model_dir, args.questions)
        print(f"{model_dir}: " + ", ".join(f"{k} {v}/{args.questions}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
