"""Play an env by hand in the terminal: type actions, read tool results as tables.

``help`` lists the input forms and the tools; ``TOOL key=value ...``,
``TOOL VALUE`` (the one required argument) or ``TOOL {json}`` calls a tool;
``answer TEXT`` answers; ``say TEXT`` talks to the other side of a dialogue;
raw action text (``<tool_call>…``) is sent exactly as a model would send it.
A mistyped command is explained here, with a close match, and costs no turn
(see :mod:`agentenv.play.reading`).

Multi-agent ids (``DiagnosisDialogue-v0``, ``MediaConcierge-v0``) are played
from one side (``side``, default the lead: doctor or assistant); the env's
scripted policy plays the other (``env.default_policy``, or the family's
``asking`` scripted lead when the human plays the simulated side).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable

import gymnasium as gym

from agentenv.errors import UserInputError
from agentenv.play.reading import InputError, parse_line
from agentenv.play.view import (
    briefing,
    final_summary,
    render_observation,
    shortcuts,
    tool_help,
    turn_line,
    width,
)


def _described_tools(entry_point: object) -> dict[str, bool]:
    """``{"tools_in_prompt": True}`` when the env takes it: a person reads no JSON schemas, so the
    system prompt shown at the start must describe the tools (families of your own may not have it)."""
    import inspect

    from agentenv.families import resolve

    try:
        cls = resolve(entry_point) if isinstance(entry_point, str) else entry_point
        return (
            {"tools_in_prompt": True}
            if "tools_in_prompt" in inspect.signature(cls).parameters
            else {}
        )
    except (ImportError, AttributeError, TypeError, ValueError):
        return {}


def _dialogue(
    env_id: str, split: str, side: str | None
) -> tuple[gym.Env, str, str, int | None] | None:
    """The single-agent view of a multi-agent id for ``side``, or None for a Gymnasium id."""
    from agentenv.multiagent import registry
    from agentenv.multiagent.single_agent import as_single_agent

    try:
        registry.spec(env_id)
    except KeyError:
        return None
    aec = registry.make(env_id, split=split, **_described_tools(registry.spec(env_id).entry_point))
    side = side or aec.lead
    if side not in aec.possible_agents:
        raise UserInputError(
            f"--as must be one of {', '.join(aec.possible_agents)} for {env_id}, got {side!r}"
        )
    others = {}
    for name in aec.possible_agents:
        if name == side:
            continue
        try:
            others[name] = aec.default_policy(name)
        except (ValueError, NotImplementedError):
            leads = aec.scripted_leads()
            others[name] = leads.get("asking") or next(iter(leads.values()))
    other = next(a for a in aec.possible_agents if a != side)
    return (
        as_single_agent(aec, agent=side, others=others),
        side,
        other,
        aec.max_turns if side == aec.lead else None,
    )


def play(
    env_id: str,
    *,
    split: str = "validation",
    seed: int | None = None,
    side: str | None = None,
    read: Callable[[str], str] = input,
) -> int:
    """Run one interactive episode, reading lines with ``read(prompt)``; returns 0."""
    import agentenv  # noqa: F401

    if read is input:
        try:
            import readline  # noqa: F401  (line editing and history for input())
        except ImportError:
            pass

    dialogue = _dialogue(env_id, split, side)
    if dialogue is None:
        if side is not None:
            raise UserInputError(f"--as is only for multi-agent ids; {env_id} has one agent")
        try:
            from agentenv.families import bare_id, family_of_env

            family_of_env(env_id)  # imports a family kept outside agentenv ("module:Id")
            described = _described_tools(gym.spec(bare_id(env_id)).entry_point)
            env: gym.Env = gym.make(env_id, split=split, **described)
        except gym.error.Error as err:
            raise UserInputError(f"{err} (`agentenv list` shows the ids)") from None
        say_to, role, max_turns = None, None, getattr(env.unwrapped, "max_turns", None)
        dialogue_env = None
    else:
        env, role, say_to, max_turns = dialogue
        dialogue_env = getattr(env.unwrapped, "aec_env", None)  # its reward config and costs
    can_answer = dialogue is None or max_turns is not None
    obs, info = env.reset(seed=seed)
    tools = list(info.get("tools") or [])
    names = [t["function"]["name"] for t in tools]

    print(f"== {env_id}" + (f": you are the {role}; the {say_to} is scripted" if role else ""))
    messages = info.get("messages") or []
    if (
        messages
        and messages[0].get("role") == "system"
        and str(messages[0]["content"]).strip() not in obs
    ):
        print(briefing(str(messages[0]["content"]), names))
    print("\n" + "-" * 40)
    print(obs)
    print("-" * 40)
    forms = ["TOOL key=value", "TOOL VALUE"] if tools else []
    forms += [f"say TEXT (to the {say_to})"] if say_to else []
    forms += ["answer TEXT"] if can_answer else []
    intro = (
        f"Tools: {', '.join(names)}.  " if names else ""
    ) + f"Type {', '.join(forms)}; `help` explains."
    print(textwrap.fill(intro, width(), subsequent_indent="  "))
    last_output = ""
    while True:
        try:
            line = read(f"\n[{turn_line(int(info.get('turn', 0)), max_turns)}] > ")
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        try:
            parsed = parse_line(line, tools, say_to=say_to, can_answer=can_answer)
        except InputError as err:
            print(
                textwrap.fill(
                    f"! {err}  (nothing was sent; no turn used)",
                    width(),
                    initial_indent="  ",
                    subsequent_indent="    ",
                )
            )
            continue
        if parsed.command == "help":
            print(shortcuts(tools, say_to=say_to, can_answer=can_answer))
            if tools:
                print("\nTools:\n" + tool_help(tools))
            continue
        if parsed.command == "quit":
            return 0
        if parsed.command == "full":
            print(  # every row, in the same layout as the turn showed (not raw JSON)
                render_observation(last_output, max_rows=sys.maxsize)
                if last_output
                else "(no tool output yet)"
            )
            continue
        assert parsed.action is not None
        obs, reward, terminated, truncated, info = env.step(parsed.action)
        last_output = obs
        if say_to and parsed.action.startswith("<say>") and obs and not obs.startswith("Error"):
            print(f"{say_to}: {obs}")
        elif obs:
            print(render_observation(obs))
        if terminated or truncated:
            if say_to and not can_answer and terminated:
                print(f"(the {say_to} gave the final answer)")
            print(
                final_summary(
                    reward,
                    info,
                    truncated=truncated and not terminated,
                    says=say_to is not None and can_answer,
                    asks_are_calls=say_to is not None
                    and can_answer
                    and getattr(dialogue_env, "item_tool_calls", 0) > 0,
                    over_limit=getattr(
                        getattr(dialogue_env or env.unwrapped, "reward_config", None),
                        "over_limit",
                        None,
                    ),
                )
            )
            return 0
