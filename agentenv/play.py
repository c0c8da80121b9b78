"""Play an env by hand in the terminal: type actions, read pretty tool results.

Shortcuts: ``help`` lists the tools and their arguments; ``TOOL {json}`` or
``TOOL key=value ...`` calls a tool; ``answer TEXT`` answers; anything else
is sent as raw action text, exactly as a model would send it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from agentenv.actions import answer, tool_call


def pretty(text: str) -> str:
    """Indent JSON tool output; leave other text alone."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return text


def tool_help(tools: list[dict[str, Any]]) -> str:
    """One block per tool: name, description and arguments."""
    lines = []
    for schema in tools:
        fn = schema["function"]
        lines.append(f"{fn['name']}: {fn['description']}")
        required = set(fn["parameters"].get("required", []))
        for arg, spec in fn["parameters"].get("properties", {}).items():
            kind = spec.get("type") or "/".join(s.get("type", "?") for s in spec.get("anyOf", []))
            flag = "required" if arg in required else "optional"
            lines.append(f"    {arg} ({kind}, {flag}): {spec.get('description', '')}")
    return "\n".join(lines) or "This env has no tools: answer with `answer TEXT`."


def to_action(line: str, tool_names: set[str]) -> str:
    """Expand the terminal shortcuts into canonical action text."""
    head, _, rest = line.strip().partition(" ")
    if head == "answer":
        return answer(rest)
    if head in tool_names:
        rest = rest.strip()
        if rest.startswith("{"):
            try:
                return tool_call(head, **json.loads(rest))
            except (ValueError, TypeError):
                return line
        arguments: dict[str, Any] = {}
        for pair in rest.split():
            key, _, value = pair.partition("=")
            try:
                arguments[key] = json.loads(value)
            except ValueError:
                arguments[key] = value
        return tool_call(head, **arguments)
    return line


def play(env_id: str, *, split: str = "validation", seed: int | None = None, read: Callable[[str], str] = input) -> int:
    """Run one interactive episode; returns 0."""
    import agentenv  # noqa: F401

    env = gym.make(env_id, split=split)
    obs, info = env.reset(seed=seed)
    names = {t["function"]["name"] for t in info["tools"]}
    print(info["messages"][0]["content"], "\n")
    print(obs)
    while True:
        try:
            line = read("\n> ")
        except EOFError:
            return 0
        if line.strip() in ("help", "?"):
            print(tool_help(info["tools"]))
            continue
        if line.strip() in ("quit", "exit"):
            return 0
        obs, reward, terminated, truncated, info = env.step(to_action(line, names))
        print(pretty(obs))
        if terminated or truncated:
            print(f"\nreward {reward}  components {info['reward_components']}  gold {info['gold']}")
            return 0
